package trms

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Merge combines reports of several runs or threads of the same program as
// aprof's incremental mode does: routines are matched by name and object,
// calling contexts by their routine path, and tuples on the same input
// size add up (counts and sums add, min and max combine). Like aprof, it
// refuses reports that do not measure the same thing: another program
// (application or executable modification time), version, input metric,
// cost metric or memory resolution (see Mergeable). New ids are given in
// order of first appearance (inputs in order, ids ascending), so the result
// is deterministic.
func Merge(reports ...*Report) (*Report, error) {
	if len(reports) == 0 {
		return nil, errors.New("trms: merge: no reports")
	}
	first := reports[0]
	out := &Report{
		Version:    first.Version,
		Input:      first.Input,
		Metric:     first.Metric,
		ExeMTime:   first.ExeMTime,
		Resolution: first.Resolution,
		App:        first.App,
		Command:    first.Command,
	}
	m := merger{
		out:      out,
		routines: make(map[[2]string]uint32),
		contexts: make(map[[2]int64]uint32),
		points:   make(map[tupleKey]*Tuple),
		cpoints:  make(map[tupleKey]*Tuple),
	}
	threads := make(map[uint32]bool)
	for i, r := range reports {
		if err := Mergeable(first, r); err != nil {
			return nil, fmt.Errorf("trms: merge: report %d: %w", i, err)
		}
		if out.App == "" {
			out.App = r.App
		}
		if out.Command == "" {
			out.Command = r.Command
		}
		if out.Partial == "" {
			out.Partial = r.Partial
		}
		out.TotalCost += r.TotalCost
		for _, t := range r.Threads {
			threads[t] = true
		}
		if err := m.add(r); err != nil {
			return nil, fmt.Errorf("trms: merge: report %d: %w", i, err)
		}
	}
	for t := range threads {
		out.Threads = append(out.Threads, t)
	}
	slices.Sort(out.Threads)
	out.Points = idPoints(m.points)
	out.CPoints = idPoints(m.cpoints)
	return out, nil
}

// Mergeable says why r cannot be merged into a merge that starts with
// first (nil if it can): aprof's incremental mode merges only reports of
// the same executable (application and modification time), report
// version, input metric, cost metric and memory resolution.
func Mergeable(first, r *Report) error {
	differ := func(what string, got, want any) error {
		return fmt.Errorf("%s %v, not %v like the first report: reports of different %ss do not add up", what, got, want, what)
	}
	switch {
	case r.App != first.App:
		return fmt.Errorf("a profile of %q, not of %q like the first report: only runs of one program merge", r.App, first.App)
	case r.ExeMTime != first.ExeMTime:
		return fmt.Errorf("its executable was modified at %d, the first report's at %d (the e lines): not the same build of %s",
			r.ExeMTime, first.ExeMTime, r.App)
	case r.Version != first.Version:
		return differ("version", r.Version, first.Version)
	case r.Input != first.Input:
		return differ("input metric", r.Input, first.Input)
	case r.Metric != first.Metric:
		return differ("cost metric", r.Metric, first.Metric)
	case r.Resolution != first.Resolution:
		return differ("memory resolution", r.Resolution, first.Resolution)
	case r.cct() != first.cct():
		// aprof-plot would show the contexts of some runs only.
		mode := map[bool]string{true: "a --cct report (calling contexts)", false: "a report without --cct"}
		return fmt.Errorf("%s, the first report is %s: reports of both kinds do not add up", mode[r.cct()], mode[first.cct()])
	}
	return nil
}

// cct says whether r is a report of calling contexts (--cct: "x" and "q"
// lines).
func (r *Report) cct() bool { return len(r.Contexts) > 0 || len(r.CPoints) > 0 }

type merger struct {
	out      *Report
	routines map[[2]string]uint32 // (name, object) -> new id
	contexts map[[2]int64]uint32  // (new parent or -1, new routine) -> new id
	points   map[tupleKey]*Tuple
	cpoints  map[tupleKey]*Tuple
}

func (m *merger) add(r *Report) error {
	rid := make(map[uint32]uint32, len(r.Routines))
	for _, rt := range r.Routines {
		key := [2]string{rt.Name, rt.Object}
		id, ok := m.routines[key]
		if !ok {
			id = uint32(len(m.out.Routines))
			m.routines[key] = id
			m.out.Routines = append(m.out.Routines, RoutineRecord{ID: id, Name: rt.Name, Object: rt.Object, Mangled: rt.Mangled})
		}
		rid[rt.ID] = id
	}
	for i := range r.Points {
		p := &r.Points[i]
		id, ok := rid[p.ID]
		if !ok {
			return fmt.Errorf("tuple of unknown routine %d", p.ID)
		}
		mergeInto(m.points, tupleKey{id, p.N}, &p.Tuple)
	}
	// Contexts: resolve parents first (ids need not be ordered in input).
	byID := make(map[uint32]Context, len(r.Contexts))
	for _, c := range r.Contexts {
		byID[c.ID] = c
	}
	cid := make(map[uint32]uint32, len(r.Contexts))
	var resolve func(id uint32, depth int) (uint32, error)
	resolve = func(id uint32, depth int) (uint32, error) {
		if v, ok := cid[id]; ok {
			return v, nil
		}
		c, ok := byID[id]
		if !ok {
			return 0, fmt.Errorf("unknown context %d", id)
		}
		if depth > len(r.Contexts) {
			return 0, fmt.Errorf("context %d: parent cycle", id)
		}
		parent := int64(-1)
		if c.Parent >= 0 {
			p, err := resolve(uint32(c.Parent), depth+1)
			if err != nil {
				return 0, err
			}
			parent = int64(p)
		}
		rtn, ok := rid[c.Routine]
		if !ok {
			return 0, fmt.Errorf("context %d of unknown routine %d", id, c.Routine)
		}
		key := [2]int64{parent, int64(rtn)}
		v, ok := m.contexts[key]
		if !ok {
			v = uint32(len(m.out.Contexts))
			m.contexts[key] = v
			m.out.Contexts = append(m.out.Contexts, Context{ID: v, Routine: rtn, Parent: parent})
		}
		cid[id] = v
		return v, nil
	}
	ids := make([]uint32, 0, len(r.Contexts))
	for _, c := range r.Contexts {
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if _, err := resolve(id, 0); err != nil {
			return err
		}
	}
	for i := range r.CPoints {
		p := &r.CPoints[i]
		id, ok := cid[p.ID]
		if !ok {
			return fmt.Errorf("tuple of unknown context %d", p.ID)
		}
		mergeInto(m.cpoints, tupleKey{id, p.N}, &p.Tuple)
	}
	return nil
}

func mergeInto(m map[tupleKey]*Tuple, k tupleKey, t *Tuple) {
	dst, ok := m[k]
	if !ok {
		dst = &Tuple{N: k.n}
		m[k] = dst
	}
	dst.Merge(t)
}

// normalize sorts every section of r by id (and input size), as WriteTo
// requires.
func (r *Report) normalize() {
	slices.SortFunc(r.Routines, func(a, b RoutineRecord) int { return cmp.Compare(a.ID, b.ID) })
	sortPoints(r.Points)
	slices.SortFunc(r.Contexts, func(a, b Context) int { return cmp.Compare(a.ID, b.ID) })
	sortPoints(r.CPoints)
}
