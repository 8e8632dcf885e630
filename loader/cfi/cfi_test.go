package cfi

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// regNames are readelf's column names for the DWARF registers.
var regNames = map[string]int{"rax": 0, "rdx": 1, "rcx": 2, "rbx": 3, "rsi": 4, "rdi": 5, "rbp": 6, "rsp": 7,
	"r8": 8, "r9": 9, "r10": 10, "r11": 11, "r12": 12, "r13": 13, "r14": 14, "r15": 15, "ra": 16}

// checkAgainstReadelf compares RowAt with every row of the CFA tables that
// binutils' readelf -wF (its own CFI interpreter) prints for file.
func checkAgainstReadelf(t *testing.T, file string) {
	f, err := elf.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".eh_frame")
	data, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	tab := Parse(data, sec.Addr)
	// readelf exits with 1 over sections it cannot decode (libc's
	// .debug_* links); the frame tables are printed all the same.
	out, err := exec.Command("readelf", "-wF", file).Output()
	if len(out) == 0 {
		t.Fatalf("readelf -wF %s: %v", file, err)
	}
	var cols []string
	var rows, fdes int
	var hi uint64
	type row struct {
		loc   uint64
		cells []string
	}
	var pending []row
	flush := func() {
		for i, r := range pending {
			end := hi
			if i+1 < len(pending) {
				end = pending[i+1].loc
			}
			for _, pc := range []uint64{r.loc, end - 1} {
				got, err := tab.RowAt(pc)
				if err != nil {
					t.Fatalf("%s: RowAt(%#x): %v", file, pc, err)
				}
				compareRow(t, file, pc, cols, r.cells, got)
				rows++
			}
		}
		pending = nil
	}
	// "r1 (rdx)": a register rule, named like the columns.
	out = regexp.MustCompile(`r[0-9]+ \(([a-z0-9]+)\)`).ReplaceAll(out, []byte("$1"))
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	inFDE := false
	for sc.Scan() {
		line := sc.Text()
		fs := strings.Fields(line)
		switch {
		case strings.Contains(line, " FDE "):
			flush()
			inFDE = true
			fdes++
			i := strings.Index(line, "pc=")
			lo, _ := strconv.ParseUint(line[i+3:i+19], 16, 64)
			hi, _ = strconv.ParseUint(line[i+21:i+37], 16, 64)
			if !tab.Covers(lo) {
				t.Fatalf("%s: no FDE covers %#x", file, lo)
			}
		case strings.Contains(line, " CIE "):
			flush()
			inFDE = false
		case len(fs) > 0 && fs[0] == "LOC":
			cols = fs[1:]
		case inFDE && len(fs) == len(cols)+1 && len(fs[0]) == 16:
			loc, err := strconv.ParseUint(fs[0], 16, 64)
			if err == nil {
				pending = append(pending, row{loc, fs[1:]})
			}
		}
	}
	flush()
	if fdes < 3 || rows < 10 {
		t.Fatalf("%s: only %d FDEs, %d rows checked", file, fdes, rows)
	}
	t.Logf("%s: %d FDEs, %d rows agree with readelf", filepath.Base(file), fdes, rows)
}

func compareRow(t *testing.T, file string, pc uint64, cols, cells []string, got Row) {
	t.Helper()
	for i, c := range cols {
		cell := cells[i]
		if c == "CFA" {
			if cell == "exp" {
				if got.CFAExpr == nil {
					t.Fatalf("%s %#x: CFA is an expression, got reg %d%+d", file, pc, got.CFAReg, got.CFAOffset)
				}
				continue
			}
			k := strings.IndexAny(cell, "+-")
			off, _ := strconv.ParseInt(cell[k:], 10, 64)
			if got.CFAExpr != nil || got.CFAReg != regNames[cell[:k]] || got.CFAOffset != off {
				t.Fatalf("%s %#x: CFA %s, got reg %d%+d", file, pc, cell, got.CFAReg, got.CFAOffset)
			}
			continue
		}
		n, ok := regNames[c]
		if !ok {
			continue
		}
		r := got.Regs[n]
		var good bool
		switch {
		case cell == "u":
			good = r.Kind == Undefined || r.Kind == SameValue
		case cell == "s":
			good = r.Kind == SameValue
		case cell == "exp":
			good = r.Kind == Expression
		case cell == "vexp":
			good = r.Kind == ValExpression
		case strings.HasPrefix(cell, "c"):
			off, _ := strconv.ParseInt(cell[1:], 10, 64)
			good = r.Kind == Offset && r.N == off
		case strings.HasPrefix(cell, "v"):
			off, _ := strconv.ParseInt(cell[1:], 10, 64)
			good = r.Kind == ValOffset && r.N == off
		default:
			m, isReg := regNames[cell]
			good = isReg && r.Kind == Register && r.N == int64(m)
		}
		if !good {
			t.Fatalf("%s %#x: %s is %s, got %+v", file, pc, c, cell, r)
		}
	}
}

func TestRowsAgreeWithReadelf(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	bins := filepath.Join(filepath.Dir(here), "..", "..", "testdata", "bin")
	for _, f := range []string{
		filepath.Join(bins, "glibc-static", "deadlock"),
		filepath.Join(bins, "glibc-static-pie", "abort"),
		filepath.Join(bins, "glibc-dynamic", "segv"),
		"/lib/x86_64-linux-gnu/libc.so.6", // the PLT's expression, remember/restore_state
	} {
		t.Run(filepath.Base(f), func(t *testing.T) { checkAgainstReadelf(t, f) })
	}
}

// The expression of a PLT entry's CFA (rsp+8, +8 more after the push of
// the 11th byte), and Step through a frame saved with push rbp.
func TestStep(t *testing.T) {
	// DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11;
	// DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
	plt := []byte{0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22}
	mem := map[uint64]uint64{0xff8: 0x1234, 0x1000: 0xbeef}
	read := func(a uint64) (uint64, bool) { v, ok := mem[a]; return v, ok }
	var regs Regs
	regs.R[RSP], regs.Known[RSP] = 0x1000, true
	for _, c := range []struct{ rip, cfa uint64 }{{0x4010, 0x1008}, {0x401b, 0x1010}} {
		regs.R[RA], regs.Known[RA] = c.rip, true
		v, err := eval(plt, regs, read, nil)
		if err != nil || v != c.cfa {
			t.Errorf("PLT CFA at rip %#x: %#x %v, want %#x", c.rip, v, err, c.cfa)
		}
	}
	var row Row
	row.CFAReg, row.CFAOffset = RBP, 16
	row.Regs[RBP] = Rule{Kind: Offset, N: -16}
	row.Regs[RA] = Rule{Kind: Offset, N: -8}
	regs.R[RBP], regs.Known[RBP] = 0xff8, true
	next, err := Step(row, regs, read)
	if err != nil || next.R[RA] != 0xbeef || next.R[RBP] != 0x1234 || next.R[RSP] != 0x1008 {
		t.Fatalf("step: %+v %v", next, err)
	}
	row.Regs[RA] = Rule{Kind: Undefined}
	if _, err := Step(row, regs, read); err != ErrOutermost {
		t.Fatalf("undefined RA: %v", err)
	}
}

// A CIE whose augmentation data ends before its 'R', 'L' or 'P' byte is
// malformed: Parse skips it (it used to index past the body and panic).
func TestTruncatedCIE(t *testing.T) {
	for _, aug := range []string{"zR", "zL", "zP"} {
		body := append([]byte{1}, aug...)
		body = append(body, 0, 1, 0x78, 16) // NUL, code align 1, data align -8, return address r16; no augmentation length
		if _, ok := parseCIE(body); ok {
			t.Errorf("CIE %q without augmentation data parsed", aug)
		}
		entry := append([]byte{byte(len(body) + 4), 0, 0, 0, 0, 0, 0, 0}, body...)
		if tab := Parse(entry, 0x1000); tab.Covers(0x1000) {
			t.Errorf("CIE %q: a table with no FDE covers an address", aug)
		}
	}
}
