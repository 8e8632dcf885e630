//go:build !linux && !darwin

package main

// hostMemory returns the host's physical memory in bytes: unknown (0, no
// default limit) outside Linux and macOS.
func hostMemory() uint64 { return 0 }
