package paths

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	enchex "encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"emuprof/analyses/calls"
	"emuprof/trace"
)

// P3's k copies as separate emulations (issue 11 point 5; spec §5.2).
//
// 1. A planning run (`--p3 K --plan-out FILE`) profiles the program once and
//    writes P3's static analysis input: every executed routine's DAG (the
//    CFG the run recovered, spec §1.1 (b): "a discovery run ... P3's static
//    cost estimates are computed on the discovered CFG") and its caller
//    count. The plan is PlanP3 of those procedures, computed again by every
//    copy and by the merge, so the file holds no labels.
// 2. Copy i of k (`--copy i/k --plan FILE`) is one emulation that observes
//    only the routines where its labeling has a task: the emulator emits no
//    Block event for any other routine's code (trace.Encoding.BlockFilter),
//    and no call stage runs (activations are delimited by the stack
//    pointer, Options.SPFrames), so a copy's host time falls with the code
//    it profiles. At the end it counts its paths under its own labels (BL
//    or PSPP ids, Plan.Simulate for its copy) and its probe hits, and
//    writes a shard: those partial counts, the routine records of what it
//    observed, a fingerprint of its execution, and the plan's digest.
// 3. MergeShards joins the k shards with the owner-based merge (Plan.Merge,
//    spec §3.7): the result is byte-identical to the single-emulation
//    `--p3 K` profile, and so to SBL's except copies and probe_hits.
//
// A copy observes every block of a routine it profiles (the emulator has no
// cheaper edge probe), so its real cost is the code of its routines, not
// its probe count: docs/PERFORMANCE.md compares both.

// PlanFormat names the plan file format.
const PlanFormat = "emuprof-paths-plan 1"

// ShardFormat names the shard file format.
const ShardFormat = "emuprof-paths-shard 1"

// PlanFile is the input of P3's static analysis, from a planning run.
type PlanFile struct {
	Format  string `json:"format"`
	Program string `json:"program"`
	K       int    `json:"k"`
	PBL     bool   `json:"pbl,omitempty"`
	// Cost "profile" and AnyCallers: PlanOptions.
	Cost       string     `json:"cost,omitempty"`
	AnyCallers bool       `json:"any_callers,omitempty"`
	Procs      []PlanProc `json:"procs"`
}

// PlanProc is one procedure of a plan: its DAG (vertices 0 = ENTRY ...
// N-1 = EXIT, edges in out-edge order) and caller count.
type PlanProc struct {
	Name     string     `json:"name"`
	Object   string     `json:"object"`
	Entry    string     `json:"entry"`
	Callers  int        `json:"callers"`
	Vertices int        `json:"vertices"`
	Edges    [][2]int32 `json:"edges"`
	// Execs: the planning run's path executions (vertex paths): costs
	// with cost "profile", and the SBL fallback (PlanP3With).
	Execs []PathCount `json:"execs,omitempty"`
	// Tails: the ends of the blocks the planning run gave an EXIT edge
	// because they called a function that never returns which the
	// disassembly could not name (an indirect call, a PLT slot it could
	// not resolve), in order of discovery. A copy takes them from here:
	// seeing only its own routines, it cannot always tell which frame
	// made such a call (see Profiler.noReturnCall).
	Tails []string `json:"tails,omitempty"`
}

// CopyRun makes a Profiler one copy of a P3 plan.
type CopyRun struct {
	I       int
	File    *PlanFile
	Digest  string // of the plan file's bytes
	plan    *Plan
	index   map[rkey]int
	fp      uint64  // FNV-1a of the execution's syscall and thread events
	known   []uint8 // per block id: 1 profiled, 2 not, 0 not yet asked
	started bool
	tails   [][]uint64 // per plan routine: PlanProc.Tails
}

// plannedTails returns the planning run's tails of the routine entered at
// entry in object, and whether the plan has the routine.
func (cr *CopyRun) plannedTails(entry uint64, object string) ([]uint64, bool) {
	pi, ok := cr.index[rkey{entry, object}]
	if !ok {
		return nil, false
	}
	return cr.tails[pi], true
}

// ReadPlan reads a plan file and checks it against k (0: any).
func ReadPlan(path string, k int) (*PlanFile, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	var pf PlanFile
	if err := json.Unmarshal(data, &pf); err != nil || pf.Format != PlanFormat {
		return nil, "", fmt.Errorf("%s: not an emuprof paths plan (write one with --p3 K --plan-out FILE)", path)
	}
	if k > 0 && pf.K != k {
		return nil, "", fmt.Errorf("%s: a plan for %d copies, not %d", path, pf.K, k)
	}
	sum := sha256.Sum256(data)
	return &pf, enchex.EncodeToString(sum[:8]), nil
}

// Plan computes P3's plan from the file (the same in every copy and in the
// merge).
func (pf *PlanFile) Plan() (*Plan, error) {
	procs := make([]Proc, len(pf.Procs))
	for i, pp := range pf.Procs {
		es := make([]Edge, len(pp.Edges))
		for j, e := range pp.Edges {
			es[j] = Edge{e[0], e[1]}
		}
		g, err := NewGraph(pp.Vertices, es)
		if err != nil {
			return nil, fmt.Errorf("plan: %s: %w", pp.Name, err)
		}
		procs[i] = Proc{Name: pp.Name, G: g, BL: BallLarus(g), Callers: pp.Callers, Execs: pp.Execs}
	}
	return PlanP3With(procs, pf.K, PlanOptions{PBL: pf.PBL, Profile: pf.Cost == "profile", AnyCallers: pf.AnyCallers}), nil
}

// NewCopyRun prepares copy i of the plan.
func NewCopyRun(i int, pf *PlanFile, digest string) (*CopyRun, error) {
	if i < 0 || i >= pf.K {
		return nil, fmt.Errorf("copy %d of a plan for %d copies", i, pf.K)
	}
	pl, err := pf.Plan()
	if err != nil {
		return nil, err
	}
	cr := &CopyRun{I: i, File: pf, Digest: digest, plan: pl, index: map[rkey]int{}, tails: make([][]uint64, len(pf.Procs))}
	for pi, pp := range pf.Procs {
		e, err := strconv.ParseUint(strings.TrimPrefix(pp.Entry, "0x"), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("plan: %s: entry %q", pp.Name, pp.Entry)
		}
		cr.index[rkey{e, pp.Object}] = pi
		for _, t := range pp.Tails {
			a, err := strconv.ParseUint(strings.TrimPrefix(t, "0x"), 16, 64)
			if err != nil {
				return nil, fmt.Errorf("plan: %s: tail %q", pp.Name, t)
			}
			cr.tails[pi] = append(cr.tails[pi], a)
		}
	}
	cr.fp = fnvOffset
	return cr, nil
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// Wants is the copy's block filter: the blocks of the routines where its
// labeling has a task, and, on copy 0, of routines the plan does not know.
func (cr *CopyRun) Wants(bi *trace.BlockInfo) bool {
	if bi.Routine.Kind == trace.LazyBindingStub || isDynamicLinker(bi.Routine.Object) {
		// PLT0 and the dynamic linker: spFrames hides the lazy-binding
		// resolver and all it calls, as the call stage does.
		return true
	}
	if bi.Addr == bi.Routine.Entry && NoReturn(bi.Routine.Name) {
		return true // its caller's path ends at the call (spFrames)
	}
	return cr.profiles(bi)
}

// isDynamicLinker reports whether object is the dynamic linker (glibc's
// ld-linux-*.so.*, musl's ld-musl-*.so.*), home of the lazy-binding
// resolver.
func isDynamicLinker(object string) bool {
	return strings.HasPrefix(filepath.Base(object), "ld-")
}

// profilesBlock is profiles, remembered per block id (no string hashing
// per event).
func (cr *CopyRun) profilesBlock(id uint32, bi *trace.BlockInfo) bool {
	if int(id) >= len(cr.known) {
		cr.known = append(cr.known, make([]uint8, int(id)+1-len(cr.known)+len(cr.known)/2)...)
	}
	switch cr.known[id] {
	case 1:
		return true
	case 2:
		return false
	}
	ok := cr.profiles(bi)
	cr.known[id] = 2
	if ok {
		cr.known[id] = 1
	}
	return ok
}

// profiles reports whether the copy profiles the routine of block bi:
// where its labeling has a task, and always the routines that pop their
// own return address (calls.PopsReturn: vfork, musl's sigsetjmp). Those
// are observed by every copy, as by the planning run, without probes (no
// task, so no counts or hits): where they return to their caller's code
// by a path the stack pointer cannot tell (musl's siglongjmp lands in
// sigsetjmp's code, which then runs in the frame of its caller), the
// planning run ends the caller's path there, and so must every copy that
// profiles the caller.
func (cr *CopyRun) profiles(bi *trace.BlockInfo) bool {
	if bi.Routine.Name == "" || bi.Routine.Kind.Transparent() {
		return false
	}
	if calls.PopsReturn(bi.Routine.Name) {
		return true
	}
	pi, ok := cr.index[rkey{bi.Routine.Entry, bi.Routine.Object}]
	if !ok {
		return cr.I == 0
	}
	return cr.plan.Copies[cr.I][pi].Mode != ModeNone
}

// observe folds an event the emulator itself produces (syscall results,
// thread starts and exits, with their virtual times) into the copy's
// fingerprint (spec §5.2 point 4): copies that followed one execution
// agree on it.
func (cr *CopyRun) observe(ev *trace.Event) {
	h := cr.fp
	for _, v := range [...]uint64{uint64(ev.Kind), uint64(ev.Tid), uint64(ev.Time), ev.Addr, ev.Aux, uint64(ev.Size)} {
		for i := 0; i < 64; i += 8 {
			h ^= (v >> i) & 0xff
			h *= fnvPrime
		}
	}
	cr.fp = h
}

// Shard is what one copy writes.
type Shard struct {
	Format      string        `json:"format"`
	Program     string        `json:"program"`
	K           int           `json:"k"`
	Copy        int           `json:"copy"`
	Plan        string        `json:"plan"`
	Fingerprint string        `json:"fingerprint"`
	Partial     string        `json:"partial,omitempty"`
	Hits        uint64        `json:"probe_hits"`
	Routines    []ShardRecord `json:"routines"`
}

// ShardRecord is one routine a copy observed: its profile record (every
// path with its Ball-Larus id, as SBL writes it) and the copy's partial
// profile of it under the copy's labels.
type ShardRecord struct {
	Proc   int         `json:"proc"` // index in the plan; -1: not in the plan
	Record Routine     `json:"record"`
	Counts [][2]uint64 `json:"counts,omitempty"` // (label id, count)
	Big    []PathCount `json:"big,omitempty"`    // overflowing ids: vertex paths
}

// ShardName is the file name of copy i of k's shard.
func ShardName(program string, i, k int) string {
	return strings.TrimSuffix(FileName(program), ".json") + fmt.Sprintf(".copy%dof%d.json", i, k)
}

// shard builds copy cr's shard from the profiler's observations.
func (p *Profiler) shard(program string) (*Shard, error) {
	cr := p.Copy
	sh := &Shard{Format: ShardFormat, Program: program, K: cr.File.K, Copy: cr.I, Plan: cr.Digest,
		Fingerprint: strconv.FormatUint(cr.fp, 16), Partial: p.partial, Routines: []ShardRecord{}}
	list := slices.Clone(p.list)
	slices.SortFunc(list, func(a, b *routine) int {
		return cmp.Or(strings.Compare(a.info.Object, b.info.Object), cmp.Compare(a.info.Entry, b.info.Entry))
	})
	pl := cr.plan
	execs := make([][]PathCount, len(pl.Procs))
	for _, rt := range list {
		ex, lost := rt.executed()
		rec := ShardRecord{Proc: -1, Record: p.routineProfile(rt, ex, lost)}
		pi, ok := cr.index[rkey{rt.info.Entry, rt.info.Object}]
		if !ok {
			// Not planned (copy 0 profiles it with Ball-Larus): its hits.
			for _, x := range ex {
				sh.Hits += uint64(pathProbes(rt.dag.G, rt.dag.Num.Val, rt.dag.VertexPath(x.seq))) * x.count
			}
			sh.Hits += truncHits(rt, rt.dag.Num.Val)
			sh.Routines = append(sh.Routines, rec)
			continue
		}
		if !sameGraph(rt.dag.G, pl.Procs[pi].G) {
			g := pl.Procs[pi].G
			return nil, fmt.Errorf("copy %d: %s: the CFG this run recovered (%d vertices, %d edges; added leaders %v, transitions %v) differs from the plan's (%d, %d): this copy did not see the run as the planning run did (a plan for another input or program, or code a copy cannot frame alone, such as vfork's return in the parent)",
				cr.I, rt.info.Name, rt.dag.G.N, len(rt.dag.G.Edges), rec.Record.AddedLeaders, rec.Record.AddedTransitions, g.N, len(g.Edges))
		}
		rec.Proc = pi
		for _, x := range ex {
			execs[pi] = append(execs[pi], PathCount{rt.dag.VertexPath(x.seq), x.count})
		}
		cp := pl.Copies[cr.I][pi]
		if cp.Mode != ModeNone {
			sh.Hits += truncHits(rt, cp.Probes)
		}
		sh.Routines = append(sh.Routines, rec)
	}
	mine := pl.SimulateCopy(cr.I, execs, "")
	sh.Hits += mine.Hits
	for i := range sh.Routines {
		r := &sh.Routines[i]
		if r.Proc < 0 {
			continue
		}
		for id, n := range mine.Counts[r.Proc] {
			r.Counts = append(r.Counts, [2]uint64{id, n})
		}
		slices.SortFunc(r.Counts, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
		for _, x := range mine.BigCounts[r.Proc] {
			r.Big = append(r.Big, x)
		}
		slices.SortFunc(r.Big, func(a, b PathCount) int { return slices.Compare(a.Path, b.Path) })
	}
	return sh, nil
}

// truncHits is the probe executions of rt's truncated paths under labels
// (they paid their probes up to where they were cut).
func truncHits(rt *routine, labels []uint64) uint64 {
	var hits uint64
	for _, k := range rt.truncKey {
		tr := rt.trunc[k]
		seq := []int32{Entry}
		for _, a := range tr.blocks {
			b, ok := rt.cfg.Leader(a)
			if !ok {
				seq = nil
				break
			}
			seq = append(seq, BlockVertex(b))
		}
		if seq != nil {
			hits += uint64(pathProbes(rt.dag.G, labels, seq)) * tr.count
		}
	}
	return hits
}

func sameGraph(a, b *Graph) bool {
	return a.N == b.N && slices.Equal(a.Edges, b.Edges)
}

// MergeShards joins the k shards of one plan into the profile (spec §3.7):
// each path's count comes from the copy that owns it; the copies must
// agree on the plan, on the execution (fingerprint) and on every path more
// than one of them counted.
func MergeShards(pf *PlanFile, digest string, shards []*Shard) (*Profile, error) {
	k := pf.K
	if len(shards) != k {
		return nil, fmt.Errorf("merge: %d shards for a plan of %d copies", len(shards), k)
	}
	byCopy := make([]*Shard, k)
	for _, sh := range shards {
		switch {
		case sh.Format != ShardFormat:
			return nil, fmt.Errorf("merge: not a paths shard")
		case sh.K != k || sh.Copy < 0 || sh.Copy >= k:
			return nil, fmt.Errorf("merge: shard of copy %d/%d, plan for %d copies", sh.Copy, sh.K, k)
		case byCopy[sh.Copy] != nil:
			return nil, fmt.Errorf("merge: two shards of copy %d", sh.Copy)
		case sh.Plan != digest:
			return nil, fmt.Errorf("merge: copy %d ran another plan (%s, not %s)", sh.Copy, sh.Plan, digest)
		}
		byCopy[sh.Copy] = sh
	}
	pl, err := pf.Plan()
	if err != nil {
		return nil, err
	}
	copies := make([]CopyProfile, k)
	out := &Profile{Program: byCopy[0].Program, Copies: k, Routines: []Routine{}}
	recs := map[string]*Routine{}
	var keys []string
	procOf := map[string]int{}
	for c, sh := range byCopy {
		if sh.Program != out.Program {
			return nil, fmt.Errorf("merge: copy %d profiled %s, copy 0 %s", c, sh.Program, out.Program)
		}
		if sh.Partial != "" && out.Partial == "" {
			out.Partial = sh.Partial
		}
		out.ProbeHits = append(out.ProbeHits, sh.Hits)
		copies[c] = CopyProfile{Counts: make([]map[uint64]uint64, len(pl.Procs)), BigCounts: make([]map[string]PathCount, len(pl.Procs)), Fingerprint: sh.Fingerprint}
		for pi := range pl.Procs {
			copies[c].Counts[pi] = map[uint64]uint64{}
			copies[c].BigCounts[pi] = map[string]PathCount{}
		}
		for i := range sh.Routines {
			r := &sh.Routines[i]
			key := r.Record.Object + "\x00" + r.Record.Entry
			if prev, ok := recs[key]; ok {
				if !sameRecord(prev, &r.Record) {
					return nil, fmt.Errorf("merge: %s: copies %d and an earlier one recorded different paths: the copies diverged", r.Record.Name, c)
				}
			} else {
				recs[key] = &r.Record
				keys = append(keys, key)
				procOf[key] = r.Proc
			}
			if r.Proc < 0 {
				continue
			}
			if r.Proc >= len(pl.Procs) {
				return nil, fmt.Errorf("merge: copy %d: procedure %d outside the plan", c, r.Proc)
			}
			for _, x := range r.Counts {
				copies[c].Counts[r.Proc][x[0]] = x[1]
			}
			for _, x := range r.Big {
				copies[c].BigCounts[r.Proc][fmt.Sprint(x.Path)] = x
			}
		}
	}
	merged, err := pl.Merge(copies)
	if err != nil {
		return nil, err
	}
	for _, key := range keys {
		r := *recs[key]
		if pi := procOf[key]; pi >= 0 {
			counts := map[string]uint64{}
			for _, x := range merged[pi] {
				id, ok := pl.Procs[pi].BL.EncodeBig(x.Path)
				if !ok {
					return nil, fmt.Errorf("merge: %s: a merged path is not a path of the plan's DAG", r.Name)
				}
				counts[id.String()] = x.Count
			}
			r.Paths = slices.Clone(r.Paths)
			for j := range r.Paths {
				n, ok := counts[string(r.Paths[j].ID)]
				if !ok || n != r.Paths[j].Count {
					return nil, fmt.Errorf("merge: %s: path %s: owner's count %d, observed %d: the copies diverged", r.Name, r.Paths[j].ID, n, r.Paths[j].Count)
				}
				delete(counts, string(r.Paths[j].ID))
			}
			if len(counts) > 0 {
				return nil, fmt.Errorf("merge: %s: %d merged paths no copy recorded", r.Name, len(counts))
			}
		}
		out.Routines = append(out.Routines, r)
	}
	slices.SortFunc(out.Routines, func(a, b Routine) int {
		return cmp.Or(strings.Compare(a.Object, b.Object), cmp.Compare(hexVal(a.Entry), hexVal(b.Entry)))
	})
	return out, nil
}

func hexVal(s string) uint64 {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	return v
}

func sameRecord(a, b *Routine) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// ReadShard reads a shard file.
func ReadShard(path string) (*Shard, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseShard(path, data)
}

// ParseShard parses the shard read from the file name.
func ParseShard(name string, data []byte) (*Shard, error) {
	var sh Shard
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&sh); err != nil || sh.Format != ShardFormat {
		return nil, fmt.Errorf("%s: not an emuprof paths shard", name)
	}
	return &sh, nil
}

// IsShard reports whether data, a file's contents, looks like a paths
// shard.
func IsShard(data []byte) bool {
	return bytes.Contains(data[:min(len(data), 64)], []byte(ShardFormat))
}

// planFile builds the plan file of the routines in list (sorted as the
// profile sorts them) for k copies.
func (p *Profiler) planFile(program string, list []*routine, execs [][]PathCount) *PlanFile {
	pf := &PlanFile{Format: PlanFormat, Program: program, K: p.P3.K, PBL: p.P3.PBL, AnyCallers: p.P3.AnyCallers, Procs: []PlanProc{}}
	if p.P3.Profile {
		pf.Cost = "profile"
	}
	for i, rt := range list {
		g := rt.dag.G
		pp := PlanProc{Name: rt.info.Name, Object: rt.info.Object, Entry: hex(rt.info.Entry),
			Callers: len(p.callSites[rt.info.Entry]), Vertices: g.N, Edges: make([][2]int32, len(g.Edges))}
		for j, e := range g.Edges {
			pp.Edges[j] = [2]int32{e.From, e.To}
		}
		pp.Execs = execs[i] // also with static costs: the SBL fallback needs them
		for _, t := range rt.tails {
			pp.Tails = append(pp.Tails, hex(t))
		}
		pf.Procs = append(pf.Procs, pp)
	}
	return pf
}
