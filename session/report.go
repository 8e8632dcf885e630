package session

// The run record (<app>_run.json) and report.html, written after the
// analyses' files; emuprof report DIR builds the same page from a
// directory.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"emuprof/analyses/platform"
	"emuprof/analyses/report"
	"emuprof/guest"
)

// runFileSuffix ends the name of the file that records a profiling run
// (<app>_run.json), from which report.html's run section is drawn.
const (
	runFileSuffix  = "_run.json"
	ReportFileName = "report.html" // the run's HTML report, in --out
)

// runRecord is <app>_run.json: what the report says about the run. It
// holds nothing host-dependent (no host time, no output directory), so
// that the same run writes the same bytes.
type runRecord struct {
	Emuprof    string   `json:"emuprof"`
	Program    string   `json:"program"`
	Args       []string `json:"args"`
	Flags      []string `json:"flags"`
	Analyses   []string `json:"analyses"`
	ExitStatus int      `json:"exit_status"`
	Partial    string   `json:"partial,omitempty"`
	// NotReproducible says what, outside the run, the guest saw (--net
	// host): another run may differ.
	NotReproducible string `json:"not_reproducible,omitempty"`
	VirtualNs       int64  `json:"virtual_ns"`
	Instructions    uint64 `json:"instructions"`
	Threads         int    `json:"threads"`
	CPUs            int    `json:"cpus"`
	// TimeModel is the --time-model in effect (the flag's or the
	// command's default): virtual_ns and every duration are its.
	TimeModel string `json:"time_model,omitempty"`
}

// flagsNotRecorded change where or how the outputs are computed, not what
// they are (the bytes are the same either way: see TestProfileCommand);
// --analyses is recorded as the list of analyses.
var flagsNotRecorded = map[string]bool{"analyses": true, "out": true, "analysis-thread": true, "sync-analyses": true, "cpuprofile": true,
	// --follow=none profiles the first process as emuprof did before
	// following children (the same files); following shows as the
	// Processes section.
	"follow": true,
	// The status line's timing changes nothing the profiles say.
	"status-delay": true, "status-every": true, "list-files": true}

// RunInfo is what the run record says of a run beside its result.
type RunInfo struct {
	Version string         // emuprof's
	Flags   *pflag.FlagSet // the command's (nil: none)
	CPUs    int            // --cpus
	Args    []string       // the program and its arguments
	// TimeModel is the --time-model in effect.
	TimeModel string
}

// WriteReport writes <app>_run.json and report.html into out after the
// analyses wrote their files (written), and returns the paths.
func WriteReport(out string, info RunInfo, plugins []platform.Plugin, insts []platform.Instance, written []string, res *guest.Result) ([]string, error) {
	rec := newRunRecord(info, plugins, res)
	app := "prog"
	if rec.Program != "" {
		app = filepath.Base(rec.Program)
	}
	runPath := filepath.Join(out, app+runFileSuffix)
	data, err := report.MarshalIndent(&rec)
	if err != nil {
		return nil, err
	}
	if err := report.WriteBytesAtomic(runPath, data); err != nil {
		return nil, err
	}
	files := append(slices.Clone(written), runPath)
	live := map[string]platform.Instance{}
	for i, p := range plugins {
		live[p.Name] = insts[i]
	}
	page := BuildPage(plugins, files, live, map[string][]byte{runPath: data})
	htmlPath := filepath.Join(out, ReportFileName)
	if err := report.WriteFileAtomic(htmlPath, func(w io.Writer) error {
		_, err := page.WriteTo(w)
		return err
	}); err != nil {
		return []string{runPath}, err
	}
	return []string{runPath, htmlPath}, nil
}

// newRunRecord is the run record of the run that ended with res.
func newRunRecord(info RunInfo, plugins []platform.Plugin, res *guest.Result) runRecord {
	args := info.Args
	rec := runRecord{Emuprof: info.Version, Args: args, Flags: []string{}, ExitStatus: res.ExitStatus,
		VirtualNs: res.Makespan, Instructions: res.Insns, Threads: len(res.Threads), CPUs: info.CPUs, TimeModel: info.TimeModel}
	if len(args) > 0 {
		rec.Program = args[0]
	}
	if res.Partial {
		rec.Partial = res.Reason
		if rec.Partial == "" {
			rec.Partial = "the run did not finish"
		}
	}
	if info.Flags != nil {
		rec.Flags = givenFlags(rec.Flags, info.Flags, flagsNotRecorded)
		if f := info.Flags.Lookup("net"); f != nil && f.Value.String() == "host" {
			rec.NotReproducible = "--net host: the guest talked to the host's network"
		}
	}
	for _, p := range plugins {
		rec.Analyses = append(rec.Analyses, p.Name)
	}
	return rec
}

// BuildPage assembles report.html from files: each plugin's section from
// its Render (or, during a run, its instance's RenderLive if it is a
// platform.LiveRenderer, or
// its Section when it has no Render), and the run section from the
// <app>_run.json files and what the sections found.
//
// contents holds files whose bytes are known (the run record WriteReport
// just wrote), not read back.
func BuildPage(plugins []platform.Plugin, files []string, live map[string]platform.Instance, contents map[string][]byte) *report.Page {
	page := &report.Page{Title: "emuprof report"}
	var partial partials
	facts := pluginSections(page, plugins, files, live, &partial)
	if sec := ProcessSection(files); sec != nil { // follow.go
		page.Sections = append(page.Sections, *sec)
	}
	runs := readRunRecords(page, files, contents)
	for _, r := range runs {
		runFacts(page, r, len(runs))
		partial.add(r.Partial)
	}
	if len(runs) == 0 {
		seen := map[string]bool{}
		for _, f := range facts {
			if !seen[f.Key] {
				seen[f.Key] = true
				page.Run = append(page.Run, f)
			}
		}
		page.Notes = append(page.Notes, "No "+"<app>"+runFileSuffix+" here (files written by merge, or by a single analysis of an older emuprof): the run is described from the analyses' files.")
	}
	page.Warnings = partial
	missingSections(page, runs)
	if len(page.Sections) == 0 {
		page.Notes = append(page.Notes, "No analysis files found.")
	}
	return page
}

// partials are the reasons the page's results are partial, each once.
type partials []string

func (ps *partials) add(p string) {
	if p != "" && !slices.Contains(*ps, p) {
		*ps = append(*ps, p)
	}
}

// pluginSections adds each plugin's section to page and returns the facts
// the sections found.
func pluginSections(page *report.Page, plugins []platform.Plugin, files []string, live map[string]platform.Instance, partial *partials) []report.Fact {
	var facts []report.Fact
	for _, p := range plugins {
		sec := pluginSection(p, files, live[p.Name])
		if sec == nil {
			continue
		}
		if sec.ID == "" {
			sec.ID = p.Name
		}
		for _, pr := range sec.Partial {
			partial.add(pr)
		}
		facts = append(facts, sec.Facts...)
		page.Sections = append(page.Sections, *sec)
	}
	return facts
}

// pluginSection is p's section (nil: none), or one that says why it could
// not be drawn.
func pluginSection(p platform.Plugin, files []string, inst platform.Instance) *report.Section {
	var sec *report.Section
	var err error
	lr, isLive := inst.(platform.LiveRenderer)
	switch {
	case p.Render != nil && isLive:
		sec, err = lr.RenderLive(files)
	case p.Render != nil:
		sec, err = p.Render(files)
	case inst != nil:
		var title, body string
		if title, body, err = inst.Section(); err == nil {
			sec = &report.Section{Title: title, HTML: body}
		}
	}
	if err != nil {
		sec = &report.Section{Title: p.Name, HTML: "<p class=\"partial\">This section could not be drawn: " + report.Esc(err.Error()) + "</p>\n"}
	}
	return sec
}

// readRunRecords reads the <app>_run.json files among files (contents
// holds those whose bytes are known); one that cannot be read is a note.
func readRunRecords(page *report.Page, files []string, contents map[string][]byte) []runRecord {
	var runs []runRecord
	for _, path := range files {
		if !strings.HasSuffix(path, runFileSuffix) {
			continue
		}
		data, ok := contents[path]
		if !ok {
			var err error
			if data, err = os.ReadFile(path); err != nil {
				page.Notes = append(page.Notes, err.Error())
				continue
			}
		}
		var r runRecord
		if err := json.Unmarshal(data, &r); err != nil {
			page.Notes = append(page.Notes, fmt.Sprintf("%s: %v", filepath.Base(path), err))
			continue
		}
		runs = append(runs, r)
	}
	return runs
}

// runFacts adds run r, one of n, to the page's run section.
func runFacts(page *report.Page, r runRecord, n int) {
	if n > 1 {
		page.Run = append(page.Run, report.Fact{Key: "run of", Value: filepath.Base(r.Program)})
	}
	page.Run = append(page.Run,
		report.Fact{Key: "command", Value: ShellJoin(r.Args)},
		report.Fact{Key: "flags", Value: strings.Join(r.Flags, " ")},
		report.Fact{Key: "analyses", Value: strings.Join(r.Analyses, ", ")},
		report.Fact{Key: "exit status", Value: fmt.Sprint(r.ExitStatus)},
		report.Fact{Key: "virtual duration", Value: fmt.Sprintf("%d ns (%s)", r.VirtualNs, humanNs(r.VirtualNs))},
		report.Fact{Key: "threads", Value: fmt.Sprint(r.Threads)},
		report.Fact{Key: "instructions", Value: fmt.Sprint(r.Instructions)},
		report.Fact{Key: "virtual CPUs", Value: fmt.Sprint(r.CPUs)},
		report.Fact{Key: "emuprof version", Value: r.Emuprof},
	)
	if r.TimeModel != "" { // records before the field: insns
		page.Run = append(page.Run, report.Fact{Key: "time model", Value: r.TimeModel})
	}
	if r.NotReproducible != "" {
		page.Run = append(page.Run, report.Fact{Key: "not reproducible", Value: r.NotReproducible})
	}
	if n == 1 && r.Program != "" {
		page.Title = "emuprof report: " + filepath.Base(r.Program)
	}
}

// missingSections notes each analysis a run ran whose section did not
// come: its profile is empty or missing, which the page says rather than
// leave it out.
func missingSections(page *report.Page, runs []runRecord) {
	for _, r := range runs {
		for _, name := range r.Analyses {
			if !slices.ContainsFunc(page.Sections, func(s report.Section) bool { return s.ID == name }) {
				note := fmt.Sprintf("No %s section: the %s profile of %s is empty or missing here.", name, name, filepath.Base(r.Program))
				if !slices.Contains(page.Notes, note) {
					page.Notes = append(page.Notes, note)
				}
			}
		}
	}
}

func humanNs(ns int64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.3f s", float64(ns)/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.3f ms", float64(ns)/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3f µs", float64(ns)/1e3)
	}
	return fmt.Sprintf("%d ns", ns)
}
