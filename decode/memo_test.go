package decode

import (
	"debug/elf"
	"math/rand"
	"testing"
)

// text returns up to max bytes of a binary's .text, skipping the test
// when it is missing.
func text(t *testing.T, path string, max int) []byte {
	f, err := elf.Open(path)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	s := f.Section(".text")
	if s == nil {
		t.Skipf("%s: no .text", path)
	}
	b, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	return b[:min(len(b), max)]
}

// TestDecoderMemo: at every offset of real code (instruction boundaries
// and the middles of instructions, which give odd prefixes and invalid
// encodings), a Decoder answers what x86asm does, also for the
// instruction with every byte past its memo key replaced (so that an
// answer from the memo is checked against a decoding of other
// displacements, immediates and following bytes), and for the block
// cut at random lengths (truncated instructions).
func TestDecoderMemo(t *testing.T) {
	for _, path := range []string{"../testdata/bin/glibc-static/cxxsort", "/usr/bin/python3"} {
		code := text(t, path, 200_000)
		d := NewDecoder()
		rnd := rand.New(rand.NewSource(1))
		hits, buf := 0, make([]byte, 16)
		for off := range code {
			src := code[off:min(len(code), off+16)]
			if rnd.Intn(8) == 0 {
				src = src[:rnd.Intn(len(src)+1)]
			}
			n, op := d.next(src)
			if wn, wop := (*Decoder)(nil).next(src); n != wn || op != wop {
				t.Fatalf("%s+%#x % x: memo %d %v, x86asm %d %v", path, off, src, n, op, wn, wop)
			}
			key, ok := headKey(src)
			if !ok {
				continue
			}
			k := int(key[1] >> 56) // the key's length
			copy(buf, src)
			for i := k; i < len(src); i++ {
				buf[i] = byte(rnd.Intn(256))
			}
			alt := buf[:len(src)]
			if m := d.memo[memoSlot(key)]; m.key == key && int(m.len) <= len(alt) {
				hits++
			}
			n, op = d.next(alt)
			if wn, wop := (*Decoder)(nil).next(alt); n != wn || op != wop {
				t.Fatalf("%s+%#x % x (from % x): memo %d %v, x86asm %d %v", path, off, alt, src, n, op, wn, wop)
			}
		}
		if hits < len(code)/4 {
			t.Errorf("%s: the memo answered %d of %d", path, hits, len(code))
		}
	}
}

// TestDecoderBlock: a Decoder's Block and Starts equal the functions'
// over blocks cut from real code at random.
func TestDecoderBlock(t *testing.T) {
	code := text(t, "../testdata/bin/glibc-static/cxxsort", 200_000)
	d := NewDecoder()
	rnd := rand.New(rand.NewSource(2))
	for range 20000 {
		off := rnd.Intn(len(code))
		b := code[off:min(len(code), off+rnd.Intn(64))]
		got, want := d.Block(b), Block(b)
		if got.Insns != want.Insns || got.End != want.End || got.Last != want.Last || len(got.RDTSC) != len(want.RDTSC) || len(got.X87) != len(want.X87) {
			t.Fatalf("% x: %+v, want %+v", b, got, want)
		}
		if g, w := d.Starts(b, nil), Starts(b, nil); len(g) != len(w) {
			t.Fatalf("% x: starts %v, want %v", b, g, w)
		}
	}
}
