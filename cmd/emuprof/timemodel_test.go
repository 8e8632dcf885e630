package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var makespanRe = regexp.MustCompile(`virtual duration (\d+) ns \(makespan\), (\d+) instructions`)

func makespan(t *testing.T, stderr string) (ns, insns int64) {
	t.Helper()
	m := makespanRe.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no virtual duration in:\n%s", stderr)
	}
	ns, _ = strconv.ParseInt(m[1], 10, 64)
	insns, _ = strconv.ParseInt(m[2], 10, 64)
	return ns, insns
}

// TestTimeModelFlag: --time-model insns charges 1 ns per instruction,
// zen4 prices the run with the table (the guest's output unchanged), a
// table file is read, and a bad value is one line and exit 2.
func TestTimeModelFlag(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(guestDir, "glibc-static", "hello")
	ins := run(t, nil, dir, emuprofBin, "run", "-q", "--stats", "--time-model", "insns", "--", prog)
	zen := run(t, nil, dir, emuprofBin, "run", "-q", "--stats", "--time-model", "zen4", "--", prog)
	if ins.code != 0 || zen.code != 0 || ins.stdout != "hello, world\n" || zen.stdout != ins.stdout {
		t.Fatalf("insns: %d %q %s\nzen4: %d %q %s", ins.code, ins.stdout, ins.stderr, zen.code, zen.stdout, zen.stderr)
	}
	ni, ii := makespan(t, ins.stderr)
	nz, iz := makespan(t, zen.stderr)
	if ni != ii || iz != ii || nz == ni {
		t.Errorf("insns: %d ns for %d instructions; zen4: %d ns for %d: want 1 ns each under insns, another duration under zen4", ni, ii, nz, iz)
	}
	if !strings.Contains(zen.stderr, "emuprof: time model: ") || strings.Contains(ins.stderr, "time model:") {
		t.Errorf("--stats: the model's line only under zen4:\n%s\n%s", ins.stderr, zen.stderr)
	}
	// The same table at a faster clock: instructions and caches cost
	// less, kernel costs the same, so the run is shorter.
	src, err := os.ReadFile("../../timemodel/zen4.table")
	if err != nil {
		t.Fatal(err)
	}
	fast := filepath.Join(dir, "fast.table")
	mhz := regexp.MustCompile(`(?m)^mhz [0-9]+$`)
	if !mhz.Match(src) {
		t.Fatal("no mhz line in zen4.table")
	}
	if err := os.WriteFile(fast, mhz.ReplaceAll(src, []byte("mhz 20000")), 0o644); err != nil {
		t.Fatal(err)
	}
	ff := run(t, nil, dir, emuprofBin, "run", "-q", "--stats", "--time-model", fast, "--", prog)
	if nf, _ := makespan(t, ff.stderr); ff.code != 0 || nf >= nz {
		t.Errorf("a 20000 MHz table: %d ns, exit %d; want less than zen4's %d", nf, ff.code, nz)
	}
	for _, bad := range []string{filepath.Join(dir, "missing"), fast + "x"} {
		if bad == fast+"x" {
			_ = os.WriteFile(bad, append(src, "turbo 1\n"...), 0o644)
		}
		o := run(t, nil, dir, emuprofBin, "run", "--time-model", bad, "--", prog)
		if o.code != 2 || o.stdout != "" || strings.Count(o.stderr, "\n") != 1 || !strings.HasPrefix(o.stderr, "emuprof: --time-model: ") || strings.Contains(o.stderr, "goroutine") {
			t.Errorf("--time-model %s: exit %d, stderr %q; want one line, exit 2", bad, o.code, o.stderr)
		}
	}
}

// TestTimeModelDeterministic: under zen4 a threaded program's parallel
// profile (work, idleness, lock wait in the model's time) is the same
// bytes on every run, and differs from the insns profile.
func TestTimeModelDeterministic(t *testing.T) {
	prog := filepath.Join(guestDir, "glibc-static", "mutex_counter")
	profile := func(model string) map[string][]byte {
		dir := t.TempDir()
		o := run(t, nil, dir, emuprofBin, "parallel", "--out", dir, "--clear-env", "-q", "--time-model", model, "--", prog)
		if o.code != 0 {
			t.Fatalf("parallel --time-model %s: exit %d\n%s", model, o.code, o.stderr)
		}
		files := map[string][]byte{}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[e.Name()] = b
		}
		if len(files) == 0 {
			t.Fatal("no profile written")
		}
		return files
	}
	a, b, ins := profile("zen4"), profile("zen4"), profile("insns")
	same := true
	for name, ab := range a {
		if !bytes.Equal(ab, b[name]) {
			t.Errorf("%s differs between two zen4 runs", name)
		}
		if !bytes.Equal(ab, ins[name]) {
			same = false
		}
	}
	if len(a) != len(b) {
		t.Errorf("files: %d and %d", len(a), len(b))
	}
	if same {
		t.Error("the zen4 profile is the insns one: the model did not reach the analysis")
	}
}

// TestTimeModelDefaults: with no --time-model, a command whose answer is a
// duration runs under zen4 and every other command under insns. The guest
// (vclock, which prints the virtual ns of a loop of cache misses) shows
// which model ran it, and the run record names it; --time-model overrides
// the default.
func TestTimeModelDefaults(t *testing.T) {
	prog := filepath.Join(guestDir, "glibc-static", "vclock")
	ticks := map[string]string{}
	for _, m := range []string{"insns", "zen4"} {
		o := run(t, nil, t.TempDir(), emuprofBin, "run", "-q", "--time-model", m, "--", prog)
		if o.code != 0 || !strings.HasPrefix(o.stdout, "loop took time\n") {
			t.Fatalf("run --time-model %s: %d %q %s", m, o.code, o.stdout, o.stderr)
		}
		ticks[m] = o.stdout
	}
	if ticks["insns"] == ticks["zen4"] {
		t.Fatalf("the two models give the guest the same ticks: %q", ticks["insns"])
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "insns"},
		{[]string{"run", "--stats"}, "zen4"},
		{[]string{"run", "--speedup", "vclock.c:17=0"}, "zen4"},
		{[]string{"run", "--stats", "--time-model", "insns"}, "insns"},
		{[]string{"parallel"}, "zen4"},
		{[]string{"parallel", "--time-model", "insns"}, "insns"},
		{[]string{"causal", "--end-to-end", "--fixed-line", "vclock.c:17", "--fixed-speedup", "0"}, "zen4"},
		{[]string{"trms"}, "insns"},
		{[]string{"trms", "--cost", "time"}, "zen4"},
		{[]string{"paths"}, "insns"},
		{[]string{"profile"}, "zen4"},
		{[]string{"profile", "--analyses", "trms,paths"}, "insns"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		args := append([]string{}, c.args...)
		profiles := args[0] != "run"
		if profiles {
			args = append(args, "--out", filepath.Join(dir, "out"))
		}
		o := run(t, nil, dir, emuprofBin, append(append(args, "-q", "--"), prog)...)
		if o.code != 0 {
			t.Errorf("%v: exit %d: %s", c.args, o.code, o.stderr)
			continue
		}
		if o.stdout != ticks[c.want] {
			t.Errorf("%v: the guest printed %q, which is %s's %q", c.args, o.stdout, c.want, ticks[c.want])
		}
		if !profiles {
			continue
		}
		rec, err := os.ReadFile(filepath.Join(dir, "out", "vclock_run.json"))
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
		} else if !bytes.Contains(rec, []byte(`"time_model": "`+c.want+`"`)) {
			t.Errorf("%v: the run record does not name %s:\n%s", c.args, c.want, rec)
		}
	}
}

// TestTimeModelTSC: under a time model rdtsc reads the model's time even
// inside one slice (a thread alone runs to its next system call): the
// loop's ticks are the model's, not its instruction count, the counter
// still increases between two reads in a row, and runs agree.
func TestTimeModelTSC(t *testing.T) {
	prog := filepath.Join(guestDir, "glibc-static", "rdtsc")
	ins := run(t, nil, t.TempDir(), emuprofBin, "run", "-q", "--time-model", "insns", "--", prog)
	a := run(t, nil, t.TempDir(), emuprofBin, "run", "-q", "--time-model", "zen4", "--", prog)
	b := run(t, nil, t.TempDir(), emuprofBin, "run", "-q", "--time-model", "zen4", "--", prog)
	if a.code != 0 || !strings.HasPrefix(a.stdout, "increasing: yes\n") || a.stdout != b.stdout || a.stdout == ins.stdout {
		t.Errorf("zen4 printed %q and %q; insns %q", a.stdout, b.stdout, ins.stdout)
	}
}
