package mm

import (
	"bytes"
	"fmt"
)

// Fork returns a copy of the address space over the backend b (a new, empty
// CPU memory): every area is mapped there with its protection and its
// contents are copied, as fork(2) gives the child a copy of the parent's
// memory. It returns how many bytes were copied. File handles (VMA.File) are
// carried along as they are: the caller accounts for them.
func (as *AddressSpace) Fork(b Backend) (*AddressSpace, uint64, error) {
	child := &AddressSpace{b: b, brkStart: as.brkStart, brk: as.brk}
	var buf []byte
	var copied uint64
	for _, v := range as.vmas {
		if err := b.MapPages(v.Start, v.Size(), v.Prot); err != nil {
			return nil, copied, &BackendError{"map", v.Start, v.Size(), err}
		}
		child.vmas = append(child.vmas, v)
		const chunk = 1 << 20
		for a := v.Start; a < v.End; a += chunk {
			n := min(v.End-a, chunk)
			if uint64(cap(buf)) < n {
				buf = make([]byte, chunk)
			}
			p := buf[:n]
			if err := as.b.ReadMem(a, p); err != nil {
				return nil, copied, fmt.Errorf("mm: fork: reading %#x+%#x: %w", a, n, err)
			}
			if allZero(p) {
				continue // fresh pages are zero
			}
			if err := b.WriteMem(a, p); err != nil {
				return nil, copied, fmt.Errorf("mm: fork: writing %#x+%#x: %w", a, n, err)
			}
			copied += n
		}
	}
	return child, copied, nil
}

// zeros is a chunk of zero bytes to compare with.
var zeros = make([]byte, 1<<20)

func allZero(p []byte) bool { return bytes.Equal(p, zeros[:len(p)]) }
