//go:build !linux

package main

// hostMemory returns the host's physical memory in bytes: unknown (0, no
// default limit) outside Linux.
func hostMemory() uint64 { return 0 }
