package paths

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"emuprof/analyses/platform"
	"emuprof/trace"
	"emuprof/trace/tracetest"
)

// asm assembles tiny x86-64 routines for the tests: every branch uses a
// 32-bit displacement, so label addresses never depend on distances.
type asm struct {
	base   uint64
	buf    []byte
	labels map[string]uint64
	fix    []fixup
}

type fixup struct {
	at    int // offset of the rel32
	next  uint64
	label string
}

func newAsm(base uint64) *asm { return &asm{base: base, labels: map[string]uint64{}} }

func (a *asm) pc() uint64 { return a.base + uint64(len(a.buf)) }

func (a *asm) label(n string) *asm { a.labels[n] = a.pc(); return a }

func (a *asm) nop() *asm { a.buf = append(a.buf, 0x90); return a }

func (a *asm) raw(b ...byte) *asm { a.buf = append(a.buf, b...); return a }

func (a *asm) rel(op []byte, label string) *asm {
	a.buf = append(a.buf, op...)
	a.fix = append(a.fix, fixup{len(a.buf), a.pc() + 4, label})
	a.buf = append(a.buf, 0, 0, 0, 0)
	return a
}

func (a *asm) je(l string) *asm   { return a.rel([]byte{0x0f, 0x84}, l) }
func (a *asm) jne(l string) *asm  { return a.rel([]byte{0x0f, 0x85}, l) }
func (a *asm) jmp(l string) *asm  { return a.rel([]byte{0xe9}, l) }
func (a *asm) call(l string) *asm { return a.rel([]byte{0xe8}, l) }
func (a *asm) ret() *asm          { return a.raw(0xc3) }

// at returns a label's address, resolving labels defined in other
// assemblers through extern.
func (a *asm) at(l string) uint64 {
	v, ok := a.labels[l]
	if !ok {
		panic("no label " + l)
	}
	return v
}

// link patches the displacements; extern resolves labels not defined here.
func (a *asm) link(extern map[string]uint64) {
	for _, f := range a.fix {
		t, ok := a.labels[f.label]
		if !ok {
			t, ok = extern[f.label]
		}
		if !ok {
			panic("undefined label " + f.label)
		}
		binary.LittleEndian.PutUint32(a.buf[f.at:], uint32(int32(int64(t)-int64(f.next))))
	}
}

// program is a set of routines assembled at fixed addresses, with the
// symbols, code and emulated execution the tests need.
type program struct {
	routines []progRoutine
	mem      map[uint64]byte
	labels   map[string]uint64
}

type progRoutine struct {
	name   string
	lo, hi uint64
	kind   trace.RoutineKind
}

func newProgram(parts ...*asm) *program {
	p := &program{mem: map[uint64]byte{}, labels: map[string]uint64{}}
	for _, a := range parts {
		for l, v := range a.labels {
			p.labels[l] = v
		}
	}
	for _, a := range parts {
		a.link(p.labels)
		for i, b := range a.buf {
			p.mem[a.base+uint64(i)] = b
		}
	}
	return p
}

// routine declares the routine name over [lo, hi).
func (p *program) routine(name string, lo, hi uint64) *program {
	p.routines = append(p.routines, progRoutine{name: name, lo: lo, hi: hi})
	sort.Slice(p.routines, func(i, j int) bool { return p.routines[i].lo < p.routines[j].lo })
	return p
}

func (p *program) Routine(pc uint64) (trace.Routine, bool) {
	for _, r := range p.routines {
		if pc >= r.lo && pc < r.hi {
			return trace.Routine{Entry: r.lo, Name: r.name, Object: "prog", Kind: r.kind}, true
		}
	}
	return trace.Routine{}, false
}

// Line: every address is on "prog.c", line = address & 0xfff.
func (p *program) Line(pc uint64) (string, int, bool) { return "prog.c", int(pc & 0xfff), true }

func (p *program) Read(addr uint64, n int) []byte {
	var out []byte
	for i := 0; i < n; i++ {
		b, ok := p.mem[addr+uint64(i)]
		if !ok {
			break
		}
		out = append(out, b)
	}
	return out
}

// tb returns the extent of the emulator block starting at addr: up to and
// including the first branch, call, ret or syscall.
func (p *program) tb(addr uint64) (length, insns uint32, end trace.End) {
	a := addr
	for {
		code := p.Read(a, 15)
		if len(code) == 0 {
			panic(fmt.Sprintf("no code at %#x", a))
		}
		inst, err := x86asm.Decode(code, 64)
		if err != nil {
			panic(err)
		}
		a += uint64(inst.Len)
		insns++
		if isRep(inst) { // QEMU ends a block after a rep string instruction
			return uint32(a - addr), insns, trace.EndOther
		}
		switch inst.Op {
		case x86asm.CALL:
			return uint32(a - addr), insns, trace.EndCall
		case x86asm.RET:
			return uint32(a - addr), insns, trace.EndRet
		case x86asm.JMP:
			return uint32(a - addr), insns, trace.EndJump
		case x86asm.SYSCALL:
			return uint32(a - addr), insns, trace.EndSyscall
		case x86asm.JE, x86asm.JNE, x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE,
			x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE:
			return uint32(a - addr), insns, trace.EndCond
		}
	}
}

// runner produces event streams for a program: each thread runs emulator
// blocks at the given addresses, with the stack pointer moving at calls
// and returns as on a real machine.
type runner struct {
	p     *program
	tr    *tracetest.Trace
	sp    map[uint32]uint64
	prevE map[uint32]trace.End
	// allBig, noRerank and noMemo set the Profiler's test switches.
	allBig, noRerank, noMemo bool
}

func newRunner(p *program) *runner {
	return &runner{p: p, tr: tracetest.New(p), sp: map[uint32]uint64{}, prevE: map[uint32]trace.End{}}
}

// run appends the blocks starting at the given labels or addresses.
func (r *runner) run(tid uint32, starts ...any) *runner {
	for _, s := range starts {
		var a uint64
		switch v := s.(type) {
		case string:
			var ok bool
			if a, ok = r.p.labels[v]; !ok {
				panic("no label " + v)
			}
		case uint64:
			a = v
		case int:
			a = uint64(v)
		}
		sp, ok := r.sp[tid]
		if !ok {
			sp = 0x7fff0000
		}
		switch r.prevE[tid] {
		case trace.EndCall:
			sp -= 8
		case trace.EndRet:
			sp += 8
		}
		r.sp[tid] = sp
		n, insns, end := r.p.tb(a)
		r.tr.Block(tid, a, sp, insns, n, end)
		r.prevE[tid] = end
	}
	return r
}

// setSP forces thread tid's stack pointer (longjmp).
func (r *runner) setSP(tid uint32, sp uint64) *runner {
	r.sp[tid] = sp
	r.prevE[tid] = trace.EndJump
	return r
}

// profile runs the stream through the platform (call-tracking stage
// included) into a path profiler and returns the profiler.
func (r *runner) profile(t *testing.T) *Profiler { return r.profileP3(t, P3Config{}) }

// profileP3 is profile with P3 planning. It runs the stream twice, with
// Call and Return events and with calls marked on Block events
// (Options.CCT and LastSP), and fails unless the two profiles are the
// same; it returns the first.
func (r *runner) profileP3(t *testing.T, p3 P3Config) *Profiler {
	t.Helper()
	plain, _ := r.profileMode(t, p3, false)
	marked, _ := r.profileMode(t, p3, true)
	if p3.PlanOut == "" { // the plan file is written by the first run (and would be again)
		a, errA := plain.Profile("prog")
		b, errB := marked.Profile("prog")
		if errA != nil || errB != nil {
			t.Fatalf("profiles: %v, %v", errA, errB)
		}
		ja, _ := a.Marshal()
		jb, _ := b.Marshal()
		if string(ja) != string(jb) || plain.Hits != marked.Hits || plain.Truncations != marked.Truncations {
			t.Fatalf("with call marks the profile differs (hits %d/%d, truncations %d/%d):\nevents\n%s\nmarks\n%s",
				plain.Hits, marked.Hits, plain.Truncations, marked.Truncations, ja, jb)
		}
	}
	return plain
}

// profileMode runs the stream (a copy of it: the stage marks events in
// place) into a path profiler that takes call marks or not; it returns
// the profiler and how many of the Block events it saw were marked.
func (r *runner) profileMode(t *testing.T, p3 P3Config, marks bool) (*Profiler, int) {
	t.Helper()
	env := platform.NewEnv(r.p, "prog", nil)
	opt := Options{Symbols: r.p, Block: env.Block, Routines: env.Routines,
		Code: func(trace.Routine) (Code, error) { return r.p, nil }}
	if marks {
		opt.CCT, opt.LastSP = env.CCT, env.Tracker().LastSP
	}
	prof := New(opt)
	prof.P3 = p3
	prof.allBig, prof.noRerank, prof.noMemo = r.allBig, r.noRerank, r.noMemo
	inst := &markCounter{Instance: NewInstance(prof, "prog", 10)}
	pl := platform.NewPipeline(env, r.tr.Blocks, []platform.Instance{inst}, false)
	pl.Events(slices.Clone(r.tr.Events))
	pl.Finish()
	if err := pl.Err(); err != nil {
		t.Fatal(err)
	}
	return prof, inst.marked
}

// markCounter counts the marked Block events an instance is handed.
type markCounter struct {
	platform.Instance
	marked int
}

func (m *markCounter) Events(evs []trace.Event) {
	for i := range evs {
		if evs[i].Kind == trace.KindBlock && evs[i].Flags&trace.FlagCalls != 0 {
			m.marked++
		}
	}
	m.Instance.Events(evs)
}

// counts returns routine name's path counts by id.
func counts(t *testing.T, p *Profiler, name string) map[string]uint64 {
	t.Helper()
	pr, err := p.Profile("prog")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range pr.Routines {
		if r.Name == name {
			m := map[string]uint64{}
			for _, x := range r.Paths {
				m[string(x.ID)] = x.Count
			}
			return m
		}
	}
	t.Fatalf("routine %s not profiled", name)
	return nil
}

func routineOut(t *testing.T, p *Profiler, name string) Routine {
	t.Helper()
	pr, err := p.Profile("prog")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range pr.Routines {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("routine %s not profiled", name)
	return Routine{}
}
