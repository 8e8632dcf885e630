package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/creack/pty"
)

// runOnTerminal runs emuprof with stderr on a pseudo-terminal and stdout
// on a pipe; it returns what the terminal received and stdout. The status
// line appears at once and is redrawn every millisecond, so that no test
// depends on the run lasting long enough on this host.
func runOnTerminal(t *testing.T, dir string, args ...string) (term, stdout string) {
	t.Helper()
	args = append([]string{args[0], "--status-delay=0", "--status-every=1ms"}, args[1:]...)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(emuprofBin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"LC_ALL=C", "HOME=/nonexistent", "PATH=/usr/bin:/bin"}
	var so bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var got bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // read until the terminal's last writer is gone (EIO)
		defer wg.Done()
		io.Copy(&got, ptmx)
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("emuprof %v: %v\n%s", args, err, got.String())
	}
	wg.Wait()
	return got.String(), so.String()
}

// The status line (issue 14): on a terminal, a run longer than a second
// shows guest instructions and their rate, virtual time, threads and the
// phase on stderr, redrawn in place, and erases it at the end; the guest's
// output is the native one, and the profile is byte for byte the one of a
// run whose stderr is not a terminal, which gets no status at all (nor
// does --quiet on a terminal).
func TestLiveStatus(t *testing.T) {
	prog := guestBin(t, "glibc-static", "qsort")
	const n = "50000"
	native := run(t, nil, t.TempDir(), prog, n)
	dirs := [2]string{t.TempDir(), t.TempDir()}
	term, stdout := runOnTerminal(t, dirs[0], "trms", "--out", dirs[0], "--clear-env", "--", prog, n)
	if stdout == "" || stdout != native.stdout {
		t.Errorf("stdout %.200q, want the native %.200q", stdout, native.stdout)
	}
	lines := strings.Split(term, "\r\x1b[K")
	var status []string
	for _, l := range lines {
		if strings.HasPrefix(l, "emuprof: ") && strings.Contains(l, " instructions (") {
			status = append(status, l)
		}
	}
	if len(status) == 0 {
		t.Fatalf("no status line on the terminal: %q", term)
	}
	running := false // the first lines may come before the thread is seen
	for _, l := range status {
		running = running || strings.Contains(l, "/s), virtual ") && strings.Contains(l, " 1 thread, running")
	}
	if !running {
		t.Errorf("no status line with the rate, virtual time, 1 thread and the phase: %q", status)
	}
	if strings.Contains(status[len(status)-1], "\n") || !erasedBeforeMessages(term) {
		t.Errorf("the status line was not erased before the last messages: %q", term[max(0, len(term)-400):])
	}

	// Not a terminal: no status, same profile.
	out := run(t, nil, dirs[1], emuprofBin, "trms", "--out", dirs[1], "--clear-env", "--", prog, n)
	if strings.Contains(out.stderr, "instructions (") || strings.Contains(out.stderr, "\x1b[K") {
		t.Errorf("status on a stderr that is not a terminal: %q", out.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dirs[0], "*.aprof"))
	if len(files) != 2 {
		t.Fatalf("reports %v", files)
	}
	for _, f := range files {
		a, _ := os.ReadFile(f)
		b, err := os.ReadFile(filepath.Join(dirs[1], filepath.Base(f)))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between the run on a terminal and the other (%v)", filepath.Base(f), err)
		}
	}

	// --quiet on a terminal: nothing but the messages.
	term, _ = runOnTerminal(t, dirs[0], "run", "--quiet", "--clear-env", "--", prog, n)
	if strings.Contains(term, "instructions (") || strings.Contains(term, "\x1b[K") {
		t.Errorf("--quiet: status on the terminal: %q", term)
	}
}

// erasedBeforeMessages reports whether the terminal's last status line
// was erased before emuprof's last messages (the summaries, "wrote").
func erasedBeforeMessages(term string) bool {
	rest := term[strings.LastIndex(term, "\r\x1b[K")+len("\r\x1b[K"):]
	return strings.Contains(rest, "emuprof: wrote ") && !strings.Contains(rest, " instructions (") && !strings.Contains(rest, "copies done")
}

// statusLines returns the status lines drawn on term (those with
// instructions), in order.
func statusLines(term string) []string {
	var out []string
	for _, l := range strings.Split(term, "\r\x1b[K") {
		if strings.HasPrefix(l, "emuprof: ") && strings.Contains(l, " instructions (") {
			out = append(out, l)
		}
	}
	return out
}

// shownInsns reads the instruction count a status line shows ("75.65 M").
func shownInsns(t *testing.T, line string) float64 {
	t.Helper()
	var v float64
	var unit string
	s := strings.TrimPrefix(line, "emuprof: ")
	if _, err := fmt.Sscanf(s, "%g %s", &v, &unit); err != nil {
		t.Fatalf("status line %q: %v", line, err)
	}
	return v * map[string]float64{"k": 1e3, "M": 1e6, "G": 1e9}[unit] // "instructions": 0, below 1000
}

// statsInsns runs emuprof run --stats and returns the instructions of the
// whole run and of the first thread.
func statsInsns(t *testing.T, args ...string) (total, first float64) {
	t.Helper()
	out := run(t, nil, t.TempDir(), emuprofBin, append([]string{"run", "--stats", "--clear-env", "--"}, args...)...)
	if _, err := fmt.Sscanf(out.stderr, "emuprof: virtual duration %g ns (makespan), %g instructions", new(float64), &total); err != nil {
		t.Fatalf("--stats %q: %v", out.stderr, err)
	}
	for _, l := range strings.Split(out.stderr, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "1000" {
			fmt.Sscan(f[2], &first)
		}
	}
	if first == 0 {
		t.Fatalf("--stats: no thread 1000 in %q", out.stderr)
	}
	return total, first
}

// sameDirs checks that dirs a and b hold the same files, byte for byte.
func sameDirs(t *testing.T, a, b string) {
	t.Helper()
	ea, _ := os.ReadDir(a)
	eb, _ := os.ReadDir(b)
	if len(ea) == 0 || len(ea) != len(eb) {
		t.Fatalf("%d files in %s, %d in %s", len(ea), a, len(eb), b)
	}
	for _, e := range ea {
		x, _ := os.ReadFile(filepath.Join(a, e.Name()))
		y, err := os.ReadFile(filepath.Join(b, e.Name()))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between the run on a terminal and the other (%v)", e.Name(), err)
		}
	}
}

// causal --exact runs the program once per (line, speedup) pair while it
// writes: the status line stays through those runs, says how many are
// done, and counts their instructions; the profiles are the bytes of a
// run without a terminal. With --shard 1/3 it counts the shard's runs.
func TestLiveStatusExact(t *testing.T) {
	prog := guestBin(t, "glibc-static", "coz_rounds")
	base, _ := statsInsns(t, prog, "20")
	flags := []string{"causal", "--clear-env", "--exact", "--exact-lines", "1", "--progress", "round_done"}
	for _, c := range []struct {
		shard string
		runs  int
	}{{"", 21}, {"1/3", 7}} {
		t.Run("shard"+strings.ReplaceAll(c.shard, "/", "of"), func(t *testing.T) {
			a := flags
			if c.shard != "" {
				a = append(a, "--shard", c.shard)
			}
			dirs := [2]string{t.TempDir(), t.TempDir()}
			term, _ := runOnTerminal(t, dirs[0], append(append(a, "--out", dirs[0], "--"), prog, "20")...)
			var exact []string
			for _, l := range statusLines(term) {
				if strings.Contains(l, ", writing the profiles, causal --exact runs ") {
					exact = append(exact, l)
				}
			}
			if len(exact) < 2 {
				t.Fatalf("%d status lines during the --exact runs: %q", len(exact), term)
			}
			prevDone, prevInsns := 0, 0.0
			for _, l := range exact {
				var done, total int
				if _, err := fmt.Sscanf(l[strings.LastIndex(l, " runs ")+6:], "%d/%d", &done, &total); err != nil {
					t.Fatalf("status line %q: %v", l, err)
				}
				n := shownInsns(t, l)
				if total != c.runs || done < prevDone || done > total || n < prevInsns {
					t.Errorf("status line %q after %d runs, %.0f instructions: want runs going up to %d and instructions not going down", l, prevDone, prevInsns, c.runs)
				}
				// Each run of the 21 pairs runs about the baseline's
				// instructions: they are counted.
				if done >= 2 && n < base*(1+float64(done)/2) {
					t.Errorf("status line %q: %.0f instructions after %d runs of about %.0f each", l, n, done, base)
				}
				prevDone, prevInsns = done, n
			}
			if !erasedBeforeMessages(term) {
				t.Errorf("the status line was not erased before the last messages: %q", term[max(0, len(term)-400):])
			}
			out := run(t, nil, dirs[1], emuprofBin, append(append(a, "--out", dirs[1], "--"), prog, "20")...)
			if out.code != 0 || strings.Contains(out.stderr, "\x1b[K") {
				t.Fatalf("not on a terminal: exit %d, stderr %q", out.code, out.stderr)
			}
			sameDirs(t, dirs[0], dirs[1])
		})
	}
}

// Followed processes (sh runs qsort in a child): the status line counts
// every process's instructions, not only the first's, and says how many
// processes ran; the profiles are the bytes of a run without a terminal.
func TestLiveStatusFollow(t *testing.T) {
	cmd := []string{"/bin/sh", "-c", guestBin(t, "glibc-static", "qsort") + " 150000 >/dev/null; true"}
	total, sh := statsInsns(t, cmd...)
	dirs := [2]string{t.TempDir(), t.TempDir()}
	term, _ := runOnTerminal(t, dirs[0], append([]string{"trms", "--out", dirs[0], "--clear-env", "--"}, cmd...)...)
	lines := statusLines(term)
	if len(lines) == 0 {
		t.Fatalf("no status line on the terminal: %q", term)
	}
	most := 0.0
	for _, l := range lines {
		n := shownInsns(t, l)
		if n > total*1.001 {
			t.Errorf("status line %q: more than the run's %.0f instructions", l, total)
		}
		most = max(most, n)
	}
	last := lines[len(lines)-1]
	if most < 10*sh || !strings.Contains(last, " threads in 2 processes, ") {
		t.Errorf("status line %q (at most %.0f instructions): want the child's instructions counted (sh alone runs %.0f of %.0f) and 2 processes", last, most, sh, total)
	}
	out := run(t, nil, dirs[1], emuprofBin, append([]string{"trms", "--out", dirs[1], "--clear-env", "--"}, cmd...)...)
	if out.code != 0 {
		t.Fatalf("not on a terminal: exit %d\n%s", out.code, out.stderr)
	}
	sameDirs(t, dirs[0], dirs[1])
}

// paths --copies: the copies run in child processes whose stderr is
// captured; the line says the phase, the time and the copies done.
func TestLiveStatusCopies(t *testing.T) {
	prog := guestBin(t, "glibc-static", "qsort")
	dir := t.TempDir()
	term, _ := runOnTerminal(t, dir, "paths", "--out", dir, "--clear-env", "--copies", "2", "--", prog, "150000")
	var lines []string
	planning := 0
	for _, l := range strings.Split(term, "\r\x1b[K") {
		if strings.HasPrefix(l, "emuprof: running 2 copies of the program, ") {
			lines = append(lines, l)
		}
		if strings.HasPrefix(l, "emuprof: planning run (P3 for 2 copies), ") {
			if len(lines) > 0 {
				t.Errorf("planning line %q after the copies' lines", l)
			}
			planning++
		}
	}
	if len(lines) == 0 || planning == 0 {
		t.Fatalf("no status line while planning (%d) or while the copies ran (%d): %q", planning, len(lines), term)
	}
	prev := 0
	for _, l := range lines {
		var done int
		i := strings.Index(l, ", copies done ")
		if i < 0 {
			t.Fatalf("status line %q without the copies done", l)
		}
		if _, err := fmt.Sscanf(l[i:], ", copies done %d/2", &done); err != nil || done < prev || done > 2 {
			t.Errorf("status line %q after %d copies done (%v)", l, prev, err)
		}
		prev = done
	}
	if !erasedBeforeMessages(term) {
		t.Errorf("the status line was not erased before the last messages: %q", term[max(0, len(term)-400):])
	}
}

// The status line's CPU wrapper hides nothing the guest needs: a
// MAP_NORESERVE mapping is backed on first touch on a terminal too (it
// faulted there once, because the wrapper hid the engine's SetTouch).
func TestLiveStatusReserve(t *testing.T) {
	prog := guestBin(t, "glibc-static", "reserve")
	native := run(t, nil, t.TempDir(), prog)
	term, stdout := runOnTerminal(t, t.TempDir(), "run", "--clear-env", "--", prog)
	if stdout != native.stdout || !strings.Contains(stdout, "reserve 1 TiB: ok") {
		t.Errorf("on a terminal: stdout %q, want the native %q (stderr %q)", stdout, native.stdout, term)
	}
}
