package callgrind

import (
	"encoding/json"
	"fmt"
	"io"

	"emuprof/analyses/calls"
	"emuprof/analyses/report"
	"emuprof/trace"
)

// SpeedscopeSuffix ends the name of the speedscope file of a process
// image's instructions per calling context (<app>_callgrind.speedscope.json).
const SpeedscopeSuffix = "_callgrind.speedscope.json"

// WriteSpeedscope writes the instructions per calling context as a
// speedscope file: the calling context tree the report's flame graph
// draws.
func (p *Profile) WriteSpeedscope(w io.Writer, name string) error {
	f := report.NewSpeedscope(name, "emuprof callgrind")
	prof := report.NewSpeedscopeProfile("instructions", "none")
	var cct *calls.CCT
	if p.cct != nil {
		cct = p.cct()
	}
	frames := map[string]int{}
	byRoutine := map[calls.RoutineID]int{} // every stack names its routines again: one name each
	frame := func(r calls.RoutineID) int {
		if i, ok := byRoutine[r]; ok {
			return i
		}
		rt := p.routines().Get(r)
		n := routineKey(trace.Routine{Entry: rt.Entry, Name: rt.Name, Object: rt.Object}).name
		i, ok := frames[n]
		if !ok {
			i = len(f.Shared.Frames)
			frames[n] = i
			f.Shared.Frames = append(f.Shared.Frames, report.SpeedscopeFrame{Name: n})
		}
		byRoutine[r] = i
		return i
	}
	for ctx, self := range p.ctxSelf {
		if self == 0 || cct == nil || ctx >= cct.Len() {
			continue
		}
		var stack []int
		for id := calls.NodeID(ctx); id != calls.NoNode; id = cct.Node(id).Parent {
			stack = append(stack, frame(cct.Node(id).Routine))
		}
		for i, j := 0, len(stack)-1; i < j; i, j = i+1, j-1 {
			stack[i], stack[j] = stack[j], stack[i]
		}
		prof.Samples = append(prof.Samples, stack)
		prof.Weights = append(prof.Weights, int64(self))
		prof.EndValue += int64(self)
	}
	f.Profiles = []report.SpeedscopeProfile{prof}
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("callgrind: write speedscope: %w", err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// ReadFlame reads a speedscope file written by WriteSpeedscope (or any
// sampled one) back into a tree: one node per distinct stack prefix.
func ReadFlame(r io.Reader) (names []string, parent []int, self []float64, err error) {
	var f report.Speedscope
	if err := json.NewDecoder(r).Decode(&f); err != nil {
		return nil, nil, nil, err
	}
	type key struct{ parent, frame int }
	index := map[key]int{}
	for _, pr := range f.Profiles[:min(len(f.Profiles), 1)] {
		for i, st := range pr.Samples {
			node := -1
			for _, fr := range st {
				if fr < 0 || fr >= len(f.Shared.Frames) {
					return nil, nil, nil, fmt.Errorf("frame %d of %d", fr, len(f.Shared.Frames))
				}
				k := key{node, fr}
				id, ok := index[k]
				if !ok {
					id = len(names)
					index[k] = id
					names = append(names, f.Shared.Frames[fr].Name)
					parent = append(parent, node)
					self = append(self, 0)
				}
				node = id
			}
			if node >= 0 && i < len(pr.Weights) {
				self[node] += float64(pr.Weights[i])
			}
		}
	}
	return names, parent, self, nil
}
