package loader

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A stripped binary keeps no function names, but its unwind info still
// delimits every function: a pc deep inside main names main's start.
func TestRoutineOfStrippedFunction(t *testing.T) {
	bin := testBinary(t, "static")
	stripped := filepath.Join(t.TempDir(), "stripped")
	strip := hostTool(t, "strip", "binutils")
	if out, err := exec.Command(strip, "-o", stripped, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v %s", err, out)
	}
	mainAddr := elfSymbol(t, bin, "main")
	o, err := Open(stripped)
	if err != nil {
		t.Fatal(err)
	}
	syms := NewSymbolTable()
	lo, hi := o.Span()
	if err := syms.AddObjectFrom(o, 0, lo, hi); err != nil {
		t.Fatal(err)
	}
	for _, off := range []uint64{0, 1, 7} {
		r, ok := syms.Routine(mainAddr + off)
		if !ok || r.Entry != mainAddr || r.Name != "stripped!0x"+strconv.FormatUint(mainAddr, 16) {
			t.Errorf("Routine(main+%d) = %+v %v, want main's start %#x", off, r, ok, mainAddr)
		}
	}
}

// On an unstripped binary, almost every sized function symbol starts where
// an FDE starts: the .eh_frame walk reads the real ranges.
func TestEHFrameMatchesSymbols(t *testing.T) {
	bin := testBinary(t, "static")
	o, err := Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	starts, sizes := ehFrameFunctions(o.file)
	if len(starts) < 100 {
		t.Fatalf("only %d FDEs in a static glibc binary", len(starts))
	}
	fde := map[uint64]uint64{}
	for i, s := range starts {
		fde[s] = sizes[i]
	}
	syms, _ := o.file.Symbols()
	var funcs, matched int
	for _, s := range syms {
		if s.Info&0xf == 2 && s.Size > 0 { // STT_FUNC
			funcs++
			if size, ok := fde[s.Value]; ok && size == s.Size {
				matched++
			}
		}
	}
	if matched*10 < funcs*8 {
		t.Errorf("%d of %d functions have an FDE with the same range", matched, funcs)
	}
}
