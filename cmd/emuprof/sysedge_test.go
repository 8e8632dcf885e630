package main

import "testing"

// TestSyscallEdgesMatchNative runs the sysedge guest (270 raw system calls
// at the edges of their arguments: invalid clone and clone3 flag sets,
// mprotect's grows flags, bad clocks, prctl and arch_prctl queries,
// overlapping copy_file_range, O_TMPFILE, renameat2 flags, AT_EMPTY_PATH,
// preadv2 flags, wait4 options, scheduling and priority calls...) in the
// four builds: every result and errno is Linux's.
func TestSyscallEdgesMatchNative(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			compare(t, nil, t.TempDir(), guestBin(t, v, "sysedge"))
		})
	}
}
