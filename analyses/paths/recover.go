package paths

import (
	"slices"

	"golang.org/x/arch/x86/x86asm"
)

// Code reads guest code and read-only data of one object, at guest
// addresses.
type Code interface {
	// Read returns up to n bytes at guest address addr (fewer where the
	// object's image ends; nil where addr is not in it).
	Read(addr uint64, n int) []byte
}

// insn kinds for CFG recovery.
const (
	kPlain   = iota // falls through
	kJcc            // conditional branch: target and fall-through
	kJmp            // direct jump
	kJmpInd         // indirect jump
	kCall           // call: falls through to the return site
	kSyscall        // ends an emulator block, falls through
	kRet            // return
	kHalt           // hlt, ud2, int3: does not continue
	kBad            // undecodable: recovery stops
)

type insn struct {
	addr    uint64
	len     int
	kind    uint8
	target  uint64 // direct branch or call target
	hasTgt  bool
	inst    x86asm.Inst
	targets []uint64 // resolved jump table
	table   bool     // jump table resolved
}

// Recovery is the input of static CFG recovery for one routine.
type Recovery struct {
	Entry, End uint64 // the routine's range
	Code       Code
	// NoReturn says whether a direct call to target never returns (exit,
	// abort, __stack_chk_fail, longjmp...); may be nil.
	NoReturn func(target uint64) bool
	// Roots are further addresses where code starts (leaders found by
	// the run: targets of jumps the static recovery did not resolve,
	// landing sites).
	Roots []uint64
}

// Recovered is the result of Recover.
type Recovered struct {
	CFG *CFG
	// Tables is the number of indirect jumps resolved as jump tables,
	// Unresolved the number left unresolved (their targets come from the
	// run).
	Tables, Unresolved int
}

// Recover disassembles the routine from its entry and its roots over its
// range by recursive traversal (direct branch targets, fall-throughs,
// return sites of calls that return, jump tables of the forms gcc emits)
// and cuts the code into basic blocks. Blocks end at branches, calls and
// syscalls (where the emulator ends its blocks too) and before every
// leader.
func Recover(in Recovery) Recovered {
	r := &recoverer{in: in, insns: map[uint64]*insn{}, ends: map[uint64]uint64{}, leaders: map[uint64]bool{}}
	r.add(in.Entry)
	for _, a := range in.Roots {
		r.add(a)
	}
	var res Recovered
	for {
		r.traverse()
		progress := false
		for _, a := range r.sortedInsns() {
			in := r.insns[a]
			if in.kind != kJmpInd || in.table || r.tried[a] {
				continue
			}
			if r.tried == nil {
				r.tried = map[uint64]bool{}
			}
			r.tried[a] = true
			if ts, ok := r.jumpTable(in); ok {
				in.table, in.targets = true, ts
				for _, t := range ts {
					r.add(t)
				}
				progress = true
			}
		}
		if !progress {
			break
		}
	}
	res.CFG = r.blocks()
	for _, in := range r.insns {
		if in.kind == kJmpInd {
			if in.table {
				res.Tables++
			} else {
				res.Unresolved++
			}
		}
	}
	return res
}

type recoverer struct {
	in      Recovery
	insns   map[uint64]*insn
	ends    map[uint64]uint64 // end address -> instruction start
	leaders map[uint64]bool
	work    []uint64
	tried   map[uint64]bool
}

func (r *recoverer) inRange(a uint64) bool { return a >= r.in.Entry && a < r.in.End }

// add makes a a leader and schedules its decoding.
func (r *recoverer) add(a uint64) {
	if !r.inRange(a) || r.leaders[a] {
		return
	}
	r.leaders[a] = true
	r.work = append(r.work, a)
}

func (r *recoverer) traverse() {
	for len(r.work) > 0 {
		a := r.work[len(r.work)-1]
		r.work = r.work[:len(r.work)-1]
		for r.inRange(a) {
			if _, done := r.insns[a]; done {
				break
			}
			in := r.decode(a)
			r.insns[a] = in
			if in.kind == kBad {
				break
			}
			r.ends[a+uint64(in.len)] = a
			next := a + uint64(in.len)
			stop := true
			switch in.kind {
			case kPlain:
				stop = false
			case kJcc:
				r.add(in.target)
				r.add(next)
			case kJmp:
				r.add(in.target)
			case kCall:
				if !r.noReturn(in) {
					r.add(next)
				}
			case kSyscall:
				r.add(next)
			}
			if stop {
				break
			}
			a = next
		}
	}
}

func (r *recoverer) noReturn(in *insn) bool {
	return in.hasTgt && r.in.NoReturn != nil && r.in.NoReturn(in.target)
}

// maxInsn is the longest x86 instruction.
const maxInsn = 15

func (r *recoverer) decode(a uint64) *insn {
	in := &insn{addr: a, kind: kBad}
	if r.in.Code == nil {
		return in
	}
	b := r.in.Code.Read(a, maxInsn)
	if len(b) == 0 {
		return in
	}
	// endbr64/endbr32 (f3 0f 1e fa/fb): x86asm reads them as a lone REP.
	if len(b) >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && (b[3] == 0xfa || b[3] == 0xfb) {
		in.len, in.kind = 4, kPlain
		return in
	}
	inst, err := x86asm.Decode(b, 64)
	if err != nil || inst.Len == 0 || inst.Op == 0 {
		return in
	}
	in.inst, in.len, in.kind = inst, inst.Len, kPlain
	next := a + uint64(inst.Len)
	rel := func() {
		if rl, ok := inst.Args[0].(x86asm.Rel); ok {
			in.target, in.hasTgt = next+uint64(int64(rl)), true
		}
	}
	switch inst.Op {
	case x86asm.JMP:
		rel()
		in.kind = kJmp
		if !in.hasTgt {
			in.kind = kJmpInd
		}
	case x86asm.LJMP:
		in.kind = kHalt
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JNE,
		x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JO, x86asm.JNO,
		x86asm.JP, x86asm.JNP, x86asm.JS, x86asm.JNS, x86asm.JCXZ, x86asm.JECXZ,
		x86asm.JRCXZ, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		rel()
		in.kind = kJcc
	case x86asm.CALL:
		rel()
		in.kind = kCall
	case x86asm.SYSCALL:
		in.kind = kSyscall
	case x86asm.RET, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ:
		in.kind = kRet
	case x86asm.HLT, x86asm.UD2, x86asm.UD1:
		in.kind = kHalt
	case x86asm.INT:
		if imm, ok := inst.Args[0].(x86asm.Imm); ok && imm == 3 {
			in.kind = kHalt
		}
	}
	return in
}

func (r *recoverer) sortedInsns() []uint64 {
	as := make([]uint64, 0, len(r.insns))
	for a := range r.insns {
		as = append(as, a)
	}
	slices.Sort(as)
	return as
}

// prev returns the instruction that ends where in starts.
func (r *recoverer) prev(in *insn) *insn {
	a, ok := r.ends[in.addr]
	if !ok {
		return nil
	}
	p := r.insns[a]
	if p == nil || p.kind == kBad {
		return nil
	}
	return p
}

// canon returns the 64-bit register of r's family (EAX -> RAX), or 0.
func canon(r x86asm.Reg) x86asm.Reg {
	switch {
	case r >= x86asm.RAX && r <= x86asm.R15:
		return r
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return r - x86asm.EAX + x86asm.RAX
	case r >= x86asm.AX && r <= x86asm.R15W:
		return r - x86asm.AX + x86asm.RAX
	case r >= x86asm.AL && r <= x86asm.BL:
		return r - x86asm.AL + x86asm.RAX
	case r >= x86asm.SPB && r <= x86asm.R15B: // SPB..DIB, R8B..R15B
		return r - x86asm.SPB + x86asm.RSP
	}
	return 0
}

// blocks cuts the decoded instructions into basic blocks and links them.
func (r *recoverer) blocks() *CFG {
	cfg := &CFG{Entry: r.in.Entry, End: r.in.End}
	as := r.sortedInsns()
	type pending struct {
		last *insn
		end  uint64
	}
	var lasts []pending
	for i := 0; i < len(as); {
		start := as[i]
		var last *insn
		end := start
		for i < len(as) {
			in := r.insns[as[i]]
			if as[i] != end || (as[i] != start && r.leaders[as[i]]) {
				break
			}
			last = in
			i++
			if in.kind == kBad {
				break
			}
			end = in.addr + uint64(in.len)
			if in.kind != kPlain {
				break
			}
		}
		if last == nil {
			i++
			continue
		}
		if last.kind == kBad && end == start {
			// Undecodable first instruction: a one-byte block that
			// leaves the routine, so the run's blocks still map.
			end = start + 1
		}
		cfg.Blocks = append(cfg.Blocks, Block{Start: start, End: end})
		lasts = append(lasts, pending{last, end})
	}
	for bi := range cfg.Blocks {
		b := &cfg.Blocks[bi]
		last, end := lasts[bi].last, lasts[bi].end
		var succ []uint64
		fall := func() {
			if r.inRange(end) {
				succ = append(succ, end)
			} else {
				b.Exit = true
			}
		}
		target := func(t uint64) {
			if r.inRange(t) {
				succ = append(succ, t)
			} else {
				b.Exit = true // a (conditional) tail jump
			}
		}
		switch last.kind {
		case kPlain, kSyscall:
			fall()
		case kJcc:
			target(last.target)
			fall()
		case kJmp:
			target(last.target)
		case kJmpInd:
			if last.table {
				succ = append(succ, last.targets...)
			} else {
				b.Exit = true
			}
		case kCall:
			if r.noReturn(last) {
				b.Exit = true
			} else {
				fall()
			}
		case kRet, kHalt, kBad:
			b.Exit = true
		}
		for _, t := range succ {
			if w, ok := cfg.Leader(t); ok {
				b.Succ = append(b.Succ, w)
			} else {
				b.Exit = true // a target that could not be decoded
			}
		}
		slices.Sort(b.Succ)
		b.Succ = slices.Compact(b.Succ)
	}
	return cfg
}
