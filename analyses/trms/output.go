package trms

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"emuprof/analyses/calls"
	"emuprof/analyses/report"
)

// JSONVersion is the version of the JSON output's layout.
const JSONVersion = 1

// JSONProfile is the JSON form of a profile: every thread's RMS and TRMS
// tuples with global routine ids. All lists are sorted (threads by tid,
// routines by id, tuples by id then input size), so output is
// deterministic.
type JSONProfile struct {
	Version      int             `json:"version"`
	Command      string          `json:"command"`
	App          string          `json:"app"`
	Program      string          `json:"program,omitempty"`
	Metric       string          `json:"metric"`
	Resolution   int             `json:"resolution"`
	CounterBits  int             `json:"counter_bits"`
	Renumberings int             `json:"renumberings"`
	Partial      string          `json:"partial,omitempty"`
	Routines     []RoutineRecord `json:"routines"`
	Threads      []JSONThread    `json:"threads"`
}

// JSONThread is one thread's profile. RMS and TRMS points have routine
// ids (RMS lists every distinct RMS value of each routine with its calls);
// in CCT mode, Contexts lists the calling context tree and
// RMSContexts / TRMSContexts have context ids.
type JSONThread struct {
	Tid          uint32    `json:"tid"`
	Cost         uint64    `json:"cost"`
	RMS          []Point   `json:"rms"`
	TRMS         []Point   `json:"trms"`
	Contexts     []Context `json:"contexts,omitempty"`
	RMSContexts  []Point   `json:"rms_contexts,omitempty"`
	TRMSContexts []Point   `json:"trms_contexts,omitempty"`
}

// JSON finishes profiling if needed and returns the JSON form.
func (p *Profiler) JSON() *JSONProfile {
	p.Finish()
	st := p.core.status()
	out := &JSONProfile{
		Version:      JSONVersion,
		Command:      p.cfg.Command,
		App:          p.cfg.App,
		Program:      p.cfg.Program,
		Metric:       p.cfg.metricName(),
		Resolution:   p.cfg.Resolution,
		CounterBits:  p.cfg.CounterBits,
		Renumberings: st.renumberings,
		Partial:      p.partialReason(),
		Routines:     []RoutineRecord{},
		Threads:      []JSONThread{},
	}
	rt := p.routines
	for i := range rt.Len() {
		info := rt.Get(calls.RoutineID(i))
		out.Routines = append(out.Routines, routineRecord(uint32(i), info.Name, info.Object))
	}
	for _, s := range p.col.sortedThreads() {
		jt := JSONThread{Tid: s.tid, Cost: s.cost, RMS: idPoints(s.rms), TRMS: idPoints(s.trms)}
		if s.cct != nil {
			for i := range s.cct.Len() {
				n := s.cct.Node(calls.NodeID(i))
				jt.Contexts = append(jt.Contexts, Context{ID: uint32(i), Routine: uint32(n.Routine), Parent: int64(n.Parent)})
			}
			jt.RMSContexts = idPoints(s.crms)
			jt.TRMSContexts = idPoints(s.ctrms)
		}
		out.Threads = append(out.Threads, jt)
	}
	return out
}

// WriteJSON writes the JSON form of the profile.
func (p *Profiler) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	if err := enc.Encode(p.JSON()); err != nil {
		return fmt.Errorf("trms: write JSON: %w", err)
	}
	return nil
}

// WriteDir writes every report (see Reports) and the JSON profile
// (<app>_trms.json) into dir, each atomically, and returns the paths.
func (p *Profiler) WriteDir(dir string) ([]string, error) {
	reports, err := p.Reports()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("trms: output directory: %w", err)
	}
	// Each file on its own: a full disk may refuse one and take the next.
	var paths []string
	var errs []error
	for _, r := range reports {
		path := filepath.Join(dir, p.ReportFileName(r))
		if err := WriteReportFile(path, r); err != nil {
			errs = append(errs, err)
			continue
		}
		paths = append(paths, path)
	}
	path := filepath.Join(dir, p.fileBase()+"_trms.json")
	if err := report.WriteFileAtomic(path, p.WriteJSON); err != nil {
		errs = append(errs, fmt.Errorf("trms: %w", err))
	} else {
		paths = append(paths, path)
	}
	return paths, errors.Join(errs...)
}

// WriteReportFile writes r to path atomically.
func WriteReportFile(path string, r *Report) error {
	err := report.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := r.WriteTo(w)
		return err
	})
	if err != nil {
		return fmt.Errorf("trms: %w", err)
	}
	return nil
}

// ReadReportFile parses the report at path.
func ReadReportFile(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trms: %w", err)
	}
	defer f.Close()
	r, err := ParseReport(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// MergeFiles merges the reports at paths (aprof's incremental mode) and
// writes the result to out atomically.
func MergeFiles(out string, paths ...string) error {
	var datas [][]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("trms: %w", err)
		}
		datas = append(datas, data)
	}
	return MergeData(out, paths, datas)
}

// MergeData merges the reports read from the files names, each read once
// (a FIFO cannot be read twice), and writes the result to out.
func MergeData(out string, names []string, datas [][]byte) error {
	var reports []*Report
	for i, p := range names {
		r, err := ParseReport(bytes.NewReader(datas[i]))
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if i > 0 {
			if err := Mergeable(reports[0], r); err != nil {
				return fmt.Errorf("%s: cannot merge with %s: %w", p, names[0], err)
			}
		}
		reports = append(reports, r)
	}
	m, err := Merge(reports...)
	if err != nil {
		return err
	}
	return WriteReportFile(out, m)
}
