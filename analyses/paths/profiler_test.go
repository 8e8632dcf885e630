package paths

import (
	"fmt"
	"testing"
)

func want(t *testing.T, got map[string]uint64, w map[string]uint64) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(w) {
		t.Errorf("counts %v, want %v", got, w)
	}
}

// The spec's O1 loop (§4.1) as x86 code: B0 falls into the loop header
// B1; the trace B0 B1 B2 B3 B1 B2 B4 B1 B5 gives ids 0, 4, 5 once each.
// The emulator's first block spans B0 and B1 (no branch between them).
func TestProfileO1(t *testing.T) {
	a := newAsm(0x1000).
		label("B0").nop().
		label("B1").nop().je("B5").
		label("B2").nop().je("B4").
		label("B3").nop().jmp("B1").
		label("B4").nop().jmp("B1").
		label("B5").ret()
	p := newProgram(a).routine("loop", 0x1000, a.pc())
	prof := newRunner(p).run(1, "B0", "B2", "B3", "B1", "B2", "B4", "B1", "B5").profile(t)
	want(t, counts(t, prof, "loop"), map[string]uint64{"0": 1, "4": 1, "5": 1})
	r := routineOut(t, prof, "loop")
	if r.NumPaths != "6" || r.CFG != CFGStatic || r.Probes != 3 || r.Blocks != 6 {
		t.Errorf("routine %+v", r)
	}
	// Path 4 is <B1 B2 B4>.
	for _, x := range r.Paths {
		if x.ID == "4" && fmt.Sprint(x.Blocks) != fmt.Sprintf("[%#x %#x %#x]", p.labels["B1"], p.labels["B2"], p.labels["B4"]) {
			t.Errorf("path 4 blocks %v", x.Blocks)
		}
	}
	// Probe hits: ENTRY->B0 (0), B0->B1 (0), B1->B2, B2->B3 (0), B3->EXIT
	// dummy (0), ENTRY->B1 (3: a hit), B1->B2, B2->B4 (1: hit),
	// B4->EXIT (0), ENTRY->B1 (hit), B1->B5 (2: hit), B5->EXIT (0).
	if prof.Hits != 4 || prof.Completions != 3 || prof.Truncations != 0 {
		t.Errorf("hits %d completions %d truncations %d", prof.Hits, prof.Completions, prof.Truncations)
	}
}

// Calls do not end paths; each activation (recursion too) has its own
// register.
func TestProfileRecursion(t *testing.T) {
	m := newAsm(0x1000).label("M0").call("F0").label("M1").call("F0").label("M2").ret()
	f := newAsm(0x2000).
		label("F0").nop().je("F2").
		label("F1").call("F0").
		label("F2").ret()
	p := newProgram(m, f).routine("main", 0x1000, m.pc()).routine("f", 0x2000, f.pc())
	// main -> f (recurses once) ; main -> f (does not recurse).
	prof := newRunner(p).run(1, "M0", "F0", "F1", "F0", "F2", "F2", "M1", "F0", "F2", "M2").profile(t)
	// f: <F0 F1 F2> id 0 (outer), <F0 F2> id 1 (inner and second call).
	want(t, counts(t, prof, "f"), map[string]uint64{"0": 1, "1": 2})
	want(t, counts(t, prof, "main"), map[string]uint64{"0": 1})
	if prof.Truncations != 0 {
		t.Errorf("%d truncations", prof.Truncations)
	}
}

// Two threads in the same routine keep separate registers.
func TestProfileThreads(t *testing.T) {
	f := newAsm(0x2000).
		label("F0").nop().je("F2").
		label("F1").nop().
		label("F2").ret()
	p := newProgram(f).routine("f", 0x2000, f.pc())
	// The emulator block at F1 runs on into F2 (no branch between them).
	prof := newRunner(p).run(1, "F0").run(2, "F0").run(1, "F1").run(2, "F2").profile(t)
	// Thread 1: F0 F1 F2 (id 0) ; thread 2: F0 F2 (id 1).
	want(t, counts(t, prof, "f"), map[string]uint64{"0": 1, "1": 1})
}

// A longjmp back into main: the frames it skips record truncated paths,
// main's path in progress is truncated, and a path starts at the landing
// site (a new head).
func TestProfileLongjmp(t *testing.T) {
	m := newAsm(0x1000).
		label("M0").call("S0").
		label("M1").nop().je("M3").
		label("M2").call("F0").
		label("M3").ret()
	s := newAsm(0x2000).label("S0").ret()
	f := newAsm(0x3000).label("F0").call("H0").label("F1").ret()
	h := newAsm(0x4000).label("H0").raw(0xff, 0xe0) // jmp *%rax
	p := newProgram(m, s, f, h).routine("main", 0x1000, m.pc()).routine("setjmp", 0x2000, s.pc()).
		routine("f", 0x3000, f.pc()).routine("longjmp", 0x4000, h.pc())
	r := newRunner(p).run(1, "M0", "S0", "M1", "M2", "F0", "H0")
	r.setSP(1, 0x7fff0000).run(1, "M1", "M3")
	prof := r.profile(t)
	mr := routineOut(t, prof, "main")
	if len(mr.Truncated) != 1 || mr.Truncated[0].Count != 1 ||
		fmt.Sprint(mr.Truncated[0].Blocks) != fmt.Sprintf("[%#x %#x %#x]", p.labels["M0"], p.labels["M1"], p.labels["M2"]) {
		t.Errorf("main truncated %+v", mr.Truncated)
	}
	if len(mr.Paths) != 1 || fmt.Sprint(mr.Paths[0].Blocks) != fmt.Sprintf("[%#x %#x]", p.labels["M1"], p.labels["M3"]) || mr.CFG != CFGStatic {
		t.Errorf("main paths %+v cfg %s", mr.Paths, mr.CFG)
	}
	// f calls longjmp, a function that does not return: its path ends
	// there, complete.
	if fr := routineOut(t, prof, "f"); len(fr.Paths) != 1 || len(fr.Truncated) != 0 || fr.NumPaths != "1" {
		t.Errorf("f: %+v", fr)
	}
	// longjmp's block ends in an indirect jump out of the routine: an exit.
	want(t, counts(t, prof, "longjmp"), map[string]uint64{"0": 1})
	if prof.Truncations != 1 || prof.Completions != 4 {
		t.Errorf("completions %d truncations %d", prof.Completions, prof.Truncations)
	}
}

// Transitions the disassembly could not know (an indirect jump) are added
// when executed; counts taken under the earlier numbering move to the new
// ids, also for an activation in progress (the outer one).
func TestProfileDynamicEdges(t *testing.T) {
	a := newAsm(0x1000).
		label("R0").nop().je("R2").
		label("R1").call("R0").
		label("R2").nop().raw(0xff, 0xe0). // jmp *%rax
		label("R3").ret().
		label("R4").ret()
	p := newProgram(a).routine("r", 0x1000, a.pc())
	prof := newRunner(p).run(1, "R0", "R1", "R0", "R2", "R3", "R2", "R4").profile(t)
	// Final DAG: R0->R1 0, R0->R2 3, R1->R2 0, R2->R3 0, R2->R4 1,
	// R2->EXIT 2. Inner <R0 R2 R3> = 3, outer <R0 R1 R2 R4> = 1.
	want(t, counts(t, prof, "r"), map[string]uint64{"1": 1, "3": 1})
	if r := routineOut(t, prof, "r"); r.CFG != CFGStaticDynamic || r.NumPaths != "6" || r.Lost != 0 {
		t.Errorf("routine %+v", r)
	}
}

// The second target of an indirect jump has a lower address than the
// first: the path counted first changes id.
func TestProfileDynamicRenumber(t *testing.T) {
	a := newAsm(0x1000).
		label("R0").nop().raw(0xff, 0xe0).
		label("R1").ret().
		label("R2").ret()
	p := newProgram(a).routine("r", 0x1000, a.pc())
	prof := newRunner(p).run(1, "R0", "R2").run(2, "R0", "R1").run(3, "R0", "R2").profile(t)
	// R0 -> R1 (0), R2 (1), EXIT (2).
	want(t, counts(t, prof, "r"), map[string]uint64{"0": 1, "1": 2})
}

// A jump into the middle of a static block splits it; the path counted
// through the whole block becomes a path through both halves.
func TestProfileSplit(t *testing.T) {
	a := newAsm(0x1000).
		label("A0").nop().je("B0").
		label("A1").nop().nop().nop().ret().
		label("B0").nop().raw(0xff, 0xe0) // jmp *%rax to A1+2
	p := newProgram(a).routine("r", 0x1000, a.pc())
	mid := p.labels["A1"] + 2
	prof := newRunner(p).run(1, "A0", "A1").run(2, "A0", "B0", mid).profile(t)
	r := routineOut(t, prof, "r")
	var got []string
	for _, x := range r.Paths {
		got = append(got, fmt.Sprint(x.Count, x.Blocks))
	}
	w := []string{
		fmt.Sprintf("1 [%#x %#x %#x]", p.labels["A0"], p.labels["A1"], mid),
		fmt.Sprintf("1 [%#x %#x %#x]", p.labels["A0"], p.labels["B0"], mid),
	}
	if fmt.Sprint(got) != fmt.Sprint(w) || r.CFG != CFGStaticDynamic || r.Blocks != 4 {
		t.Errorf("paths %v, want %v (cfg %s, %d blocks)", got, w, r.CFG, r.Blocks)
	}
}

// A call of a function that never returns ends the path (it is counted,
// not truncated, when the run ends inside the callee); known statically by
// the callee's name, or from the Call event for a call through a pointer.
func TestProfileNoReturn(t *testing.T) {
	m := newAsm(0x1000).
		label("M0").nop().je("M2").
		label("M1").call("E0").
		label("M2").ret()
	n := newAsm(0x1100).
		label("N0").raw(0xff, 0xd0). // call *%rax
		label("N1").ret()
	e := newAsm(0x2000).label("E0").raw(0x0f, 0x05).ret() // syscall; ret
	p := newProgram(m, n, e).routine("main", 0x1000, m.pc()).routine("indirect", 0x1100, n.pc()).routine("exit", 0x2000, e.pc())
	prof := newRunner(p).run(1, "M0", "M1", "E0").run(2, "N0", "E0").profile(t)
	mr := routineOut(t, prof, "main")
	// M1 has no fall-through edge: main's DAG has 2 paths.
	if mr.NumPaths != "2" || len(mr.Paths) != 1 || mr.Paths[0].Count != 1 || len(mr.Truncated) != 0 {
		t.Errorf("main %+v", mr)
	}
	ir := routineOut(t, prof, "indirect")
	if len(ir.Paths) != 1 || len(ir.Truncated) != 0 || ir.NumPaths != "2" {
		t.Errorf("indirect %+v", ir)
	}
	if er := routineOut(t, prof, "exit"); len(er.Truncated) != 1 || er.Truncated[0].Count != 2 {
		t.Errorf("exit %+v", er)
	}
}

// Jump tables of both forms gcc emits are resolved statically.
func TestProfileJumpTables(t *testing.T) {
	// PIC: cmp $2,%edi; ja def; lea T(%rip),%rdx; movslq (%rdx,%rdi,4),%rax;
	// add %rdx,%rax; jmp *%rax.
	a := newAsm(0x1000).
		label("J0").raw(0x83, 0xff, 0x02).rel([]byte{0x0f, 0x87}, "DEF").
		label("J1").rel([]byte{0x48, 0x8d, 0x15}, "T").raw(0x48, 0x63, 0x04, 0xba, 0x48, 0x01, 0xd0, 0xff, 0xe0).
		label("C0").nop().ret().
		label("C1").nop().ret().
		label("C2").nop().ret().
		label("DEF").ret()
	end1 := a.pc()
	a.label("T")
	tbl := a.pc()
	for _, c := range []string{"C0", "C1", "C2"} {
		off := uint32(int32(int64(a.labels[c]) - int64(tbl)))
		a.raw(byte(off), byte(off>>8), byte(off>>16), byte(off>>24))
	}
	// Absolute: cmp $1,%edi; ja def; jmp *T2(,%rdi,8).
	b := newAsm(0x2000).
		label("K0").raw(0x83, 0xff, 0x01).rel([]byte{0x0f, 0x87}, "KDEF").
		label("K1").raw(0xff, 0x24, 0xfd, 0x00, 0x30, 0x00, 0x00). // T2 = 0x3000
		label("D0").ret().
		label("D1").nop().ret().
		label("KDEF").ret()
	end2 := b.pc()
	t2 := newAsm(0x3000).label("T2").raw(8, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0) // patched below
	p := newProgram(a, b, t2).routine("sw", 0x1000, end1).routine("sw2", 0x2000, end2)
	for i, c := range []string{"D0", "D1"} {
		v := p.labels[c]
		for j := 0; j < 8; j++ {
			p.mem[0x3000+uint64(8*i+j)] = byte(v >> (8 * j))
		}
	}
	prof := newRunner(p).run(1, "J0", "J1", "C1").run(3, "J0", "J1", "C2").run(4, "J0", "DEF").
		run(2, "K0", "K1", "D1").profile(t)
	r := routineOut(t, prof, "sw")
	// J0 -> J1 (0), DEF (3); J1 -> C0 (0), C1 (1), C2 (2).
	if r.CFG != CFGStatic || r.NumPaths != "4" {
		t.Errorf("sw: cfg %s num_paths %s", r.CFG, r.NumPaths)
	}
	want(t, counts(t, prof, "sw"), map[string]uint64{"1": 1, "2": 1, "3": 1})
	if r2 := routineOut(t, prof, "sw2"); r2.CFG != CFGStatic || r2.NumPaths != "3" {
		t.Errorf("sw2: %+v", r2)
	}
	want(t, counts(t, prof, "sw2"), map[string]uint64{"1": 1})
}

// The emulator runs each iteration of a rep string instruction as a block
// of its own, starting in the middle of a static block: no transition.
func TestProfileRepString(t *testing.T) {
	a := newAsm(0x1000).
		label("A").nop().label("REP").raw(0xf3, 0xaa). // rep stosb
		label("AFTER").nop().ret()
	p := newProgram(a).routine("r", 0x1000, a.pc())
	prof := newRunner(p).run(1, "A", "REP", "REP", "AFTER").profile(t)
	want(t, counts(t, prof, "r"), map[string]uint64{"0": 1})
	if r := routineOut(t, prof, "r"); r.CFG != CFGStatic || r.Blocks != 1 {
		t.Errorf("routine %+v", r)
	}
}

// A jump from another routine into the middle of this one (mempcpy into
// memmove) starts a path there: a new leader and head, not a transition
// the disassembly missed.
func TestProfileForeignEntry(t *testing.T) {
	m := newAsm(0x1000).label("M0").nop().nop().label("M1").nop().ret()
	n := newAsm(0x2000).label("N0").nop().jmp("M1")
	p := newProgram(m, n).routine("memmove", 0x1000, m.pc()).routine("mempcpy", 0x2000, n.pc())
	prof := newRunner(p).run(1, "N0", "M1").run(2, "M0").profile(t)
	r := routineOut(t, prof, "memmove")
	if r.CFG != CFGStatic || r.NumPaths != "2" || len(r.Paths) != 2 {
		t.Errorf("memmove %+v", r)
	}
	want(t, counts(t, prof, "mempcpy"), map[string]uint64{"0": 1})
}

// glibc's handle_amd: the table address is loaded before the index is
// masked (and $3: four entries).
func TestProfileJumpTableMask(t *testing.T) {
	a := newAsm(0x1000).
		label("J0").rel([]byte{0x48, 0x8d, 0x35}, "T").
		raw(0xc1, 0xe8, 0x0c, 0x83, 0xe0, 0x03, 0x48, 0x63, 0x0c, 0x86, 0x48, 0x01, 0xf1, 0xff, 0xe1).
		label("C0").nop().ret().
		label("C1").nop().ret().
		label("C2").nop().ret().
		label("C3").nop().ret()
	end := a.pc()
	a.label("T")
	tbl := a.pc()
	for _, c := range []string{"C0", "C1", "C2", "C3"} {
		off := uint32(int32(int64(a.labels[c]) - int64(tbl)))
		a.raw(byte(off), byte(off>>8), byte(off>>16), byte(off>>24))
	}
	p := newProgram(a).routine("handle_amd", 0x1000, end)
	prof := newRunner(p).run(1, "J0", "C2").profile(t)
	if r := routineOut(t, prof, "handle_amd"); r.CFG != CFGStatic || r.NumPaths != "4" {
		t.Errorf("routine %+v", r)
	}
	want(t, counts(t, prof, "handle_amd"), map[string]uint64{"2": 1})
}

// gcc -O0's switch: the index lives in a stack slot, the entry is loaded
// zero-extended and sign-extended by cltq.
func TestProfileJumpTableO0(t *testing.T) {
	a := newAsm(0x1000).
		label("J0").raw(0x55, 0x48, 0x89, 0xe5, 0x89, 0x7d, 0xfc, 0x83, 0x7d, 0xfc, 0x02).rel([]byte{0x0f, 0x87}, "DEF").
		label("J1").raw(0x8b, 0x45, 0xfc, 0x48, 0x8d, 0x14, 0x85, 0, 0, 0, 0).rel([]byte{0x48, 0x8d, 0x05}, "T").
		raw(0x8b, 0x04, 0x02, 0x48, 0x98).rel([]byte{0x48, 0x8d, 0x15}, "T").raw(0x48, 0x01, 0xd0, 0xff, 0xe0).
		label("C0").nop().ret().
		label("C1").nop().ret().
		label("C2").nop().ret().
		label("DEF").ret()
	end := a.pc()
	a.label("T")
	tbl := a.pc()
	for _, c := range []string{"C0", "C1", "C2"} {
		off := uint32(int32(int64(a.labels[c]) - int64(tbl)))
		a.raw(byte(off), byte(off>>8), byte(off>>16), byte(off>>24))
	}
	p := newProgram(a).routine("sw", 0x1000, end)
	prof := newRunner(p).run(1, "J0", "J1", "C0").profile(t)
	if r := routineOut(t, prof, "sw"); r.CFG != CFGStatic || r.NumPaths != "4" {
		t.Errorf("routine %+v", r)
	}
	want(t, counts(t, prof, "sw"), map[string]uint64{"0": 1})
}

// switchRoutine assembles a three-way switch whose dispatch is code, with
// the table's address at label T and the default at DEF.
func switchRoutine(code func(a *asm)) *program {
	a := newAsm(0x1000).label("J0")
	code(a)
	a.label("C0").nop().ret().
		label("C1").nop().ret().
		label("C2").nop().ret().
		label("DEF").ret()
	end := a.pc()
	a.label("T")
	tbl := a.pc()
	for _, c := range []string{"C0", "C1", "C2"} {
		off := uint32(int32(int64(a.labels[c]) - int64(tbl)))
		a.raw(byte(off), byte(off>>8), byte(off>>16), byte(off>>24))
	}
	return newProgram(a).routine("sw", 0x1000, end)
}

// More dispatch forms of glibc: an 8-bit compare read back with movzx
// (_IO_file_fopen), and an index copied before its compare (setlocale).
func TestProfileJumpTableForms(t *testing.T) {
	forms := map[string]func(a *asm){
		"movzx": func(a *asm) {
			a.raw(0x83, 0xe8, 0x62, 0x3c, 0x02).rel([]byte{0x0f, 0x87}, "DEF").
				label("J1").raw(0x0f, 0xb6, 0xc0).rel([]byte{0x48, 0x8d, 0x0d}, "T").
				raw(0x48, 0x63, 0x04, 0x81, 0x48, 0x01, 0xc8, 0xff, 0xe0)
		},
		// cmpb $2,(%rcx,%rax,1); ja; movzbl (%rcx,%rax,1),%eax; lea T(%rip),%r8;
		// movslq (%r8,%rax,4),%rax; add %r8,%rax; jmp *%rax
		"byte table": func(a *asm) {
			a.raw(0x80, 0x3c, 0x01, 0x02).rel([]byte{0x0f, 0x87}, "DEF").
				label("J1").raw(0x0f, 0xb6, 0x04, 0x01).rel([]byte{0x4c, 0x8d, 0x05}, "T").
				raw(0x49, 0x63, 0x04, 0x80, 0x4c, 0x01, 0xc0, 0xff, 0xe0)
		},
		"copy": func(a *asm) {
			a.raw(0x89, 0xef).rel([]byte{0x48, 0x8d, 0x35}, "T").raw(0x83, 0xfd, 0x02).rel([]byte{0x0f, 0x87}, "DEF").
				label("J1").raw(0x48, 0x63, 0x0c, 0xbe, 0x48, 0x01, 0xf1, 0xff, 0xe1)
		},
	}
	for name, code := range forms {
		p := switchRoutine(code)
		prof := newRunner(p).run(1, "J0", "J1", "C1").profile(t)
		if r := routineOut(t, prof, "sw"); r.CFG != CFGStatic || r.NumPaths != "4" {
			t.Errorf("%s: routine %+v", name, r)
		}
	}
}

// P3's merged profile equals SBL's but for copies and probe_hits, for
// k = 2, 3, 4, 8, P3 and PBL; SBL measured by the plan equals the online
// hit count.
func TestProfileP3Merge(t *testing.T) {
	m := newAsm(0x1000).label("M0").call("F0").label("M1").call("G0").label("M2").call("F0").label("M3").ret()
	f := newAsm(0x2000).
		label("F0").nop().je("F2").
		label("F1").call("F0").
		label("F2").ret()
	g := newAsm(0x3000).
		label("G0").nop().je("G2").
		label("G1").nop().
		label("G2").nop().je("G4").
		label("G3").nop().
		label("G4").nop().je("G0").
		label("G5").ret()
	p := newProgram(m, f, g).routine("main", 0x1000, m.pc()).routine("f", 0x2000, f.pc()).routine("g", 0x3000, g.pc())
	trace := func() *runner {
		return newRunner(p).run(1, "M0", "F0", "F1", "F0", "F2", "F2", "M1",
			"G0", "G1", "G4", "G0", "G2", "G3", "G5", "M2", "F0", "F2", "M3")
	}
	sbl := trace().profile(t)
	want, err := sbl.Profile("prog")
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := want.Marshal()
	for _, k := range []int{1, 2, 3, 4, 8} {
		for _, pbl := range []bool{false, true} {
			got, err := trace().profileP3(t, P3Config{K: k, PBL: pbl}).Profile("prog")
			if err != nil {
				t.Fatal(err)
			}
			if got.Copies != k || len(got.ProbeHits) != k || got.P3.SBLHits != sbl.Hits {
				t.Errorf("k %d: copies %d probe_hits %v, SBL hits %d (online %d)", k, got.Copies, got.ProbeHits, got.P3.SBLHits, sbl.Hits)
			}
			got.Copies, got.ProbeHits = 1, want.ProbeHits
			if gotJSON, _ := got.Marshal(); string(gotJSON) != string(wantJSON) {
				t.Errorf("k %d pbl %v: merged profile differs:\n%s\nwant\n%s", k, pbl, gotJSON, wantJSON)
			}
		}
	}
}
