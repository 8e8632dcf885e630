package sched

import "math/bits"

// pcg32 is O'Neill's PCG-XSH-RR generator (64-bit state, 32-bit output).
// It is implemented here rather than taken from math/rand so that a seed's
// schedule can never change with the Go version.
type pcg32 struct {
	state, inc uint64
}

const pcgMult = 6364136223846793005

// newPCG32 seeds a generator; stream selects one of 2^63 independent
// sequences.
func newPCG32(seed, stream uint64) pcg32 {
	p := pcg32{inc: stream<<1 | 1}
	p.next()
	p.state += seed
	p.next()
	return p
}

func (p *pcg32) next() uint32 {
	old := p.state
	p.state = old*pcgMult + p.inc
	x := uint32((old>>18 ^ old) >> 27)
	return bits.RotateLeft32(x, -int(old>>59))
}

func (p *pcg32) next64() uint64 {
	hi := uint64(p.next())
	return hi<<32 | uint64(p.next())
}

// bounded returns a uniform value in [0, n), n > 0 (Lemire's method with
// rejection, so exactly uniform).
func (p *pcg32) bounded(n uint64) uint64 {
	hi, lo := bits.Mul64(p.next64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(p.next64(), n)
		}
	}
	return hi
}
