package main

// End-to-end tests of `emuprof parallel` (issue 13) on the threaded guests:
// the invariant work + idleness + unattributed idleness = cores × makespan,
// exactly, on every one; the spec's oracles (shared/specs/
// PARALLEL-HPCTOOLKIT.md §3) as guests; the pprof profile read by `go tool
// pprof`; the incremental timeline sweep equal to sweeping at the end.

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"emuprof/analyses/parallel"
)

type parRun struct {
	r               parallel.Result
	summary, stderr string // summary: stderr but the "wrote" line
	json, pprof     string // paths
	makespan        int64  // from --stats
	insns           int64
}

var statsRE = regexp.MustCompile(`virtual duration (\d+) ns \(makespan\), (\d+) instructions`)

// runParallel runs parallel under insns, the ideal machine whose exact
// figures (every instruction once, 1 ns each) the tests check.
func runParallel(t *testing.T, flags []string, prog string, args ...string) parRun {
	t.Helper()
	dir := t.TempDir()
	a := append([]string{"parallel", "--time-model", "insns", "--out", dir, "--clear-env", "--stats"}, flags...)
	a = append(append(a, "--", prog), args...)
	out := run(t, nil, dir, emuprofBin, a...)
	if out.code != 0 {
		t.Fatalf("emuprof %s: exit %d\n%s", strings.Join(a, " "), out.code, out.stderr)
	}
	pr := parRun{summary: summaryOf(out.stderr), stderr: out.stderr,
		json:  filepath.Join(dir, filepath.Base(prog)+"_parallel.json"),
		pprof: filepath.Join(dir, filepath.Base(prog)+"_parallel.pb.gz")}
	data, err := os.ReadFile(pr.json)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &pr.r); err != nil {
		t.Fatal(err)
	}
	m := statsRE.FindStringSubmatch(out.stderr)
	if m == nil {
		t.Fatalf("no --stats in %q", out.stderr)
	}
	fmt.Sscan(m[1], &pr.makespan)
	fmt.Sscan(m[2], &pr.insns)
	return pr
}

// checkParallel checks what holds on every run: effort conservation (spec
// invariant 1) against the scheduler's own makespan, every instruction
// counted once (as work or spin), nothing late, blame conservation
// (invariant 4), overhead within work (invariant 3).
func checkParallel(t *testing.T, pr parRun) {
	t.Helper()
	r := &pr.r
	if r.Makespan != pr.makespan {
		t.Errorf("makespan %d, the scheduler says %d", r.Makespan, pr.makespan)
	}
	if got, want := r.Total.Work+r.Total.Idleness+r.Unattr, int64(r.Cores)*pr.makespan; got != want {
		t.Errorf("work %d + idleness %d + unattributed %d = %d, want %d cores × %d = %d",
			r.Total.Work, r.Total.Idleness, r.Unattr, got, r.Cores, pr.makespan, want)
	}
	ran := r.Total.Work
	if r.Spin == "idle" {
		ran += r.Total.Spin
	}
	if ran != pr.insns {
		t.Errorf("work %d + spin %d = %d, want every instruction once: %d", r.Total.Work, r.Total.Spin, ran, pr.insns)
	}
	if r.Late != 0 {
		t.Errorf("%d ns of work arrived behind the timeline sweep", r.Late)
	}
	var wait, blame int64
	for _, l := range r.Locks {
		wait += l.WaitNs
		blame += l.BlameNs
	}
	if blame+r.Unrel != wait || blame != r.Total.Blame {
		t.Errorf("blame %d (in contexts %d) + unreleased %d != futex waiting %d", blame, r.Total.Blame, r.Unrel, wait)
	}
	if r.Total.Overhead < 0 || r.Total.Overhead > r.Total.Work {
		t.Errorf("overhead %d outside [0, work %d]", r.Total.Overhead, r.Total.Work)
	}
	if !strings.Contains(pr.summary, fmt.Sprintf("= %d cores × %d ns: ok", r.Cores, r.Makespan)) {
		t.Errorf("summary lacks the invariant line:\n%s", pr.summary)
	}
	if verdict := map[bool]string{true: "program: serial", false: "program: idleness"}[r.Serial()]; !strings.Contains(pr.summary, verdict) {
		t.Errorf("summary lacks the program's verdict:\n%s", pr.summary)
	}
}

// The invariant on every threaded guest, in the static build, and on a few
// in the other builds (dynamic: stripped libgomp and libc).
func TestParallelInvariant(t *testing.T) {
	type c struct{ variant, name string }
	var cases []c
	for _, n := range []string{"mutex_counter", "condvar_pc", "sem_pc", "barrier", "threadpool", "rwlock",
		"pipe_threads", "join_many", "spin_flag", "coz_fig1", "omp_reduce", "futex_ops", "racy_counter",
		"par_serial", "par_lock", "omp_imbalance"} {
		cases = append(cases, c{"glibc-static", n})
	}
	cases = append(cases, c{"glibc-dynamic", "mutex_counter"}, c{"glibc-dynamic", "omp_reduce"},
		c{"musl-static", "threadpool"}, c{"glibc-static-pie", "barrier"})
	for _, cs := range cases {
		t.Run(cs.variant+"/"+cs.name, func(t *testing.T) {
			checkParallel(t, runParallel(t, nil, guestBin(t, cs.variant, cs.name)))
		})
	}
	t.Run("cpus2/coz_fig1", func(t *testing.T) {
		checkParallel(t, runParallel(t, []string{"--cpus", "2"}, guestBin(t, "glibc-static", "coz_fig1")))
	})
}

// parContext returns the context whose path ends with suffix (">"-separated
// routines), failing unless exactly one does.
func parContext(t *testing.T, r *parallel.Result, suffix string) parallel.Context {
	t.Helper()
	var found []parallel.Context
	for _, c := range r.Contexts {
		if p := r.Path(c.ID); p == suffix || strings.HasSuffix(p, ">"+suffix) {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		var paths []string
		for _, c := range r.Contexts {
			if c.Total.Effort() > r.Total.Effort()/100 {
				paths = append(paths, r.Path(c.ID))
			}
		}
		t.Fatalf("%d contexts end with %s; the big ones: %s", len(found), suffix, strings.Join(paths, ", "))
	}
	return found[0]
}

// H1 / H10 as a guest: a serial phase of length t while the other threads
// wait gets idleness (n−1)·t, exactly, on n cores; H9: the balanced phase
// that follows gets almost none.
func TestParallelSerialPhase(t *testing.T) {
	for _, cpus := range []int{4, 8} {
		t.Run(fmt.Sprintf("cpus%d", cpus), func(t *testing.T) {
			pr := runParallel(t, []string{"--cpus", fmt.Sprint(cpus)}, guestBin(t, "glibc-static", "par_serial"))
			checkParallel(t, pr)
			r := &pr.r
			s := parContext(t, r, "main>serial").Total
			if s.Work < 2_000_000 || s.Idleness != int64(cpus-1)*s.Work {
				t.Errorf("serial: work %d, idleness %d, want (n−1)·t = %d", s.Work, s.Idleness, int64(cpus-1)*s.Work)
			}
			var bw, bi int64
			for _, suffix := range []string{"main>balanced", "worker>balanced"} {
				b := parContext(t, r, suffix).Total
				bw += b.Work
				bi += b.Idleness
			}
			// 4 threads on 4 cores: only the barrier's wake-up skew; on 8
			// cores half of them are idle.
			want := int64(cpus-4) * bw / 4
			if bi < want || bi > want+bw/1000 {
				t.Errorf("balanced: work %d, idleness %d, want %d (+0.1%%)", bw, bi, want)
			}
			for _, h := range r.Hot {
				if strings.HasSuffix(h.Path, "main>serial") && h.Verdict.Text != parallel.VerdictHighLow {
					t.Errorf("serial's verdict %q", h.Verdict.Text)
				}
				if cpus == 4 && strings.HasSuffix(h.Path, ">balanced") && h.Verdict.Text != parallel.VerdictLowLow {
					t.Errorf("%s's verdict %q", h.Path, h.Verdict.Text)
				}
			}
		})
	}
}

// H4 as a guest: main holds the lock for h (hold) while m = 3 threads wait:
// m·h of lock-wait blame goes to main's unlock.
func TestParallelLockBlame(t *testing.T) {
	pr := runParallel(t, []string{"--cpus", "4"}, guestBin(t, "glibc-static", "par_lock"))
	checkParallel(t, pr)
	r := &pr.r
	h := parContext(t, r, "main>hold").Total.Work
	var unlock parallel.Context
	for _, c := range r.Contexts {
		if p := r.Path(c.ID); strings.HasSuffix(p, "main>"+c.Routine) && strings.Contains(c.Routine, "mutex_unlock") {
			unlock = c
		}
	}
	b := unlock.Self.Lockwait
	if b < 3*h || b > 3*h+3*h/100 {
		t.Errorf("lock-wait blame of main's unlock (%s) = %d, want m·h = 3 × %d (+1%%)", unlock.Routine, b, h)
	}
	if len(r.Locks) == 0 || r.Locks[0].Class != "lock" || r.Locks[0].Waits != 3 || r.Locks[0].BlameNs != r.Locks[0].WaitNs {
		t.Errorf("locks: %+v", r.Locks)
	}
}

// An OpenMP loop whose shares are 1:3:5:7 on 4 cores: the three threads
// that finish early wait (spinning, then blocked) while the last works, and
// that idleness is charged to the loop: 12 of its 28 units of effort.
func TestParallelOpenMPImbalance(t *testing.T) {
	for _, v := range []string{"glibc-static", "glibc-dynamic"} {
		t.Run(v, func(t *testing.T) {
			pr := runParallel(t, []string{"--cpus", "4"}, guestBin(t, v, "omp_imbalance"))
			checkParallel(t, pr)
			r := &pr.r
			loop := parContext(t, r, "main>GOMP_parallel>main._omp_fn.0").Total
			ratio := float64(loop.Idleness) / float64(loop.Effort())
			if ratio < 0.40 || ratio > 0.46 {
				t.Errorf("loop: work %d, idleness %d: ratio %.4f, want about 12/28 = 0.4286", loop.Work, loop.Idleness, ratio)
			}
			if loop.Idleness < r.Total.Idleness*9/10 {
				t.Errorf("loop idleness %d of %d: want nearly all", loop.Idleness, r.Total.Idleness)
			}
			if r.Total.Spin == 0 {
				t.Error("no spin-waiting recognized in libgomp")
			}
			if v := parallel.Classify(loop.Work, loop.Idleness, loop.Overhead, 0.1, 0.1); v.Text != parallel.VerdictHighLow {
				t.Errorf("loop verdict %q", v.Text)
			}
		})
	}
}

// The profile is read by `go tool pprof`: -top with the idleness sample
// type names the loop and the idleness nobody could be blamed for.
func TestParallelPprof(t *testing.T) {
	pr := runParallel(t, []string{"--cpus", "4"}, guestBin(t, "glibc-static", "omp_imbalance"))
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	for _, c := range []struct {
		index string
		want  []string
	}{
		{"idleness", []string{"main._omp_fn.0", "(no thread working)", "Type: idleness"}},
		{"work", []string{"main._omp_fn.0", "Type: work"}},
		{"spin", []string{"Type: spin"}},
	} {
		cmd := exec.Command(goBin, "tool", "pprof", "-top", "-nodefraction=0", "-sample_index="+c.index, pr.pprof)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		if err := cmd.Run(); err != nil {
			t.Fatalf("go tool pprof -sample_index=%s: %v\n%s", c.index, err, se.String())
		}
		for _, w := range c.want {
			if !strings.Contains(so.String(), w) {
				t.Errorf("pprof -top -sample_index=%s lacks %q:\n%s", c.index, w, so.String())
			}
		}
	}
	// -traces shows the logical stacks: the loop under GOMP_parallel
	// under main, with source lines.
	out, err := exec.Command(goBin, "tool", "pprof", "-traces", "-sample_index=idleness", pr.pprof).CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`main\._omp_fn\.0\s*\n\s*GOMP_parallel\s*\n\s*main`).Match(out) {
		t.Errorf("no trace main > GOMP_parallel > main._omp_fn.0 in:\n%.3000s", out)
	}
}

// Sweeping the timeline as the run goes gives the same profile as keeping
// it all until the end, byte for byte; and two runs are identical.
func TestParallelSweepAtEnd(t *testing.T) {
	for _, c := range []struct{ variant, name string }{{"glibc-static", "threadpool"}, {"glibc-dynamic", "omp_reduce"}} {
		t.Run(c.variant+"/"+c.name, func(t *testing.T) {
			prog := guestBin(t, c.variant, c.name)
			sameParallel(t, runParallel(t, nil, prog), runParallel(t, []string{"--parallel-sweep-at-end"}, prog), "swept at the end")
		})
	}
}

// sameParallel fails unless two runs wrote the same profile and summary,
// byte for byte.
func sameParallel(t *testing.T, a, b parRun, how string) {
	t.Helper()
	for _, f := range [][2]string{{a.json, b.json}, {a.pprof, b.pprof}} {
		x, _ := os.ReadFile(f[0])
		y, _ := os.ReadFile(f[1])
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs when %s (%d and %d bytes)", filepath.Base(f[0]), how, len(x), len(y))
		}
	}
	if a.summary != b.summary {
		t.Errorf("summaries differ when %s:\n%s\n---\n%s", how, a.summary, b.summary)
	}
}

// Runs of blocks of one routine and line reach the analysis as one event
// (trace.Encoding.Fold), and runtime code in periodic runs
// (Encoding.FoldCycles); the profile is the one that every block's own event
// gives, byte for byte: guests with spin loops (libgomp's barriers,
// glibc's and musl's locks), locks, OpenMP, recursion and lazy binding
// (dynamic builds, no LD_BIND_NOW), and xz; spinning as idleness or as
// overhead, idle cores or idle threads.
func TestParallelFold(t *testing.T) {
	type c struct {
		variant, name string
		flags         []string
	}
	spinWork := []string{"--spin", "overhead", "--idle-base", "threads"}
	cases := []c{{"glibc-static", "spin_flag", nil}, {"glibc-static", "omp_imbalance", nil}, {"glibc-static", "par_lock", nil},
		{"glibc-dynamic", "threadpool", nil}, {"glibc-dynamic", "omp_reduce", nil}, {"musl-static", "condvar_pc", nil},
		{"glibc-static-pie", "barrier", nil}, {"glibc-dynamic", "qsort", nil}, {"glibc-static", "signals", nil},
		{"glibc-static", "mutex_counter", nil}, {"musl-static", "mutex_counter", nil}, {"glibc-static", "omp_reduce", nil},
		{"glibc-static", "omp_imbalance", spinWork}, {"musl-static", "spin_flag", spinWork}}
	for _, cs := range cases {
		t.Run(cs.variant+"/"+cs.name+strings.Join(cs.flags, ""), func(t *testing.T) {
			prog := guestBin(t, cs.variant, cs.name)
			sameParallel(t, runParallel(t, cs.flags, prog), runParallel(t, append(cs.flags, "--no-fold"), prog), "every block is an event")
		})
	}
	// Lazy binding through a stripped Debian program's PLT: a stub's jump
	// within the stub section is a tail call, never part of a run.
	t.Run("cat", func(t *testing.T) {
		sameParallel(t, runParallel(t, nil, "/bin/cat", "/etc/passwd"), runParallel(t, []string{"--no-fold"}, "/bin/cat", "/etc/passwd"), "every block is an event")
	})
	// Forked and exec'd processes (pgrp runs /bin/cat): every process's
	// profile.
	t.Run("pgrp", func(t *testing.T) {
		prog := guestBin(t, "glibc-dynamic", "pgrp")
		profiles := func(flags ...string) map[string][]byte {
			dir := t.TempDir()
			a := append(append([]string{"parallel", "--out", dir, "--clear-env"}, flags...), "--", prog)
			if out := run(t, nil, dir, emuprofBin, a...); out.code != 0 {
				t.Fatalf("emuprof %s: exit %d\n%s", strings.Join(a, " "), out.code, out.stderr)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*_parallel.*"))
			m := map[string][]byte{}
			for _, f := range files {
				m[filepath.Base(f)], _ = os.ReadFile(f)
			}
			return m
		}
		a, b := profiles(), profiles("--no-fold")
		if len(a) < 4 || len(a) != len(b) {
			t.Fatalf("%d and %d profiles", len(a), len(b))
		}
		for name, data := range a {
			if !bytes.Equal(data, b[name]) {
				t.Errorf("%s differs when every block is an event", name)
			}
		}
	})
	t.Run("xz", func(t *testing.T) {
		in := filepath.Join(t.TempDir(), "in")
		data := bytes.Repeat([]byte("emuprof folds runs of blocks; xz compresses them. "), 2000)
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"-T2", "-k", "-c", in}
		sameParallel(t, runParallel(t, nil, "/usr/bin/xz", args...), runParallel(t, []string{"--no-fold"}, "/usr/bin/xz", args...), "every block is an event")
	})
}

// --cpus-sweep: par_serial's 4 threads on 1, 2, 4, 8 cores. The speedup
// grows up to 4 cores and stops there; each run keeps the invariant.
func TestParallelCPUsSweep(t *testing.T) {
	dir := t.TempDir()
	prog := guestBin(t, "glibc-static", "par_serial")
	out := run(t, nil, dir, emuprofBin, "parallel", "--out", dir, "--clear-env", "--cpus-sweep", "8,1,2,4", "--", prog)
	if out.code != 0 {
		t.Fatalf("exit %d\n%s", out.code, out.stderr)
	}
	var sw struct {
		Runs []parallel.SweepRow `json:"runs"`
		Stop int                 `json:"stops_after"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "par_serial_parallel_sweep.json"))
	if err == nil {
		err = json.Unmarshal(data, &sw)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Runs) != 4 || sw.Stop != 4 {
		t.Fatalf("sweep %+v, want 4 runs stopping after 4 cores", sw)
	}
	for i, r := range sw.Runs {
		if want := []int{1, 2, 4, 8}[i]; r.CPUs != want {
			t.Errorf("run %d on %d cores, want %d", i, r.CPUs, want)
		}
		var res parallel.Result
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("cpus%d", r.CPUs), "par_serial_parallel.json"))
		if err == nil {
			err = json.Unmarshal(data, &res)
		}
		if err != nil {
			t.Fatal(err)
		}
		if res.Cores != r.CPUs || res.Makespan != r.Makespan ||
			res.Total.Work+res.Total.Idleness+res.Unattr != int64(r.CPUs)*r.Makespan {
			t.Errorf("%d cores: result %d cores, makespan %d (sweep %d), invariant %d != %d", r.CPUs, res.Cores,
				res.Makespan, r.Makespan, res.Total.Work+res.Total.Idleness+res.Unattr, int64(r.CPUs)*r.Makespan)
		}
		if i > 0 && r.CPUs <= 4 && !(r.Speedup > sw.Runs[i-1].Speedup) {
			t.Errorf("no speedup from %d to %d cores: %v", sw.Runs[i-1].CPUs, r.CPUs, sw.Runs)
		}
	}
	if sw.Runs[3].Makespan != sw.Runs[2].Makespan {
		t.Errorf("8 cores (%d ns) differ from 4 (%d ns) for 4 threads", sw.Runs[3].Makespan, sw.Runs[2].Makespan)
	}
	if !strings.Contains(out.stderr, "stops growing (less than 10 % more per step) after 4 core(s)") {
		t.Errorf("summary:\n%s", out.stderr)
	}
	bad := run(t, nil, dir, emuprofBin, "parallel", "--out", dir, "--cpus-sweep", "4", "--", prog)
	if bad.code != 2 || !strings.Contains(bad.stderr, "--cpus-sweep 4: want at least two core counts") {
		t.Errorf("--cpus-sweep 4: exit %d, %q", bad.code, bad.stderr)
	}
}

// pprof files name the program (issue 25 point 9): a mapping per object
// with its path and build id, so `go tool pprof -disasm` finds the binary
// and puts the comparison routine's work on its instructions, in static,
// dynamic (PIE) and static-pie builds; `-list` shows its source line; the
// speedscope file holds one profile per sample type, each summing to the
// profile's total of that type.
func TestParallelPprofNamesProgram(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	for _, variant := range []string{"glibc-static", "glibc-dynamic", "glibc-static-pie"} {
		t.Run(variant, func(t *testing.T) {
			prog := guestBin(t, variant, "qsort")
			pr := runParallel(t, nil, prog, "2000")
			pprof := func(args ...string) string {
				out, err := exec.Command(goBin, append(append([]string{"tool", "pprof"}, args...), pr.pprof)...).CombinedOutput()
				if err != nil {
					t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
				}
				return string(out)
			}
			f, err := elf.Open(prog)
			if err != nil {
				t.Fatal(err)
			}
			note, err := f.Section(".note.gnu.build-id").Data()
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			id := hex.EncodeToString(note[16:])
			if raw := pprof("-raw"); !regexp.MustCompile(`(?m)^1: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ ` + regexp.QuoteMeta(prog) + ` ` + id + ` `).MatchString(raw) {
				t.Errorf("no first mapping naming %s with build id %s:\n%.2000s", prog, id, raw)
			}
			// cmp_int is one line (qsort.c:11): its work is on the
			// line's first instruction.
			if dis := pprof("-disasm=cmp_int", "-sample_index=work"); !regexp.MustCompile(`(?m)^\s+[0-9.]+[mµu]?s\s+[0-9.]+[mµu]?s\s+[0-9a-f]+: .*;cmp_int qsort\.c:11$`).MatchString(dis) {
				t.Errorf("-disasm shows no work on cmp_int's instructions:\n%.2000s", dis)
			}
			if list := pprof("-list=cmp_int", "-sample_index=work"); !regexp.MustCompile(`(?m)^\s+[0-9.]+[mµu]?s\s+[0-9.]+[mµu]?s\s+11:`).MatchString(list) {
				t.Errorf("-list shows no work on qsort.c:11:\n%.2000s", list)
			}
			data, err := os.ReadFile(strings.TrimSuffix(pr.pprof, ".pb.gz") + ".speedscope.json")
			if err != nil {
				t.Fatal(err)
			}
			var ss struct {
				Shared   struct{ Frames []struct{ Name string } }
				Profiles []struct {
					Name    string
					Samples [][]int
					Weights []int64
				}
			}
			if err := json.Unmarshal(data, &ss); err != nil {
				t.Fatal(err)
			}
			if len(ss.Profiles) != len(parallel.SampleTypes) {
				t.Fatalf("speedscope: %d profiles, want %d", len(ss.Profiles), len(parallel.SampleTypes))
			}
			totals := map[string]int64{"work": pr.r.Total.Work, "idleness": pr.r.Total.Idleness + pr.r.Unattr}
			for i, p := range ss.Profiles {
				if p.Name != parallel.SampleTypes[i] || len(p.Samples) != len(p.Weights) {
					t.Errorf("speedscope profile %d: %q, %d samples, %d weights", i, p.Name, len(p.Samples), len(p.Weights))
				}
				var sum int64
				cmpSeen := false
				for j, s := range p.Samples {
					sum += p.Weights[j]
					for _, fr := range s {
						if fr < 0 || fr >= len(ss.Shared.Frames) {
							t.Fatalf("speedscope %s: frame %d of %d", p.Name, fr, len(ss.Shared.Frames))
						}
					}
					cmpSeen = cmpSeen || len(s) > 0 && ss.Shared.Frames[s[len(s)-1]].Name == "cmp_int"
				}
				if want, ok := totals[p.Name]; ok && (sum != want || !cmpSeen) {
					t.Errorf("speedscope %s: total %d, want %d; cmp_int a leaf: %v", p.Name, sum, want, cmpSeen)
				}
			}
		})
	}
}
