package main

import "syscall"

// hostMemory returns the host's physical memory in bytes (0: unknown).
func hostMemory() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}
