package main

// End-to-end tests: the emuprof binary runs real guests (built from
// testdata/src in four flavours) and real Debian programs, and must behave
// exactly like the native run: same stdout, stderr and exit status.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var (
	emuprofBin string
	guestDir   string // testdata/bin
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "emuprof-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	emuprofBin = filepath.Join(dir, "emuprof")
	if out, err := exec.Command("go", "build", "-o", emuprofBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building emuprof: %v\n%s", err, out)
		os.Exit(1)
	}
	root, _ := filepath.Abs("../..")
	guestDir = filepath.Join(root, "testdata", "bin")
	if out, err := exec.Command("make", "-C", filepath.Join(root, "testdata"), "-j2").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the test guests: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type outcome struct {
	stdout, stderr string
	code           int
}

func run(t *testing.T, stdin []byte, dir string, name string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = []string{"LC_ALL=C", "HOME=/nonexistent", "PATH=/usr/bin:/bin"}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if code < 0 { // killed by a signal: report like a shell
			code = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
		}
	} else if err != nil {
		t.Fatalf("running %s: %v", name, err)
	}
	return outcome{so.String(), se.String(), code}
}

// emuArgs are the flags that make the guest's environment equal to the native one.
func emuArgs(extra ...string) []string {
	a := []string{"run", "--clear-env", "--env", "LC_ALL=C", "--env", "HOME=/nonexistent", "--env", "PATH=/usr/bin:/bin"}
	return append(append(a, extra...), "--")
}

func compare(t *testing.T, stdin []byte, dir string, prog string, args ...string) outcome {
	t.Helper()
	return compareTries(t, 1, stdin, dir, prog, args...)
}

// compareTries is compare for a guest whose native run depends on the
// host's timing (signals: a sleep long enough natively for a thread to
// block, a timer before a child's exit): emuprof's run is deterministic,
// the native one is run up to tries times until it gives the same output,
// so a loaded host does not decide the verdict. An emulation that differs
// from every native run still fails.
func compareTries(t *testing.T, tries int, stdin []byte, dir string, prog string, args ...string) outcome {
	t.Helper()
	native := run(t, stdin, dir, prog, args...)
	emu := run(t, stdin, dir, emuprofBin, append(append(emuArgs(), prog), args...)...)
	for i := 1; i < tries && native != emu; i++ {
		native = run(t, stdin, dir, prog, args...)
	}
	if native.stdout != emu.stdout {
		nl, el := firstDiffLine(native.stdout, emu.stdout)
		t.Errorf("%s %v: stdout differs\nnative: %.400q\nemu:    %.400q\nfirst differing line: native %q, emu %q\nemu stderr: %.800s", prog, args, native.stdout, emu.stdout, nl, el, emu.stderr)
	}
	if native.stderr != emu.stderr {
		t.Errorf("%s %v: stderr differs\nnative: %.400q\nemu:    %.800q", prog, args, native.stderr, emu.stderr)
	}
	if native.code != emu.code {
		t.Errorf("%s %v: exit status native %d, emu %d (stderr %.800s)", prog, args, native.code, emu.code, emu.stderr)
	}
	return emu
}

// firstDiffLine returns the first line where a and b differ.
func firstDiffLine(a, b string) (string, string) {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		x, y := "", ""
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return x, y
		}
	}
	return "", ""
}

var variants = []string{"glibc-static", "musl-static", "glibc-dynamic", "glibc-static-pie"}

// guestBin returns the path of a test guest, failing the test when it was
// not built (testdata's Makefile leaves out the musl variant when musl-gcc
// is missing).
func guestBin(t *testing.T, variant, name string) string {
	t.Helper()
	p := filepath.Join(guestDir, variant, name)
	if _, err := os.Stat(p); err != nil {
		if variant == "musl-static" {
			t.Fatalf("guest %s not built: musl-gcc missing? (apt-get install musl-tools; `make deps` does)", p)
		}
		t.Fatalf("guest %s not built (gcc, libc6-dev: `make deps`): %v", p, err)
	}
	return p
}

func TestGuestsMatchNative(t *testing.T) {
	work := t.TempDir()
	src := filepath.Join(work, "in.txt")
	var text bytes.Buffer
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&text, "line %d of the input, with some words: alpha beta gamma %d\n", i, i*i%97)
	}
	if err := os.WriteFile(src, text.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	listing := filepath.Join(work, "dir")
	os.MkdirAll(filepath.Join(listing, "sub"), 0o755)
	for i, n := range []string{"b.txt", "a.txt", "zeta", "Mixed"} {
		os.WriteFile(filepath.Join(listing, n), bytes.Repeat([]byte("x"), i*100), 0o644)
	}
	cases := []struct {
		name  string
		args  []string
		stdin []byte
	}{
		{"hello", nil, nil},
		{"args", []string{"one", "two words", ""}, nil},
		{"filecopy", []string{src, "OUT"}, nil},
		{"listdir", []string{listing}, nil},
		{"qsort", []string{"100000"}, nil},
		{"strings", nil, nil},
		{"mallocstress", nil, nil},
		{"printf", nil, nil},
		{"exit3", nil, nil},
		{"cat", nil, text.Bytes()},
	}
	for _, v := range variants {
		for _, c := range cases {
			t.Run(v+"/"+c.name, func(t *testing.T) {
				prog := guestBin(t, v, c.name)
				args := c.args
				compare(t, c.stdin, work, prog, args...)
				if c.name == "filecopy" {
					got, err := os.ReadFile(filepath.Join(work, "OUT"))
					if err != nil || !bytes.Equal(got, text.Bytes()) {
						t.Errorf("filecopy under emuprof wrote %d bytes (err %v), want a copy of %d", len(got), err, text.Len())
					}
				}
			})
		}
	}
}

func TestCrashReport(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			prog := guestBin(t, v, "segv")
			out := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs(), prog)...)
			if out.code != 139 {
				t.Errorf("exit %d, want 139", out.code)
			}
			re := regexp.MustCompile(`emuprof: guest killed by SIGSEGV: write of unmapped address 0x0 at 0x[0-9a-f]+ in crash(\+0x[0-9a-f]+)? \(segv\)`)
			if !re.MatchString(out.stderr) {
				t.Errorf("crash report does not match %v:\n%s", re, out.stderr)
			}
			if !strings.Contains(out.stderr, "main") {
				t.Errorf("stack does not name main:\n%s", out.stderr)
			}
		})
	}
}

// An invalid instruction kills the guest with SIGILL (132), like natively.
func TestIllegalInstruction(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			prog := guestBin(t, v, "sigill")
			native := run(t, nil, t.TempDir(), prog)
			out := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs(), prog)...)
			if native.code != 132 || out.code != 132 || out.stdout != native.stdout {
				t.Errorf("native %d %q, emu %d %q", native.code, native.stdout, out.code, out.stdout)
			}
			if !regexp.MustCompile(`guest killed by SIGILL: invalid instruction at 0x[0-9a-f]+ in bad_insn`).MatchString(out.stderr) {
				t.Errorf("report: %s", out.stderr)
			}
		})
	}
}

// rdtsc and rdtscp return virtual time: increasing, and identical across runs.
func TestVirtualTSC(t *testing.T) {
	for _, v := range []string{"glibc-static", "musl-static", "glibc-dynamic"} {
		prog := guestBin(t, v, "rdtsc")
		a := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs(), prog)...)
		b := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs(), prog)...)
		if a.code != 0 || !strings.HasPrefix(a.stdout, "increasing: yes\n") || a.stdout != b.stdout {
			t.Errorf("%s: runs printed %q and %q", v, a.stdout, b.stdout)
		}
	}
}

func TestDeterministicDigest(t *testing.T) {
	prog := guestBin(t, "glibc-dynamic", "mallocstress")
	var first string
	for i := 0; i < 3; i++ {
		d := digestOf(t, run(t, nil, t.TempDir(), emuprofBin, append(emuArgs("--trace-digest"), prog)...))
		if i == 0 {
			first = d
		} else if d != first {
			t.Fatalf("run %d digest %s differs from %s", i, d, first)
		}
	}
	// A different seed changes AT_RANDOM, so the stack protector canary and
	// malloc's behaviour may differ, but the program's output must not.
	a := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs("--seed", "7"), prog)...)
	b := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs(), prog)...)
	if a.stdout != b.stdout {
		t.Errorf("output depends on --seed")
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("just text\n"), 0o755) // executable: else "permission denied", as execve says first
	elf32 := filepath.Join(dir, "elf32")
	h := make([]byte, 64)
	copy(h, "\x7fELF\x01\x01\x01")
	os.WriteFile(elf32, h, 0o755)
	arm := filepath.Join(dir, "arm")
	h = make([]byte, 64)
	copy(h, "\x7fELF\x02\x01\x01")
	h[16], h[18] = 2, 183 // ET_EXEC, EM_AARCH64
	os.WriteFile(arm, h, 0o755)
	trunc := filepath.Join(dir, "trunc")
	hello, _ := os.ReadFile(filepath.Join(guestDir, "glibc-static", "hello"))
	os.WriteFile(trunc, hello[:100], 0o755)
	cases := []struct{ prog, want string }{
		{filepath.Join(dir, "missing"), "no such file"},
		{dir, "directory"},
		{text, "not an ELF"},
		{elf32, "32-bit"},
		{arm, "AArch64"},
		{trunc, "truncated"},
	}
	// A dynamically linked program whose interpreter is not in the sysroot.
	cases = append(cases, struct{ prog, want string }{guestBin(t, "glibc-dynamic", "hello"), "not found in sysroot"})
	for _, c := range cases {
		out := run(t, nil, dir, emuprofBin, "run", "--sysroot", dir, "--", c.prog)
		lines := strings.Split(strings.TrimSpace(out.stderr), "\n")
		if out.code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "emuprof: ") || !strings.Contains(lines[0], c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line mentioning %q", c.prog, out.code, out.stderr, c.want)
		}
	}
}

func TestMaxInsns(t *testing.T) {
	prog := guestBin(t, "glibc-static", "qsort")
	out := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs("--max-insns", "100000"), prog)...)
	if out.code != 124 || !strings.Contains(out.stderr, "--max-insns") {
		t.Errorf("exit %d, stderr %q; want 124 and a message naming --max-insns", out.code, out.stderr)
	}
}

// TestDebianPrograms runs dynamically linked programs from Debian packages
// on generated inputs and compares with the native runs.
func TestDebianPrograms(t *testing.T) {
	work := t.TempDir()
	var text bytes.Buffer
	words := []string{"delta", "alpha", "charlie", "bravo", "echo", "alpha", "foxtrot"}
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&text, "%s %d %s\n", words[i%len(words)], (i*7919)%1000, words[(i/3)%len(words)])
	}
	in := filepath.Join(work, "in.txt")
	os.WriteFile(in, text.Bytes(), 0o644)
	gz := run(t, nil, work, "/bin/gzip", "-c", in)
	os.WriteFile(filepath.Join(work, "in.txt.gz"), []byte(gz.stdout), 0o644)
	sorted := run(t, nil, work, "/usr/bin/sort", in)
	os.WriteFile(filepath.Join(work, "sorted.txt"), []byte(sorted.stdout), 0o644)
	fixed := filepath.Join(work, "fixed")
	os.MkdirAll(filepath.Join(fixed, "d"), 0o755)
	for i, n := range []string{"one", "two", "three"} {
		p := filepath.Join(fixed, n)
		os.WriteFile(p, bytes.Repeat([]byte("y"), 10*i+1), 0o644)
	}
	// ls shows times; make them old and fixed so the guest's virtual clock
	// and the host's agree on the format (year shown).
	old := mustTime("2020-03-04T05:06:07Z")
	filepath.Walk(fixed, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	cases := []struct {
		prog  string
		args  []string
		stdin []byte
	}{
		{"/usr/bin/sort", []string{in}, nil},
		{"/usr/bin/sort", []string{"-n", "-k2", in}, nil},
		{"/usr/bin/wc", []string{in}, nil},
		{"/usr/bin/md5sum", []string{in}, nil},
		{"/usr/bin/sha256sum", []string{in}, nil},
		{"/usr/bin/base64", []string{in}, nil},
		{"/bin/gzip", []string{"-c", in}, nil},
		{"/bin/gzip", []string{"-dc", "in.txt.gz"}, nil},
		{"/usr/bin/tr", []string{"a-z", "A-Z"}, text.Bytes()},
		{"/usr/bin/uniq", []string{"-c", "sorted.txt"}, nil},
		{"/bin/ls", []string{"-la", "--time-style=long-iso", "fixed"}, nil},
		// bash asks getpeername about its stdin; builtins only (no fork).
		{"/bin/bash", []string{"-c", "for w in a b c; do echo \"$w$w\"; done; printf '%05d\\n' 42"}, nil},
		{"/usr/bin/python3", []string{"-c", "import json, hashlib; print(json.dumps({'n': sum(range(1000))}), hashlib.sha256(b'x').hexdigest())"}, nil},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.prog)+" "+strings.Join(c.args, " "), func(t *testing.T) {
			if _, err := os.Stat(c.prog); err != nil {
				t.Fatalf("%s missing: make deps installs it", c.prog)
			}
			compare(t, c.stdin, work, c.prog, c.args...)
		})
	}
}

func mustTime(s string) time.Time {
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return tm
}

func TestUnsupportedSyscall(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			prog := guestBin(t, v, "unsupported")
			out := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs(), prog)...)
			re := regexp.MustCompile(`^emuprof: unsupported syscall 250 \(keyctl\) at 0x[0-9a-f]+ in syscall\+0x[0-9a-f]+ \((unsupported|libc\.so\.6)\), called from main\+0x[0-9a-f]+ \(unsupported\)`)
			if out.code != 2 || !re.MatchString(out.stderr) || strings.Count(out.stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line matching %v", out.code, out.stderr, re)
			}
			out = run(t, nil, t.TempDir(), emuprofBin, append(emuArgs("--unsupported=enosys"), prog)...)
			if out.code != 0 || out.stdout != "keyctl: Function not implemented\n" ||
				!strings.Contains(out.stderr, "warning: unsupported syscalls answered with ENOSYS: 250 (keyctl)") {
				t.Errorf("--unsupported=enosys: exit %d, stdout %q, stderr %q", out.code, out.stdout, out.stderr)
			}
		})
	}
}

// The guest sees --cpus CPUs through sched_getaffinity and sysfs.
func TestCPUsVisible(t *testing.T) {
	for _, n := range []string{"1", "3", "8"} {
		for _, args := range [][]string{{"/usr/bin/nproc"}, {"/usr/bin/nproc", "--all"}} {
			out := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs("--cpus", n), args...)...)
			if out.stdout != n+"\n" {
				t.Errorf("--cpus %s: %v printed %q", n, args, out.stdout)
			}
		}
	}
}

// startWhenReady starts emuprof with args (which run the ready_loop guest) and
// returns once the guest has written its "ready" line, i.e. is in its loop
// without system calls; emuprof's stderr goes to stderr. The rest of the
// guest's output is drained, so that emuprof never blocks on it.
func startWhenReady(t *testing.T, stderr *bytes.Buffer, args ...string) *exec.Cmd {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	cmd := exec.Command(emuprofBin, args...)
	cmd.Stdout, cmd.Stderr = pw, stderr
	if err := cmd.Start(); err != nil {
		pr.Close()
		t.Fatal(err)
	}
	pw.Close() // the guest's, not ours: EOF when emuprof exits
	line := make(chan string, 1)
	go func() {
		defer pr.Close()
		r := bufio.NewReader(pr)
		l, _ := r.ReadString('\n')
		line <- l
		io.Copy(io.Discard, r)
	}()
	select {
	case l := <-line:
		if l != "ready\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("%v: first line %q, want \"ready\"; stderr %s", args, l, stderr)
		}
	case <-time.After(60 * time.Second): // a bound on a hang, not a wait for the guest
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%v: no \"ready\" line after 60 s; stderr %s", args, stderr)
	}
	return cmd
}

// interruptAndWait sends Ctrl-C to emuprof and returns its exit error; it
// fails the test if emuprof has not exited 30 s later.
func interruptAndWait(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("emuprof ignored Ctrl-C for 30 s")
		return nil
	}
}

// Ctrl-C stops the guest, says so in one line, exits 130 and still writes
// the profile, marked partial. The guest loops forever without system calls
// once it has said it is ready: Ctrl-C must stop it there, not when it next
// makes a system call (it never will).
func TestInterruptWritesPartialProfile(t *testing.T) {
	dir := t.TempDir()
	var se bytes.Buffer
	cmd := startWhenReady(t, &se, "trms", "--out", dir, "--", guestBin(t, "glibc-static", "ready_loop"), "forever")
	err := interruptAndWait(t, cmd)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("trms: exit %v, want 130; stderr %s", err, se.String())
	}
	if !strings.Contains(se.String(), "emuprof: interrupted") {
		t.Errorf("stderr %q does not say it was interrupted", se.String())
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.aprof"))
	if len(paths) != 2 {
		t.Fatalf("reports written: %v", paths)
	}
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		if !bytes.Contains(data, []byte("c partial: interrupted")) {
			t.Errorf("%s not marked partial:\n%.300s", p, data)
		}
	}
	// The single CPU-bound thread runs without returning to the scheduler
	// between system calls, with no analysis either.
	se.Reset()
	cmd = startWhenReady(t, &se, "run", "--", guestBin(t, "glibc-static", "ready_loop"), "forever")
	err = interruptAndWait(t, cmd)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("run: exit %v, want 130; stderr %s", err, se.String())
	}
	if !strings.Contains(se.String(), "emuprof: interrupted") {
		t.Errorf("run: stderr %q does not say it was interrupted", se.String())
	}
}

// `emuprof syscalls` is the whole story: the runtime's thread calls are listed too.
func TestSyscallsTable(t *testing.T) {
	out := run(t, nil, t.TempDir(), emuprofBin, "syscalls")
	for _, want := range []string{"read ", "mmap ", "futex ", "clone3 ", "fork ", "refused"} {
		if !strings.Contains(out.stdout, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}

// /dev/null is a character device but not a terminal: pigz refuses to write
// compressed data to a terminal, so it tells the two apart, and so must we.
func TestStdoutDevNullIsNotATerminal(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	os.WriteFile(in, []byte("some data\n"), 0o644)
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	cmd := exec.Command(emuprofBin, "run", "--", "/usr/bin/pigz", "-c", in)
	cmd.Stdout = null
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Run(); err != nil {
		t.Errorf("pigz -c > /dev/null under emuprof: %v, %s", err, se.String())
	}
}
