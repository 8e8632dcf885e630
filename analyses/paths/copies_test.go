package paths

import (
	"path/filepath"
	"testing"

	"emuprof/analyses"
	"emuprof/analyses/platform"
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
		Code: func(analyses.Routine) (Code, error) { return r.p, nil }})
	prof.Copy = cr
	pl := platform.NewPipeline(env, r.tr.Blocks, []platform.Instance{NewInstance(prof, "prog", 10)}, false)
	var evs []analyses.Event
	view := r.tr.Blocks.View()
	for _, ev := range r.tr.Events {
		if ev.Kind == analyses.KindBlock && !cr.Wants(view.Get(ev.Block)) {
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
		a, _ := got.Marshal()
		b, _ := want.Marshal()
		if string(a) != string(b) {
			t.Errorf("k %d: merged\n%s\nplanning run\n%s", k, a, b)
		}
	}
}
