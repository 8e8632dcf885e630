package main

import (
	"os"
	"path/filepath"
	"testing"
)

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

// TestKernelSurfaceUnprivileged runs syskern as an unprivileged user
// (nobody, through setpriv, when the tests run as root): no capabilities,
// setgroups, real-time I/O priority and namespaces EPERM, as natively.
func TestKernelSurfaceUnprivileged(t *testing.T) {
	var prefix []string
	if os.Getuid() == 0 {
		prefix = []string{"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}
		// nobody must reach emuprof and the working directory.
		if err := os.Chmod(filepath.Dir(emuprofBin), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := os.MkdirTemp("", "syskern")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	both := func(cmd ...string) (native, emu outcome) {
		cmd = append(prefix, cmd...)
		native = run(t, nil, dir, cmd[0], cmd[1:]...)
		n := len(prefix)
		ecmd := append(append(append(cmd[:n:n], emuprofBin), emuArgs()...), cmd[n:]...)
		return native, run(t, nil, dir, ecmd[0], ecmd[1:]...)
	}
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			native, emu := both(guestBin(t, v, "syskern"))
			sameOutcome(t, "syskern as nobody", native, emu)
		})
	}
}

// Two runs of syskern (timers, signals, pidfds, processes, inotify) give
// the same trace digest and output.
func TestKernelSurfaceDeterministic(t *testing.T) {
	prog := guestBin(t, "glibc-static", "syskern")
	var first outcome
	for i := range 2 {
		out := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs("--trace-digest"), prog)...)
		if out.code != 0 {
			t.Fatalf("run %d: %+v", i, out)
		}
		if i == 0 {
			first = out
		} else if out != first {
			t.Errorf("two runs differ:\n%+v\n%+v", first, out)
		}
	}
}
