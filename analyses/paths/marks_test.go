package paths

import (
	"testing"

	"emuprof/trace"
)

// TestCallMarksSignals: calls marked on Block events (Options.CCT and
// LastSP) give the profile that Call and Return events give (profileP3
// compares them) when a signal comes right after a marked block, and its
// handler is left by siglongjmp: the signal's barrier goes at the stack
// pointer of the thread's last block, which the mark replaced in its
// event (Tracker.LastSP, while the stage hands on the stream up to the
// signal), and the landing pops it by its stack pointer, which a mark
// would replace (the stage marks no block of a signalled thread). Thread
// 2 keeps its marks.
func TestCallMarksSignals(t *testing.T) {
	m := newAsm(0x1000).
		label("M0").nop().
		label("M1").call("F0").
		label("M2").nop().je("M4").
		label("M3").nop().
		label("M4").ret()
	f := newAsm(0x2000).label("F0").nop().je("F2").label("F1").nop().label("F2").ret()
	h := newAsm(0x3000).label("H0").nop().je("H2").label("H1").nop().label("H2").ret()
	rs := newAsm(0x4000).label("R0").raw(0x0f, 0x05) // syscall (rt_sigreturn)
	p := newProgram(m, f, h, rs).routine("main", 0x1000, m.pc()).routine("f", 0x2000, f.pc()).
		routine("handler", 0x3000, h.pc()).routine("__restore_rt", 0x4000, rs.pc())
	const mainSP, handlerSP = 0x7ffffffe0000, 0x7ffffffd0000 // above 2^32, as marks are not
	r := newRunner(p)
	r.sp[1], r.sp[2] = mainSP, 0x7ffff0000000
	r.run(2, "M0", "F0", "F1", "M2", "M3")
	r.run(1, "M0", "F0") // F0 is marked with main's call of f
	r.tr.Other(trace.KindSyscall, 1, trace.SyscallSignalEntry, p.labels["R0"])
	r.sp[1], r.prevE[1] = handlerSP, trace.EndOther
	r.run(1, "H0", "H1")
	r.setSP(1, mainSP-8) // siglongjmp back into f, where the signal came
	r.run(1, "F1", "M2", "M3")
	r.run(2, "M0", "F0", "F2", "M2")
	r.run(1, "M0", "F0", "F2", "M2", "M4")
	plain, _ := r.profileMode(t, P3Config{}, false)
	if _, marked := r.profileMode(t, P3Config{}, true); marked < 4 {
		t.Fatalf("%d marked blocks, want 4 or more", marked)
	}
	r.profile(t) // the two agree
	if plain.Truncations == 0 {
		t.Fatalf("the landing truncated no path")
	}
}
