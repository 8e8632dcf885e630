package platform_test

// The worked example of docs/PLATFORM.md ("Adding an analysis"), compiled
// and run here so that the guide cannot drift from the interfaces it
// shows: syscount counts the system calls each routine makes.

import (
	"fmt"
	"io"
	"testing"

	"github.com/spf13/pflag"

	"emuprof/analyses/calls"
	"emuprof/analyses/platform"
	"emuprof/trace"
	"emuprof/trace/tracetest"
)

var syscountPlugin = platform.Plugin{
	Name: "syscount", Short: "System calls per routine", Long: "...",
	Flags: func(fs *pflag.FlagSet) platform.Factory {
		top := fs.Int("syscount-top", 10, "syscount: routines in the summary")
		return func(env *platform.Env) (platform.Instance, error) {
			if *top < 1 {
				return nil, platform.BadFlag("syscount-top", *top, "want 1 or more")
			}
			return &counter{env: env, top: *top, stack: map[uint32][]calls.RoutineID{},
				counts: map[calls.RoutineID]int{}}, nil
		}
	},
}

type counter struct {
	env    *platform.Env
	top    int
	stack  map[uint32][]calls.RoutineID // per thread: the routines entered, innermost last
	counts map[calls.RoutineID]int
}

// Calls gives Call and Return events (the shared call-tracking stage),
// Syscalls the Syscall events; no encoding is accepted: the plain stream.
func (c *counter) Needs() trace.Needs {
	return trace.Needs{Wants: trace.Wants{Calls: true, Syscalls: true}}
}

func (c *counter) Events(evs []trace.Event) {
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case trace.KindCall: // Block is the routine's id in env.Routines()
			c.stack[e.Tid] = append(c.stack[e.Tid], calls.RoutineID(e.Block))
		case trace.KindReturn:
			if s := c.stack[e.Tid]; len(s) > 0 {
				c.stack[e.Tid] = s[:len(s)-1]
			}
		case trace.KindSyscall:
			if s := c.stack[e.Tid]; len(s) > 0 {
				c.counts[s[len(s)-1]]++
			}
		}
	}
}

func (c *counter) Finish()                          {}
func (c *counter) MarkPartial(string)               {}
func (c *counter) Write(string) ([]string, error)   { return nil, nil }
func (c *counter) Summary(io.Writer) error          { return nil }
func (c *counter) Section() (string, string, error) { return "", "", nil }

// byName is the example's result: syscalls per routine name.
func (c *counter) byName() map[string]int {
	out := map[string]int{}
	for id, n := range c.counts {
		out[c.env.Routines().Get(id).Name] += n
	}
	return out
}

// exampleSyms names the routine of pc by its 256-byte page: 0x1000 is
// r10, 0x2000 r20.
type exampleSyms struct{}

func (exampleSyms) Routine(pc uint64) (trace.Routine, bool) {
	return trace.Routine{Entry: pc &^ 0xff, Name: fmt.Sprintf("r%x", pc>>8), Object: "prog"}, true
}
func (exampleSyms) Line(uint64) (string, int, bool) { return "", 0, false }

// The example, registered through its flags and fed by the pipeline as the
// run layer does, charges each syscall to the routine that made it: r10
// makes one before it calls r20, r20 two, and r10 one more after the
// return.
func TestWorkedExampleSyscount(t *testing.T) {
	tr := tracetest.New(exampleSyms{})
	tr.Block(1, 0x1000, 0x8000, 3, 6, trace.EndSyscall).Other(trace.KindSyscall, 1, 39, 0)
	tr.Block(1, 0x1006, 0x8000, 2, 5, trace.EndCall)
	tr.Block(1, 0x2000, 0x7ff8, 2, 6, trace.EndSyscall).Other(trace.KindSyscall, 1, 0, 0)
	tr.Block(1, 0x2006, 0x7ff8, 2, 6, trace.EndSyscall).Other(trace.KindSyscall, 1, 1, 0)
	tr.Block(1, 0x200c, 0x7ff8, 1, 1, trace.EndRet)
	tr.Block(1, 0x100b, 0x8000, 2, 6, trace.EndSyscall).Other(trace.KindSyscall, 1, 60, 0)

	fs := pflag.NewFlagSet("syscount", pflag.ContinueOnError)
	factory := syscountPlugin.Flags(fs)
	env := platform.NewEnv(exampleSyms{}, "prog", nil)
	inst, err := factory(env)
	if err != nil {
		t.Fatal(err)
	}
	p := platform.NewPipeline(env, tr.Blocks, []platform.Instance{inst}, false)
	if n := p.Needs(); !n.Blocks || !n.Syscalls || n.Fold != nil || n.CallMarks {
		t.Fatalf("the pipeline asks for %+v", n)
	}
	p.Events(tr.Events)
	p.Finish()
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	got := inst.(*counter).byName()
	if len(got) != 2 || got["r10"] != 2 || got["r20"] != 2 {
		t.Errorf("syscalls per routine %v, want r10: 2, r20: 2", got)
	}

	if err := fs.Parse([]string{"--syscount-top", "0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := factory(env); err == nil {
		t.Error("--syscount-top 0 was accepted")
	}
}
