package main

// End-to-end tests of `emuprof paths`: the path counts of the pathfreq
// guest's routines equal the counts the guest computes from its inputs
// and prints, in every build flavour.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"emuprof/analyses/paths"
	"emuprof/internal/fstree"
)

type pathsRun struct {
	prof    *paths.Profile
	stdout  string // the guest's
	summary string // emuprof's, on stderr
	file    string
}

func runPaths(t *testing.T, flags []string, prog string, args ...string) pathsRun {
	t.Helper()
	dir := t.TempDir()
	a := append([]string{"paths", "--out", dir, "--clear-env"}, flags...)
	a = append(append(a, "--", prog), args...)
	out := run(t, nil, dir, emuprofBin, a...)
	if out.code != 0 {
		t.Fatalf("emuprof paths %s: exit %d\n%s", prog, out.code, out.stderr)
	}
	file := filepath.Join(dir, filepath.Base(prog)+"_paths.json")
	prof, err := paths.ReadProfile(file)
	if err != nil {
		t.Fatal(err)
	}
	return pathsRun{prof, out.stdout, summaryOf(out.stderr), file}
}

func pathsRoutine(t *testing.T, pr *paths.Profile, name string) paths.Routine {
	t.Helper()
	for _, r := range pr.Routines {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("routine %s not in the profile", name)
	return paths.Routine{}
}

func sortedCounts(r paths.Routine) []uint64 {
	var cs []uint64
	for _, p := range r.Paths {
		cs = append(cs, p.Count)
	}
	slices.Sort(cs)
	return cs
}

// guestNumbers returns the numbers on the guest's output lines starting
// with prefix, in order.
func guestNumbers(t *testing.T, stdout, prefix string) []uint64 {
	t.Helper()
	var out []uint64
	for _, line := range strings.Split(stdout, "\n") {
		if !strings.HasPrefix(line, prefix+" ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, err := strconv.ParseUint(f, 10, 64); err == nil {
				out = append(out, v)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("guest printed no %q line:\n%s", prefix, stdout)
	}
	return out
}

func sum(xs []uint64) uint64 {
	var s uint64
	for _, x := range xs {
		s += x
	}
	return s
}

func TestPathsFrequencies(t *testing.T) {
	for _, v := range append(slices.Clone(variants), "glibc-static-O0") {
		t.Run(v, func(t *testing.T) {
			r := runPaths(t, nil, guestBin(t, v, "pathfreq"))
			pr := r.prof
			if pr.Copies != 1 || len(pr.ProbeHits) != 1 || pr.ProbeHits[0] == 0 || pr.Partial != "" {
				t.Errorf("copies %d probe_hits %v partial %q", pr.Copies, pr.ProbeHits, pr.Partial)
			}
			check := func(name string, numPaths string, want []uint64) paths.Routine {
				t.Helper()
				rt := pathsRoutine(t, pr, name)
				slices.Sort(want)
				if got := sortedCounts(rt); !slices.Equal(got, want) {
					t.Errorf("%s: path counts %v, guest says %v", name, got, want)
				}
				if numPaths != "" && string(rt.NumPaths) != numPaths {
					t.Errorf("%s: num_paths %s, want %s", name, rt.NumPaths, numPaths)
				}
				if rt.CFG != paths.CFGStatic || len(rt.Truncated) != 0 || rt.Lost != 0 {
					t.Errorf("%s: cfg %s, truncated %v, lost %d", name, rt.CFG, rt.Truncated, rt.Lost)
				}
				for _, p := range rt.Paths {
					if len(p.Blocks) == 0 || len(p.Lines) != len(p.Blocks) {
						t.Errorf("%s: path %s has %d blocks and %d lines", name, p.ID, len(p.Blocks), len(p.Lines))
					}
					for _, l := range p.Lines {
						if !strings.Contains(l, "pathfreq.c:") {
							t.Errorf("%s: path %s line %q not in pathfreq.c", name, p.ID, l)
							break
						}
					}
				}
				return rt
			}
			// Eight paths through three independent diamonds, each as
			// often as the guest made its combination run.
			check("diamonds", "8", guestNumbers(t, r.stdout, "diamonds"))
			// The loop: one path per iteration and one per call, by kind.
			lc := guestNumbers(t, r.stdout, "loop calls")
			calls, iters := lc[0], lc[1]
			kinds := guestNumbers(t, r.stdout, "loop entry-odd")
			loop := check("loop", "6", kinds)
			if got := sum(sortedCounts(loop)); got != calls+iters {
				t.Errorf("loop: %d path executions, want calls + iterations = %d", got, calls+iters)
			}
			check("more", "1", []uint64{calls + iters})
			// Recursion: each activation has its own path register.
			rc := guestNumbers(t, r.stdout, "rec calls")
			rec := check("rec", "3", rc[1:])
			if got := sum(sortedCounts(rec)); got != rc[0] {
				t.Errorf("rec: %d path executions, want %d activations", got, rc[0])
			}
			// The switch goes through a jump table, recovered statically.
			check("sw", "9", guestNumbers(t, r.stdout, "sw"))
			if !strings.Contains(r.summary, "paths: ") || !strings.Contains(r.summary, "pathfreq.c:") {
				t.Errorf("summary missing or without source lines:\n%s", r.summary)
			}
		})
	}
}

// The profile is the same, byte for byte, on every run, and `emuprof
// profile --analyses paths` is `emuprof paths`.
func TestPathsDeterministic(t *testing.T) {
	prog := guestBin(t, "glibc-static", "pathfreq")
	a := runPaths(t, nil, prog)
	b := runPaths(t, nil, prog)
	da, _ := os.ReadFile(a.file)
	db, _ := os.ReadFile(b.file)
	if !bytes.Equal(da, db) || len(da) == 0 {
		t.Errorf("two runs wrote different profiles (%d and %d bytes)", len(da), len(db))
	}
	dir := t.TempDir()
	out := run(t, nil, dir, emuprofBin, "profile", "--analyses", "paths", "--out", dir, "--clear-env", "--", prog)
	dc, err := os.ReadFile(filepath.Join(dir, "pathfreq_paths.json"))
	if out.code != 0 || err != nil || !bytes.Equal(da, dc) {
		t.Errorf("profile --analyses paths: exit %d, err %v, same %v\n%s", out.code, err, bytes.Equal(da, dc), out.stderr)
	}
}

var p3Fields = regexp.MustCompile(`(?s)\n "copies": \d+,\n "probe_hits": \[[^\]]*\],`)

// stripCopies removes copies and probe_hits from a paths profile.
func stripCopies(t *testing.T, file string) ([]byte, int) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(p3Fields.FindAll(data, -1)) != 1 {
		t.Fatalf("%s: no copies/probe_hits fields", file)
	}
	return p3Fields.ReplaceAll(data, nil), len(data)
}

// P3's merged profile is SBL's, byte for byte but for copies and
// probe_hits, for k = 2, 3, 4, 8 (and PBL), on the path guest, a sort
// and real programs.
func TestPathsP3Merge(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.txt")
	var text bytes.Buffer
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&text, "%d line %d\n", (i*7919)%3001, i)
	}
	if err := os.WriteFile(in, text.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		prog string
		args []string
		ks   []int
	}{
		{"pathfreq", guestBin(t, "glibc-static", "pathfreq"), nil, []int{2, 3, 4, 8}},
		{"pathfreq-O0", guestBin(t, "glibc-static-O0", "pathfreq"), nil, []int{2, 3, 4, 8}},
		{"pathfreq-dynamic", guestBin(t, "glibc-dynamic", "pathfreq"), nil, []int{3}},
		{"qsort", guestBin(t, "musl-static", "qsort"), []string{"3000"}, []int{2, 8}},
		{"sort", "/usr/bin/sort", []string{in}, []int{2, 4}},
		{"gzip", "/usr/bin/gzip", []string{"-c", in}, []int{2, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sbl := runPaths(t, nil, c.prog, c.args...)
			want, _ := stripCopies(t, sbl.file)
			for _, k := range c.ks {
				for _, pbl := range []bool{false, true} {
					flags := []string{"--p3", strconv.Itoa(k)}
					if pbl {
						flags = append(flags, "--pbl")
					}
					r := runPaths(t, flags, c.prog, c.args...)
					got, _ := stripCopies(t, r.file)
					if !bytes.Equal(got, want) {
						t.Errorf("%v: merged profile differs from SBL's", flags)
					}
					if r.prof.Copies != k || len(r.prof.ProbeHits) != k {
						t.Errorf("%v: copies %d, probe_hits %v", flags, r.prof.Copies, r.prof.ProbeHits)
					}
					if !strings.Contains(r.summary, "slowest copy:") {
						t.Errorf("%v: no overhead table:\n%s", flags, r.summary)
					}
				}
			}
		})
	}
}

// Four threads run the same routine, switched every few instructions
// (--quantum): every activation keeps its own path register, so the counts
// are the program's whatever the interleaving; P3 merged == SBL holds for
// threads too.
func TestPathsThreads(t *testing.T) {
	for _, v := range append(slices.Clone(variants), "glibc-static-O0") {
		t.Run(v, func(t *testing.T) {
			prog := guestBin(t, v, "pathfreq_mt")
			for _, q := range []string{"5"} {
				r := runPaths(t, []string{"--quantum", q}, prog)
				rt := pathsRoutine(t, r.prof, "diamonds2")
				want := guestNumbers(t, r.stdout, "diamonds2")
				if got := sortedCounts(rt); !slices.Equal(got, want) || rt.NumPaths != "4" || len(rt.Truncated) != 0 {
					t.Errorf("quantum %s: diamonds2 counts %v (num_paths %s, truncated %v), guest says %v", q, got, rt.NumPaths, rt.Truncated, want)
				}
			}
			if v != "glibc-static" {
				return
			}
			sbl := runPaths(t, []string{"--quantum", "5"}, prog)
			p3 := runPaths(t, []string{"--quantum", "5", "--p3", "3"}, prog)
			a, _ := stripCopies(t, sbl.file)
			b, _ := stripCopies(t, p3.file)
			if !bytes.Equal(a, b) {
				t.Errorf("--p3 3: merged profile differs from SBL's")
			}
		})
	}
}

// P3's copies as separate emulations (issue 11 point 5): `--copies K`
// runs a planning run and K concurrent child emulations, each observing
// only the routines it profiles, and merges their shards. The merge must
// equal the single-emulation `--p3 K` profile byte for byte (and SBL's
// but for copies and probe_hits), on several guests, builds and K; stdin
// is read once and replayed to every run; `--copy i/K` shards joined by
// `emuprof merge --plan` give the same bytes.
func TestPathsCopies(t *testing.T) {
	var text bytes.Buffer
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&text, "%d line %d\n", (i*7919)%2003, i)
	}
	// gzip's main calls a local function that calls exit: a copy that
	// profiles main (or glibc's __libc_start_call_main, which calls main)
	// but not that function took exit for its own callee and refused the
	// plan ("CFG differs"), on 1 MB at K = 4 and on 20 KB at K = 3.
	gzIn := filepath.Join(t.TempDir(), "gzip.txt")
	var gzText bytes.Buffer
	for i := 0; gzText.Len() < 20000; i++ {
		fmt.Fprintf(&gzText, "%d gzip line %d %s\n", (i*7919)%2003, i, strings.Repeat("ab", i%13))
	}
	if err := os.WriteFile(gzIn, gzText.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		prog  string
		args  []string
		k     int
		stdin []byte
		flags []string
	}{
		{"pathfreq-static", guestBin(t, "glibc-static", "pathfreq"), nil, 2, nil, nil},
		{"pathfreq-musl", guestBin(t, "musl-static", "pathfreq"), nil, 3, nil, nil},
		{"pathfreq-dynamic", guestBin(t, "glibc-dynamic", "pathfreq"), nil, 2, nil, nil},
		{"pathfreq-pie", guestBin(t, "glibc-static-pie", "pathfreq"), nil, 8, nil, nil},
		{"pathfreq_mt", guestBin(t, "glibc-static", "pathfreq_mt"), nil, 4, nil, []string{"--quantum", "5"}},
		{"qsort-musl", guestBin(t, "musl-static", "qsort"), []string{"2000"}, 2, nil, []string{"--p3-cost", "profile"}},
		{"sort-stdin", "/usr/bin/sort", nil, 4, text.Bytes(), []string{"--p3-cost", "profile", "--p3-callers", "any"}},
		{"gzip-exit", "/usr/bin/gzip", []string{"-c", gzIn}, 3, nil, nil},
		// Signal handlers: a timer's in a profiled loop (the copies cut
		// the loop's path at every signal before, and refused), and the
		// signals guest's nested, alternate-stack, faulting and
		// siglongjmp handlers.
		{"pathsig", guestBin(t, "glibc-static", "pathsig"), nil, 2, nil, nil},
		{"signals", guestBin(t, "glibc-static", "signals"), nil, 3, nil, nil},
		// musl's sigsetjmp tail-jumps to __sigsetjmp_tail, and siglongjmp
		// lands in it again: a copy that profiles sigsetjmp but not its
		// caller took the landing for its old activation and cut its
		// path, so the merge refused (with the default profile costs).
		{"signals-musl", guestBin(t, "musl-static", "signals"), nil, 2, nil, nil},
		// vfork pops its return address (and musl's sigsetjmp, whose code
		// siglongjmp lands in): the copies refused with "CFG differs".
		{"vfork", guestBin(t, "glibc-static", "procs"), nil, 2, nil, nil},
		{"vfork-musl", guestBin(t, "musl-static", "procs"), nil, 3, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			k := strconv.Itoa(c.k)
			native := run(t, c.stdin, dir, c.prog, c.args...).code // procs exits with 3
			emu := func(out string, extra ...string) outcome {
				a := append([]string{"paths", "--out", filepath.Join(dir, out), "--clear-env"}, c.flags...)
				a = append(append(append(a, extra...), "--", c.prog), c.args...)
				o := run(t, c.stdin, dir, emuprofBin, a...)
				if o.code != native {
					t.Fatalf("emuprof %v: exit %d\n%s", a, o.code, o.stderr)
				}
				return o
			}
			file := func(out string) []byte {
				data, err := os.ReadFile(filepath.Join(dir, out, filepath.Base(c.prog)+"_paths.json"))
				if err != nil {
					t.Fatal(err)
				}
				return data
			}
			one := emu("p3", "--p3", k, "--plan-out", filepath.Join(dir, "plan.json"))
			copies := emu("copies", "--copies", k)
			if got, want := file("copies"), file("p3"); !bytes.Equal(got, want) {
				t.Errorf("--copies %s: merged profile differs from --p3 %s's", k, k)
			}
			if g, w := copies.stdout, one.stdout; g != w || w == "" {
				t.Errorf("--copies: the guest's output %q, not the program's %q", g, w)
			}
			if c.stdin == nil {
				emu("sbl")
				want, _ := stripCopies(t, filepath.Join(dir, "sbl", filepath.Base(c.prog)+"_paths.json"))
				got, _ := stripCopies(t, filepath.Join(dir, "copies", filepath.Base(c.prog)+"_paths.json"))
				if !bytes.Equal(got, want) {
					t.Errorf("--copies %s: merged profile differs from SBL's", k)
				}
			}
			// Shards, as on other machines, joined by emuprof merge.
			var shards []string
			for i := 0; i < c.k; i++ {
				emu("shards", "--copy", fmt.Sprintf("%d/%d", i, c.k), "--plan", filepath.Join(dir, "plan.json"))
				shards = append(shards, filepath.Join(dir, "shards", paths.ShardName(c.prog, i, c.k)))
			}
			merged := filepath.Join(dir, "merged.json")
			o := run(t, nil, dir, emuprofBin, append([]string{"merge", "--plan", filepath.Join(dir, "plan.json"), "-o", merged}, shards...)...)
			if o.code != 0 {
				t.Fatalf("emuprof merge: exit %d\n%s", o.code, o.stderr)
			}
			if got, _ := os.ReadFile(merged); !bytes.Equal(got, file("p3")) {
				t.Errorf("merge of the --copy shards differs from --p3 %s's profile", k)
			}
			// A shard missing, or of another plan, fails the merge loudly.
			if c.k > 1 {
				o := run(t, nil, dir, emuprofBin, append([]string{"merge", "--plan", filepath.Join(dir, "plan.json"), "-o", merged}, shards[1:]...)...)
				if o.code != 2 || !strings.Contains(o.stderr, "shards for a plan of") {
					t.Errorf("merge without copy 0: exit %d, %q", o.code, o.stderr)
				}
			}
		})
	}
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fsTree describes every file under dir (fstree.Describe), with the
// modification time of regular files when it was set explicitly (older
// than since).
func fsTree(t *testing.T, dir string, since time.Time) []string {
	t.Helper()
	out, err := fstree.Describe(dir, since)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPathsCopiesFiles: under `paths --copies K` the program's file changes
// happen once, as in a native run (each copy works in a private overlay;
// copy 0's is applied at the end), the merged profile is plain
// Ball-Larus's, and with --dry-fs the files stay untouched (issue 11.5).
func TestPathsCopiesFiles(t *testing.T) {
	old := time.Unix(1_600_000_000, 0)
	var archive bytes.Buffer
	{
		src := t.TempDir()
		for i := range 20 {
			writeFile(t, filepath.Join(src, "tree", fmt.Sprintf("d%d", i%3), fmt.Sprintf("f%02d", i)), strings.Repeat(fmt.Sprintf("line %d\n", i), 50*i))
		}
		if err := os.Symlink("d0/f00", filepath.Join(src, "tree", "link")); err != nil {
			t.Fatal(err)
		}
		o := run(t, nil, src, "tar", "--mtime=@1500000000", "--sort=name", "-cf", "-", "tree")
		if o.code != 0 {
			t.Fatalf("tar c: %s", o.stderr)
		}
		archive.WriteString(o.stdout)
	}
	var text strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&text, "%d %s\n", (i*7919)%3001, strings.Repeat("x", i%17))
	}
	cases := []struct {
		name  string
		prog  string
		args  []string
		k     int
		setup map[string]string
	}{
		// A counter file deleted and created again, an appended log, a
		// rename into place; the loop's length depends on the counter.
		{"pathsfs-static", guestBin(t, "glibc-static", "pathsfs"), nil, 2, map[string]string{"state.txt": "3\n", "log.txt": "earlier\n"}},
		{"pathsfs-musl", guestBin(t, "musl-static", "pathsfs"), nil, 3, map[string]string{"state.txt": "1\n"}},
		// sort -o FILE FILE reads FILE, then truncates and writes it.
		{"sort-o", "/usr/bin/sort", []string{"-n", "-o", "data.txt", "data.txt"}, 4, map[string]string{"data.txt": text.String()}},
		// gzip replaces its input by the .gz, with the input's times.
		{"gzip", "/bin/gzip", []string{"data.txt"}, 2, map[string]string{"data.txt": text.String()}},
		// tar x creates directories, files and a link, and sets times.
		{"tar-x", "/usr/bin/tar", []string{"-xf", "a.tar"}, 3, map[string]string{"a.tar": archive.String(), "tree/d1/f01": "replaced by tar"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			setup := func() string {
				d := t.TempDir()
				for name, data := range c.setup {
					writeFile(t, filepath.Join(d, name), data)
					if err := os.Chtimes(filepath.Join(d, name), old, old); err != nil {
						t.Fatal(err)
					}
				}
				return d
			}
			since := time.Now().Add(-time.Hour)
			nat := setup()
			if o := run(t, nil, nat, c.prog, c.args...); o.code != 0 {
				t.Fatalf("native %s: exit %d %s", c.prog, o.code, o.stderr)
			}
			want := fsTree(t, nat, since)
			out := t.TempDir()
			emu := func(name string, extra ...string) (string, []string) {
				d := setup()
				a := append([]string{"paths", "-q", "--clear-env", "--out", filepath.Join(out, name)}, extra...)
				a = append(append(a, "--", c.prog), c.args...)
				if o := run(t, nil, d, emuprofBin, a...); o.code != 0 {
					t.Fatalf("emuprof %v: exit %d\n%s", a, o.code, o.stderr)
				}
				return filepath.Join(out, name, filepath.Base(c.prog)+"_paths.json"), fsTree(t, d, since)
			}
			sblFile, sblTree := emu("sbl")
			if !slices.Equal(sblTree, want) {
				t.Errorf("plain paths left\n%s\nnative\n%s", strings.Join(sblTree, "\n"), strings.Join(want, "\n"))
			}
			k := strconv.Itoa(c.k)
			copiesFile, copiesTree := emu("copies", "--copies", k)
			if !slices.Equal(copiesTree, want) {
				t.Errorf("--copies %s left\n%s\nnative\n%s", k, strings.Join(copiesTree, "\n"), strings.Join(want, "\n"))
			}
			sbl, _ := stripCopies(t, sblFile)
			if got, _ := stripCopies(t, copiesFile); !bytes.Equal(got, sbl) {
				t.Errorf("--copies %s: merged profile differs from SBL's", k)
			}
			_, dryTree := emu("dry", "--copies", k, "--dry-fs")
			start := fsTree(t, setup(), since)
			if !slices.Equal(dryTree, start) {
				t.Errorf("--dry-fs left\n%s\ninstead of\n%s", strings.Join(dryTree, "\n"), strings.Join(start, "\n"))
			}
		})
	}
}

// TestPathsCopiesOutDir: with --out's default, the guest's working
// directory, a guest that lists it sees what it would natively: the
// copies' private files live elsewhere and the plan appears with the
// profile, after every run (before, `ls -a` saw them appear between the
// planning run and the copies, and the merge refused).
func TestPathsCopiesOutDir(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a"), "x")
	native := run(t, nil, dir, "/bin/ls", "-a")
	o := run(t, nil, dir, emuprofBin, "paths", "-q", "--clear-env", "--copies", "2", "--", "/bin/ls", "-a")
	if o.code != 0 || o.stdout != native.stdout {
		t.Fatalf("--copies 2 -- ls -a: exit %d, stdout %q, natively %q\n%s", o.code, o.stdout, native.stdout, o.stderr)
	}
	for _, f := range []string{"ls_paths.json", "ls_paths.plan.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written", f)
		}
	}
}

// P3's default plan never does worse than Ball-Larus (issue 25 point 5):
// on gzip -c of a text, `--p3 4` and `--copies 4` with the default cost
// have their slowest copy execute no more probes than SBL, nor than the
// plan of either cost chosen explicitly (the paper's static costs, the
// default before, paid 70 % of SBL's probe hits there, profile costs 7 %).
func TestPathsP3DefaultBeatsSBL(t *testing.T) {
	words := strings.Fields("the of a profiler emulator path copy probe routine block and to in is that deterministic for it with as run on")
	var text bytes.Buffer
	for i, x := 0, uint32(1); text.Len() < 200000; i++ {
		x = x*1103515245 + 12345
		text.WriteString(words[(x>>16)%uint32(len(words))])
		if i%13 == 12 {
			text.WriteString(".\n")
		} else {
			text.WriteByte(' ')
		}
	}
	in := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(in, text.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	slowest := func(flags ...string) uint64 {
		r := runPaths(t, flags, "/usr/bin/gzip", "-c", in)
		if len(flags) > 0 && len(r.prof.ProbeHits) != 4 {
			t.Fatalf("%v: probe hits %v, want 4 copies", flags, r.prof.ProbeHits)
		}
		return slices.Max(r.prof.ProbeHits)
	}
	best := slowest() // SBL
	for _, cost := range []string{"static", "profile"} {
		best = min(best, slowest("--p3", "4", "--p3-cost", cost))
	}
	for _, flags := range [][]string{{"--p3", "4"}, {"--copies", "4"}} {
		if got := slowest(flags...); got > best {
			t.Errorf("%v: slowest copy %d probe hits; SBL or an explicit --p3-cost gives %d", flags, got, best)
		}
	}
}
