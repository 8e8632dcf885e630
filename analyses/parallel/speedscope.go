package parallel

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/google/pprof/profile"
)

// speedscope's file format (https://www.speedscope.app/file-format-schema.json):
// speedscope's pprof import shows one sample type, so this file holds one
// sampled profile per type, which its profile selector switches between.
type ssFile struct {
	Schema   string      `json:"$schema"`
	Shared   ssShared    `json:"shared"`
	Profiles []ssProfile `json:"profiles"`
	Name     string      `json:"name"`
	Exporter string      `json:"exporter"`
}

type ssShared struct {
	Frames []ssFrame `json:"frames"`
}

type ssFrame struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
	Line int64  `json:"line,omitempty"`
}

type ssProfile struct {
	Type       string  `json:"type"`
	Name       string  `json:"name"`
	Unit       string  `json:"unit"`
	StartValue int64   `json:"startValue"`
	EndValue   int64   `json:"endValue"`
	Samples    [][]int `json:"samples"`
	Weights    []int64 `json:"weights"`
}

// WriteSpeedscope writes the pprof profile's samples as a speedscope JSON
// file: one profile per sample type (SampleTypes), stacks from the root,
// a frame per pprof location (function and line).
func (r *Result) WriteSpeedscope(w io.Writer, name string) error {
	p := r.Profile()
	f := ssFile{Schema: "https://www.speedscope.app/file-format-schema.json", Name: name, Exporter: "emuprof parallel",
		Shared: ssShared{Frames: []ssFrame{}}}
	frame := map[*profile.Location]int{}
	for _, l := range p.Location {
		frame[l] = len(f.Shared.Frames)
		fr := ssFrame{Name: "?"}
		if len(l.Line) > 0 && l.Line[0].Function != nil {
			fn := l.Line[0].Function
			fr = ssFrame{Name: fn.Name, File: filepath.Base(fn.Filename), Line: l.Line[0].Line}
		}
		f.Shared.Frames = append(f.Shared.Frames, fr)
	}
	for ti, st := range p.SampleType {
		sp := ssProfile{Type: "sampled", Name: st.Type, Unit: st.Unit, Samples: [][]int{}, Weights: []int64{}}
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
