package timemodel

import "emuprof/trace"

// predictor is one core's branch predictor: gshare for conditional
// branches (2-bit counters indexed by the branch's address xor the global
// history of outcomes), a return stack, and for indirect jumps and calls a
// two-component ITTAGE-like predictor: a last-target buffer, overridden by
// a tagged table keyed by the branch address and the targets of the last
// few indirect branches (an interpreter's dispatch site has one target per
// opcode, which its predecessors predict: the last target alone does not).
type predictor struct {
	mask     uint64  // 1<<bits − 1
	counters []uint8 // 0, 1: predict not taken; 2, 3: taken
	history  uint64
	targets  map[uint64]uint64 // indirect branch address -> last target
	slots    []lastTarget      // the same by the branch's slot (Model.slots), when it has one
	path     []uint64          // the last indirect targets, the latest last
	tagged   []taggedTarget    // by hash of address and path
	stack    []uint64          // return addresses, the latest last
}

// taggedTarget is an entry of the path-keyed indirect table: the full key
// as its tag (so that aliasing never predicts, only evicts) and a target.
type taggedTarget struct{ key, target uint64 }

// lastTarget is a slot's last target; ok: there is one.
type lastTarget struct {
	target uint64
	ok     bool
}

const returnStack = 32

// newPredictor returns a predictor with 2^bits gshare counters and 2^ibits
// path-keyed indirect entries over a path of ihist targets (0: last target
// only).
func newPredictor(bits, ibits, ihist int) *predictor {
	p := &predictor{mask: 1<<bits - 1, counters: make([]uint8, 1<<bits), targets: map[uint64]uint64{}}
	if ihist > 0 {
		p.path, p.tagged = make([]uint64, ihist), make([]taggedTarget, 1<<ibits)
	}
	return p
}

// next reports whether the transfer from block prev (ending in end at
// address pc, falling through to fall) to the block at addr was
// mispredicted, and learns from it. indirect says whether prev's last
// instruction takes its target from a register or memory.
func (p *predictor) next(end trace.End, pc, fall, addr uint64, indirect bool) bool {
	return p.step(end, pc, fall, addr, indirect, -1)
}

// step is next for a branch whose last target is kept in slots[slot]
// instead of the map (slot ≥ 0; each address has one slot).
func (p *predictor) step(end trace.End, pc, fall, addr uint64, indirect bool, slot int32) bool {
	miss := false
	switch end {
	case trace.EndCond:
		miss = p.cond(pc, fall, addr)
	case trace.EndCall:
		if len(p.stack) == returnStack {
			p.stack = append(p.stack[:0], p.stack[1:]...)
		}
		p.stack = append(p.stack, fall)
		if indirect {
			miss = p.target(pc, addr, slot)
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
			miss = p.target(pc, addr, slot)
		}
	}
	return miss
}

// cond is step for a conditional branch (inlined where it is the common
// case).
func (p *predictor) cond(pc, fall, addr uint64) bool {
	t := b2u(addr != fall)
	c := &p.counters[(pc^p.history)&p.mask]
	s := condStep[t<<2|uint64(*c&3)]
	*c = s & 3
	p.history = p.history<<1 | t
	return s > 3
}

// condStep is a 2-bit counter's step, by taken<<2 | counter: the new
// counter | the misprediction<<2.
var condStep = [8]uint8{0, 0, 1 | 4, 2 | 4, 1 | 4, 2 | 4, 3, 3}

// target predicts indirect branch pc, learns that it went to addr and
// reports a misprediction. The tagged entry of (pc, path) predicts when
// present, else the last target; an entry is allocated only when the
// prediction was wrong (ITTAGE's rule: paths the last target predicts
// take no room), and updated when it was used.
func (p *predictor) target(pc, addr uint64, slot int32) bool {
	var miss bool
	if slot >= 0 {
		if int(slot) >= len(p.slots) {
			p.slots = append(p.slots, make([]lastTarget, int(slot)+1-len(p.slots)+64)...)
		}
		e := &p.slots[slot]
		miss = !e.ok || e.target != addr
		*e = lastTarget{addr, true}
	} else {
		last, ok := p.targets[pc]
		p.targets[pc] = addr
		miss = !ok || last != addr
	}
	if p.tagged == nil {
		return miss
	}
	key := pc
	for _, t := range p.path {
		key = (key ^ t) * 0x9e3779b97f4a7c15
	}
	key |= 1 // 0 is an empty entry
	e := &p.tagged[(key>>32^key)&uint64(len(p.tagged)-1)]
	if e.key == key {
		miss = e.target != addr
		e.target = addr
	} else if miss {
		*e = taggedTarget{key, addr}
	}
	copy(p.path, p.path[1:])
	p.path[len(p.path)-1] = addr
	return miss
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
