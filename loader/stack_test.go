package loader

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

func TestBuildStack(t *testing.T) {
	const top = 0x7ffffffff000
	l := &Layout{Phdr: 0x555555554040, Phent: 56, Phnum: 13, InterpBase: InterpBase, ExeEntry: 0x555555555040}
	spec := StackSpec{
		Top:    top,
		Args:   []string{"/bin/prog", "-v", ""},
		Env:    []string{"HOME=/root", "LANG=C"},
		ExecFn: "/bin/prog",
		Random: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		Uid:    1000, Gid: 1001, Euid: 1002, Egid: 1003,
		HWCap:  0x178bfbff,
		Layout: l,
	}
	data, sp, err := BuildStack(spec)
	if err != nil {
		t.Fatal(err)
	}
	if sp%16 != 0 || sp+uint64(len(data)) != top {
		t.Fatalf("sp %#x, %d bytes", sp, len(data))
	}
	word := func(a uint64) uint64 { return binary.LittleEndian.Uint64(data[a-sp:]) }
	str := func(a uint64) string {
		if a < sp || a >= top {
			t.Fatalf("string pointer %#x outside the stack", a)
		}
		s := data[a-sp:]
		return string(s[:bytes.IndexByte(s, 0)])
	}
	if word(top-8) != 0 {
		t.Errorf("no null pointer at the top")
	}
	a := sp
	if argc := word(a); argc != 3 {
		t.Fatalf("argc %d", argc)
	}
	a += 8
	for i, want := range spec.Args {
		if got := str(word(a)); got != want {
			t.Errorf("argv[%d] = %q, want %q", i, got, want)
		}
		a += 8
	}
	if word(a) != 0 {
		t.Fatalf("argv not NULL-terminated")
	}
	a += 8
	for i, want := range spec.Env {
		if got := str(word(a)); got != want {
			t.Errorf("envp[%d] = %q, want %q", i, got, want)
		}
		a += 8
	}
	if word(a) != 0 {
		t.Fatalf("envp not NULL-terminated")
	}
	a += 8
	var keys []uint64
	aux := map[uint64]uint64{}
	for {
		k, v := word(a), word(a+8)
		a += 16
		keys = append(keys, k)
		aux[k] = v
		if k == atNull {
			break
		}
	}
	wantKeys := []uint64{atHWCap, atPagesz, atClkTck, atPhdr, atPhent, atPhnum, atBase, atFlags, atEntry,
		atUID, atEUID, atGID, atEGID, atSecure, atRandom, atHWCap2, atExecFn, atPlatform, atNull}
	if len(keys) != len(wantKeys) {
		t.Fatalf("auxv keys %v, want %v", keys, wantKeys)
	}
	for i := range keys {
		if keys[i] != wantKeys[i] {
			t.Fatalf("auxv keys %v, want %v", keys, wantKeys)
		}
	}
	want := map[uint64]uint64{atHWCap: 0x178bfbff, atPagesz: 4096, atClkTck: 100, atPhdr: l.Phdr, atPhent: 56,
		atPhnum: 13, atBase: InterpBase, atFlags: 0, atEntry: l.ExeEntry, atUID: 1000, atEUID: 1002,
		atGID: 1001, atEGID: 1003, atSecure: 0, atHWCap2: 0}
	for k, v := range want {
		if aux[k] != v {
			t.Errorf("auxv[%d] = %#x, want %#x", k, aux[k], v)
		}
	}
	r := aux[atRandom]
	if r < a || r+16 > top || !bytes.Equal(data[r-sp:r-sp+16], spec.Random[:]) {
		t.Errorf("AT_RANDOM %#x does not point at the random bytes", r)
	}
	if got := str(aux[atExecFn]); got != "/bin/prog" || aux[atExecFn]+uint64(len(got))+1 != top-8 {
		t.Errorf("AT_EXECFN %#x -> %q, not just below the top", aux[atExecFn], got)
	}
	if got := str(aux[atPlatform]); got != "x86_64" || aux[atPlatform] != r+16 || (r+16+7)%16 != 0 {
		t.Errorf("AT_PLATFORM %#x -> %q", aux[atPlatform], got)
	}
	// Linux order of the strings: argv, then envp, then execfn, ascending.
	if p0, e0 := word(sp+8), word(sp+8*5); !(p0 < e0 && e0 < aux[atExecFn]) {
		t.Errorf("strings out of order: argv %#x envp %#x execfn %#x", p0, e0, aux[atExecFn])
	}
}

func TestBuildStackErrors(t *testing.T) {
	l := &Layout{}
	for _, spec := range []StackSpec{
		{Top: 0x7ffffffff000},
		{Top: 0x7ffffffff001, Layout: l},
		{Top: 0x7ffffffff000, Args: []string{"a\x00b"}, Layout: l},
		{Top: 0x7ffffffff000, Args: []string{strings.Repeat("x", 200000)}, Layout: l},
	} {
		if _, _, err := BuildStack(spec); err == nil {
			t.Errorf("no error for %.60v", spec)
		}
	}
}
