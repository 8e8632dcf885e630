package main

// Crash and deadlock stacks agree with gdb's bt (issue 8 point 9): gdb runs
// the same binary natively (gdb -batch -ex run -ex bt, or attached to the
// deadlocked process with thread apply all bt) and the frames are compared
// one by one: function (aliases allowed: gdb and emuprof may pick another
// name of one address) and source line.

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"emuprof/loader"
)

// frame is one line of a backtrace.
type frame struct {
	fn   string
	line int  // 0: no line
	exe  bool // emuprof's frames: in the executable
}

var (
	gdbFrame = regexp.MustCompile(`^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(.*?\)(?: at \S+:(\d+))?`)
	emuFrame = regexp.MustCompile(`^\s+#\d+\s+([^+ ]+)(?:\+0x[0-9a-f]+)? \(([^)]*)\)(?: at \S+:(\d+))?`)
)

// gdbStacks parses gdb's output: one stack per "Thread" header (or one).
func gdbStacks(out string) [][]frame {
	var stacks [][]frame
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Thread ") || (strings.HasPrefix(l, "#0 ") && len(stacks) == 0) {
			stacks = append(stacks, nil)
		}
		if m := gdbFrame.FindStringSubmatch(l); m != nil && len(stacks) > 0 {
			n, _ := strconv.Atoi(m[2])
			stacks[len(stacks)-1] = append(stacks[len(stacks)-1], frame{fn: m[1], line: n})
		}
	}
	return stacks
}

// emuStacks parses emuprof's report: one stack per "thread N" header.
func emuStacks(out, exe string) [][]frame {
	var stacks [][]frame
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "thread ") {
			stacks = append(stacks, nil)
		}
		if m := emuFrame.FindStringSubmatch(l); m != nil && len(stacks) > 0 {
			n, _ := strconv.Atoi(m[3])
			stacks[len(stacks)-1] = append(stacks[len(stacks)-1], frame{fn: m[1], line: n, exe: m[2] == exe})
		}
	}
	return stacks
}

// sameStack compares the frames, all of them when every frame is in the
// executable (static programs), else the executable's frames, which end
// both stacks (gdb names libc.so.6's internal functions from its debug
// information and shows inlined calls as frames).
func sameStack(t *testing.T, what string, syms *loader.SymbolTable, gdb, emu []frame, static bool) {
	t.Helper()
	if !static {
		var g2, e2 []frame
		for _, f := range gdb {
			if _, ok := syms.FuncAddr(f.fn); ok {
				g2 = append(g2, f) // a function of the executable
			}
		}
		for _, f := range emu {
			if f.exe {
				e2 = append(e2, f)
			}
		}
		gdb, emu = g2, e2
	}
	if len(gdb) != len(emu) || len(gdb) == 0 {
		t.Errorf("%s: gdb has %d frames, emuprof %d:\ngdb: %v\nemu: %v", what, len(gdb), len(emu), gdb, emu)
		return
	}
	for i := range gdb {
		g, e := gdb[i], emu[i]
		ga, gok := syms.FuncAddr(g.fn)
		ea, eok := syms.FuncAddr(e.fn)
		if g.fn != e.fn && !(gok && eok && ga == ea) {
			t.Errorf("%s: frame %d is %s in gdb, %s in emuprof", what, i, g.fn, e.fn)
		}
		if g.line != 0 && g.line != e.line {
			t.Errorf("%s: frame %d (%s) at line %d in gdb, %d in emuprof", what, i, g.fn, g.line, e.line)
		}
	}
}

func exeSymbols(t *testing.T, prog string) *loader.SymbolTable {
	o, err := loader.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := o.Span()
	syms := loader.NewSymbolTable()
	if err := syms.AddObjectFrom(o, 0, lo, hi); err != nil {
		t.Fatal(err)
	}
	return syms
}

func TestCrashStacksAgreeWithGdb(t *testing.T) {
	for _, c := range []struct{ variant, prog string }{
		{"glibc-static", "abort"}, {"glibc-static-pie", "abort"}, {"glibc-dynamic", "abort"},
		{"glibc-static", "segv"}, {"musl-static", "segv"}, {"glibc-dynamic", "segv"}, {"glibc-static-pie", "segv"},
	} {
		t.Run(c.variant+"/"+c.prog, func(t *testing.T) {
			prog := guestBin(t, c.variant, c.prog)
			dir := t.TempDir()
			g := run(t, nil, dir, "gdb", "-nx", "-batch", "-ex", "run", "-ex", "bt", prog)
			gs := gdbStacks(g.stdout)
			e := run(t, nil, dir, emuprofBin, append(emuArgs(), prog)...)
			es := emuStacks(e.stderr, c.prog)
			if len(gs) != 1 || len(es) != 1 {
				t.Fatalf("stacks: gdb %d, emuprof %d\ngdb:\n%s\nemuprof:\n%s", len(gs), len(es), g.stdout, e.stderr)
			}
			sameStack(t, c.prog, exeSymbols(t, prog), gs[0], es[0], c.variant != "glibc-dynamic")
		})
	}
}

// The deadlock guest natively hangs: gdb attaches to it once its threads
// are blocked.
func TestDeadlockStacksAgreeWithGdb(t *testing.T) {
	prog := guestBin(t, "glibc-static", "deadlock")
	cmd := exec.Command(prog)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// gdb attaches once both threads wait for the other's mutex, however
	// long the host takes to get there (a fixed sleep was too short on a
	// loaded machine).
	if !waitMutexes(t, prog, cmd.Process.Pid, "m1", "m2") {
		t.Fatal("the deadlock guest's threads never both waited for a mutex")
	}
	g := run(t, nil, t.TempDir(), "gdb", "-nx", "-batch", "-p", fmt.Sprint(cmd.Process.Pid), "-ex", "thread apply all bt")
	gs := gdbStacks(g.stdout)
	e := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs(), prog)...)
	es := emuStacks(e.stderr, "deadlock")
	if len(gs) != 3 || len(es) != 3 {
		t.Fatalf("stacks: gdb %d, emuprof %d\ngdb:\n%s\nemuprof:\n%s", len(gs), len(es), g.stdout+g.stderr, e.stderr)
	}
	syms := exeSymbols(t, prog)
	for i := range 3 {
		// gdb lists threads last created first.
		sameStack(t, fmt.Sprintf("thread %d", i+1), syms, gs[2-i], es[i], true)
	}
}

// waitMutexes polls /proc/PID/task/*/syscall (Linux) until threads of the
// process wait in futex(2) on each of the named variables of prog, or a
// minute (a bound on a hang) has gone by.
func waitMutexes(t *testing.T, prog string, pid int, names ...string) bool {
	t.Helper()
	f, err := elf.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, s := range syms {
		if slices.Contains(names, s.Name) {
			want[fmt.Sprintf("%#x", s.Value)] = true
		}
	}
	if len(want) != len(names) {
		t.Fatalf("%s: symbols %v not all found", prog, names)
	}
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
		waiting := map[string]bool{}
		for _, task := range tasks {
			data, _ := os.ReadFile(task)
			if f := strings.Fields(string(data)); len(f) > 2 && f[0] == "202" && want[f[1]] {
				waiting[f[1]] = true
			}
		}
		if len(waiting) == len(want) {
			return true
		}
	}
	return false
}
