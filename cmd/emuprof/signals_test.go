package main

// Signals delivered to guest handlers (issue 8.6): the signals guest
// against native in four builds, deterministic; trms on it; real programs
// that need handlers (perl's alarm and kill, lbzip2's rt_sigsuspend,
// pbzip2's sigwait, a Go program that recovers from nil dereferences).

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The signals guest prints one line per step; every line must be native's.
func TestSignalsGuest(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			out := compareTries(t, 3, nil, t.TempDir(), guestBin(t, v, "signals"))
			if !strings.HasSuffix(out.stdout, "done\n") {
				t.Errorf("the guest did not finish:\n%s", out.stdout)
			}
		})
	}
}

// Two runs of the signals guest (timers, signals between threads and
// processes, interrupted waits) give one trace digest.
func TestSignalsDeterministic(t *testing.T) {
	prog := guestBin(t, "glibc-static", "signals")
	var first string
	for i := 0; i < 2; i++ {
		d := digestOf(t, run(t, nil, t.TempDir(), emuprofBin, append(emuArgs("--trace-digest"), prog)...))
		if i == 0 {
			first = d
		} else if d != first {
			t.Fatalf("run %d: digest %s, first run %s", i, d, first)
		}
	}
}

// trms follows handlers entered without a call and left through
// sa_restorer and rt_sigreturn: the run succeeds with native's output, and
// each handler has one activation per signal it handled.
func TestSignalsTRMS(t *testing.T) {
	prog := guestBin(t, "glibc-static", "signals")
	work := t.TempDir()
	native := run(t, nil, work, prog)
	out := run(t, nil, work, emuprofBin, "trms", "--out", filepath.Join(work, "out"), "--", prog)
	if out.code != 0 || out.stdout != native.stdout {
		t.Fatalf("trms: exit %d, stdout %q\nstderr %s", out.code, out.stdout, out.stderr)
	}
	rep, err := os.ReadFile(filepath.Join(work, "out", "signals_1000_4_rms.aprof"))
	if err != nil {
		t.Fatal(err)
	}
	// h_alarm runs 12 times: SIGALRM for pause, the busy loop, three
	// interval expiries, nanosleep, ppoll, epoll_pwait, select and two
	// waitpid, and SIGVTALRM once.
	if !regexp.MustCompile(`(?m)^r "h_alarm" \S+ (\d+)\np \d+ \d+ \d+ \d+ 12 `).Match(rep) {
		i := bytes.Index(rep, []byte(`r "h_alarm"`))
		t.Errorf("h_alarm's activations in the report: %.200q", rep[max(i, 0):])
	}
}

// perl: an interval timer whose $SIG{ALRM} handler dies out of a busy
// loop (Time::HiRes::alarm is setitimer: a whole second of busy loop
// would be 10^9 emulated instructions), kill with a handler, alarm
// interrupting sleep, and a child killed with SIGTERM.
func TestSignalsPerl(t *testing.T) {
	for i, script := range []string{
		`use Time::HiRes; local $SIG{ALRM} = sub { print "alarm\n"; die "timeout\n" }; Time::HiRes::alarm(0.05); eval { while (1) {} }; print "caught: $@"; alarm 0;`,
		`$SIG{USR1} = sub { print "usr1 $_[0]\n" }; kill "USR1", $$; print "after kill\n"; $SIG{ALRM} = sub { print "alarm in sleep\n" }; alarm 1; my $r = sleep 10; print "slept ", ($r < 10 ? "less" : "full"), "\n";`,
		`$SIG{INT} = sub { print "int\n" }; my $pid = fork; if (!$pid) { sleep 5; exit 7 } kill "INT", $$; kill "TERM", $pid; waitpid $pid, 0; print "child ", $? & 127, "\n";`,
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			out := compare(t, nil, t.TempDir(), "/usr/bin/perl", "-e", script)
			if out.stdout == "" {
				t.Errorf("no output")
			}
		})
	}
}

// lbzip2's main thread waits in rt_sigsuspend until a worker sends the
// process SIGUSR2; pbzip2 has a thread in sigwait (rt_sigtimedwait) that
// the main thread ends with pthread_kill: both compress and decompress
// like natively.
func TestSignalsBzip2Threads(t *testing.T) {
	work := t.TempDir()
	var text bytes.Buffer
	for i := 0; i < 60000; i++ {
		fmt.Fprintf(&text, "line %d: %d\n", i, i*i%1009)
	}
	in := filepath.Join(work, "in.txt")
	if err := os.WriteFile(in, text.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []struct{ path, pkg, threads string }{
		{"/usr/bin/lbzip2", "lbzip2", "-n2"},
		{"/usr/bin/pbzip2", "pbzip2", "-p2"},
	} {
		if _, err := os.Stat(tool.path); err != nil {
			t.Fatalf("%s missing (apt-get install %s; scripts/deps.sh does)", tool.path, tool.pkg)
		}
		c := compare(t, nil, work, tool.path, tool.threads, "-c", "in.txt")
		z := filepath.Join(work, tool.pkg+".bz2")
		if err := os.WriteFile(z, []byte(c.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		d := compare(t, nil, work, tool.path, "-d", tool.threads, "-c", filepath.Base(z))
		if d.stdout != text.String() {
			t.Errorf("%s: the round trip lost the text", tool.pkg)
		}
	}
}

// A Go program recovers from nil pointer dereferences (the runtime's
// SIGSEGV handler turns the fault into a call of sigpanic, with the
// faulting instruction's address), is notified of SIGUSR1 and is
// preempted with SIGURG, like natively.
func TestSignalsGoRecover(t *testing.T) {
	work := t.TempDir()
	src := `package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

type T struct{ x int }

func deref(p *T) (v int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("recovered: %v", r)
		}
	}()
	return p.x, nil
}

func main() {
	var p *T
	for i := 0; i < 3; i++ {
		_, err := deref(p)
		fmt.Println(i, err)
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	syscall.Kill(os.Getpid(), syscall.SIGUSR1)
	fmt.Println("got", <-c)
}
`
	if err := os.WriteFile(filepath.Join(work, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "go.mod"), []byte("module gorecover\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", "gorecover", ".")
	build.Dir = work
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	out := compare(t, nil, work, filepath.Join(work, "gorecover"))
	if !strings.Contains(out.stdout, "2 recovered: runtime error") {
		t.Errorf("output %q", out.stdout)
	}
}
