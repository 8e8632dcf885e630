package emu

import (
	"bytes"
	"encoding/binary"
	"testing"

	"emuprof/cpu"
)

// The control state a Linux process sees: CR4.OSFXSR and OSXMMEXCPT set
// (without OSFXSR, fxsave/fxrstor skip XMM0-15 and MXCSR), CR0.EM and TS
// clear, MP and NE set.
func TestControlRegisters(t *testing.T) {
	e := newEngine(t, Options{}, []byte{0x0f, 0x05})
	cr0, cr4 := e.ControlRegisters()
	if cr4&(1<<9) == 0 || cr4&(1<<10) == 0 {
		t.Errorf("CR4 %#x: OSFXSR (bit 9) and OSXMMEXCPT (bit 10) must be set", cr4)
	}
	if cr0&(1<<2) != 0 || cr0&(1<<3) != 0 || cr0&(1<<1) == 0 || cr0&(1<<5) == 0 {
		t.Errorf("CR0 %#x: want MP and NE set, EM and TS clear", cr0)
	}
}

// fxsaveProgram stores the initial FPU/SSE state with fxsave64 at 0x20c00,
// then puts two distinct halves in xmm0, a value in xmm15, MXCSR 0x3fa5
// (from 0x20400) and 1.0 on the x87 stack; saves them with the instruction
// under test, clobbers everything (pxor, MXCSR 0x1f80 from 0x20404,
// fninit), restores, and stores xmm0, xmm15, MXCSR and st(0) at 0x20200,
// 0x20210, 0x20220 and 0x20230. rex is 0x48 for fxsave64/fxrstor64 and
// nil for the legacy forms.
func fxsaveProgram(rex []byte) []byte {
	var p []byte
	add := func(b ...byte) { p = append(p, b...) }
	add(0x48, 0x0f, 0xae, 0x04, 0x25, 0x00, 0x0c, 0x02, 0x00)       // fxsave64 [0x20c00]
	add(0x48, 0xb8, 0x34, 0x33, 0x33, 0x33, 0x33, 0x33, 0xd3, 0x3f) // mov rax, 0x3fd3333333333334 (0.30000000000000004)
	add(0x48, 0xb9, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01) // mov rcx, 0x0123456789abcdef
	add(0x66, 0x48, 0x0f, 0x6e, 0xc0)                               // movq xmm0, rax
	add(0x66, 0x4c, 0x0f, 0x6e, 0xf9)                               // movq xmm15, rcx
	add(0x66, 0x41, 0x0f, 0x6c, 0xc7)                               // punpcklqdq xmm0, xmm15
	add(0x0f, 0xae, 0x14, 0x25, 0x00, 0x04, 0x02, 0x00)             // ldmxcsr [0x20400]
	add(0xd9, 0xe8)                                                 // fld1
	add(rex...)
	add(0x0f, 0xae, 0x04, 0x25, 0x00, 0x00, 0x02, 0x00) // fxsave(64) [0x20000]
	add(0x66, 0x0f, 0xef, 0xc0)                         // pxor xmm0, xmm0
	add(0x66, 0x45, 0x0f, 0xef, 0xff)                   // pxor xmm15, xmm15
	add(0x0f, 0xae, 0x14, 0x25, 0x04, 0x04, 0x02, 0x00) // ldmxcsr [0x20404]
	add(0xdb, 0xe3)                                     // fninit
	add(rex...)
	add(0x0f, 0xae, 0x0c, 0x25, 0x00, 0x00, 0x02, 0x00)       // fxrstor(64) [0x20000]
	add(0xf3, 0x0f, 0x7f, 0x04, 0x25, 0x00, 0x02, 0x02, 0x00) // movdqu [0x20200], xmm0
	add(0xf3, 0x44, 0x0f, 0x7f, 0x3c, 0x25, 0x10, 0x02, 0x02, 0x00)
	add(0x0f, 0xae, 0x1c, 0x25, 0x20, 0x02, 0x02, 0x00) // stmxcsr [0x20220]
	add(0xdb, 0x3c, 0x25, 0x30, 0x02, 0x02, 0x00)       // fstp tbyte [0x20230]
	add(0x0f, 0x05)                                     // syscall
	return p
}

func TestFxsaveRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string
		rex  []byte
	}{{"fxsave64", []byte{0x48}}, {"fxsave", nil}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEngine(t, Options{}, fxsaveProgram(c.rex))
			var mx [8]byte
			binary.LittleEndian.PutUint32(mx[0:], 0x3fa5)
			binary.LittleEndian.PutUint32(mx[4:], 0x1f80)
			if err := e.WriteMem(0x20400, mx[:]); err != nil {
				t.Fatal(err)
			}
			if s := e.Run(codeAddr, 0); s.Reason != cpu.StopSyscall {
				t.Fatalf("stop %+v, want the final syscall", s)
			}
			var out [0x40]byte
			if err := e.ReadMem(0x20200, out[:]); err != nil {
				t.Fatal(err)
			}
			le := binary.LittleEndian
			if lo, hi := le.Uint64(out[0:]), le.Uint64(out[8:]); lo != 0x3fd3333333333334 || hi != 0x0123456789abcdef {
				t.Errorf("xmm0 after %s/pxor/fxrstor: %#x:%#x, want 0x0123456789abcdef:0x3fd3333333333334", c.name, hi, lo)
			}
			if lo := le.Uint64(out[0x10:]); lo != 0x0123456789abcdef {
				t.Errorf("xmm15 after the round trip: %#x, want 0x0123456789abcdef", lo)
			}
			if m := le.Uint32(out[0x20:]); m != 0x3fa5 {
				t.Errorf("MXCSR after the round trip: %#x, want 0x3fa5", m)
			}
			one := []byte{0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f}
			if st0 := out[0x30:0x3a]; !bytes.Equal(st0, one) {
				t.Errorf("st(0) after the round trip: % x, want 1.0 (% x)", st0, one)
			}
			// The image taken at the start: a Linux process starts with
			// FCW 0x37f, an empty x87 stack (abridged tag word 0) and
			// MXCSR 0x1f80.
			var img [32]byte
			if err := e.ReadMem(0x20c00, img[:]); err != nil {
				t.Fatal(err)
			}
			if fcw, ftw, m := le.Uint16(img[0:]), img[4], le.Uint32(img[24:]); fcw != 0x37f || ftw != 0 || m != 0x1f80 {
				t.Errorf("initial state: FCW %#x, abridged FTW %#x, MXCSR %#x; want 0x37f, 0 (all empty), 0x1f80", fcw, ftw, m)
			}
		})
	}
}
