package calls

import (
	"testing"

	"emuprof/trace"
	"emuprof/trace/tracetest"
)

// Signal handlers are entered without a call (the kernel builds a frame)
// and left through sa_restorer and rt_sigreturn, or by siglongjmp.
var sigSyms = fakeSyms{
	{0x1000, 0x1100, "main"},
	{0x2000, 0x2100, "f"},
	{0x3000, 0x3100, "handler"},
	{0x5000, 0x5100, "g"},
	{0x9000, 0x9100, "__restore_rt"},
	{0x6000, 0x6100, "__libc_vfork"},
}

var sigTrace = tracetest.New(sigSyms)

func sblk(tid uint32, addr, sp uint64, n uint16, end trace.End) trace.Event {
	id := sigTrace.BlockID(addr, uint32(n), 1, end)
	return trace.Event{Kind: trace.KindBlock, Tid: tid, Block: id, Addr: addr, Aux: sp, Size: 1, End: end}
}

func sigEntry(tid uint32, restorer uint64, alt bool) trace.Event {
	size := uint32(10)
	if alt {
		size |= trace.SignalOnAltStack
	}
	return trace.Event{Kind: trace.KindSyscall, Tid: tid, Addr: trace.SyscallSignalEntry, Aux: restorer, Size: size}
}

func sigReturn(tid uint32) trace.Event {
	return trace.Event{Kind: trace.KindSyscall, Tid: tid, Addr: trace.SyscallSigreturn}
}

// runStage feeds the events through a Stage and logs its Call/Return events.
func runStage(t *testing.T, evs ...trace.Event) (*Stage, []string) {
	t.Helper()
	st := NewStage()
	var log []string
	st.Process(evs, sigTrace.Blocks.View(), func(b []trace.Event) {
		for _, e := range b {
			switch e.Kind {
			case trace.KindCall:
				log = append(log, "+"+st.Routines().Get(RoutineID(e.Block)).Name)
			case trace.KindReturn:
				log = append(log, "-"+st.Routines().Get(RoutineID(e.Block)).Name)
			}
		}
	})
	return st, log
}

func TestSignalHandlerFrames(t *testing.T) {
	for _, c := range []struct {
		name  string
		evs   []trace.Event
		want  string
		depth int
	}{{
		name: "return through sa_restorer and rt_sigreturn",
		evs: []trace.Event{
			sblk(1, 0x1000, 0x8000, 5, call), // main calls f
			sblk(1, 0x2000, 0x7ff8, 5, syscallEnd),
			sigEntry(1, 0x9000, false),
			sblk(1, 0x3000, 0x7000, 5, call), // the handler calls g
			sblk(1, 0x5000, 0x6ff8, 5, ret),
			sblk(1, 0x3005, 0x7000, 5, ret),        // returns to __restore_rt
			sblk(1, 0x9000, 0x7008, 2, syscallEnd), // rt_sigreturn
			sigReturn(1),
			sblk(1, 0x2005, 0x7ff8, 3, ret), // f goes on, returns
			sblk(1, 0x1005, 0x8000, 3, oth),
		},
		want:  "+main +f +handler +g -g -handler -f",
		depth: 1,
	}, {
		name: "siglongjmp out of the handler",
		evs: []trace.Event{
			sblk(1, 0x1000, 0x8000, 5, call),
			sblk(1, 0x2000, 0x7ff8, 5, oth), // faults
			sigEntry(1, 0x9000, false),
			sblk(1, 0x3000, 0x7000, 5, jmp), // longjmp
			sblk(1, 0x1010, 0x8000, 5, oth), // back in main
		},
		want:  "+main +f +handler -handler -f",
		depth: 1,
	}, {
		name: "on the alternate stack, above the thread's stack",
		evs: []trace.Event{
			sblk(1, 0x1000, 0x8000, 5, call),
			sblk(1, 0x2000, 0x7ff8, 5, oth),
			sigEntry(1, 0x9000, true),
			sblk(1, 0x3000, 0x90000, 5, call),
			sblk(1, 0x5000, 0x8fff8, 5, ret),
			sblk(1, 0x3005, 0x90000, 5, ret),
			sblk(1, 0x9000, 0x90008, 2, syscallEnd),
			sigReturn(1),
			sblk(1, 0x2005, 0x7ff8, 3, ret),
			sblk(1, 0x1005, 0x8000, 3, oth),
		},
		want:  "+main +f +handler +g -g -handler -f",
		depth: 1,
	}, {
		name: "nested: a second signal in the handler",
		evs: []trace.Event{
			sblk(1, 0x1000, 0x8000, 5, oth),
			sigEntry(1, 0x9000, false),
			sblk(1, 0x3000, 0x7000, 5, oth),
			sigEntry(1, 0x9000, false),
			sblk(1, 0x3000, 0x6000, 5, ret),
			sblk(1, 0x9000, 0x6008, 2, syscallEnd),
			sigReturn(1),
			sblk(1, 0x3005, 0x7000, 5, ret),
			sblk(1, 0x9000, 0x7008, 2, syscallEnd),
			sigReturn(1),
			sblk(1, 0x1005, 0x8000, 3, oth),
		},
		want:  "+main +handler +handler -handler -handler",
		depth: 1,
	}, {
		name: "between a call and the callee's first block",
		evs: []trace.Event{
			sblk(1, 0x1000, 0x8000, 5, call), // main calls f ...
			sigEntry(1, 0x9000, false),       // ... a signal comes first
			sblk(1, 0x3000, 0x7000, 5, ret),
			sblk(1, 0x9000, 0x7008, 2, syscallEnd),
			sigReturn(1),
			sblk(1, 0x2000, 0x7ff8, 5, ret), // f's first block: still called by main
			sblk(1, 0x1005, 0x8000, 3, oth),
		},
		want:  "+main +handler -handler +f -f",
		depth: 1,
	}, {
		name: "a call block faults and runs again",
		evs: []trace.Event{
			sblk(1, 0x1000, 0x8000, 5, call), // its call reads memory that faults
			sigEntry(1, 0x9000, false),
			sblk(1, 0x3000, 0x7000, 5, ret), // the handler fixes it
			sblk(1, 0x9000, 0x7008, 2, syscallEnd),
			sigReturn(1),
			sblk(1, 0x1002, 0x8000, 3, call), // the call instruction again: no call
			sblk(1, 0x2000, 0x7ff8, 5, ret),  // now f
			sblk(1, 0x1005, 0x8000, 3, oth),
		},
		want:  "+main +handler -handler +f -f",
		depth: 1,
	}, {
		name: "vfork pops its return address and pushes it back",
		evs: []trace.Event{
			sblk(1, 0x1000, 0x8000, 5, call),
			sblk(1, 0x6000, 0x7ff8, 3, syscallEnd), // pop %rdi; syscall
			sblk(1, 0x6003, 0x8000, 3, ret),        // push %rdi; ret
			sblk(1, 0x1005, 0x8000, 3, oth),
		},
		want:  "+main +__libc_vfork -__libc_vfork",
		depth: 1,
	}} {
		t.Run(c.name, func(t *testing.T) {
			st, log := runStage(t, c.evs...)
			if got := joinLog(log); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			if d := st.Tracker().Depth(1); d != c.depth {
				t.Errorf("depth %d, want %d (stack %v)", d, c.depth, st.Tracker().Stack(1))
			}
		})
	}
}

const syscallEnd = trace.EndSyscall

func joinLog(l []string) string {
	s := ""
	for i, x := range l {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s
}

// TestVforkOwnCode: vfork pops its return address before its syscall and
// pushes it back after, so its own blocks run 8 bytes above its entry
// stack pointer; its frame stays until its ret (it was unwound there, and
// its last block ran in the caller's frame).
func TestVforkOwnCode(t *testing.T) {
	st, log := runStage(t,
		sblk(1, 0x1000, 0x8000, 5, call),
		sblk(1, 0x6000, 0x7ff8, 3, syscallEnd),
		sblk(1, 0x6003, 0x8000, 3, ret))
	if got := joinLog(log); got != "+main +__libc_vfork" || st.Tracker().Depth(1) != 2 {
		t.Errorf("calls %s, stack %v; want vfork's frame on main's", got, st.Tracker().Stack(1))
	}
}
