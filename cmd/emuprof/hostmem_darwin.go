package main

import "golang.org/x/sys/unix"

// hostMemory returns the host's physical memory in bytes (0: unknown).
func hostMemory() uint64 {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0
	}
	return n
}
