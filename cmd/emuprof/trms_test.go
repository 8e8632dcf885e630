package main

// End-to-end tests of `emuprof trms` on real guests: the input sizes and
// growth the aprof papers predict for each program.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"emuprof/analyses/trms"
)

type trmsRun struct {
	rms, drms *trms.Report
	stdout    string
	dir       string
}

func runTrms(t *testing.T, flags []string, prog string, args ...string) trmsRun {
	t.Helper()
	dir := t.TempDir()
	a := append([]string{"trms", "--out", dir, "--clear-env"}, flags...)
	a = append(append(a, "--", prog), args...)
	out := run(t, nil, dir, emuprofBin, a...)
	if out.code != 0 {
		t.Fatalf("emuprof trms %s: exit %d\n%s", prog, out.code, out.stderr)
	}
	var r trmsRun
	r.stdout, r.dir = out.stdout, dir
	paths, _ := filepath.Glob(filepath.Join(dir, "*.aprof"))
	for _, p := range paths {
		rep, err := trms.ReadReportFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Input == trms.InputRMS {
			r.rms = rep
		} else {
			r.drms = rep
		}
	}
	if r.rms == nil || r.drms == nil {
		t.Fatalf("missing reports in %v", paths)
	}
	return r
}

// points returns routine name's tuples, sorted by input size.
func points(t *testing.T, r *trms.Report, name string) []trms.Tuple {
	t.Helper()
	var id uint32
	found := false
	for _, rr := range r.Routines {
		if rr.Name == name {
			id, found = rr.ID, true
		}
	}
	if !found {
		t.Fatalf("routine %s not in the report", name)
	}
	var ts []trms.Tuple
	for _, p := range r.RoutinePoints() {
		if p.ID == id {
			ts = append(ts, p.Tuple)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].N < ts[j].N })
	return ts
}

func summary(t *testing.T, r trmsRun, name string) trms.RoutineSummary {
	t.Helper()
	sums, err := trms.Summarize(r.rms, r.drms)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("%s not in the summary", name)
	return trms.RoutineSummary{}
}

// count_zero over n = 1, 8, ..., 197 ints: the iterative version reads each
// element once, so its RMS grows by exactly one cell per element (k = 4);
// the recursive one has one activation per suffix, every size in between.
func TestTRMSCountZero(t *testing.T) {
	for _, v := range []string{"glibc-static-O0", "glibc-static", "musl-static"} {
		t.Run(v, func(t *testing.T) {
			r := runTrms(t, nil, guestBin(t, v, "count_zero"))
			iter := points(t, r.rms, "count_zero_iter")
			if len(iter) != 29 {
				t.Fatalf("count_zero_iter: %d tuples, want 29 (one per n)", len(iter))
			}
			for i := 1; i < len(iter); i++ {
				if d := iter[i].N - iter[i-1].N; d != 7 {
					t.Fatalf("count_zero_iter: RMS %d then %d: want +7 for 7 more elements", iter[i-1].N, iter[i].N)
				}
			}
			rec := points(t, r.rms, "count_zero_rec")
			for i := 1; i < len(rec); i++ {
				if rec[i].N != rec[i-1].N+1 {
					t.Fatalf("count_zero_rec: RMS values %d, %d not consecutive", rec[i-1].N, rec[i].N)
				}
			}
			if len(rec) != 198 {
				t.Errorf("count_zero_rec: %d distinct RMS, want 198 (suffixes of 0..197 elements)", len(rec))
			}
		})
	}
}

// str_tolower calls strlen in its loop condition: quadratic; addword: linear.
func TestTRMSGrowth(t *testing.T) {
	for _, v := range []string{"glibc-static-O0", "glibc-static"} {
		t.Run(v, func(t *testing.T) {
			r := runTrms(t, nil, guestBin(t, v, "tolower"))
			lower, add := summary(t, r, "str_tolower"), summary(t, r, "addword")
			if lower.RMSFit == nil || lower.RMSFit.C < 1.7 || lower.RMSFit.C > 2.3 {
				t.Errorf("str_tolower fit %+v, want exponent ~2", lower.RMSFit)
			}
			if add.RMSFit == nil || add.RMSFit.C < 0.9 || add.RMSFit.C > 1.1 {
				t.Errorf("addword fit %+v, want exponent ~1", add.RMSFit)
			}
		})
	}
}

// The consumer of the condvar producer/consumer reads one slot that the
// producer rewrites: RMS stays constant, TRMS grows with n (thread-induced).
func TestTRMSProducerConsumer(t *testing.T) {
	var rms, trmsv []uint64
	for _, n := range []string{"100", "200", "400"} {
		r := runTrms(t, nil, guestBin(t, "glibc-static", "condvar_pc"), n)
		c := points(t, r.rms, "consumer")
		d := points(t, r.drms, "consumer")
		if len(c) != 1 || len(d) != 1 {
			t.Fatalf("n=%s: consumer has %d RMS and %d TRMS tuples, want 1 each", n, len(c), len(d))
		}
		rms, trmsv = append(rms, c[0].N), append(trmsv, d[0].N)
		if d[0].ThrSum == 0 {
			t.Errorf("n=%s: no thread-induced input for the consumer", n)
		}
	}
	if rms[0] != rms[1] || rms[1] != rms[2] {
		t.Errorf("consumer RMS %v: want constant", rms)
	}
	// Linear in n: each item brings the slot plus the synchronization words
	// (mutex, condvar) the producer wrote since the consumer last read them.
	perItem1 := float64(trmsv[1]-trmsv[0]) / 100
	perItem2 := float64(trmsv[2]-trmsv[1]) / 200
	if perItem1 < 1 || perItem1 > 40 || perItem2 < 0.95*perItem1 || perItem2 > 1.05*perItem1 {
		t.Errorf("consumer TRMS %v at n = 100, 200, 400: want linear growth of at least 1 per item", trmsv)
	}
}

// sum_file reads a file through a 2-byte buffer: RMS ~1 buffer cell, TRMS
// ~one induced access per read(), all external (kernel writes).
func TestTRMSExternalInput(t *testing.T) {
	dir := t.TempDir()
	var rms, trmsv, ext []uint64
	for _, size := range []int{1000, 5000} {
		p := filepath.Join(dir, "in")
		os.WriteFile(p, bytes.Repeat([]byte("ab"), size/2), 0o644)
		r := runTrms(t, nil, guestBin(t, "glibc-static", "readbuf"), p)
		c, d := points(t, r.rms, "sum_file"), points(t, r.drms, "sum_file")
		if len(c) != 1 || len(d) != 1 {
			t.Fatalf("size %d: sum_file has %d/%d tuples", size, len(c), len(d))
		}
		rms, trmsv, ext = append(rms, c[0].N), append(trmsv, d[0].N), append(ext, d[0].ExtSum)
	}
	if rms[1] != rms[0] {
		t.Errorf("sum_file RMS %v: want constant", rms)
	}
	if grow := trmsv[1] - trmsv[0]; grow < 1900 || grow > 2100 {
		t.Errorf("sum_file TRMS %v: want +~2000 for 2000 more 2-byte reads", trmsv)
	}
	if ext[1]-ext[0] < 1900 {
		t.Errorf("sum_file external input %v: want it to grow with the reads", ext)
	}
}

// Same run twice: byte-identical reports; the guest's own output is intact;
// merging two runs doubles every tuple's call count (aprof's incremental mode).
func TestTRMSDeterministicAndMerge(t *testing.T) {
	prog := guestBin(t, "glibc-static", "wf")
	words, err := os.ReadFile(filepath.Join(filepath.Dir(guestDir), "inputs", "words.txt"))
	if err != nil {
		t.Fatal(err)
	}
	native := run(t, words, t.TempDir(), prog)
	var files [2][]byte
	var rmsPaths [2]string
	for i := range files {
		dir := t.TempDir()
		out := run(t, words, dir, emuprofBin, "trms", "--out", dir, "--clear-env", "--", prog)
		if out.code != 0 || out.stdout != native.stdout {
			t.Fatalf("wf under trms: exit %d, stdout %q, want the native %q", out.code, out.stdout, native.stdout)
		}
		paths, _ := filepath.Glob(filepath.Join(dir, "*_rms.aprof"))
		if len(paths) != 1 {
			t.Fatalf("reports %v", paths)
		}
		rmsPaths[i] = paths[0]
		files[i], _ = os.ReadFile(paths[0])
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("two identical runs gave different reports")
	}
	merged := filepath.Join(t.TempDir(), "merged.aprof")
	if out := run(t, nil, ".", emuprofBin, "merge", "-o", merged, rmsPaths[0], rmsPaths[1]); out.code != 0 {
		t.Fatalf("merge: %s", out.stderr)
	}
	one, _ := trms.ReadReportFile(rmsPaths[0])
	two, _ := trms.ReadReportFile(merged)
	if len(one.Points) == 0 || len(one.Points) != len(two.Points) {
		t.Fatalf("merged report has %d points, single %d", len(two.Points), len(one.Points))
	}
	for i := range one.Points {
		if two.Points[i].Calls != 2*one.Points[i].Calls || two.Points[i].N != one.Points[i].N {
			t.Fatalf("merged point %+v, single %+v", two.Points[i], one.Points[i])
		}
	}
}

// --resolution k: an int array element is 4 bytes, so at k = 1 the
// iterative count_zero's RMS grows by 4 cells per element, at k = 8 by
// one cell every two elements.
func TestTRMSResolution(t *testing.T) {
	prog := guestBin(t, "glibc-static", "count_zero")
	for _, c := range []struct {
		k    string
		step uint64 // RMS growth for 7 more elements
	}{{"1", 28}, {"2", 14}, {"4", 7}} {
		r := runTrms(t, []string{"--resolution", c.k}, prog)
		iter := points(t, r.rms, "count_zero_iter")
		for i := 1; i < len(iter); i++ {
			if d := iter[i].N - iter[i-1].N; d != c.step {
				t.Fatalf("k=%s: RMS %d then %d, want +%d", c.k, iter[i-1].N, iter[i].N, c.step)
			}
		}
	}
	r := runTrms(t, []string{"--resolution", "8"}, prog)
	iter := points(t, r.rms, "count_zero_iter")
	if span := iter[len(iter)-1].N - iter[0].N; span < 96 || span > 100 {
		t.Errorf("k=8: RMS spans %d cells for 196 more elements, want ~98", span)
	}
}

// --cct: per-context tuples folded back per routine equal the plain profile;
// --cost insns counts instructions (more than blocks).
func TestTRMSContextsAndCost(t *testing.T) {
	prog := guestBin(t, "glibc-static", "count_zero")
	plain := runTrms(t, nil, prog)
	cct := runTrms(t, []string{"--cct"}, prog)
	if len(cct.rms.Contexts) == 0 || len(cct.rms.CPoints) == 0 {
		t.Fatal("--cct wrote no calling contexts")
	}
	for _, name := range []string{"count_zero_iter", "count_zero_rec", "main"} {
		a, b := points(t, plain.rms, name), points(t, cct.rms, name)
		if len(a) != len(b) {
			t.Fatalf("%s: %d tuples plain, %d from contexts", name, len(a), len(b))
		}
		for i := range a {
			if a[i].N != b[i].N || a[i].Calls != b[i].Calls || a[i].Sum != b[i].Sum || a[i].Max != b[i].Max {
				t.Fatalf("%s: plain %+v, from contexts %+v", name, a[i], b[i])
			}
		}
	}
	insns := runTrms(t, []string{"--cost", "insns"}, prog)
	if insns.rms.Metric != "instr-count" || insns.rms.TotalCost <= plain.rms.TotalCost {
		t.Errorf("--cost insns: metric %q total %d; blocks total %d", insns.rms.Metric, insns.rms.TotalCost, plain.rms.TotalCost)
	}
}

// With --per-thread, each thread gets its own pair of reports.
func TestTRMSPerThreadReports(t *testing.T) {
	dir := t.TempDir()
	out := run(t, nil, dir, emuprofBin, "trms", "--per-thread", "--out", dir, "--clear-env", "--", guestBin(t, "glibc-static", "condvar_pc"), "50")
	if out.code != 0 {
		t.Fatalf("exit %d: %s", out.code, out.stderr)
	}
	rms, _ := filepath.Glob(filepath.Join(dir, "*_rms.aprof"))
	drms, _ := filepath.Glob(filepath.Join(dir, "*_drms.aprof"))
	if len(rms) != 3 || len(drms) != 3 {
		t.Errorf("reports %v %v: want one RMS and one TRMS report for each of the 3 threads", rms, drms)
	}
}

// A deadlocked guest still gets its profile, marked partial, and exit 3.
func TestTRMSDeadlockWritesProfile(t *testing.T) {
	dir := t.TempDir()
	out := run(t, nil, dir, emuprofBin, "trms", "--out", dir, "--", guestBin(t, "glibc-static", "deadlock"))
	if out.code != 3 {
		t.Fatalf("exit %d, want 3: %s", out.code, out.stderr)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*_drms.aprof"))
	if len(paths) != 1 {
		t.Fatalf("reports: %v", paths)
	}
	r, err := trms.ReadReportFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Partial, "deadlock") || len(points(t, r, "thread_a")) == 0 {
		t.Errorf("partial %q; thread_a tuples %d", r.Partial, len(points(t, r, "thread_a")))
	}
}

// A C++ guest's .aprof reports are written as aprof writes them: the
// demangled name (as c++filt prints it) in the "r" line and the symbol in
// a "u" line, the program as run in the "a" line, no "g" lines, and with
// --cct every "x" line after the routines; the guest's output is the
// native one, and `emuprof merge` merges two runs.
func TestTRMSCxxNames(t *testing.T) {
	prog := guestBin(t, "glibc-static", "cxxsort")
	native := run(t, nil, t.TempDir(), prog)
	var rmsPaths []string
	for _, cct := range []bool{false, true} {
		flags := []string{}
		if cct {
			flags = append(flags, "--cct")
		}
		r := runTrms(t, flags, prog)
		if r.stdout != native.stdout {
			t.Fatalf("stdout %q, want the native %q", r.stdout, native.stdout)
		}
		paths, _ := filepath.Glob(filepath.Join(r.dir, "*.aprof"))
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			if !strings.Contains(text, "\na "+prog+"\n") {
				t.Errorf("%s: no a line with the program %s", p, prog)
			}
			for sym, name := range map[string]string{
				"_ZN3emu14insertion_sortIiEEvRSt6vectorIT_SaIS2_EE.isra.0": "void emu::insertion_sort<int>(std::vector<int, std::allocator<int> >&) [clone .isra.0]",
				"_ZN3emu6Summer3addERKSt6vectorIdSaIdEE":                   "emu::Summer::add(std::vector<double, std::allocator<double> > const&)",
			} {
				re := regexp.MustCompile(`\nr "` + regexp.QuoteMeta(name) + `" "[^"]+" ([0-9]+)\nu ([0-9]+) "` + regexp.QuoteMeta(sym) + `"\n`)
				if m := re.FindStringSubmatch(text); m == nil || m[1] != m[2] {
					t.Errorf("%s: no r line for %s followed by its u line %s", p, name, sym)
				}
			}
			lastR, firstX := strings.LastIndex(text, "\nr "), strings.Index(text, "\nx ")
			if strings.Contains(text, "\ng ") || (cct && (firstX < 0 || firstX < lastR)) || (!cct && firstX >= 0) {
				t.Errorf("%s (cct %v): g lines, or x lines not all after the routines", p, cct)
			}
			if strings.HasSuffix(p, "_rms.aprof") && !cct {
				rmsPaths = append(rmsPaths, p)
			}
		}
	}
	r := runTrms(t, nil, prog)
	p, _ := filepath.Glob(filepath.Join(r.dir, "*_rms.aprof"))
	merged := filepath.Join(t.TempDir(), "merged.aprof")
	if out := run(t, nil, ".", emuprofBin, "merge", "-o", merged, rmsPaths[0], p[0]); out.code != 0 {
		t.Fatalf("merge: %s", out.stderr)
	}
	m, err := trms.ReadReportFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	if m.App != prog || len(m.Routines) == 0 || m.Routines[0].Name == "" {
		t.Errorf("merged report: app %q, %d routines", m.App, len(m.Routines))
	}
}

// Output that scales with threads (issue 25 point 7): by default a process
// of 41 threads writes one pair of reports, named as a single-threaded
// one's, the merge of its threads' (what `emuprof merge` of the
// --per-thread reports gives, which aprof-plot reads), and stderr says in
// one line how many files went where; --list-files names them.
func TestTRMSOneReportPerProcess(t *testing.T) {
	prog := guestBin(t, "glibc-static", "coz_rounds")
	one, per := t.TempDir(), t.TempDir()
	out := run(t, nil, one, emuprofBin, "trms", "--out", one, "--clear-env", "--", prog, "20")
	if out.code != 0 {
		t.Fatalf("exit %d: %s", out.code, out.stderr)
	}
	files, _ := os.ReadDir(one)
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	want := []string{"coz_rounds_1000_4_drms.aprof", "coz_rounds_1000_4_rms.aprof", "coz_rounds_run.json", "coz_rounds_trms.json", "report.html"}
	if !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
	if wrote := fmt.Sprintf("emuprof: wrote 5 files to %s, the page %s (--list-files names them)\n", one, filepath.Join(one, "report.html")); !strings.HasSuffix(out.stderr, wrote) || strings.Count(out.stderr, "emuprof: wrote") != 1 {
		t.Errorf("stderr ends %q, want the one line %q", out.stderr[max(0, len(out.stderr)-300):], wrote)
	}
	pt := run(t, nil, per, emuprofBin, "trms", "--per-thread", "--list-files", "--out", per, "--clear-env", "--", prog, "20")
	if pt.code != 0 {
		t.Fatalf("--per-thread: exit %d: %s", pt.code, pt.stderr)
	}
	for _, kind := range []string{"rms", "drms"} {
		reps, _ := filepath.Glob(filepath.Join(per, "*_"+kind+".aprof"))
		if len(reps) != 41 {
			t.Fatalf("--per-thread: %d %s reports, want 41", len(reps), kind)
		}
		for _, r := range reps {
			if !strings.Contains(pt.stderr, "\n  "+r+"\n") {
				t.Errorf("--list-files does not name %s", r)
			}
		}
		merged := filepath.Join(t.TempDir(), "merged.aprof")
		if m := run(t, nil, per, emuprofBin, append([]string{"merge", "-o", merged}, reps...)...); m.code != 0 {
			t.Fatalf("merge: %s", m.stderr)
		}
		a, _ := trms.ReadReportFile(merged)
		b, err := trms.ReadReportFile(filepath.Join(one, "coz_rounds_1000_4_"+kind+".aprof"))
		if err != nil || a == nil || !reflect.DeepEqual(a.Routines, b.Routines) || !reflect.DeepEqual(a.Points, b.Points) ||
			a.TotalCost != b.TotalCost || len(b.Threads) != 41 {
			t.Errorf("%s: the single report is not the merge of the per-thread ones (%v)", kind, err)
		}
	}
}
