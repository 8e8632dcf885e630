package causal

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"emuprof/analyses/platform"
	"emuprof/trace"
)

// Speedup is an actual speedup (emuprof run --speedup): the instructions of
// a source line, or of an address range, cost Pct % less virtual time.
type Speedup struct {
	Text   string
	File   string // FILE:LINE form: suffix-matched like progress points
	Line   int
	Lo, Hi uint64 // address form: [Lo, Hi)
	Pct    int
}

// ParseSpeedup reads FILE:LINE=PCT, 0xLO-0xHI=PCT (Hi excluded) or
// 0xADDR=PCT (one instruction), PCT from 0 to 100.
func ParseSpeedup(s string) (Speedup, error) {
	where, pct, ok := strings.Cut(strings.TrimSpace(s), "=")
	n, err := strconv.Atoi(pct)
	if !ok || err != nil || n < 0 || n > 100 {
		return Speedup{}, errf("--speedup %q: want FILE:LINE=PCT or 0xLO-0xHI=PCT, PCT from 0 to 100", s)
	}
	sp := Speedup{Text: s, Pct: n}
	if strings.HasPrefix(where, "0x") || strings.HasPrefix(where, "0X") {
		lo, hi, rng := strings.Cut(where, "-")
		a, err1 := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(lo, "0x"), "0X"), 16, 64)
		b, err2 := a+1, error(nil)
		if rng {
			b, err2 = strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(hi, "0x"), "0X"), 16, 64)
		}
		if err1 != nil || err2 != nil || b <= a {
			return Speedup{}, errf("--speedup %q: bad address range (want 0xLO-0xHI, LO < HI)", s)
		}
		sp.Lo, sp.Hi = a, b
		return sp, nil
	}
	sp.File, sp.Line = where, 0
	if i := strings.LastIndexByte(where, ':'); i > 0 {
		if l, err := strconv.Atoi(where[i+1:]); err == nil && l > 0 {
			sp.File, sp.Line = where[:i], l
		}
	}
	if sp.Line == 0 {
		return Speedup{}, errf("--speedup %q: want FILE:LINE=PCT or 0xLO-0xHI=PCT", s)
	}
	return sp, nil
}

// SpeedupFunc is the emulator's per-instruction speedup for a set of
// speedups (the largest where several match); matched[i] becomes true once
// speedup i matched an instruction. It looks up each instruction's line in
// syms, once per instruction, when its block is first translated.
func SpeedupFunc(sps []Speedup, syms trace.Symbols) (f func(addr uint64) int, matched []bool) {
	matched = make([]bool, len(sps))
	byLine := false
	for _, sp := range sps {
		byLine = byLine || sp.Line > 0
	}
	return func(addr uint64) int {
		pct := 0
		var file string
		var line int
		if byLine && syms != nil {
			file, line, _ = syms.Line(addr)
		}
		for i, sp := range sps {
			hit := sp.Line > 0 && line == sp.Line && fileMatches(file, sp.File) ||
				sp.Line == 0 && addr >= sp.Lo && addr < sp.Hi
			if hit {
				matched[i] = true
				pct = max(pct, sp.Pct)
			}
		}
		return pct
	}, matched
}

// PointObservation is what an observing run measured of a progress point.
type PointObservation struct {
	Name       string `json:"name"`
	Latency    bool   `json:"latency,omitempty"`
	Arrivals   int64  `json:"arrivals"`
	Departures int64  `json:"departures,omitempty"`
	FirstNs    int64  `json:"first_ns"` // virtual time of the first arrival
	LastNs     int64  `json:"last_ns"`  // and of the last
	// SumArrNs and SumDepNs are the sums of the arrivals' and the
	// departures' virtual times (latency points).
	SumArrNs int64 `json:"sum_arrivals_ns,omitempty"`
	SumDepNs int64 `json:"sum_departures_ns,omitempty"`
}

// MeanLatencyNs is a latency point's exact mean latency, the sum of the
// departure times minus the sum of the arrival times over the count; NaN
// unless every arrival departed.
func (o PointObservation) MeanLatencyNs() float64 {
	if !o.Latency || o.Arrivals == 0 || o.Arrivals != o.Departures {
		return math.NaN()
	}
	return float64(o.SumDepNs-o.SumArrNs) / float64(o.Arrivals)
}

// PeriodNs is the mean virtual time between consecutive arrivals, from the
// first to the last; NaN with fewer than two.
func (o PointObservation) PeriodNs() float64 {
	if o.Arrivals < 2 {
		return math.NaN()
	}
	return float64(o.LastNs-o.FirstNs) / float64(o.Arrivals-1)
}

// Observation returns each progress point's counts and times.
func (p *Profiler) Observation() []PointObservation {
	out := make([]PointObservation, len(p.points))
	for i, pt := range p.points {
		out[i] = PointObservation{Name: pt.name, Latency: pt.latency, Arrivals: pt.arrivals, Departures: pt.departures,
			FirstNs: pt.first, LastNs: pt.last, SumArrNs: pt.sumArr, SumDepNs: pt.sumDep}
	}
	return out
}

// Observer returns the factory of an analysis that only counts cfg's
// progress points (Config.Observe), and a function that returns what it
// counted once the run is over.
func Observer(cfg Config) (platform.Factory, func() []PointObservation) {
	cfg.Observe, cfg.FixedLine, cfg.EndToEnd, cfg.Validate = true, "", false, 0
	var p *Profiler
	f := func(env *platform.Env) (platform.Instance, error) {
		if err := CheckPoints(cfg, envObjects(env), env.Program); err != nil {
			return nil, err
		}
		var err error
		if p, err = New(cfg, envOptions(env)); err != nil {
			return nil, err
		}
		return observer{p}, nil
	}
	return f, func() []PointObservation {
		if p == nil {
			return nil
		}
		return p.Observation()
	}
}

type observer struct{ *Profiler }

func (observer) Write(string) ([]string, error)           { return nil, nil }
func (observer) Summary(io.Writer) error                  { return nil }
func (observer) Section() (title, body string, err error) { return "", "", nil }

// Validation compares predictions with actual speedups: each check is a
// whole run with the line's instructions sped up (emuprof run --speedup).
// The actual program speedup is measured like the prediction, on the first
// progress point: 1 − period / baseline period, where the period is the
// mean virtual time between its visits from the first to the last (a
// throughput point with at least two visits); otherwise, as for an
// end-to-end experiment, 1 − virtual duration / baseline duration.
type Validation struct {
	Measure    string  `json:"measure"` // "period of POINT" or "duration"
	BaselineNs float64 `json:"baseline_ns"`
	Checks     []Check `json:"checks"`
}

// Check is one line at one speedup, predicted and actual.
type Check struct {
	Line       string  `json:"line"`
	Speedup    int     `json:"speedup_pct"`
	Predicted  float64 `json:"predicted"`
	Actual     float64 `json:"actual"`
	DurationNs int64   `json:"duration_ns"` // the sped-up run's virtual duration
	MeasureNs  float64 `json:"measure_ns"`  // its period (or duration)
}

// ValidationSpeedups are the speedups --validate checks: the summary's,
// where the line has a prediction.
var ValidationSpeedups = []int{5, 25, 50, 100}

// validate runs the checks of the top n lines of prof.
func (p *Profiler) validate(prof *Profile, n int, run platform.Rerun) (*Validation, error) {
	measure := func(speedups []string) (int64, float64, error) {
		f, obs := Observer(p.cfg)
		if len(p.points) == 0 {
			f = nil
		}
		d, err := run(speedups, f)
		if err != nil {
			return 0, 0, err
		}
		if len(p.points) > 0 && !p.points[0].latency {
			if o := obs(); len(o) > 0 && o[0].Arrivals >= 2 {
				return d, o[0].PeriodNs(), nil
			}
		}
		return d, math.NaN(), nil
	}
	baseDur, base, err := measure(nil)
	if err != nil {
		return nil, err
	}
	v := &Validation{Measure: "duration"}
	usePeriod := !math.IsNaN(base)
	if usePeriod {
		v.Measure = "period of " + p.points[0].name
	} else {
		base = float64(baseDur)
	}
	v.BaselineNs = base
	if p.cfg.EndToEnd {
		// One experiment over the whole run: its prediction is its
		// effective duration against the baseline run's duration.
		for _, x := range p.done {
			d, _, err := measure(actualSpeedups(x.Line, x.Speedup))
			if err != nil {
				return nil, err
			}
			v.Checks = append(v.Checks, Check{Line: x.Line, Speedup: x.Speedup, Predicted: 1 - float64(x.units)/scale/base,
				Actual: 1 - float64(d)/base, DurationNs: d, MeasureNs: float64(d)})
		}
		return v, nil
	}
	for i := range prof.Lines {
		if i >= n {
			break
		}
		l := &prof.Lines[i]
		if strings.Contains(l.Line, " <- ") {
			continue // an actual speedup cannot select a calling context
		}
		for _, s := range ValidationSpeedups {
			pred, _, ok := l.At(s)
			if !ok {
				continue
			}
			d, period, err := measure(actualSpeedups(l.Line, s))
			if err != nil {
				return nil, err
			}
			m := float64(d)
			if usePeriod {
				m = period
			}
			v.Checks = append(v.Checks, Check{Line: l.Line, Speedup: s, Predicted: pred, Actual: 1 - m/base, DurationNs: d, MeasureNs: m})
		}
	}
	return v, nil
}

// actualSpeedups are the --speedup values that speed up line, or each line
// of a line set, by pct %.
func actualSpeedups(line string, pct int) []string {
	var out []string
	for _, l := range splitSet(line) {
		out = append(out, l+"="+strconv.Itoa(pct))
	}
	return out
}

// summary prints predicted vs actual side by side.
func (v *Validation) summary(b *bytes.Buffer) {
	fmt.Fprintf(b, "validation by actual speedups (whole runs; actual measured on the %s, baseline %.1f ns):\n", v.Measure, v.BaselineNs)
	fmt.Fprintf(b, "%-40s %6s %10s %10s %10s\n", "line", "speedup", "predicted", "actual", "diff")
	for _, c := range v.Checks {
		name := shortName(c.Line)
		fmt.Fprintf(b, "%-40s %6d%% %9.2f%% %9.2f%% %+9.2f\n", name, c.Speedup, 100*c.Predicted, 100*c.Actual, 100*(c.Predicted-c.Actual))
	}
}
