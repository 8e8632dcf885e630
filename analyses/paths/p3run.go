package paths

import (
	"encoding/json"

	"emuprof/analyses/report"
	"fmt"
	"slices"
)

// P3Config asks a Profiler for P3's partitioned profile over K copies
// (K = 0: plain SBL). The copies are not separate emulations: since every
// copy of a deterministic run follows the same execution, each copy's
// measurement (its counts of the paths its labels identify and its probe
// executions) is computed exactly from the one emulation, as the paper
// computes its hit counts; the profile is the owner-based merge of those
// partial profiles.
type P3Config struct {
	K   int
	PBL bool // plan PBL (every procedure one Ball-Larus task) instead of P3
	// PlanOut: also write the plan (PlanFile) to this file.
	PlanOut string
	// Copies: K copies run as child emulations (CopiesFlag, copyrun.go).
	Copies int
	// Profile and AnyCallers: PlanOptions (--p3-cost profile,
	// --p3-callers any).
	Profile, AnyCallers bool
}

// options returns the plan options of c.
func (c P3Config) options() PlanOptions {
	return PlanOptions{PBL: c.PBL, Profile: c.Profile, AnyCallers: c.AnyCallers}
}

// CopyStat describes one copy of a P3 plan.
type CopyStat struct {
	Tasks, Probes int
	Load          int    // the plan's estimate: sum of its tasks' costs
	Hits          uint64 // probe executions
}

// P3Stats is the overhead table of a P3 profile.
type P3Stats struct {
	K                int
	PBL              bool
	SBL              bool // the plan fell back to SBL on copy 0 (Plan.SBL)
	Copies           []CopyStat
	SBLHits, PBLHits uint64 // SBL's hits; the slowest PBL copy's at the same k
	// SBLPlaced: with profile costs, SBL's hits with the copies' probe
	// placement (hotLabels, placeProbes) on one copy: the reduction that
	// comes from placement alone, not from the partition.
	SBLPlaced         uint64
	Profitable, Procs int
}

// runP3 plans the routines' profiling over p.P3.K copies, computes what
// each copy measures, merges, and returns the merged paths per routine.
func (p *Profiler) runP3(list []*routine, execs [][]pathExec, out *Profile) ([][]pathExec, error) {
	procs := make([]Proc, len(list))
	vexecs := make([][]PathCount, len(list))
	for i, rt := range list {
		procs[i] = Proc{Name: rt.info.Name, G: rt.dag.G, BL: rt.dag.Num, Callers: len(p.callSites[rt.info.Entry])}
		for _, x := range execs[i] {
			vexecs[i] = append(vexecs[i], PathCount{rt.dag.VertexPath(x.seq), x.count})
		}
		// The run's paths cost every candidate plan exactly, also when
		// tasks are costed statically: the planner falls back to SBL
		// by them (PlanP3With).
		procs[i].Execs = vexecs[i]
	}
	fp := fmt.Sprintf("completions %d truncations %d", p.Completions, p.Truncations)
	measure := func(pl *Plan) []CopyProfile {
		copies := pl.Simulate(vexecs, fp)
		// Truncated paths paid their probes too.
		for c := range copies {
			for i, rt := range list {
				if cp := pl.Copies[c][i]; cp.Mode != ModeNone {
					copies[c].Hits += truncHits(rt, cp.Probes)
				}
			}
		}
		return copies
	}
	pl := PlanP3With(procs, p.P3.K, p.P3.options())
	if p.P3.PlanOut != "" {
		data, err := json.MarshalIndent(p.planFile(out.Program, list, vexecs), "", " ")
		if err != nil {
			return nil, err
		}
		if err := report.WriteBytesAtomic(p.P3.PlanOut, append(data, '\n')); err != nil {
			return nil, fmt.Errorf("--plan-out: %w", err)
		}
	}
	copies := measure(pl)
	merged, err := pl.Merge(copies)
	if err != nil {
		return nil, err
	}
	st := &P3Stats{K: p.P3.K, PBL: p.P3.PBL, SBL: pl.SBL, Procs: len(procs)}
	st.SBLHits = measure(PlanP3(procs, 1, true))[0].Hits
	if p.P3.Profile {
		st.SBLPlaced = measure(PlanP3With(procs, 1, PlanOptions{PBL: true, Profile: true}))[0].Hits
	}
	for _, c := range measure(PlanP3With(procs, p.P3.K, PlanOptions{PBL: true, Profile: p.P3.Profile})) {
		st.PBLHits = max(st.PBLHits, c.Hits)
	}
	perProc := map[int]int{}
	for _, t := range pl.Tasks {
		perProc[t.Proc]++
	}
	for _, n := range perProc {
		if n > 1 {
			st.Profitable++
		}
	}
	out.Copies = p.P3.K
	out.ProbeHits = nil
	for c, cp := range copies {
		cs := CopyStat{Probes: pl.Probes(c), Load: pl.Load[c], Hits: cp.Hits}
		for _, o := range pl.Owner {
			if o == c {
				cs.Tasks++
			}
		}
		st.Copies = append(st.Copies, cs)
		out.ProbeHits = append(out.ProbeHits, cp.Hits)
	}
	out.P3 = st
	res := make([][]pathExec, len(list))
	for i := range list {
		for _, x := range merged[i] {
			res[i] = append(res[i], pathExec{BlockPath(x.Path), x.Count})
		}
		slices.SortFunc(res[i], func(a, b pathExec) int { return slices.Compare(a.seq, b.seq) })
	}
	return res, nil
}
