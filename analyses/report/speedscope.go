package report

// Speedscope is speedscope's file format
// (https://www.speedscope.app/file-format-schema.json) as emuprof writes
// it: sampled profiles over shared frames, a sample per calling context
// (its stack of frame indices from the root) weighted by its own value.
type Speedscope struct {
	Schema   string              `json:"$schema"`
	Shared   SpeedscopeShared    `json:"shared"`
	Profiles []SpeedscopeProfile `json:"profiles"`
	Name     string              `json:"name"`
	Exporter string              `json:"exporter"`
}

// SpeedscopeShared holds the frames the profiles' samples index.
type SpeedscopeShared struct {
	Frames []SpeedscopeFrame `json:"frames"`
}

// SpeedscopeFrame is a routine, with its source position when known.
type SpeedscopeFrame struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
	Line int64  `json:"line,omitempty"`
}

// SpeedscopeProfile is one sampled profile (one metric).
type SpeedscopeProfile struct {
	Type       string  `json:"type"`
	Name       string  `json:"name"`
	Unit       string  `json:"unit"`
	StartValue int64   `json:"startValue"`
	EndValue   int64   `json:"endValue"`
	Samples    [][]int `json:"samples"`
	Weights    []int64 `json:"weights"`
}

// NewSpeedscope returns an empty file named name, written by exporter.
func NewSpeedscope(name, exporter string) Speedscope {
	return Speedscope{Schema: "https://www.speedscope.app/file-format-schema.json", Name: name, Exporter: exporter,
		Shared: SpeedscopeShared{Frames: []SpeedscopeFrame{}}}
}

// NewSpeedscopeProfile returns an empty sampled profile of one metric.
func NewSpeedscopeProfile(name, unit string) SpeedscopeProfile {
	return SpeedscopeProfile{Type: "sampled", Name: name, Unit: unit, Samples: [][]int{}, Weights: []int64{}}
}
