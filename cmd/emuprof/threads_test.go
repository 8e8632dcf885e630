package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var digestRE = regexp.MustCompile(`trace digest ([0-9a-f]{64})`)

func digestOf(t *testing.T, out outcome) string {
	t.Helper()
	m := digestRE.FindStringSubmatch(out.stderr)
	if m == nil {
		t.Fatalf("no trace digest in stderr %q", out.stderr)
	}
	return m[1]
}

// Threaded guests whose output does not depend on the interleaving must
// print what they print natively, in every build flavour.
func TestThreadGuestsMatchNative(t *testing.T) {
	names := []string{"mutex_counter", "condvar_pc", "sem_pc", "barrier", "threadpool", "rwlock",
		"pipe_threads", "join_many", "spin_flag", "coz_fig1", "omp_reduce", "futex_ops"}
	for _, v := range variants {
		for _, n := range names {
			t.Run(v+"/"+n, func(t *testing.T) {
				if n == "omp_reduce" && v == "musl-static" {
					t.Skip("libgomp has no musl build")
				}
				compare(t, nil, t.TempDir(), guestBin(t, v, n))
			})
		}
	}
}

// abort() raises SIGABRT with tgkill: the guest dies like natively (134).
func TestAbort(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			prog := guestBin(t, v, "abort")
			native := run(t, nil, t.TempDir(), prog)
			emu := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs(), prog)...)
			if emu.code != 134 || native.code != 134 || emu.stdout != native.stdout {
				t.Errorf("native %d %q, emu %d %q", native.code, native.stdout, emu.code, emu.stdout)
			}
			// musl's crt1.c line table ends right after _start: no later
			// pc may be attributed to it.
			if strings.Contains(emu.stderr, "crt1.c") {
				t.Errorf("stack attributes libc code to crt1.c:\n%s", emu.stderr)
			}
			if !strings.Contains(emu.stderr, "SIGABRT") || !strings.Contains(emu.stderr, "abort") {
				t.Errorf("report does not name SIGABRT and abort:\n%s", emu.stderr)
			}
		})
	}
}

// Same program, same flags: identical output and identical trace digest.
func TestThreadDeterminism(t *testing.T) {
	for _, n := range []string{"racy_counter", "condvar_pc", "threadpool"} {
		t.Run(n, func(t *testing.T) {
			prog := guestBin(t, "glibc-static", n)
			first := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs("--trace-digest"), prog)...)
			d0 := digestOf(t, first)
			runs := 20
			if testing.Short() {
				runs = 3
			}
			for i := 1; i < runs; i++ {
				out := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs("--trace-digest"), prog)...)
				if out.stdout != first.stdout || digestOf(t, out) != d0 {
					t.Fatalf("run %d differs: stdout %q vs %q", i, out.stdout, first.stdout)
				}
			}
		})
	}
}

// Different --sched-seed values explore different interleavings.
func TestSchedSeedExplores(t *testing.T) {
	prog := guestBin(t, "glibc-static", "racy_counter")
	digests := map[string]bool{}
	outputs := map[string]bool{}
	for s := 1; s <= 6; s++ {
		out := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs("--trace-digest", "--sched-seed", fmt.Sprint(s), "--quantum", "2000"), prog)...)
		digests[digestOf(t, out)] = true
		outputs[out.stdout] = true
		again := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs("--trace-digest", "--sched-seed", fmt.Sprint(s), "--quantum", "2000"), prog)...)
		if digestOf(t, again) != digestOf(t, out) {
			t.Fatalf("seed %d is not reproducible", s)
		}
	}
	if len(digests) < 4 {
		t.Errorf("6 schedule seeds gave only %d distinct interleavings", len(digests))
	}
	t.Logf("%d distinct digests, %d distinct outputs", len(digests), len(outputs))
}

func TestDeadlockReport(t *testing.T) {
	for _, v := range []string{"glibc-static", "musl-static", "glibc-dynamic"} {
		t.Run(v, func(t *testing.T) {
			out := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs(), guestBin(t, v, "deadlock"))...)
			if out.code != 3 {
				t.Errorf("exit %d, want 3", out.code)
			}
			for _, want := range []string{"deadlock", "thread_a", "thread_b", "blocked on futex"} {
				if !strings.Contains(out.stderr, want) {
					t.Errorf("deadlock report lacks %q:\n%s", want, out.stderr)
				}
			}
		})
	}
}

func TestStats(t *testing.T) {
	out := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs("--stats", "--cpus", "2"), guestBin(t, "glibc-static", "coz_fig1"))...)
	if out.code != 0 || !strings.Contains(out.stderr, "virtual duration") {
		t.Fatalf("exit %d, stderr %q", out.code, out.stderr)
	}
	if n := strings.Count(out.stderr, "\n"); n < 5 {
		t.Errorf("--stats printed %d lines, want a row per thread:\n%s", n, out.stderr)
	}
}

// Real multithreaded programs from Debian: pigz and xz compress and
// decompress a generated file exactly like their native runs.
func TestParallelCompressors(t *testing.T) {
	work := t.TempDir()
	var b strings.Builder
	for i := 0; i < 60000; i++ {
		fmt.Fprintf(&b, "record %d value %d %s\n", i, (i*2654435761)%100003, strings.Repeat("ab", i%13))
	}
	in := filepath.Join(work, "data.txt")
	os.WriteFile(in, []byte(b.String()), 0o644)
	for _, c := range []struct{ prog, comp, decomp string }{
		{"/usr/bin/pigz", "-p 4 -c", "-p 4 -dc"},
		{"/usr/bin/xz", "-T2 -c", "-T2 -dc"},
	} {
		t.Run(filepath.Base(c.prog), func(t *testing.T) {
			if _, err := exec.LookPath(c.prog); err != nil {
				t.Fatalf("%s missing: make deps installs it", c.prog)
			}
			out := compare(t, nil, work, c.prog, append(strings.Fields(c.comp), in)...)
			packed := filepath.Join(work, "packed")
			os.WriteFile(packed, []byte(out.stdout), 0o644)
			back := compare(t, nil, work, c.prog, append(strings.Fields(c.decomp), packed)...)
			if back.stdout != b.String() {
				t.Errorf("round trip through %s under emuprof lost data", c.prog)
			}
		})
	}
}

// The --cpus model: coz_fig1's two loop threads share one CPU (makespan =
// all instructions, 1 ns each) or run side by side on two (makespan = the
// longer thread); more CPUs than threads change nothing.
func TestCPUModelMakespan(t *testing.T) {
	re := regexp.MustCompile(`virtual duration (\d+) ns \(makespan\), (\d+) instructions`)
	makespan := func(cpus string) (ms, insns int64) {
		out := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs("--stats", "--time-model", "insns", "--cpus", cpus), guestBin(t, "glibc-static", "coz_fig1"))...)
		m := re.FindStringSubmatch(out.stderr)
		if m == nil {
			t.Fatalf("--cpus %s: no stats in %q", cpus, out.stderr)
		}
		fmt.Sscan(m[1], &ms)
		fmt.Sscan(m[2], &insns)
		return ms, insns
	}
	one, total := makespan("1")
	two, _ := makespan("2")
	four, _ := makespan("4")
	if one != total {
		t.Errorf("1 CPU: makespan %d, want all %d instructions", one, total)
	}
	// a() runs 2,000,000 iterations and b() 1,800,000: on two CPUs the
	// makespan is a bit over a()'s share, 2/3.8 of the total.
	if r := float64(two) / float64(one); r < 0.52 || r > 0.56 {
		t.Errorf("2 CPUs: makespan %d = %.3f of 1 CPU's, want ~0.53", two, r)
	}
	if four != two {
		t.Errorf("4 CPUs: makespan %d, 2 CPUs: %d; want equal for two threads", four, two)
	}
}
