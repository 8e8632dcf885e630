//go:build !unix

package syscalls

import "errors"

// mkfifo: this host has no FIFO nodes.
func mkfifo(string, uint32) error { return errors.ErrUnsupported }
