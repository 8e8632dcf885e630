package parallel

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// The pprof profile of H5 parses back with the sample types in ns, the
// totals of the result (plus the synthetic samples), and stacks that are
// the logical contexts with their lines.
func TestPprof(t *testing.T) {
	s := newScript().start(1, 0, 0, "A").start(2, 1, 0, "B").start(3, 1, 0, "C")
	s.call(2, "pthread_mutex_lock").blockOn(2, futex, lockL)
	s.call(3, "pthread_mutex_lock").blockOn(3, futex, lockL)
	s.in(1, "cs", 2).call(1, "unlock").wake(2, 1, 2, futex, lockL).ret(1).in(1, "after", 4)
	s.ret(2).in(2, "cs", 2).call(2, "unlock").wake(3, 2, 4, futex, lockL).ret(2).in(2, "after", 2).exit(2)
	s.ret(3).in(3, "cs", 2).exit(3)
	s.blockOn(1, sleep, 0).wake(1, 0, 9, sleep, 0).exit(1) // A sleeps [6,9): nobody works
	r := s.run(t, cores(3), 0)
	var buf bytes.Buffer
	if err := r.WritePprof(&buf); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if got := strings.Join(types, " "); got != "work/nanoseconds idleness/nanoseconds overhead/nanoseconds lockwait/nanoseconds spin/nanoseconds wait/nanoseconds blame/nanoseconds" {
		t.Errorf("sample types %s", got)
	}
	sums := make([]int64, len(p.SampleType))
	stacks := map[string]int64{}
	for _, smp := range p.Sample {
		for i, v := range smp.Value {
			sums[i] += v
		}
		var fr []string
		for _, l := range smp.Location {
			for _, ln := range l.Line {
				fr = append(fr, ln.Function.Name)
			}
		}
		stacks[strings.Join(fr, "<")] += smp.Value[1]
	}
	want(t, "pprof work", sums[0], r.Total.Work)
	want(t, "pprof idleness", sums[1], r.Total.Idleness+r.Unattr)
	want(t, "pprof lockwait", sums[3], 6)
	want(t, "pprof idleness of A>cs", stacks["cs<A"], 4)
	want(t, "pprof idleness of B>after", stacks["after<B<A"], 0)
	want(t, "unattributed", r.Unattr, 3*3) // [6,9): nobody works
	want(t, "pprof (no thread working)", stacks["(no thread working)"], 9)
	want(t, "duration", p.DurationNanos, 9)
	// Leaves carry lines (fakeSyms: t.c, one line per 16 bytes).
	for _, l := range p.Location {
		if ln := l.Line[0]; ln.Function.Name == "cs" && ln.Line != 0 && ln.Function.Filename != "t.c" {
			t.Errorf("cs's file %q", ln.Function.Filename)
		}
	}
}

// WritePprof's file decompresses to the proto profile.WriteUncompressed
// writes, for a small profile (Huffman coding only) and for one past
// smallProto (gzip's fastest level), and go's pprof package reads both.
func TestPprofCompressedIsTheProto(t *testing.T) {
	for _, n := range []int{3, 5000} {
		r := &Result{Cores: 2, Makespan: 1000, Contexts: []Context{{ID: 0, Routine: "(root)"}}}
		for i := 1; i <= n; i++ {
			r.Contexts = append(r.Contexts, Context{ID: int32(i), Parent: int32(i / 2), Routine: fmt.Sprintf("f%d", i), Object: "a.out"})
			r.Lines = append(r.Lines, LineStat{Context: int32(i), Func: fmt.Sprintf("f%d", i), File: "a.c", Line: i, M: Metrics{Work: int64(i), Idleness: int64(n - i)}})
		}
		var raw, gz bytes.Buffer
		if err := r.Profile().WriteUncompressed(&raw); err != nil {
			t.Fatal(err)
		}
		if err := r.WritePprof(&gz); err != nil {
			t.Fatal(err)
		}
		if big := raw.Len() > smallProto; big != (n > 3) {
			t.Fatalf("%d lines: proto of %d bytes, want it on the other side of %d", n, raw.Len(), smallProto)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		dec, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dec, raw.Bytes()) {
			t.Errorf("%d lines: the .pb.gz decompresses to %d bytes, not the proto's %d", n, len(dec), raw.Len())
		}
		if gz.Len() >= raw.Len() {
			t.Errorf("%d lines: %d compressed bytes for a proto of %d", n, gz.Len(), raw.Len())
		}
		p, err := profile.Parse(bytes.NewReader(gz.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Sample) != n {
			t.Errorf("%d lines: %d samples", n, len(p.Sample))
		}
	}
}
