package parallel

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/google/pprof/profile"

	"emuprof/analyses/report"
)

// WriteSpeedscope writes the pprof profile's samples as a speedscope JSON
// file: one profile per sample type (SampleTypes), stacks from the root,
// a frame per pprof location (function and line).
func (r *Result) WriteSpeedscope(w io.Writer, name string) error {
	p := r.Profile()
	f := report.NewSpeedscope(name, "emuprof parallel")
	frame := map[*profile.Location]int{}
	for _, l := range p.Location {
		frame[l] = len(f.Shared.Frames)
		fr := report.SpeedscopeFrame{Name: "?"}
		if len(l.Line) > 0 && l.Line[0].Function != nil {
			fn := l.Line[0].Function
			fr = report.SpeedscopeFrame{Name: fn.Name, File: filepath.Base(fn.Filename), Line: l.Line[0].Line}
		}
		f.Shared.Frames = append(f.Shared.Frames, fr)
	}
	for ti, st := range p.SampleType {
		sp := report.NewSpeedscopeProfile(st.Type, st.Unit)
		for _, s := range p.Sample {
			v := s.Value[ti]
			if v == 0 {
				continue
			}
			stack := make([]int, len(s.Location))
			for i, l := range s.Location {
				stack[len(stack)-1-i] = frame[l]
			}
			sp.Samples = append(sp.Samples, stack)
			sp.Weights = append(sp.Weights, v)
			sp.EndValue += v
		}
		f.Profiles = append(f.Profiles, sp)
	}
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("parallel: write speedscope: %w", err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
