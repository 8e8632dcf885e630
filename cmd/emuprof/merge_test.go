package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// `emuprof merge` refuses, in one line and with exit status 2, what it
// cannot merge: reports of two programs (they were summed under the first
// one's name), a report cut short, a binary file (1.9 KB of escaped bytes
// before); reports of one program merge.
func TestMergeRefusesWhatItCannotMerge(t *testing.T) {
	work := t.TempDir()
	report := func(prog, sub string) string {
		dir := filepath.Join(work, sub)
		out := run(t, nil, work, emuprofBin, "trms", "--out", dir, "--", guestBin(t, "glibc-static", prog))
		if strings.Contains(out.stderr, "panic") {
			t.Fatal(out.stderr)
		}
		p, _ := filepath.Glob(filepath.Join(dir, "*_rms.aprof"))
		if len(p) != 1 {
			t.Fatalf("%s: reports %v (stderr %s)", prog, p, out.stderr)
		}
		return p[0]
	}
	hello1, hello2, exit3 := report("hello", "h1"), report("hello", "h2"), report("exit3", "e")
	data, err := os.ReadFile(hello1)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(work, "cut.aprof")
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(cut, []byte(strings.Join(lines[:len(lines)/2], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	// A line deleted, duplicated or changed (issue 31.7): refused, where
	// the merge claimed a complete result before.
	var altered []string
	for i, edit := range []func([]string) []string{
		func(l []string) []string { return append(slices.Clone(l[:8]), l[9:]...) },
		func(l []string) []string { return append(slices.Clone(l[:9]), l[8:]...) },
		func(l []string) []string {
			l = slices.Clone(l)
			l[len(l)-3] = strings.Replace(l[len(l)-3], " 1", " 2", 1)
			return l
		},
	} {
		p := filepath.Join(work, fmt.Sprintf("altered%d.aprof", i))
		if err := os.WriteFile(p, []byte(strings.Join(edit(lines), "")), 0o644); err != nil {
			t.Fatal(err)
		}
		altered = append(altered, p)
	}
	elfFile := guestBin(t, "glibc-static", "hello")
	out := filepath.Join(work, "merged.aprof")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{hello1, exit3}, exit3 + ": cannot merge with " + hello1 + `: a profile of "` + guestBin(t, "glibc-static", "exit3") + `", not of "` + elfFile + `"`},
		{[]string{hello1, cut}, cut + ": trms: report truncated"},
		{[]string{hello1, elfFile}, elfFile + ": trms: not an aprof report (binary data)"},
		{[]string{hello1, altered[0]}, altered[0] + ": trms: report altered"},
		{[]string{altered[1], hello2}, altered[1] + ": trms: report altered"},
		{[]string{hello1, altered[2]}, altered[2] + ": trms: report altered"},
	} {
		r := run(t, nil, work, emuprofBin, append([]string{"merge", "-o", out}, tc.args...)...)
		noGoTrace(t, "merge", r.stderr)
		if r.code != 2 || !strings.HasPrefix(r.stderr, "emuprof: "+tc.want) || strings.Count(r.stderr, "\n") != 1 || len(r.stderr) > 400 {
			t.Errorf("merge %v: exit %d, stderr %q; want exit 2 and one line %q", tc.args, r.code, r.stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("merge %v wrote %s", tc.args, out)
		}
	}
	if r := run(t, nil, work, emuprofBin, "merge", "-o", out, hello1, hello2); r.code != 0 {
		t.Errorf("merging two runs of hello: exit %d, %s", r.code, r.stderr)
	}
}

// merge -o writes its output as a shell's > would (issue 31.1): a device
// is written in place (a copy of /dev/full reports ENOSPC, exit 2, and
// stays a device; /dev/null stays /dev/null), a FIFO is written to, a
// symlink is followed, a directory is refused; its inputs are read once,
// so FIFOs work as inputs. It refuses to mix --cct and plain reports
// (issue 25.8: aprof-plot would show half the data).
func TestMergeOutputTargets(t *testing.T) {
	work := t.TempDir()
	hello := guestBin(t, "glibc-static", "hello")
	report := func(sub string, flags ...string) string {
		dir := filepath.Join(work, sub)
		args := append(append([]string{"trms", "--out", dir}, flags...), "--", hello)
		if out := run(t, nil, work, emuprofBin, args...); out.code != 0 {
			t.Fatalf("trms: exit %d: %s", out.code, out.stderr)
		}
		p, _ := filepath.Glob(filepath.Join(dir, "*_rms.aprof"))
		if len(p) != 1 {
			t.Fatalf("reports %v", p)
		}
		return p[0]
	}
	a, b, c := report("a"), report("b"), report("c", "--cct")
	want := filepath.Join(work, "want.aprof")
	if r := run(t, nil, work, emuprofBin, "merge", "-o", want, a, b); r.code != 0 {
		t.Fatalf("merge: exit %d: %s", r.code, r.stderr)
	}
	wantData, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name string, mode uint32, dev int) string {
		p := filepath.Join(work, name)
		if err := syscall.Mknod(p, mode, dev); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full, null := mk("full", syscall.S_IFCHR|0o666, 1<<8|7), mk("null", syscall.S_IFCHR|0o666, 1<<8|3)
	inFifo, outFifo := mk("in.fifo", syscall.S_IFIFO|0o644, 0), mk("out.fifo", syscall.S_IFIFO|0o644, 0)
	r := run(t, nil, work, emuprofBin, "merge", "-o", full, a, b)
	if r.code != 2 || !strings.Contains(r.stderr, full+": no space left on device") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("merge -o /dev/full: exit %d, stderr %q; want exit 2 and ENOSPC", r.code, r.stderr)
	}
	if r := run(t, nil, work, emuprofBin, "merge", "-o", null, a, b); r.code != 0 {
		t.Errorf("merge -o /dev/null: exit %d: %s", r.code, r.stderr)
	}
	for _, dev := range []string{full, null} {
		if st, err := os.Lstat(dev); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("%s is no longer a device (%v)", dev, err)
		}
	}
	// The FIFOs: a writer of the input, a reader of the output.
	got := make(chan []byte, 1)
	go func() {
		if f, err := os.OpenFile(inFifo, os.O_WRONLY, 0); err == nil {
			data, _ := os.ReadFile(a)
			f.Write(data)
			f.Close()
		}
	}()
	go func() {
		data, _ := os.ReadFile(outFifo)
		got <- data
	}()
	if r := run(t, nil, work, emuprofBin, "merge", "-o", outFifo, inFifo, b); r.code != 0 {
		t.Fatalf("merge -o FIFO FIFO: exit %d: %s", r.code, r.stderr)
	}
	if st, err := os.Lstat(outFifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the output FIFO was replaced (%v)", err) // its reader waits still
	}
	if data := <-got; string(data) != string(wantData) {
		t.Errorf("the FIFO got %d bytes, want the %d of the merged report", len(data), len(wantData))
	}
	target := filepath.Join(work, "target.aprof")
	link := filepath.Join(work, "link.aprof")
	if err := os.Symlink("target.aprof", link); err != nil {
		t.Fatal(err)
	}
	if r := run(t, nil, work, emuprofBin, "merge", "-o", link, a, b); r.code != 0 {
		t.Errorf("merge -o symlink: exit %d: %s", r.code, r.stderr)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced (%v)", err)
	}
	if data, err := os.ReadFile(target); err != nil || string(data) != string(wantData) {
		t.Errorf("the symlink's target: %d bytes, %v; want the merged report", len(data), err)
	}
	dir := filepath.Join(work, "dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := run(t, nil, work, emuprofBin, "merge", "-o", dir, a, b); r.code != 2 || !strings.Contains(r.stderr, dir+": is a directory") {
		t.Errorf("merge -o DIR: exit %d, stderr %q; want exit 2 and 'is a directory'", r.code, r.stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("merge -o DIR left %v", ents)
	}
	mixed := filepath.Join(work, "mixed.aprof")
	r = run(t, nil, work, emuprofBin, "merge", "-o", mixed, a, c)
	if r.code != 2 || !strings.Contains(r.stderr, "a --cct report") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("merge plain and --cct: exit %d, stderr %q; want exit 2, one line", r.code, r.stderr)
	}
	if _, err := os.Stat(mixed); err == nil {
		t.Errorf("merge of plain and --cct reports wrote %s", mixed)
	}
	ents, _ := os.ReadDir(work)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// A stop while merge waits for an input (a FIFO nobody writes) ends it
// with the signal's status and writes nothing: watching the signals for
// the whole run must not make emuprof unkillable there.
func TestMergeStoppedWaitingForInput(t *testing.T) {
	work := t.TempDir()
	fifo, out := filepath.Join(work, "in.fifo"), filepath.Join(work, "out.aprof")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	var se strings.Builder
	cmd := exec.Command(emuprofBin, "merge", "-o", out, fifo)
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Sent once a thread waits to open the FIFO: emuprof's handler exists.
	for !openingFIFO(cmd.Process.Pid) {
		time.Sleep(time.Millisecond)
	}
	if code := exitCode(signalAndWait(t, cmd, syscall.SIGTERM)); code != 143 || se.String() != "emuprof: terminated by SIGTERM\n" {
		t.Errorf("exit %d, stderr %q; want 143 and the line saying so", code, se.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written", out)
	}
}

// openingFIFO says whether a thread of process pid waits in open(2) for a
// FIFO's other end (Linux: wchan wait_for_partner).
func openingFIFO(pid int) bool {
	ws, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
	for _, w := range ws {
		if b, _ := os.ReadFile(w); string(b) == "wait_for_partner" {
			return true
		}
	}
	return false
}
