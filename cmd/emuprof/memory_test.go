package main

// Memory like Linux (issue 8 point 5): reservations cost nothing until they
// are made accessible, and a guest allocating without bound gets ENOMEM at
// --max-memory instead of growing emuprof until the host kills it.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// The reserve guest reserves 1 TiB PROT_NONE + MAP_NORESERVE, mprotects,
// touches, unmaps, remaps pieces and forks: its output (addresses relative
// to the reservation, /proc/self/maps included) must be the native one.
// Before lazy backing, the reservation stopped the run (exit 2).
func TestReserveGuest(t *testing.T) { sameAsNative(t, "reserve", "reserve 1 TiB: ok") }

// sameAsNative runs guest name natively and under emuprof in every build:
// the native run must succeed and print want, and emuprof's must be the
// same byte for byte.
func sameAsNative(t *testing.T, name, want string) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			prog := guestBin(t, v, name)
			dir := t.TempDir()
			native := run(t, nil, dir, prog)
			if !strings.Contains(native.stdout, want) || native.code != 0 {
				t.Fatalf("native run: %q (status %d)", native.stdout, native.code)
			}
			sameRun(t, name, native, run(t, nil, dir, emuprofBin, append(emuArgs(), prog)...), true)
		})
	}
}

// Mapping and touching 1 MiB blocks without bound ends in the guest's own
// ENOMEM at --max-memory; the flag's bad values are refused before the run.
func TestMaxMemory(t *testing.T) {
	prog := guestBin(t, "glibc-static", "reserve")
	dir := t.TempDir()
	e := run(t, nil, dir, emuprofBin, append(emuArgs("--max-memory", "64M"), prog, "100000")...)
	// 64 MiB less the program's own memory (its stack, data and heap).
	if !strings.HasPrefix(e.stdout, "mmap failed after 5") || !strings.Contains(e.stdout, "Cannot allocate memory") || e.code != 0 {
		t.Errorf("--max-memory 64M: %q, status %d, stderr %.300s", e.stdout, e.code, e.stderr)
	}
	// The default (8 GiB) lets a run map 200 MiB.
	e = run(t, nil, dir, emuprofBin, append(emuArgs(), prog, "200")...)
	if e.stdout != "mapped 200 MiB\n" || e.code != 0 {
		t.Errorf("default limit: %q, status %d, stderr %.300s", e.stdout, e.code, e.stderr)
	}
	for _, bad := range []string{"0", "1K", "12Q", "-5", "200T", ""} {
		e := run(t, nil, dir, emuprofBin, append(emuArgs("--max-memory", bad), prog)...)
		if e.code != 2 || !strings.Contains(e.stderr, "--max-memory") || strings.Count(e.stderr, "\n") != 1 {
			t.Errorf("--max-memory %q: status %d, stderr %q", bad, e.code, e.stderr)
		}
	}
}

// MAP_SHARED memory is shared across fork, as Linux shares it
// (testdata/src/shmfork.c): anonymous, of /dev/zero (ENODEV before) and of
// a file, the child's, a grandchild's and the parent's stores seen by the
// others, also after mprotect and munmap split the area; private memory
// stays a copy. Before, the child's store of 42 was invisible (the parent
// printed 1). Byte for byte against the native run, in four builds.
func TestSharedMemoryAcrossFork(t *testing.T) {
	sameAsNative(t, "shmfork", "parent sees 99 100 after the child")
}

// A vfork child runs in its parent's memory, as on Linux
// (testdata/src/vforkbig.c): its stores, before _exit or execve, are the
// parent's, and nothing is copied. 4 vforks of a process with a 2 GiB
// mapping, one page touched, peaked at 2.1 GB resident (the child's copy
// written back into the parent), and the stores of the child that execs
// were lost; natively the peak is about 1 MB. emuprof's peak (its
// rusage, a property of the run, not of the host's speed) must stay well
// under 500 MB.
func TestVforkSharesMemory(t *testing.T) {
	sameAsNative(t, "vforkbig", "vfork 3: parent sees 13 103")
	cmd := exec.Command(emuprofBin, append(emuArgs(), guestBin(t, "glibc-static", "vforkbig"))...)
	cmd.Dir = t.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("emuprof: %v: %s", err, out)
	}
	if kb := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss; kb > 500<<10 {
		t.Errorf("emuprof peaked at %d MB resident, want well under 500 MB", kb>>10)
	}
}

// A fork copies on write, as Linux's does (testdata/src/forkcow.c): 4
// children alive together, the parent storing into a page between two
// forks; each side sees its own stores only, byte for byte against the
// native run in four builds. A parent with 256 MiB touched whose 4
// children each store into one page peaked at 1.3 GB resident (each child
// a copy); natively each process stays about 257 MB. emuprof's peak (its
// rusage) must stay under two copies.
func TestForkCopiesOnWrite(t *testing.T) {
	sameAsNative(t, "forkcow", "parent: 0 wrong pages of 4096")
	cmd := exec.Command(emuprofBin, append(emuArgs(), guestBin(t, "glibc-static", "forkcow"), "256", "quick")...)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "parent: 0 wrong pages of 65536") {
		t.Fatalf("emuprof: %v: %s", err, out)
	}
	if kb := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss; kb > 512<<10 {
		t.Errorf("emuprof peaked at %d MB resident, want under 512 MB", kb>>10)
	}
}

// --memory-limit bounds emuprof's own memory: the guest memory of the
// run's processes plus the analyses' (trms's shadow memory, about 2 bytes
// per guest byte touched). A guest touching 1 MiB blocks without bound
// under trms stops there like --max-insns: exit 137, one line saying so,
// the profiles written and marked partial. mallocstress (26 MiB of guest
// memory) stops under trms at 100M because of the shadow memory, and
// runs to its end without analyses. Before, there was no such limit: an
// unbounded guest grew emuprof until the host's OOM killer, no profile.
func TestMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	e := run(t, nil, dir, emuprofBin, "trms", "--list-files", "--memory-limit", "48M", "--", guestBin(t, "glibc-static", "reserve"), "100000")
	stop := "emuprof: stopped at the memory limit (--memory-limit 48 MiB" // the one line (the summary on stderr says PARTIAL too)
	if e.code != 137 || strings.Count(e.stderr, stop) != 1 || !strings.Contains(e.stderr, "  reserve_1000_4_rms.aprof\n") {
		t.Fatalf("trms --memory-limit 48M: status %d, stderr %.600s", e.code, e.stderr)
	}
	if rep, err := os.ReadFile(filepath.Join(dir, "reserve_1000_4_rms.aprof")); err != nil || !strings.Contains(string(rep), "stopped at the memory limit") {
		t.Errorf("profile not marked partial: %v %.300s", err, rep)
	}
	prog := guestBin(t, "glibc-static", "mallocstress")
	e = run(t, nil, dir, emuprofBin, "trms", "--memory-limit", "100M", "--", prog)
	if e.code != 137 || !strings.Contains(e.stderr, "stopped at the memory limit (--memory-limit 100 MiB") || strings.Contains(e.stderr, "analyses 0 MiB") {
		t.Errorf("trms mallocstress: status %d, stderr %.600s", e.code, e.stderr)
	}
	if e = run(t, nil, dir, emuprofBin, append(emuArgs("--memory-limit", "100M"), prog)...); e.code != 0 {
		t.Errorf("run mallocstress: status %d, stderr %.600s", e.code, e.stderr)
	}
	for _, bad := range []string{"1K", "12Q", "-5", "x"} {
		e := run(t, nil, dir, emuprofBin, append(emuArgs("--memory-limit", bad), prog)...)
		if e.code != 2 || !strings.Contains(e.stderr, "--memory-limit") || strings.Count(e.stderr, "\n") != 1 {
			t.Errorf("--memory-limit %q: status %d, stderr %q", bad, e.code, e.stderr)
		}
	}
}

// --memory-limit counts every analysis's memory, not only trms's: paths's
// CFGs, numberings, counts and the object files it reads, parallel's
// calling contexts, keys and lines (trace.MemoryUser). Under a limit
// the guest alone stays below (its run ends normally), each analysis
// stops the run there, exit 137, with its share named and every profile
// written. Before, they counted nothing: both ran to their end.
func TestMemoryLimitCountsEveryAnalysis(t *testing.T) {
	for _, c := range []struct {
		analysis, limit string
		prog            []string
	}{
		{"paths", "12M", []string{guestBin(t, "glibc-dynamic", "hello")}},
		{"parallel", "26M", []string{"/usr/bin/python3", "-c", "print(1)"}},
	} {
		dir := t.TempDir()
		if e := run(t, nil, dir, emuprofBin, append([]string{"run", "--memory-limit", c.limit, "--"}, c.prog...)...); e.code != 0 {
			t.Fatalf("run --memory-limit %s %v: status %d, stderr %.600s", c.limit, c.prog, e.code, e.stderr)
		}
		e := run(t, nil, dir, emuprofBin, append([]string{c.analysis, "--list-files", "--out", dir, "--memory-limit", c.limit, "--"}, c.prog...)...)
		m := regexp.MustCompile(`(?m)^emuprof: stopped at the memory limit \(--memory-limit \d+ MiB: guest memory \d+ MiB, analyses (\d+) MiB\)`).FindStringSubmatch(e.stderr)
		if e.code != 137 || m == nil || m[1] == "0" {
			t.Errorf("%s --memory-limit %s %v: status %d, stderr %.600s", c.analysis, c.limit, c.prog, e.code, e.stderr)
			continue
		}
		files := listedFiles(t, e.stderr)
		if got := checkProfiles(t, c.analysis, dir, files); !strings.Contains(got, "stopped at the memory limit") {
			t.Errorf("%s: run record partial %q", c.analysis, got)
		}
	}
}
