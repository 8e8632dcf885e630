//go:build !unix

package syscalls

import "os"

// hostFDFlags: unknown on hosts without fcntl; the stream keeps its
// default access mode.
func hostFDFlags(*os.File) (uint32, bool, bool) { return 0, false, false }
