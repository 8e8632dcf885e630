package causal

import (
	"testing"

	"emuprof/trace"
)

type lineSyms map[uint64]int // address -> line of /src/a.c

func (lineSyms) Routine(uint64) (trace.Routine, bool) { return trace.Routine{}, false }
func (m lineSyms) Line(pc uint64) (string, int, bool) {
	l, ok := m[pc]
	return "/src/a.c", l, ok
}

func TestParseSpeedup(t *testing.T) {
	for _, c := range []struct {
		in     string
		file   string
		line   int
		lo, hi uint64
		pct    int
		ok     bool
	}{
		{"a.c:12=25", "a.c", 12, 0, 0, 25, true},
		{"dir/a.c:3=0", "dir/a.c", 3, 0, 0, 0, true},
		{"0x1000-0x1010=100", "", 0, 0x1000, 0x1010, 100, true},
		{"0x1000=5", "", 0, 0x1000, 0x1001, 5, true},
		{"a.c:12=101", "", 0, 0, 0, 0, false},
		{"a.c:12=-1", "", 0, 0, 0, 0, false},
		{"a.c:12", "", 0, 0, 0, 0, false},
		{"a.c=5", "", 0, 0, 0, 0, false},
		{"0x10-0x10=5", "", 0, 0, 0, 0, false},
		{"0xzz=5", "", 0, 0, 0, 0, false},
	} {
		sp, err := ParseSpeedup(c.in)
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		if c.ok && (sp.File != c.file || sp.Line != c.line || sp.Lo != c.lo || sp.Hi != c.hi || sp.Pct != c.pct) {
			t.Errorf("%q: got %+v", c.in, sp)
		}
	}
}

func TestSpeedupFunc(t *testing.T) {
	var sps []Speedup
	for _, s := range []string{"a.c:7=25", "0x20-0x30=50", "a.c:8=10", "b.c:7=90"} {
		sp, err := ParseSpeedup(s)
		if err != nil {
			t.Fatal(err)
		}
		sps = append(sps, sp)
	}
	f, matched := SpeedupFunc(sps, lineSyms{0x10: 7, 0x24: 7, 0x40: 9})
	for addr, want := range map[uint64]int{0x10: 25, 0x24: 50, 0x2f: 50, 0x30: 0, 0x40: 0, 0x99: 0} {
		if got := f(addr); got != want {
			t.Errorf("%#x: %d %%, want %d", addr, got, want)
		}
	}
	if want := []bool{true, true, false, false}; len(matched) != 4 || matched[0] != want[0] || matched[1] != want[1] || matched[2] || matched[3] {
		t.Errorf("matched %v, want %v", matched, want)
	}
}
