package paths

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"emuprof/analyses/report"
)

// Profile is the content of <app>_paths.json (issue 11, point 7).
type Profile struct {
	Program string `json:"program"`
	Partial string `json:"partial,omitempty"`
	// Copies is k, the number of emulations the profile was collected
	// by; ProbeHits has one number per copy: its probe executions (edges
	// with a non-zero label, [P3] §4's hit count).
	Copies    int       `json:"copies"`
	ProbeHits []uint64  `json:"probe_hits"`
	Routines  []Routine `json:"routines"`
	// P3 is the overhead table of a P3 profile (not part of the file).
	P3 *P3Stats `json:"-"`
}

// Routine is one routine's path profile.
type Routine struct {
	Name   string `json:"name"`
	Object string `json:"object"`
	Entry  string `json:"entry"`
	// NumPaths is NumPaths(ENTRY) of the routine's Ball-Larus DAG (it may
	// exceed 64 bits: then ids were computed with arbitrary precision).
	NumPaths json.Number `json:"num_paths"`
	CFG      string      `json:"cfg"`
	// Blocks and Probes: static blocks of the CFG and edges of the DAG
	// with a non-zero Ball-Larus value.
	Blocks    int         `json:"blocks"`
	Probes    int         `json:"probes"`
	Paths     []Path      `json:"paths"`
	Truncated []Truncated `json:"truncated,omitempty"`
	// Leaders and Transitions the run added to the static CFG (cfg
	// "static+dynamic"): block starts and "from->to" (from: the end of
	// the source block).
	AddedLeaders     []string `json:"added_leaders,omitempty"`
	AddedTransitions []string `json:"added_transitions,omitempty"`
	// Lost counts path executions that could not be carried over a
	// renumbering (never expected; reported rather than hidden).
	Lost uint64 `json:"lost,omitempty"`
}

// Path is one path with its count.
type Path struct {
	ID     json.Number `json:"id"`
	Count  uint64      `json:"count"`
	Blocks []string    `json:"blocks"` // start addresses, in path order
	Lines  []string    `json:"lines"`  // file:line of each block's first instruction
}

// Truncated is a path prefix whose execution was cut short (exit with
// frames live, longjmp, thread exit), with how often.
type Truncated struct {
	Count  uint64   `json:"count"`
	Blocks []string `json:"blocks"`
	Lines  []string `json:"lines"`
}

func hex(a uint64) string { return "0x" + strconv.FormatUint(a, 16) }

// Profile returns the collected profile. With P3 planning (Profiler.P3),
// the paths are those merged from the copies' partial profiles, and
// copies and probe_hits are the copies'.
func (p *Profiler) Profile(program string) (*Profile, error) {
	out := &Profile{Program: program, Partial: p.partial, Copies: 1, ProbeHits: []uint64{p.Hits}, Routines: []Routine{}}
	list := slices.Clone(p.list)
	slices.SortFunc(list, func(a, b *routine) int {
		return cmp.Or(strings.Compare(a.info.Object, b.info.Object), cmp.Compare(a.info.Entry, b.info.Entry))
	})
	execs := make([][]pathExec, len(list))
	lost := make([]uint64, len(list))
	for i, rt := range list {
		execs[i], lost[i] = rt.executed()
	}
	if p.P3.K > 0 {
		merged, err := p.runP3(list, execs, out)
		if err != nil {
			return nil, err
		}
		execs = merged
	}
	for i, rt := range list {
		out.Routines = append(out.Routines, p.routineProfile(rt, execs[i], lost[i]))
	}
	return out, nil
}

// pathExec is a path (blocks) and how often it ran.
type pathExec struct {
	seq   []int32
	count uint64
}

// executed returns the routine's counted paths, and the executions whose
// path could not be told (never expected).
func (rt *routine) executed() ([]pathExec, uint64) {
	var out []pathExec
	var lost uint64
	keys, cs := rt.sortedCounts()
	for i, key := range keys {
		seq, ok := rt.pathOf(key)
		if !ok {
			lost += cs[i]
			continue
		}
		out = append(out, pathExec{seq, cs[i]})
	}
	return out, lost
}

// line names the source line of a guest address.
func (p *Profiler) line(a uint64) string {
	if p.opt.Symbols != nil {
		if f, l, ok := p.opt.Symbols.Line(a); ok {
			return f + ":" + strconv.Itoa(l)
		}
	}
	return "??:0"
}

func (p *Profiler) routineProfile(rt *routine, execs []pathExec, lost uint64) Routine {
	r := Routine{
		Name: rt.info.Name, Object: rt.info.Object, Entry: hex(rt.info.Entry),
		NumPaths: json.Number(rt.dag.Num.Total()), CFG: rt.cfgKind(),
		Blocks: len(rt.cfg.Blocks), Lost: rt.lost + lost, Paths: []Path{},
	}
	if rt.code != nil {
		for _, a := range rt.roots {
			if rt.dynRoots[a] {
				r.AddedLeaders = append(r.AddedLeaders, hex(a))
			}
		}
		for _, e := range rt.dynEdges {
			r.AddedTransitions = append(r.AddedTransitions, hex(e[0])+"->"+hex(e[1]))
		}
	}
	if rt.big {
		r.Probes = Probes(rt.dag.Num.NonZero())
	} else {
		r.Probes = Probes(rt.dag.Num.Val)
	}
	type idPath struct {
		id    *big.Int
		seq   []int32
		count uint64
	}
	var ps []idPath
	for _, x := range execs {
		id, ok := rt.dag.Num.EncodeBig(rt.dag.VertexPath(x.seq))
		if !ok {
			r.Lost += x.count
			continue
		}
		ps = append(ps, idPath{id, x.seq, x.count})
	}
	slices.SortFunc(ps, func(a, b idPath) int { return a.id.Cmp(b.id) })
	for _, x := range ps {
		path := Path{ID: json.Number(x.id.String()), Count: x.count}
		for _, b := range x.seq {
			a := rt.cfg.Blocks[b].Start
			path.Blocks = append(path.Blocks, hex(a))
			path.Lines = append(path.Lines, p.line(a))
		}
		r.Paths = append(r.Paths, path)
	}
	tkeys := slices.Clone(rt.truncKey)
	slices.Sort(tkeys)
	for _, k := range tkeys {
		tr := rt.trunc[k]
		t := Truncated{Count: tr.count}
		for _, a := range tr.blocks {
			t.Blocks = append(t.Blocks, hex(a))
			t.Lines = append(t.Lines, p.line(a))
		}
		r.Truncated = append(r.Truncated, t)
	}
	return r
}

// Marshal renders a profile as indented JSON.
func (pr *Profile) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", " ")
	if err := enc.Encode(pr); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ReadProfile reads a <app>_paths.json file.
func ReadProfile(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pr Profile
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&pr); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &pr, nil
}

// Summary prints the hottest paths with their source lines.
func (pr *Profile) Summary(w io.Writer, top int) error {
	var b bytes.Buffer
	var execs, paths uint64
	var nroutines, dyn int
	type hot struct {
		r *Routine
		p *Path
	}
	var hs []hot
	for i := range pr.Routines {
		r := &pr.Routines[i]
		nroutines++
		if r.CFG != CFGStatic {
			dyn++
		}
		for j := range r.Paths {
			execs += r.Paths[j].Count
			paths++
			hs = append(hs, hot{r, &r.Paths[j]})
		}
	}
	fmt.Fprintf(&b, "paths: %d routines, %d distinct paths, %d path executions, probe hits %v", nroutines, paths, execs, pr.ProbeHits)
	if pr.Partial != "" {
		fmt.Fprintf(&b, " (partial: %s)", pr.Partial)
	}
	b.WriteByte('\n')
	if dyn > 0 {
		fmt.Fprintf(&b, "  CFG completed by the run (not fully recovered statically):")
		n := 0
		for i := range pr.Routines {
			if r := &pr.Routines[i]; r.CFG != CFGStatic {
				if n == 8 {
					fmt.Fprintf(&b, " ... (%d in all)", dyn)
					break
				}
				fmt.Fprintf(&b, " %s (%s)", report.Demangle(r.Name), r.CFG)
				n++
			}
		}
		b.WriteByte('\n')
	}
	if st := pr.P3; st != nil {
		name := "P3"
		if st.PBL {
			name = "PBL"
		}
		fmt.Fprintf(&b, "%s over %d copies (each copy's measurement computed from this one emulation): %d of %d routines partitioned\n", name, st.K, st.Profitable, st.Procs)
		if st.SBL {
			fmt.Fprintf(&b, "P3's best plan would not beat SBL on this run's paths: copy 0 runs SBL, the other copies profile nothing\n")
		}
		fmt.Fprintf(&b, "%6s %6s %8s %8s %14s %9s\n", "copy", "tasks", "probes", "load", "probe hits", "% of SBL")
		var worst uint64
		for c, cs := range st.Copies {
			fmt.Fprintf(&b, "%6d %6d %8d %8d %14d %8.1f%%\n", c, cs.Tasks, cs.Probes, cs.Load, cs.Hits, pct(cs.Hits, st.SBLHits))
			worst = max(worst, cs.Hits)
		}
		fmt.Fprintf(&b, "slowest copy: %d probe hits, %.1f%% of SBL's %d (reduction %.1f%%); PBL's slowest copy: %.1f%%\n",
			worst, pct(worst, st.SBLHits), st.SBLHits, 100-pct(worst, st.SBLHits), pct(st.PBLHits, st.SBLHits))
		if st.SBLPlaced > 0 {
			fmt.Fprintf(&b, "SBL with the copies' probe placement (planning run's frequencies): %d probe hits; the slowest copy pays %.1f%% of it (reduction %.1f%%)\n",
				st.SBLPlaced, pct(worst, st.SBLPlaced), 100-pct(worst, st.SBLPlaced))
		}
	}
	slices.SortStableFunc(hs, func(x, y hot) int { return cmp.Compare(y.p.Count, x.p.Count) })
	if top > 0 && len(hs) > top {
		hs = hs[:top]
	}
	if len(hs) > 0 {
		fmt.Fprintf(&b, "%12s %6s  %-28s %-8s %s\n", "count", "share", "routine", "id", "blocks: source lines")
	}
	for _, h := range hs {
		share := 0.0
		if execs > 0 {
			share = 100 * float64(h.p.Count) / float64(execs)
		}
		fmt.Fprintf(&b, "%12d %5.1f%%  %-28s %-8s %d: %s\n", h.p.Count, share, clip(report.Demangle(h.r.Name), 28), h.p.ID, len(h.p.Blocks), lineRanges(h.p.Lines))
	}
	_, err := w.Write(b.Bytes())
	return err
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "~"
}

// lineRanges compresses a path's lines: "f.c:12-14,17 g.h:3".
func lineRanges(lines []string) string {
	var out []string
	curFile := ""
	var nums []int
	flush := func() {
		if curFile == "" {
			return
		}
		var parts []string
		for i := 0; i < len(nums); {
			j := i
			for j+1 < len(nums) && (nums[j+1] == nums[j] || nums[j+1] == nums[j]+1) {
				j++
			}
			if nums[j] != nums[i] {
				parts = append(parts, fmt.Sprintf("%d-%d", nums[i], nums[j]))
			} else {
				parts = append(parts, strconv.Itoa(nums[i]))
			}
			i = j + 1
		}
		out = append(out, filepath.Base(curFile)+":"+strings.Join(parts, ","))
	}
	for _, l := range lines {
		i := strings.LastIndexByte(l, ':')
		f, n := l[:i], l[i+1:]
		v, _ := strconv.Atoi(n)
		if f != curFile {
			flush()
			curFile, nums = f, nil
		}
		nums = append(nums, v)
	}
	flush()
	return strings.Join(out, " ")
}

func pct(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
