package parallel

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"

	"github.com/google/pprof/profile"
)

// SampleTypes are the pprof sample types, in order; every value is virtual
// nanoseconds.
var SampleTypes = []string{"work", "idleness", "overhead", "lockwait", "spin", "wait", "blame"}

// appendValues appends a sample's values, in the order of SampleTypes.
func appendValues(v []int64, m Metrics) []int64 {
	return append(v, m.Work, m.Idleness, m.Overhead, m.Lockwait, m.Spin, m.Wait, m.Blame)
}

// slab hands out elements of T from chunks allocated at once, for the
// profile's many small structures (pointers to them stay valid).
type slab[T any] struct{ free []T }

// one returns a slice of one new element (its capacity 1: an append
// copies it), from a chunk of the given size when the last is used up.
func (s *slab[T]) one(chunk int) []T {
	if len(s.free) == 0 {
		s.free = make([]T, max(chunk, 16))
	}
	e := s.free[:1:1]
	s.free = s.free[1:]
	return e
}

func (s *slab[T]) new(chunk int) *T { return &s.one(chunk)[0] }

// Profile builds the pprof profile: one sample per (context, line), whose
// stack is the leaf line, then every logical frame's call site up to the
// root. Idleness while no thread works is the sample "(no thread working)"
// and blame no release took is "(never released)", so that pprof's totals
// are n × makespan − work and the waiting time.
func (r *Result) Profile() *profile.Profile {
	p := &profile.Profile{
		PeriodType:        &profile.ValueType{Type: "time", Unit: "nanoseconds"},
		Period:            1,
		DurationNanos:     r.Makespan,
		DefaultSampleType: "work",
	}
	for _, t := range SampleTypes {
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: t, Unit: "nanoseconds"})
	}
	p.Comments = []string{
		"emuprof parallel: work, idleness, overhead per calling context (HPCToolkit, PPoPP'09), exact in virtual time",
		fmt.Sprintf("cores %d, idle base %s, spin %s, makespan %d ns", r.Cores, r.IdleBase, r.Spin, r.Makespan),
		fmt.Sprintf("work %d + idleness %d + unattributed %d = %d (capacity %d)", r.Total.Work, r.Total.Idleness,
			r.Unattr, r.Total.Work+r.Total.Idleness+r.Unattr, r.Capacity),
	}
	if r.Command != "" {
		p.Comments = append(p.Comments, "command: "+r.Command)
	}
	if r.Partial != "" {
		p.Comments = append(p.Comments, "PARTIAL: "+r.Partial)
	}
	// A function's source file: the first one its lines name.
	type fkey struct{ name, obj string }
	fileOf := map[fkey]string{}
	for _, ls := range r.Lines {
		if k := (fkey{ls.Func, ls.Object}); ls.File != "" && fileOf[k] == "" {
			fileOf[k] = ls.File
		}
	}
	for _, c := range r.Contexts {
		if k := (fkey{c.siteFn, c.siteObj}); c.siteFile != "" && fileOf[k] == "" {
			fileOf[k] = c.siteFile
		}
	}
	// Functions, locations, samples, their values and stacks are cut from
	// slabs sized for the result (one allocation each, not one per item).
	nSamples := len(r.Lines) + 2
	var fnSlab slab[profile.Function]
	var locSlab slab[profile.Location]
	var lineSlab slab[profile.Line]
	smpSlab := slab[profile.Sample]{free: make([]profile.Sample, nSamples)}
	vals := make([]int64, 0, nSamples*len(SampleTypes))
	var stacks []*profile.Location
	p.Sample = make([]*profile.Sample, 0, nSamples)
	p.Function = make([]*profile.Function, 0, len(r.Contexts)+8)
	p.Location = make([]*profile.Location, 0, len(r.Lines)+len(r.Contexts))
	sample := func(st []*profile.Location, m Metrics) {
		smp := smpSlab.new(nSamples)
		k := len(vals)
		vals = appendValues(vals, m)
		smp.Location, smp.Value = st, vals[k:len(vals):len(vals)]
		p.Sample = append(p.Sample, smp)
	}
	funcs := make(map[fkey]*profile.Function, len(r.Contexts))
	fn := func(name, obj string) *profile.Function {
		k := fkey{name, obj}
		if f := funcs[k]; f != nil {
			return f
		}
		f := fnSlab.new(len(r.Contexts) + 8)
		*f = profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: fileOf[k]}
		if f.Filename == "" && obj != "" {
			f.Filename = path.Base(obj)
		}
		p.Function = append(p.Function, f)
		funcs[k] = f
		return f
	}
	// Mappings name each object file with its build id, so that pprof
	// finds the binary (-disasm, -weblist); the program's comes first,
	// pprof's main binary.
	maps := map[string]*profile.Mapping{}
	mapping := func(obj string) *profile.Mapping {
		if m := maps[obj]; m != nil {
			return m
		}
		am, ok := r.mappings[obj]
		if !ok {
			return nil
		}
		m := &profile.Mapping{ID: uint64(len(p.Mapping) + 1), Start: am.Start, Limit: am.Limit, Offset: am.Offset,
			File: am.File, BuildID: am.BuildID, HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
		p.Mapping = append(p.Mapping, m)
		maps[obj] = m
		return m
	}
	if r.program != "" {
		mapping(r.program)
	}
	type lkey struct {
		f    *profile.Function
		line int
	}
	locs := make(map[lkey]*profile.Location, len(r.Lines)+len(r.Contexts))
	// loc returns the location of line in f, at addr (the line's lowest
	// address in its function, 0: none) in obj.
	loc := func(f *profile.Function, line int, obj string, addr uint64) *profile.Location {
		k := lkey{f, line}
		if l := locs[k]; l != nil {
			if m := mapping(obj); l.Address == 0 && m != nil && addr != 0 {
				l.Mapping, l.Address = m, addr // a call site's location, made first
			}
			return l
		}
		ln := lineSlab.one(len(r.Lines) + len(r.Contexts))
		ln[0] = profile.Line{Function: f, Line: int64(line)}
		l := locSlab.new(len(r.Lines) + len(r.Contexts))
		*l = profile.Location{ID: uint64(len(p.Location) + 1), Line: ln}
		if m := mapping(obj); m != nil && addr != 0 {
			l.Mapping, l.Address = m, addr
		}
		p.Location = append(p.Location, l)
		locs[k] = l
		return l
	}
	// The frames above a context: each parent's call site, cached.
	frames := make([][]*profile.Location, len(r.Contexts))
	var stackOf func(id int32) []*profile.Location
	stackOf = func(id int32) []*profile.Location {
		if id <= 0 {
			return nil
		}
		if frames[id] != nil {
			return frames[id]
		}
		c := &r.Contexts[id]
		var out []*profile.Location
		if par := c.Parent; par > 0 {
			pc := &r.Contexts[par]
			line := 0
			if c.siteFn == pc.Routine {
				line = c.siteLine
			}
			site := loc(fn(pc.Routine, pc.Object), line, c.siteObj, 0) // before the parent's: location IDs in this order
			up := stackOf(par)
			out = make([]*profile.Location, 1+len(up))
			out[0] = site
			copy(out[1:], up)
		}
		frames[id] = out
		return out
	}
	// stack returns leaf, then second if not nil, then frames, in one
	// piece of the stacks slab.
	stack := func(leaf, second *profile.Location, frames []*profile.Location) []*profile.Location {
		n := 1 + len(frames)
		if second != nil {
			n++
		}
		if cap(stacks)-len(stacks) < n {
			stacks = make([]*profile.Location, 0, max(n, 4*nSamples))
		}
		st := append(stacks[len(stacks):len(stacks):len(stacks)+n], leaf)
		if second != nil {
			st = append(st, second)
		}
		st = append(st, frames...)
		stacks = stacks[:len(stacks)+n]
		return st
	}
	for _, ls := range r.Lines {
		c := &r.Contexts[ls.Context]
		leaf := loc(fn(ls.Func, ls.Object), ls.Line, ls.Object, ls.addr)
		var second *profile.Location
		if ls.Context > 0 && ls.Func != c.Routine {
			// Time inside a collapsed runtime chain or hidden code: the
			// logical frame it belongs to comes next.
			second = loc(fn(c.Routine, c.Object), 0, "", 0)
		}
		sample(stack(leaf, second, stackOf(ls.Context)), ls.M)
	}
	if r.Unattr > 0 {
		sample(stack(loc(fn("(no thread working)", ""), 0, "", 0), nil, nil), Metrics{Idleness: r.Unattr})
	}
	if r.Unrel > 0 {
		sample(stack(loc(fn("(never released)", ""), 0, "", 0), nil, nil), Metrics{Blame: r.Unrel})
	}
	return p
}

// smallProto is the size of profile.proto up to which WritePprof only
// Huffman-codes it: gzip's fastest level with matches sets up about 1 MB of
// tables (≈1.5 ms, more than compressing a small profile costs) to make
// the file about half as large, a few KB at this size (the test guests'
// profiles are 7-14 KB, xz's 48 KB).
const smallProto = 32 << 10

// WritePprof writes the gzipped profile.proto. profile.Write compresses at
// gzip's default level, whose setup and search cost as much as building
// and encoding the profile of a small run; this writes the same proto
// (what readers see once it is decompressed) at gzip's fastest level, or
// Huffman coding only when it is small (a few KB larger).
func (r *Result) WritePprof(w io.Writer) error {
	var pb bytes.Buffer
	if err := r.Profile().WriteUncompressed(&pb); err != nil {
		return fmt.Errorf("parallel: write pprof: %w", err)
	}
	level := gzip.BestSpeed
	if pb.Len() <= smallProto {
		level = gzip.HuffmanOnly
	}
	zw, err := gzip.NewWriterLevel(w, level)
	if err != nil {
		return err
	}
	if _, err := zw.Write(pb.Bytes()); err != nil {
		return fmt.Errorf("parallel: write pprof: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("parallel: write pprof: %w", err)
	}
	return nil
}
