package causal

// Exact mode (--exact): instead of many short experiments in one run, one
// complete execution per (line, speedup) pair for the hottest lines, each
// an end-to-end experiment (coz --end-to-end: one experiment over the whole
// run, its effective duration the run's virtual duration minus the delay
// inserted). --shard I/K runs only the pairs whose index is I modulo K and
// writes a shard; emuprof merge joins the K shards into exactly the files
// the unsharded run writes (the same shard story as P3's copies).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/spf13/pflag"

	"emuprof/analyses/platform"
)

// ShardFormat names the shard file format of --exact --shard.
const ShardFormat = "emuprof-causal-shard 1"

// exactFlags are --exact, --exact-lines and --shard.
type exactFlags struct {
	on    bool
	lines int
	shard string
}

func registerExact(fs *pflag.FlagSet) *exactFlags {
	var e exactFlags
	fs.BoolVar(&e.on, "exact", false, "causal: one whole run per (line, speedup) pair of the hottest lines (end-to-end experiments) instead of experiments within one run")
	fs.IntVar(&e.lines, "exact-lines", 5, "causal: with --exact, the number of hottest lines")
	fs.StringVar(&e.shard, "shard", "", "causal: with --exact, run only pairs I, I+K, I+2K ... (I/K, 0-based) and write the shard <app>_causal.shardIofK.json (join shards with emuprof merge -o DIR)")
	return &e
}

// parseShard reads I/K (0 <= I < K).
func parseShard(s string) (i, k int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	k, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || k < 1 || i < 0 || i >= k {
		return 0, 0, platform.BadFlag("shard", s, "want I/K with 0 <= I < K")
	}
	return i, k, nil
}

// instance returns the exact-mode analysis, or nil, nil without --exact.
func (e *exactFlags) instance(cfg Config, env *platform.Env, legacy bool, top int) (platform.Instance, error) {
	if !e.on {
		if e.shard != "" {
			return nil, platform.BadFlag("shard", e.shard, "only with --exact")
		}
		return nil, nil
	}
	i, k := 0, 1
	if e.shard != "" {
		var err error
		if i, k, err = parseShard(e.shard); err != nil {
			return nil, err
		}
	}
	if e.lines < 1 {
		return nil, platform.BadFlag("exact-lines", itoa(e.lines), "want 1 or more")
	}
	switch {
	case cfg.EndToEnd:
		return nil, platform.BadFlag("end-to-end", "true", "not with --exact (every run of --exact is end to end)")
	case cfg.Validate > 0:
		return nil, platform.BadFlag("validate", itoa(cfg.Validate), "not with --exact (each pair is already a whole run)")
	}
	base := cfg
	base.Observe, base.FixedLine, base.FixedSpeedup = true, "", -1
	p, err := New(base, envOptions(env))
	if err != nil {
		return nil, err
	}
	if cfg.FixedLine != "" {
		if _, err := parseFixed(cfg.FixedLine, cfg.Context); err != nil {
			return nil, err
		}
	}
	return &exactInstance{Profiler: p, cfg: cfg, n: e.lines, i: i, k: k, legacy: legacy, top: top}, nil
}

// exactInstance observes the baseline run (line costs, progress points) and
// then, when asked to write, runs its pairs.
type exactInstance struct {
	*Profiler
	cfg        Config
	n, i, k    int
	legacy     bool
	top        int
	rerun      platform.Rerun
	shard      *Shard
	err        error
	prof       *Profile
	exps       []Experiment
	ranAlready bool
	note       string // --progress auto's, for the profile's note
	told       bool   // Write returned run's error: the summary does not repeat it
	// runsDone of runsTotal runs of this shard have ended (Progress).
	runsDone, runsTotal atomic.Int64
}

// Progress says how many of the shard's runs have ended, for a live
// status line; it may be called from another goroutine.
func (x *exactInstance) Progress() (what string, done, total int) {
	if t := x.runsTotal.Load(); t > 0 {
		return "causal --exact runs", int(x.runsDone.Load()), int(t)
	}
	return "", 0, 0
}

// SetRerun gives the instance the means to run the program again.
func (x *exactInstance) SetRerun(r platform.Rerun) { x.rerun = r }

// Shard is one shard of an --exact run: the baseline's data every shard
// shares, and its own runs.
type Shard struct {
	Format    string     `json:"format"`
	Shard     int        `json:"shard"`
	K         int        `json:"k"`
	Program   string     `json:"program"`
	Legacy    bool       `json:"legacy_format"`
	Top       int        `json:"top"`
	RuntimeNs int64      `json:"baseline_runtime_ns"`
	Points    []string   `json:"points"`
	Latency   []bool     `json:"latency"`
	Lines     []LineCost `json:"lines"` // the hottest lines, hottest first
	Speedups  []int      `json:"speedups"`
	Pairs     int        `json:"pairs"` // len(Lines) × len(Speedups)
	Runs      []ShardRun `json:"runs"`  // this shard's, by pair index
}

// LineCost is a line and its virtual time in the baseline run.
type LineCost struct {
	Line   string `json:"line"`
	CostNs int64  `json:"cost_ns"`
}

// ShardRun is the end-to-end experiment of pair Pair (line Pair /
// len(Speedups), speedup Pair % len(Speedups)).
type ShardRun struct {
	Pair       int        `json:"pair"`
	Experiment Experiment `json:"experiment"`
	Units      int64      `json:"effective_cns"` // effective duration, ns × 100
}

// hottest returns the n lines in scope with the most virtual time in the
// run, hottest first (ties by name), only those matching the fixed line if
// any; a fixed set is one entry, its lines' costs summed.
func (p *Profiler) hottest(n int, fixed string) []LineCost {
	var fs spec
	if fixed != "" {
		elems, _ := parseFixed(fixed, false)
		if len(elems) > 1 {
			return p.setCost(elems)
		}
		fs, _ = parseSpec(fixed)
	}
	var out []LineCost
	for id := int32(1); id < int32(len(p.lines)); id++ {
		li := &p.lines[id]
		if li.cost == 0 || fixed != "" && (li.key.line != fs.line || !fileMatches(li.key.file, fs.name)) {
			continue
		}
		out = append(out, LineCost{Line: p.lineName(id), CostNs: li.cost})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].CostNs != out[b].CostNs {
			return out[a].CostNs > out[b].CostNs
		}
		return out[a].Line < out[b].Line
	})
	return out[:min(n, len(out))]
}

// run runs this shard's pairs once, after the baseline run.
func (x *exactInstance) run() error {
	if x.ranAlready {
		return x.err
	}
	x.ranAlready = true
	if x.partial != "" {
		x.err = errf("--exact: the baseline run did not finish: %s", x.partial)
		return x.err
	}
	if x.rerun == nil {
		x.err = errf("--exact: this command cannot run the program again")
		return x.err
	}
	sh := &Shard{Format: ShardFormat, Shard: x.i, K: x.k, Program: x.opt.Program, Legacy: x.legacy, Top: x.top,
		RuntimeNs: x.Runtime(), Lines: x.hottest(x.n, x.cfg.FixedLine), Runs: []ShardRun{}}
	for _, pt := range x.points {
		sh.Points = append(sh.Points, pt.name)
		sh.Latency = append(sh.Latency, pt.latency)
	}
	if x.cfg.FixedSpeedup >= 0 {
		sh.Speedups = []int{x.cfg.FixedSpeedup}
	} else {
		for s := 0; s <= 100; s += 5 {
			sh.Speedups = append(sh.Speedups, s)
		}
	}
	if len(sh.Lines) == 0 {
		x.err = errf("--exact: no line in scope executed (--scope GLOB widens it)")
		if len(x.anyIDs) == 0 {
			// A Debian program without its debug symbols: say what
			// gives causal profiling its lines.
			x.err = errf("--exact: no executed code has a source line (no DWARF line table: build with -g, or install the program's debug symbols)")
		}
		return x.err
	}
	sh.Pairs = len(sh.Lines) * len(sh.Speedups)
	x.runsTotal.Store(int64((sh.Pairs - x.i + x.k - 1) / x.k))
	for j := x.i; j < sh.Pairs; j += x.k {
		line, s := sh.Lines[j/len(sh.Speedups)].Line, sh.Speedups[j%len(sh.Speedups)]
		cfg := x.cfg
		cfg.Observe, cfg.EndToEnd, cfg.FixedLine, cfg.FixedSpeedup, cfg.Validate = false, true, line, s, 0
		if isSetName(line) {
			cfg.FixedLine = x.cfg.FixedLine // a set's name is its lines' base names: the run takes the set as given
		}
		var got *Profiler
		f := func(env *platform.Env) (platform.Instance, error) {
			var err error
			if got, err = New(cfg, envOptions(env)); err != nil {
				return nil, err
			}
			return observer{got}, nil
		}
		if _, err := x.rerun(nil, f); err != nil {
			x.err = fmt.Errorf("--exact: run of %s at %d %%: %w", line, s, err)
			return x.err
		}
		exps := got.Experiments()
		if len(exps) != 1 {
			x.err = errf("--exact: run of %s at %d %%: the line did not execute", line, s)
			return x.err
		}
		sh.Runs = append(sh.Runs, ShardRun{Pair: j, Experiment: exps[0], Units: exps[0].units})
		x.runsDone.Add(1)
	}
	x.shard = sh
	if x.k > 1 {
		return nil
	}
	x.prof, x.exps, x.err = buildExact([]*Shard{sh})
	if x.err == nil && x.cfg.RunEnd {
		x.prof.Note = "no progress point given: profiled end to end, one whole run per line and speedup, the program's virtual duration as its time (--progress SPEC or --latency BEGIN,END for in-run experiments)"
		if x.note != "" {
			x.prof.Note = x.note
		}
	}
	return x.err
}

// ShardName is the file name of shard i of k of program's --exact run.
func ShardName(program string, i, k int) string {
	return fmt.Sprintf("%s_causal.shard%dof%d.json", filepath.Base(program), i, k)
}

func (x *exactInstance) Write(dir string) ([]string, error) {
	if err := x.run(); err != nil {
		x.told = true
		return nil, err
	}
	if x.k > 1 {
		data, err := json.MarshalIndent(x.shard, "", " ")
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, ShardName(x.opt.Program, x.i, x.k))
		if err := writeAtomic(path, append(data, '\n')); err != nil {
			return nil, err
		}
		return []string{path}, nil
	}
	return writeExact(dir, x.prof, x.exps, x.shard.RuntimeNs, x.legacy)
}

// writeExact writes profile.coz and our JSON.
func writeExact(dir string, prof *Profile, exps []Experiment, runtime int64, legacy bool) ([]string, error) {
	var coz bytes.Buffer
	if err := CozProfile(&coz, exps, runtime, legacy); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(prof, "", " ")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range []struct {
		name string
		data []byte
	}{{"profile.coz", coz.Bytes()}, {FileName(prof.Program), append(data, '\n')}} {
		path := filepath.Join(dir, f.name)
		if err := writeAtomic(path, f.data); err != nil {
			return out, err
		}
		out = append(out, path)
	}
	return out, nil
}

func (x *exactInstance) Summary(w io.Writer) error {
	if err := x.run(); err != nil {
		if x.told {
			return nil // Write's error said it
		}
		return err
	}
	if x.k > 1 {
		_, err := fmt.Fprintf(w, "causal --exact shard %d/%d of %s: %d of %d runs (%d lines × %d speedups); join the %d shards with emuprof merge -o DIR\n",
			x.i, x.k, x.opt.Program, len(x.shard.Runs), x.shard.Pairs, len(x.shard.Lines), len(x.shard.Speedups), x.k)
		return err
	}
	return x.prof.Summary(w, x.top)
}

func (x *exactInstance) Section() (title, body string, err error) {
	var b bytes.Buffer
	if err := x.Summary(&b); err != nil {
		return "", "", err
	}
	return "Causal profile (Coz, --exact)", "<pre>" + html.EscapeString(b.String()) + "</pre>", nil
}

// buildExact joins shards (checked to be the k shards of one exact run)
// into the profile and the experiments in pair order.
func buildExact(shards []*Shard) (*Profile, []Experiment, error) {
	if len(shards) == 0 {
		return nil, nil, errf("merge: no shard")
	}
	s0 := shards[0]
	runs := make([]*ShardRun, s0.Pairs)
	seen := make([]bool, s0.K)
	for _, sh := range shards {
		switch {
		case sh.Format != ShardFormat:
			return nil, nil, errf("merge: not a causal shard (format %q)", sh.Format)
		case sh.K != s0.K || sh.Program != s0.Program || sh.Pairs != s0.Pairs || sh.RuntimeNs != s0.RuntimeNs ||
			sh.Legacy != s0.Legacy || sh.Top != s0.Top || fmt.Sprint(sh.Lines, sh.Speedups, sh.Points, sh.Latency) != fmt.Sprint(s0.Lines, s0.Speedups, s0.Points, s0.Latency):
			return nil, nil, errf("merge: shard %d/%d and shard %d/%d are not of the same run (program, flags or baseline differ)", sh.Shard, sh.K, s0.Shard, s0.K)
		case sh.Shard < 0 || sh.Shard >= sh.K:
			return nil, nil, errf("merge: shard %d/%d out of range", sh.Shard, sh.K)
		case seen[sh.Shard]:
			return nil, nil, errf("merge: shard %d/%d twice", sh.Shard, sh.K)
		}
		seen[sh.Shard] = true
		for i := range sh.Runs {
			r := &sh.Runs[i]
			if r.Pair < 0 || r.Pair >= s0.Pairs || r.Pair%sh.K != sh.Shard || runs[r.Pair] != nil {
				return nil, nil, errf("merge: shard %d/%d: bad or repeated pair %d", sh.Shard, sh.K, r.Pair)
			}
			runs[r.Pair] = r
		}
	}
	for i, ok := range seen {
		if !ok {
			return nil, nil, errf("merge: shard %d/%d missing", i, s0.K)
		}
	}
	if s0.Pairs != len(s0.Lines)*len(s0.Speedups) || len(s0.Points) != len(s0.Latency) {
		return nil, nil, errf("merge: inconsistent shard header")
	}
	p := &Profiler{opt: Options{Program: s0.Program}, lines: make([]lineInfo, 1), lineIDs: map[lineKey]int32{},
		now: s0.RuntimeNs, wholeRuns: true}
	for i, name := range s0.Points {
		p.points = append(p.points, point{name: name, latency: s0.Latency[i]})
	}
	for _, lc := range s0.Lines {
		k, ok := parseLineName(lc.Line)
		if !ok {
			return nil, nil, errf("merge: bad line %q", lc.Line)
		}
		p.lines[p.lineID(k)].cost = lc.CostNs
	}
	for j, r := range runs {
		if r == nil {
			return nil, nil, errf("merge: pair %d missing", j)
		}
		want := s0.Lines[j/len(s0.Speedups)].Line
		x := r.Experiment
		if x.Line != want || x.Speedup != s0.Speedups[j%len(s0.Speedups)] || len(x.Points) != len(s0.Points) {
			return nil, nil, errf("merge: pair %d is %s at %d %%, want %s at %d %%", j, x.Line, x.Speedup, want, s0.Speedups[j%len(s0.Speedups)])
		}
		x.units = r.Units
		x.key, _ = parseLineName(x.Line)
		p.done = append(p.done, x)
		p.delayed += x.Delay
		p.lines[p.lineIDs[x.key]].experiments++
	}
	return p.Build(), p.done, nil
}

// parseLineName splits FILE:LINE or FILE:LINE <- CALLER; a set
// (FILE:LINE+FILE:LINE...) is a key of its own.
func parseLineName(s string) (lineKey, bool) {
	if isSetName(s) {
		return lineKey{file: s, set: true}, validSetName(s)
	}
	s, caller, _ := strings.Cut(s, " <- ")
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return lineKey{}, false
	}
	n, err := strconv.Atoi(s[i+1:])
	return lineKey{file: s[:i], line: n, caller: caller}, err == nil && n > 0
}

// IsShard reports whether data, a file's contents, is a causal shard.
func IsShard(data []byte) bool {
	return bytes.Contains(data[:min(len(data), 256)], []byte(`"format": "`+ShardFormat+`"`))
}

// MergeShards merges the k shards of an --exact run, read from the files
// names, and writes into dir the profile.coz and JSON the unsharded run
// writes, byte for byte; it returns the files written and the summary.
func MergeShards(dir string, names []string, datas [][]byte) ([]string, string, error) {
	var shards []*Shard
	for i, f := range names {
		data := datas[i]
		var sh Shard
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sh); err != nil {
			return nil, "", fmt.Errorf("%s: not a causal shard: %v", f, err)
		}
		shards = append(shards, &sh)
	}
	prof, exps, err := buildExact(shards)
	if err != nil {
		return nil, "", err
	}
	out, err := writeExact(dir, prof, exps, shards[0].RuntimeNs, shards[0].Legacy)
	if err != nil {
		return out, "", err
	}
	var b bytes.Buffer
	if err := prof.Summary(&b, shards[0].Top); err != nil {
		return out, "", err
	}
	return out, b.String(), nil
}
