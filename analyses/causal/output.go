package causal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

func errf(format string, args ...any) error { return errors.New(fmt.Sprintf(format, args...)) }

func cutComma(s string) (string, string, bool) {
	a, b, ok := strings.Cut(s, ",")
	return a, b, ok && a != "" && b != ""
}

func itoa(n int) string { return strconv.Itoa(n) }

// Experiment is one completed performance experiment.
type Experiment struct {
	Line     string `json:"selected"` // file:line
	Speedup  int    `json:"speedup_pct"`
	Start    int64  `json:"start_ns"`
	Elapsed  int64  `json:"elapsed_ns"`
	Delay    int64  `json:"delay_ns"`
	Duration int64  `json:"duration_ns"` // effective: elapsed - delay
	Selected int64  `json:"selected_executions"`
	// SelectedNs is the virtual time spent in the selected line's code
	// during the experiment (its exact "samples", Coz §4.6).
	SelectedNs int64        `json:"selected_ns"`
	Points     []PointDelta `json:"points"`
	// units is the effective duration in ns × 100, exact (Duration is
	// rounded to whole ns).
	units int64
	key   lineKey // the selected line
}

// PointDelta is a progress point's visits during an experiment; for a
// throughput point Arrivals is the delta.
type PointDelta struct {
	Name       string `json:"name"`
	Latency    bool   `json:"latency,omitempty"`
	Arrivals   int64  `json:"arrivals"`
	Departures int64  `json:"departures,omitempty"`
	Difference int64  `json:"difference,omitempty"` // in flight at the end (arrivals - departures overall)
	// Area is the time integral of the requests in flight over the
	// experiment's effective duration (the inserted delays taken out), in
	// ns (latency points).
	Area int64 `json:"in_flight_ns,omitempty"`
}

// CozProfile writes the experiments in Coz's profile.coz format: JSON lines
// (one object a line: startup, then each experiment followed by its
// points, then runtime) or, legacy, Coz's tab-separated key=value lines.
// Times are virtual ns; "selected_samples" is the number of executions of
// the selected line's blocks during the experiment.
func CozProfile(w io.Writer, exps []Experiment, runtime int64, legacy bool) error {
	var b bytes.Buffer
	if legacy {
		b.WriteString("startup\ttime=0\n")
	} else {
		b.WriteString(`{"type":"startup","time":0}` + "\n")
	}
	for _, x := range exps {
		sp := strconv.FormatFloat(float64(x.Speedup)/100, 'f', 2, 64)
		if legacy {
			fmt.Fprintf(&b, "experiment\tselected=%s\tspeedup=%s\tduration=%d\tselected-samples=%d\n", tabEscape(x.Line), sp, x.Duration, x.Selected)
		} else {
			fmt.Fprintf(&b, `{"type":"experiment","selected":%s,"speedup":%s,"duration":%d,"selected_samples":%d}`+"\n", jsonString(x.Line), sp, x.Duration, x.Selected)
		}
		for _, d := range x.Points {
			switch {
			case legacy && d.Latency:
				fmt.Fprintf(&b, "latency-point\tname=%s\tarrivals=%d\tdepartures=%d\tdifference=%d\n", tabEscape(d.Name), d.Arrivals, d.Departures, d.Difference)
			case legacy:
				fmt.Fprintf(&b, "throughput-point\tname=%s\tdelta=%d\n", tabEscape(d.Name), d.Arrivals)
			case d.Latency:
				fmt.Fprintf(&b, `{"type":"latency-point","name":%s,"arrivals":%d,"departures":%d,"difference":%d}`+"\n", jsonString(d.Name), d.Arrivals, d.Departures, d.Difference)
			default:
				fmt.Fprintf(&b, `{"type":"throughput-point","name":%s,"delta":%d}`+"\n", jsonString(d.Name), d.Arrivals)
			}
		}
	}
	if legacy {
		fmt.Fprintf(&b, "runtime\ttime=%d\n", runtime)
	} else {
		fmt.Fprintf(&b, `{"type":"runtime","time":%d}`+"\n", runtime)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// jsonString quotes s as JSON, every control character escaped.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// tabEscape keeps a legacy field on its line and in its column.
func tabEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Profile is our JSON: the experiments and, per line, the curves.
type Profile struct {
	Program     string       `json:"program"`
	Partial     string       `json:"partial,omitempty"`
	RuntimeNs   int64        `json:"runtime_ns"`
	DelayedNs   int64        `json:"delayed_ns"`
	Points      []string     `json:"points"`
	Lines       []LineResult `json:"lines"`
	Experiments []Experiment `json:"experiments"`
	Validation  *Validation  `json:"validation,omitempty"` // --validate
	// Note says when the run was too short to give the hottest line a
	// curve, and the command of the exact mode.
	Note string `json:"note,omitempty"`
}

// LineResult is a line's causal profile: per speedup, the aggregated
// experiments and the program speedup they predict for each point.
type LineResult struct {
	Line        string       `json:"line"`
	CostNs      int64        `json:"cost_ns"`
	Experiments int          `json:"experiments"`
	Curve       []CurvePoint `json:"curve"`
	Verdict     string       `json:"verdict"`
	// Phase is t_A/T, the share of the measured time during which the
	// line runs (Coz §4.6, equations (4) and (6)); the curve's program
	// speedups are the speedups measured while it runs times Phase.
	Phase float64 `json:"phase_fraction"`
	// Noise is the spread of the line's own 0 % measurements of the first
	// point, as a program speedup (phase-corrected): the standard
	// deviation of each 0 % experiment's speedup over the line's pooled
	// 0 % period; -1 when fewer than two 0 % experiments tell it.
	Noise float64 `json:"noise"`
}

// CurvePoint aggregates a line's experiments at one speedup.
type CurvePoint struct {
	Speedup     int        `json:"speedup_pct"`
	Experiments int        `json:"experiments"`
	DurationNs  int64      `json:"duration_ns"`
	Visits      []int64    `json:"visits"`          // per point: arrivals
	Departures  []int64    `json:"departures"`      // per point (latency)
	Difference  []float64  `json:"difference"`      // per point: duration-weighted in flight at the experiments' ends, as Coz's viewer weighs them (latency)
	InFlight    []float64  `json:"in_flight"`       // per point: time-average in flight over the experiments (latency)
	Program     []*float64 `json:"program_speedup"` // per point, vs the line's 0 % experiments, phase-corrected; null without data
	PhaseA      []*float64 `json:"phase_a_speedup"` // the same before the phase correction (Δp_A)
	units       int64      // DurationNs × 100, exact
}

// period is the progress period (throughput) or the latency by Little's law
// (L = λW, §4.5) of point i at this speedup; NaN without data. Coz takes L
// from the in-flight count at each experiment's end; here L is the exact
// time average over the experiments' effective durations: W = L/λ, that is
// the in-flight integral over the arrivals.
func (c *CurvePoint) period(i int, latency bool) float64 {
	if latency {
		if c.Visits[i] == 0 || c.units <= 0 {
			return math.NaN()
		}
		return c.InFlight[i] / (float64(c.Visits[i]) / float64(c.units))
	}
	if c.Visits[i] == 0 {
		return math.NaN()
	}
	return float64(c.units) / float64(c.Visits[i])
}

// Build aggregates the profiler's experiments.
func (p *Profiler) Build() *Profile {
	p.nameSet()
	prof := &Profile{Program: p.opt.Program, Partial: p.partial, RuntimeNs: p.now, DelayedNs: p.delayed, Experiments: p.done}
	if prof.Experiments == nil {
		prof.Experiments = []Experiment{}
	}
	lat := make([]bool, len(p.points))
	for i, pt := range p.points {
		prof.Points = append(prof.Points, pt.name)
		lat[i] = pt.latency
	}
	curves := map[string]map[int]*CurvePoint{}
	for _, x := range p.done {
		m := curves[x.Line]
		if m == nil {
			m = map[int]*CurvePoint{}
			curves[x.Line] = m
		}
		c := m[x.Speedup]
		if c == nil {
			n := len(p.points)
			c = &CurvePoint{Speedup: x.Speedup, Visits: make([]int64, n), Departures: make([]int64, n), Difference: make([]float64, n), InFlight: make([]float64, n),
				Program: make([]*float64, n), PhaseA: make([]*float64, n)}
			m[x.Speedup] = c
		}
		total := c.units + x.units
		for i, d := range x.Points {
			if total > 0 { // duration-weighted in-flight average, as Coz's viewer does
				c.Difference[i] = (c.Difference[i]*float64(c.units) + float64(d.Difference)*float64(x.units)) / float64(total)
			}
			c.Visits[i] += d.Arrivals
			c.Departures[i] += d.Departures
			if d.Latency && total > 0 {
				c.InFlight[i] = (c.InFlight[i]*float64(c.units) + float64(d.Area)*scale) / float64(total)
			}
		}
		c.units = total
		c.DurationNs = (total + scale/2) / scale
		c.Experiments++
	}
	byName := map[string]int32{}
	for id := int32(1); id < int32(len(p.lines)); id++ {
		byName[p.lineName(id)] = id
	}
	phase := p.phases()
	for name, m := range curves {
		id := byName[name]
		lr := LineResult{Line: name, CostNs: p.lines[id].cost, Phase: phase[id]}
		base := m[0]
		for _, c := range m {
			lr.Experiments += c.Experiments
			for i := range p.points {
				if base == nil {
					continue
				}
				b, v := base.period(i, lat[i]), c.period(i, lat[i])
				if math.IsNaN(b) || math.IsNaN(v) || b == 0 {
					continue
				}
				a := (b - v) / b
				s := a * lr.Phase
				c.PhaseA[i], c.Program[i] = &a, &s
			}
			lr.Curve = append(lr.Curve, *c)
		}
		sort.Slice(lr.Curve, func(i, j int) bool { return lr.Curve[i].Speedup < lr.Curve[j].Speedup })
		lr.Noise = p.noise(name, len(lat) > 0 && lat[0], lr.Phase)
		lr.Verdict = verdict(lr.Curve, lr.Noise)
		prof.Lines = append(prof.Lines, lr)
	}
	sort.Slice(prof.Lines, func(i, j int) bool {
		a, b := maxSpeedup(prof.Lines[i].Curve), maxSpeedup(prof.Lines[j].Curve)
		if a != b {
			return a > b
		}
		return prof.Lines[i].Line < prof.Lines[j].Line
	})
	if prof.Lines == nil {
		prof.Lines = []LineResult{}
	}
	return prof
}

// phases returns, per line id, the phase correction factor t_A/T of Coz
// §4.6: phase A is the time during which the line runs, and an experiment
// that selects the line measures the speedup Δp_A of phase A only (lines
// are selected among those that ran recently, §4.2), so the program's
// speedup is ΔP = Δp_A · t_A/T (equation (6)), with t_A ≈ s · t_obs/s_obs
// (equation (4)). Coz counts samples; here s and s_obs are the line's exact
// virtual time, and everything is measured over 0 % experiments (no
// virtual speedup distorts them): T is their total effective duration, s
// the line's time within them, t_obs and s_obs the duration of the line's
// own 0 % experiments and the line's time within those. The factor is at
// most 1 (a line that runs throughout), and 1 without 0 % data.
func (p *Profiler) phases() []float64 {
	out := make([]float64, len(p.lines))
	if p.wholeRuns {
		for i := range out {
			out[i] = 1
		}
		return out
	}
	tObs := make([]int64, len(p.lines)) // ×scale
	sObs := make([]int64, len(p.lines))
	var total int64 // ×scale
	for _, x := range p.done {
		if x.Speedup != 0 {
			continue
		}
		total += x.units
		if id, ok := p.lineIDs[x.key]; ok {
			tObs[id] += x.units
			sObs[id] += x.SelectedNs
		}
	}
	for id := 1; id < len(p.lines); id++ {
		li := &p.lines[id]
		s := li.base
		if li.epoch != 0 && li.epoch <= p.lastDone {
			s += li.pend
		}
		out[id] = 1
		if sObs[id] > 0 && total > 0 {
			f := float64(tObs[id]) / float64(sObs[id]) * float64(s) / float64(total)
			out[id] = min(f, 1)
		}
	}
	return out
}

func maxSpeedup(c []CurvePoint) float64 {
	m := math.Inf(-1)
	for _, cp := range c {
		if len(cp.Program) > 0 && cp.Program[0] != nil && *cp.Program[0] > m {
			m = *cp.Program[0]
		}
	}
	return m
}

// Threshold of the verdicts: a predicted program speedup of 2 %.
const threshold = 0.02

// noise returns the spread of a line's 0 % experiments (LineResult.Noise):
// each one's period of the first point against their pooled period.
// Whole runs (--exact) are deterministic: no spread.
func (p *Profiler) noise(line string, latency bool, phase float64) float64 {
	if p.wholeRuns {
		return 0
	}
	var per []float64
	var units, visits float64
	for _, x := range p.done {
		if x.Line != line || x.Speedup != 0 || len(x.Points) == 0 || x.Points[0].Arrivals == 0 {
			continue
		}
		v := float64(x.units) / float64(x.Points[0].Arrivals)
		if latency {
			v = float64(x.Points[0].Area) * scale / float64(x.Points[0].Arrivals)
		}
		per = append(per, v)
		units += float64(x.units)
		visits += float64(x.Points[0].Arrivals)
	}
	if len(per) < 2 || visits == 0 {
		return -1
	}
	var mean, ss float64
	for _, v := range per {
		mean += v
	}
	mean /= float64(len(per))
	for _, v := range per {
		ss += (v - mean) * (v - mean)
	}
	if mean == 0 {
		return -1
	}
	return math.Sqrt(ss/float64(len(per)-1)) / mean * phase
}

// verdict is given only to an effect the experiments tell from zero: at
// least the threshold and more than twice the spread of the line's own 0 %
// measurements (noise; a line without that spread gets none).
func verdict(c []CurvePoint, noise float64) string {
	hi, lo, any := math.Inf(-1), math.Inf(1), false
	for _, cp := range c {
		if cp.Speedup == 0 || len(cp.Program) == 0 || cp.Program[0] == nil {
			continue
		}
		any = true
		hi, lo = max(hi, *cp.Program[0]), min(lo, *cp.Program[0])
	}
	bar := max(threshold, 2*noise)
	switch {
	case !any:
		return "no data"
	case noise < 0 && (hi >= threshold || lo <= -threshold):
		return "too few experiments"
	case hi >= bar && hi >= -lo:
		return "worth optimizing"
	case lo <= -bar:
		return "contention: negative"
	case hi >= threshold || lo <= -threshold:
		return "within noise"
	}
	return "no effect"
}

// At returns the program speedup of point 0 predicted at speedup s
// (percent): measured, or interpolated linearly between the nearest
// measured speedups around s; ok is false when s is outside them.
func (l *LineResult) At(s int) (v float64, exact, ok bool) {
	var lo, hi *CurvePoint
	for i := range l.Curve {
		c := &l.Curve[i]
		if len(c.Program) == 0 || c.Program[0] == nil {
			continue
		}
		if c.Speedup == s {
			return *c.Program[0], true, true
		}
		if c.Speedup < s {
			lo = c
		} else if hi == nil {
			hi = c
		}
	}
	// Interpolated only between neighbouring measured speedups (at most
	// 10 points apart): a curve bends where another line becomes the
	// bottleneck, so a straight line across a gap misleads.
	if lo == nil || hi == nil || hi.Speedup-lo.Speedup > 10 {
		return 0, false, false
	}
	f := float64(s-lo.Speedup) / float64(hi.Speedup-lo.Speedup)
	return *lo.Program[0] + f*(*hi.Program[0]-*lo.Program[0]), false, true
}

// Summary prints, per line, the predicted program speedup (first progress
// point) at 5, 25, 50 and 100 % virtual speedup, and a verdict.
func (prof *Profile) Summary(w io.Writer, top int) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "causal profile of %s: %d experiments, virtual duration %d ns, %d ns of delays inserted\n",
		prof.Program, len(prof.Experiments), prof.RuntimeNs, prof.DelayedNs)
	if prof.Partial != "" {
		fmt.Fprintf(&b, "partial: %s\n", prof.Partial)
	}
	if len(prof.Points) > 0 {
		fmt.Fprintf(&b, "progress point: %s (program speedup predicted when the line is sped up by 5/25/50/100 %%; ~ interpolated)\n", prof.Points[0])
	}
	fmt.Fprintf(&b, "%-40s %6s %8s %8s %8s %8s  %s\n", "line", "exps", "5%", "25%", "50%", "100%", "verdict")
	for i, l := range prof.Lines {
		if top > 0 && i >= top {
			break
		}
		name := shortName(l.Line)
		fmt.Fprintf(&b, "%-40s %6d", name, l.Experiments)
		for _, s := range []int{5, 25, 50, 100} {
			v, exact, ok := l.At(s)
			switch {
			case !ok:
				fmt.Fprintf(&b, " %8s", "-")
			case exact:
				fmt.Fprintf(&b, " %7.1f%%", 100*v)
			default:
				fmt.Fprintf(&b, " ~%6.1f%%", 100*v)
			}
		}
		fmt.Fprintf(&b, "  %s\n", l.Verdict)
	}
	if prof.Validation != nil {
		prof.Validation.summary(&b)
	}
	if prof.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", prof.Note)
	}
	_, err := w.Write(b.Bytes())
	return err
}
