package timemodel

import "emuprof/trace"

// predictor is one core's branch predictor: gshare for conditional
// branches (2-bit counters indexed by the branch's address xor the global
// history of outcomes), a last-target buffer for indirect jumps and calls,
// and a return stack.
type predictor struct {
	bits         uint
	counters     []uint8 // 0, 1: predict not taken; 2, 3: taken
	history      uint64
	targets      map[uint64]uint64 // indirect branch address -> last target
	stack        []uint64          // return addresses, the latest last
	Mispredicted uint64
}

const returnStack = 32

func newPredictor(bits int) *predictor {
	return &predictor{bits: uint(bits), counters: make([]uint8, 1<<bits), targets: map[uint64]uint64{}}
}

// next reports whether the transfer from block prev (ending in end at
// address pc, falling through to fall) to the block at addr was
// mispredicted, and learns from it. indirect says whether prev's last
// instruction takes its target from a register or memory.
func (p *predictor) next(end trace.End, pc, fall, addr uint64, indirect bool) bool {
	miss := false
	switch end {
	case trace.EndCond:
		taken := addr != fall
		i := (pc ^ p.history) & (1<<p.bits - 1)
		c := p.counters[i]
		miss = (c >= 2) != taken
		switch {
		case taken && c < 3:
			p.counters[i]++
		case !taken && c > 0:
			p.counters[i]--
		}
		p.history = p.history<<1 | b2u(taken)
	case trace.EndCall:
		if len(p.stack) == returnStack {
			p.stack = append(p.stack[:0], p.stack[1:]...)
		}
		p.stack = append(p.stack, fall)
		if indirect {
			miss = p.target(pc, addr)
		}
	case trace.EndRet:
		if n := len(p.stack); n > 0 {
			miss = p.stack[n-1] != addr
			p.stack = p.stack[:n-1]
		} else {
			miss = true
		}
	case trace.EndJump:
		if indirect {
			miss = p.target(pc, addr)
		}
	}
	if miss {
		p.Mispredicted++
	}
	return miss
}

func (p *predictor) target(pc, addr uint64) bool {
	last, ok := p.targets[pc]
	p.targets[pc] = addr
	return !ok || last != addr
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
