package parallel

import (
	"bytes"
	"strings"
	"testing"
)

// A single-threaded program gets no parallel verdict (issue 25 point 6):
// on 8 virtual cores 7 are idle by construction, and Table 1 would say
// "refine concurrency granularity"; the summary and the report say it is
// serial instead. The calling-context tree names C++ routines demangled.
func TestSerialProgramNoVerdict(t *testing.T) {
	s := newScript().start(1, 0, 0, "main")
	s.call(1, "_ZN3emu13insert_sortedEPii").work(1, 50).ret(1).in(1, "after", 10).exit(1)
	dir := t.TempDir()
	cfg := cores(8)
	cfg.App = "prog"
	a, p := s.pipeline(t, cfg)
	p.Events(s.events())
	p.Finish()
	files, err := a.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sum bytes.Buffer
	if err := a.Summary(&sum); err != nil {
		t.Fatal(err)
	}
	sec, err := RenderHTML(files)
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"summary": sum.String(), "report": sec.HTML} {
		if !strings.Contains(text, "serial") {
			t.Errorf("%s does not say the program is serial:\n%s", what, text)
		}
		for _, v := range []string{VerdictLowLow, VerdictLowHigh, VerdictHighLow, VerdictHighHigh} {
			if strings.Contains(text, v) {
				t.Errorf("%s gives the verdict %q to a serial program:\n%s", what, v, text)
			}
		}
	}
	// Its idleness is the other cores': no line is blamed for it and no
	// context shows an idleness share (87.5 % on 8 cores, by construction).
	if strings.Contains(sum.String(), "idleness by line") {
		t.Errorf("summary blames lines for a serial program's idleness:\n%s", sum.String())
	}
	if strings.Contains(sec.HTML, "87.5 %</td><td>") { // the ratio column, before the verdict
		t.Errorf("calling-context tree shows the idle cores' share for a serial program:\n%s", sec.HTML)
	}
	if !strings.Contains(sec.HTML, "emu::insert_sorted(int*, int)") || strings.Contains(sec.HTML, "_ZN3emu") {
		t.Errorf("calling-context tree does not name emu::insert_sorted(int*, int):\n%s", sec.HTML)
	}
}

// Two threads that take turns (the main thread waits while a worker
// computes, as xz -T2 on a small input does) make a serial program too;
// two that overlap do not.
func TestSerialInEffect(t *testing.T) {
	for _, overlap := range []bool{false, true} {
		s := newScript().start(1, 0, 0, "main").in(1, "setup", 10)
		s.start(2, 1, s.clock(1), "worker")
		if overlap {
			s.in(1, "meanwhile", 20)
		}
		s.blockOn(1, futex, lockL)
		s.in(2, "compress", 50)
		s.wake(1, 2, s.clock(2), futex, lockL).exit(2)
		s.in(1, "finish", 5).exit(1)
		a, p := s.pipeline(t, cores(8))
		p.Events(s.events())
		p.Finish()
		var sum bytes.Buffer
		if err := a.Summary(&sum); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(sum.String(), "program: serial (2 threads ran, 1.000 working on average"); got == overlap {
			t.Errorf("overlap %v: said serial %v:\n%s", overlap, got, sum.String())
		}
	}
}

// A program that runs fewer threads than there are virtual cores (xz -T2
// on the default 8) is judged on cores it never asked for: the summary and
// the report say so and name the --cpus that judges it at its own width;
// with as many cores as threads, no such note.
func TestNarrowProgramNote(t *testing.T) {
	for _, n := range []int{8, 2} {
		s := newScript().start(1, 0, 0, "main").in(1, "setup", 10)
		s.start(2, 1, s.clock(1), "worker")
		s.in(1, "meanwhile", 50)
		s.in(2, "compress", 50)
		s.exit(2).exit(1)
		a, p := s.pipeline(t, cores(n))
		p.Events(s.events())
		p.Finish()
		var sum bytes.Buffer
		if err := a.Summary(&sum); err != nil {
			t.Fatal(err)
		}
		files, err := a.Write(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		sec, err := RenderHTML(files)
		if err != nil {
			t.Fatal(err)
		}
		want := "only 2 threads ran on 8 virtual cores: at least 6 cores had no thread to run"
		for what, text := range map[string]string{"summary": sum.String(), "report": sec.HTML} {
			if got := strings.Contains(text, want) && strings.Contains(text, "rerun with --cpus 2"); got != (n == 8) {
				t.Errorf("%d cores: %s has the narrow note %v:\n%s", n, what, got, text)
			}
		}
	}
}
