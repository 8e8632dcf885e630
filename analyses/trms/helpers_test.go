package trms

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"emuprof/analyses/calls"
)

// act is one completed activation as the profiler computed it.
type act struct {
	tid              uint32
	name             string
	rms, trms        uint64
	ext, thr         uint64
	extSelf, thrSelf uint64
	cost, self       uint64
}

func (a act) String() string {
	return fmt.Sprintf("t%d %s rms=%d trms=%d ext=%d thr=%d extSelf=%d thrSelf=%d cost=%d self=%d",
		a.tid, a.name, a.rms, a.trms, a.ext, a.thr, a.extSelf, a.thrSelf, a.cost, a.self)
}

// tracer drives a Profiler with the papers' abstract traces: variables are
// named, each one k-byte cell.
type tracer struct {
	t    *testing.T
	p    *Profiler
	vars map[string]uint64
	acts []act
}

func newTracer(t *testing.T, cfg Config) *tracer {
	t.Helper()
	p, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := &tracer{t: t, p: p, vars: make(map[string]uint64)}
	p.col.hook = func(tid uint32, r calls.RoutineID, a activation) {
		tr.acts = append(tr.acts, act{tid, p.Routines().Get(r).Name, a.rms, a.trms, a.ext, a.thr, a.extSelf, a.thrSelf, a.cost, a.self})
	}
	return tr
}

func (tr *tracer) addr(v string) uint64 {
	a, ok := tr.vars[v]
	if !ok {
		a = 0x10000 + uint64(len(tr.vars))*uint64(tr.p.cfg.Resolution)
		tr.vars[v] = a
	}
	return a
}

func (tr *tracer) call(tid uint32, name string) { tr.p.Call(tid, tr.p.DefineRoutine(name)) }
func (tr *tracer) ret(tid uint32)               { tr.p.Return(tid) }
func (tr *tracer) sw(tid uint32)                { tr.p.Switch(tid) }

func (tr *tracer) read(tid uint32, vs ...string) {
	for _, v := range vs {
		tr.p.Read(tid, tr.addr(v), uint32(tr.p.cfg.Resolution))
	}
}

func (tr *tracer) write(tid uint32, vs ...string) {
	for _, v := range vs {
		tr.p.Write(tid, tr.addr(v), uint32(tr.p.cfg.Resolution))
	}
}

func (tr *tracer) kwrite(vs ...string) {
	for _, v := range vs {
		tr.p.KernelWrite(tr.addr(v), uint32(tr.p.cfg.Resolution))
	}
}

// find returns the completed activations of a routine, in completion order.
func (tr *tracer) find(name string) []act {
	var out []act
	for _, a := range tr.acts {
		if a.name == name {
			out = append(out, a)
		}
	}
	return out
}

// one returns the single activation of name.
func (tr *tracer) one(name string) act {
	tr.t.Helper()
	as := tr.find(name)
	if len(as) != 1 {
		tr.t.Fatalf("%d activations of %s, want 1: %v", len(as), name, tr.acts)
	}
	return as[0]
}

func (tr *tracer) expect(name string, rms, trms uint64) act {
	tr.t.Helper()
	a := tr.one(name)
	if a.rms != rms || a.trms != trms {
		tr.t.Errorf("%s: RMS %d TRMS %d, want RMS %d TRMS %d", name, a.rms, a.trms, rms, trms)
	}
	return a
}

// reportText returns the reports of p as text, concatenated.
func reportText(t *testing.T, p *Profiler) string {
	t.Helper()
	reps, err := p.Reports()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range reps {
		var buf bytes.Buffer
		if _, err := r.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "== %s\n%s", p.ReportFileName(r), buf.String())
	}
	return b.String()
}

// tuplesOf returns the tuples of routine name in report r as "N:calls".
func tuplesOf(r *Report, name string) string {
	id := uint32(1 << 31)
	for _, rt := range r.Routines {
		if rt.Name == name {
			id = rt.ID
		}
	}
	var parts []string
	for _, p := range r.RoutinePoints() {
		if p.ID == id {
			parts = append(parts, fmt.Sprintf("%d:%d", p.N, p.Calls))
		}
	}
	return strings.Join(parts, " ")
}
