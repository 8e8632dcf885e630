package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"emuprof/analyses/trms"
	"emuprof/internal/stophook"
)

// Issue 31.2: a stop at any moment, from emuprof's first instruction to
// its last file, writes every profile, complete or marked partial, leaves
// no temporary file, and exits with the documented status.

var stopSigs = []struct {
	name string
	sig  syscall.Signal
	why  string
}{
	{"INT", syscall.SIGINT, "interrupted"},
	{"TERM", syscall.SIGTERM, "terminated by SIGTERM"},
	{"HUP", syscall.SIGHUP, "hung up (SIGHUP)"},
}

// listedFiles is the list of files of emuprof's "wrote" list
// (--list-files), by base name, in the order written.
func listedFiles(t *testing.T, stderr string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^emuprof: wrote .* files?:\n((?:  .*\n)*)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no 'wrote' list in %q", stderr)
	}
	var names []string
	for _, p := range strings.Split(strings.TrimRight(m[1], "\n"), "\n") {
		names = append(names, filepath.Base(strings.TrimSpace(p)))
	}
	return names
}

// checkProfiles checks that dir holds exactly the files want, each
// complete (a whole JSON value, an aprof report with its end line, a whole
// HTML page, a whole gzip stream), and returns the run record's partial
// reason ("" when complete).
func checkProfiles(t *testing.T, what, dir string, want []string) string {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return ""
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s: files %v, want %v", what, got, want)
	}
	partial := ""
	for _, name := range got {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", what, err)
			continue
		}
		ok := true
		switch {
		case strings.HasSuffix(name, ".json"):
			ok = json.Valid(data)
			if strings.HasSuffix(name, "_run.json") {
				var rec struct{ Partial string }
				_ = json.Unmarshal(data, &rec)
				partial = rec.Partial
			}
		case strings.HasSuffix(name, ".aprof"):
			_, err := trms.ParseReport(bytes.NewReader(data)) // its end line counts and sums the lines
			ok = err == nil
		case strings.HasSuffix(name, ".html"):
			ok = bytes.HasSuffix(bytes.TrimSpace(data), []byte("</html>"))
		case strings.HasSuffix(name, ".gz"):
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if ok = err == nil; ok {
				_, err = io.Copy(io.Discard, zr)
				ok = err == nil
			}
		}
		if !ok {
			t.Errorf("%s: %s is incomplete (%d bytes)", what, name, len(data))
		}
	}
	return partial
}

// The moments are named (stophook): before the flags are parsed, before
// the guest's first instruction, at its first output (mid-run), in the
// middle of writing each file and between files; one case sends a second
// signal in the middle of a file. Each moment is the same on every run.
func TestStopAtEveryMoment(t *testing.T) {
	hello := guestBin(t, "glibc-static", "hello")
	work := t.TempDir()
	ref := run(t, nil, work, emuprofBin, "profile", "--list-files", "--out", filepath.Join(work, "ref"), "--", hello)
	if ref.code != 0 {
		t.Fatalf("profile: exit %d: %s", ref.code, ref.stderr)
	}
	all := listedFiles(t, ref.stderr) // every stop writes every one (the process's aprof reports too)
	type moment struct {
		hook    string
		want    []string
		partial bool // the guest was stopped
	}
	moments := []moment{{"start", all, true}, {"parse", all, true}, {"load", all, true}, {"output", all, true}}
	for _, f := range all {
		moments = append(moments, moment{"write:" + f, all, false}, moment{"wrote:" + f, all, false})
	}
	for i, m := range moments {
		s := stopSigs[i%len(stopSigs)]
		spec := s.name + "@" + m.hook
		if m.hook == "write:"+all[0] { // and a second signal in the middle of the next file
			spec += "," + stopSigs[(i+1)%len(stopSigs)].name + "@write:" + all[1]
		}
		dir := filepath.Join(work, fmt.Sprint(i))
		out := runEnv(t, []string{stophook.Var + "=" + spec}, emuprofBin, "profile", "--out", dir, "--", hello)
		what := spec
		noGoTrace(t, what, out.stderr)
		if out.code != 128+int(s.sig) {
			t.Errorf("%s: exit %d, want %d; stderr %q", what, out.code, 128+int(s.sig), out.stderr)
		}
		if !strings.Contains(out.stderr, "emuprof: "+s.why+"\n") {
			t.Errorf("%s: stderr %q does not say %q", what, out.stderr, s.why)
		}
		partial := checkProfiles(t, what, dir, m.want)
		if m.partial && partial != s.why {
			t.Errorf("%s: run record partial %q, want %q", what, partial, s.why)
		}
		if !m.partial && partial != "" {
			t.Errorf("%s: the guest had ended, yet the run record says partial %q", what, partial)
		}
	}
}

// A sweep of real signals at many moments after the guest's first output,
// through the end of its run and the writing of the files: whatever moment
// each hit, the invariant holds (the verdict does not depend on when).
func TestStopSweep(t *testing.T) {
	prog := guestBin(t, "glibc-static", "ready_loop")
	work := t.TempDir()
	args := func(dir string) []string { return []string{"profile", "--out", dir, "--", prog, "20000"} }
	ref := run(t, nil, work, emuprofBin, append([]string{"profile", "--list-files"}, args(filepath.Join(work, "ref"))[1:]...)...)
	if ref.code != 0 {
		t.Fatalf("profile: exit %d: %s", ref.code, ref.stderr)
	}
	all := listedFiles(t, ref.stderr)
	hits := map[string]int{} // where the signals hit, for the log
	for i := 0; i < 24; i++ {
		s := stopSigs[i%len(stopSigs)]
		dir := filepath.Join(work, fmt.Sprint(i))
		var se bytes.Buffer
		cmd := startWhenReady(t, &se, args(dir)...)
		time.Sleep(time.Duration(i) * 3 * time.Millisecond) // spreads the moments; any moment must do
		_ = cmd.Process.Signal(s.sig)
		err := cmd.Wait()
		what := fmt.Sprintf("SIG%s after %d ms", s.name, i*3)
		noGoTrace(t, what, se.String())
		switch code := exitCode(err); {
		case code == 128+int(s.sig):
		case code == 0 && !strings.Contains(se.String(), s.why): // emuprof had ended before the signal
		default:
			t.Errorf("%s: exit %d, want %d; stderr %q", what, code, 128+int(s.sig), se.String())
		}
		switch partial := checkProfiles(t, what, dir, all); {
		case partial != "":
			hits["guest stopped"]++
		case strings.Contains(se.String(), s.why):
			hits["after the guest"]++
		default:
			hits["after emuprof"]++
		}
	}
	t.Logf("moments hit: %v", hits)
}

// A stop while a dynamic guest's ld.so runs, before main: at its first
// system call (brk, after its first few thousand instructions), as it
// opens libc, halfway through mapping libc's segments, at its last call
// (the unmapping of ld.so.cache), and a second signal there after a first
// one. Each moment is a system call's number (stophook "syscall:N", the
// guest's Nth), the same on every run; the outcome is the one of every
// stop: every profile written and whole, marked partial, no temporary
// file, the signal's status.
func TestStopInDynamicLoader(t *testing.T) {
	hello := guestBin(t, "glibc-dynamic", "hello")
	work := t.TempDir()
	ref := run(t, nil, work, emuprofBin, "profile", "--list-files", "--strace", "--out", filepath.Join(work, "ref"), "--", hello)
	if ref.code != 0 || ref.stdout != "hello, world\n" {
		t.Fatalf("profile: exit %d: %s", ref.code, ref.stderr)
	}
	all := listedFiles(t, ref.stderr)
	// The moments, by the reference run's system calls: ld.so's run up to
	// the munmap of ld.so.cache, the first call after main is entered
	// being later.
	calls := regexp.MustCompile(`(?m)^\[\d+\] (\w+)\(`).FindAllStringSubmatch(ref.stderr, -1)
	nth := func(name string, k int) int {
		for i, c := range calls {
			if c[1] == name {
				if k--; k == 0 {
					return i + 1
				}
			}
		}
		t.Fatalf("no %d %s calls in the reference run: %v", k, name, calls)
		return 0
	}
	libc := nth("openat", 2)  // the first opens ld.so.cache
	mapping := nth("mmap", 5) // libc's text mapped, its data not yet
	last := nth("munmap", 1)  // ld.so's last call: ld.so.cache unmapped
	for i, spec := range []string{
		"TERM@load", "INT@syscall:1", fmt.Sprintf("HUP@syscall:%d", libc),
		fmt.Sprintf("TERM@syscall:%d", mapping), fmt.Sprintf("INT@syscall:%d", last),
		fmt.Sprintf("TERM@syscall:%d,INT@syscall:%d", libc, libc+2),
	} {
		name, _, _ := strings.Cut(spec, "@")
		var s = stopSigs[0]
		for _, x := range stopSigs {
			if x.name == name {
				s = x
			}
		}
		dir := filepath.Join(work, fmt.Sprint(i))
		out := runEnv(t, []string{stophook.Var + "=" + spec}, emuprofBin, "profile", "--out", dir, "--", hello)
		noGoTrace(t, spec, out.stderr)
		if out.code != 128+int(s.sig) || out.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q; want %d and no output; stderr %q", spec, out.code, out.stdout, 128+int(s.sig), out.stderr)
		}
		if !strings.Contains(out.stderr, "emuprof: "+s.why+"\n") {
			t.Errorf("%s: stderr %q does not say %q", spec, out.stderr, s.why)
		}
		if partial := checkProfiles(t, spec, dir, all); partial != s.why {
			t.Errorf("%s: run record partial %q, want %q", spec, partial, s.why)
		}
	}
}
