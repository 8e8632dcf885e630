package main

import "testing"

// TestKernelSurfaceMatchNative runs the syskern guest (the calls Debian's
// runtimes need, issue 28: POSIX timers and their signals, overruns and
// ids, capabilities, ioprio, setgroups, unshare, pidfds, memfd, /dev/shm,
// splice, inotify, /proc stat files, io_uring) in the four builds: every
// result and errno is Linux's.
func TestKernelSurfaceMatchNative(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			compare(t, nil, t.TempDir(), guestBin(t, v, "syskern"))
		})
	}
}
