package paths

import (
	"fmt"
	"path/filepath"
	"testing"

	"emuprof/analyses/platform"
	"emuprof/trace"
)

// runCopy runs the stream of r as copy i of the plan in planPath would see
// it: only the blocks the copy's filter wants (the emulator's BlockFilter),
// framed by the stack pointer, and returns its shard.
func (r *runner) runCopy(t *testing.T, planPath string, i int) (*Shard, error) {
	t.Helper()
	pf, digest, err := ReadPlan(planPath, 0)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := NewCopyRun(i, pf, digest)
	if err != nil {
		t.Fatal(err)
	}
	env := platform.NewEnv(r.p, "prog", nil)
	prof := New(Options{Symbols: r.p, Block: env.Block, SPFrames: true,
		Code: func(trace.Routine) (Code, error) { return r.p, nil }})
	prof.Copy = cr
	pl := platform.NewPipeline(env, r.tr.Blocks, []platform.Instance{NewInstance(prof, "prog", 10)}, false)
	var evs []trace.Event
	view := r.tr.Blocks.View()
	for _, ev := range r.tr.Events {
		if ev.Kind == trace.KindBlock && !cr.Wants(view.Get(ev.Block)) {
			continue
		}
		evs = append(evs, ev)
	}
	pl.Events(evs)
	pl.Finish()
	if err := pl.Err(); err != nil {
		t.Fatal(err)
	}
	return prof.shard("prog")
}

// mergedCopies runs copies 0 to k-1 of the plan file plan, each on a fresh
// trace, and merges their shards.
func mergedCopies(t *testing.T, trace func() *runner, plan string, k int) *Profile {
	t.Helper()
	pf, digest, err := ReadPlan(plan, k)
	if err != nil {
		t.Fatal(err)
	}
	var shards []*Shard
	for i := range k {
		sh, err := trace().runCopy(t, plan, i)
		if err != nil {
			t.Fatalf("k %d: %v", k, err)
		}
		shards = append(shards, sh)
	}
	got, err := MergeShards(pf, digest, shards)
	if err != nil {
		t.Fatalf("k %d: %v", k, err)
	}
	return got
}

// TestCopiesNoReturnTails: a call of a function that never returns ends
// the path of the frame that made it. A copy sees only its own routines
// and frames them by the stack pointer, so it cannot tell which frame
// called exit when code it does not profile sits between (main calls f,
// which calls exit, as gzip's main calls its do_exit), nor that _start's
// block, which pushes before its indirect call, called
// __libc_start_main: the tails come from the plan, every copy's CFGs are
// the plan's, and the merge gives the planning run's profile.
func TestCopiesNoReturnTails(t *testing.T) {
	m := newAsm(0x1000).
		label("M0").nop().je("M2").
		label("M1").call("F0").
		label("M2").ret()
	f := newAsm(0x2000).
		label("F0").nop().je("F2").
		label("F1").nop().
		label("F2").raw(0xff, 0xd0) // call *%rax (exit)
	s := newAsm(0x4000).
		label("S0").raw(0x50).raw(0xff, 0xd0). // push %rax; call *%rax (exit)
		label("S1").ret()
	e := newAsm(0x3000).label("E0").raw(0x0f, 0x05).ret() // syscall; ret
	p := newProgram(m, f, s, e).routine("main", 0x1000, m.pc()).routine("f", 0x2000, f.pc()).
		routine("_start", 0x4000, s.pc()).routine("exit", 0x3000, e.pc())
	trace := func() *runner {
		r := newRunner(p).run(1, "M0", "M1", "F0", "F1") // F1 runs on into F2
		r.sp[1] -= 16                                    // f's frame
		r.run(1, "E0")
		r.run(2, "S0")
		r.sp[2] -= 8 // the push
		return r.run(2, "E0")
	}
	for _, k := range []int{2, 3, 4} {
		plan := filepath.Join(t.TempDir(), "plan.json")
		want, err := trace().profileP3(t, P3Config{K: k, PlanOut: plan}).Profile("prog")
		if err != nil {
			t.Fatal(err)
		}
		got := mergedCopies(t, trace, plan, k)
		a, _ := got.Marshal()
		b, _ := want.Marshal()
		if string(a) != string(b) {
			t.Errorf("k %d: merged\n%s\nplanning run\n%s", k, a, b)
		}
	}
}

// TestCopiesSignals: a signal handler is an activation of its own, and the
// activation it interrupts keeps its path register and goes on with its
// path after rt_sigreturn (spec §1.4). The planning run (call stage) and
// every copy (stack pointer framing, seeing only its own routines) agree
// on it: the merge equals the planning run's profile, and main's paths are
// those of the same run without the signals. Three signals: a timer's in
// main's loop, one between main's call of f and f's first block, and a
// fault in f's first block (which has f's ret), which the handler fixes so
// that the block goes on from the next instruction (a leader the run adds
// to f's CFG, in the planning run and the copies alike).
func TestCopiesSignals(t *testing.T) {
	m := newAsm(0x1000).
		label("M0").nop().
		label("L").nop().je("L2").
		label("L1").nop().
		label("L2").nop().jne("L").
		label("M1").call("F0").
		label("M2").ret()
	f := newAsm(0x2000).label("F0").nop().label("F1").ret()
	h := newAsm(0x3000).
		label("H0").nop().je("H2").
		label("H1").nop().
		label("H2").ret()
	rs := newAsm(0x4000).label("R0").raw(0x0f, 0x05) // syscall (rt_sigreturn)
	p := newProgram(m, f, h, rs).routine("main", 0x1000, m.pc()).routine("f", 0x2000, f.pc()).
		routine("handler", 0x3000, h.pc()).routine("__restore_rt", 0x4000, rs.pc())
	const mainSP, handlerSP = 0x7fff0000, 0x7ffe0000
	signal := func(r *runner, resumeSP uint64, handler ...any) {
		r.tr.Other(trace.KindSyscall, 1, trace.SyscallSignalEntry, p.labels["R0"])
		r.sp[1], r.prevE[1] = handlerSP, trace.EndOther
		r.run(1, handler...)
		r.run(1, "R0")
		r.tr.Other(trace.KindSyscall, 1, trace.SyscallSigreturn, 0)
		r.sp[1], r.prevE[1] = resumeSP, trace.EndOther
	}
	trace := func(signals bool) *runner {
		r := newRunner(p).run(1, "M0", "L", "L1", "L", "L2")
		if signals {
			signal(r, mainSP, "H0", "H1")
		}
		r.run(1, "L", "L2", "M1")
		if signals {
			signal(r, mainSP, "H0", "H2")
			r.prevE[1] = trace.EndCall // the call is still to come
		}
		r.run(1, "F0")
		if signals {
			signal(r, mainSP-8, "H0", "H2") // F0's nop faulted
			r.run(1, "F1")
		}
		return r.run(1, "M2")
	}
	quiet := trace(false).profile(t)
	for _, k := range []int{1, 2, 3, 4} {
		plan := filepath.Join(t.TempDir(), "plan.json")
		want, err := trace(true).profileP3(t, P3Config{K: k, PlanOut: plan}).Profile("prog")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"main"} {
			var got Routine
			for _, r := range want.Routines {
				if r.Name == name {
					got = r
				}
			}
			if w := routineOut(t, quiet, name); fmt.Sprint(got.Paths) != fmt.Sprint(w.Paths) || len(got.Truncated) != 0 {
				t.Errorf("k %d: %s with signals: paths %v truncated %v; without: %v", k, name, got.Paths, got.Truncated, w.Paths)
			}
		}
		got := mergedCopies(t, func() *runner { return trace(true) }, plan, k)
		a, _ := got.Marshal()
		want.Copies, want.ProbeHits = got.Copies, got.ProbeHits
		b, _ := want.Marshal()
		if string(a) != string(b) {
			t.Errorf("k %d: merged\n%s\nplanning run\n%s", k, a, b)
		}
	}
}
