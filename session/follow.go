package session

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"emuprof/analyses/platform"
	"emuprof/analyses/report"
	"emuprof/cpu"
	"emuprof/emu"
	"emuprof/guest"
	"emuprof/loader"
	"emuprof/trace"
)

// Profiles of a process tree (issue 9, item 3). By default (--follow
// children) every process image gets its own analyses: a child from its
// fork, with its own engine, symbol table and block table, and a process
// from each exec, for the program it exec'd. Each image's results are
// written when it ends (a process that execs has its profile before the
// exec written then) and are named <program>_<pid>_...; the first process's
// first image keeps the names a single-process run has (<program>_...), so
// a program that starts no other gives the same files either way.
// <app>_processes.json lists the images, and report.html shows the tree.

// processesFileSuffix ends the name of the file listing a run's process
// images.
const processesFileSuffix = "_processes.json"

// Follower gives followed process images their analyses (guest.Follower).
type Follower struct {
	plugins   []platform.Plugin
	factories map[string]platform.Factory // by plugin name
	out       string                      // the directory of the files
	opts      *Options                    // the run's: its status line
	async     bool
	sched     platform.SchedConfig
	// newEngine starts an engine with the analyses' hooks naming blocks
	// with syms.
	newEngine func(syms *loader.SymbolTable) (*emu.Engine, error)
	images    []*followedImage // in the order they started
	cur       map[int]*followedImage
	stems     map[string]bool // file name stems in use
	written   []string        // files written by images that ended
	warnings  []string
}

// NewFollower returns the follower of a run of plugins, whose factories
// are by name, writing into out; async: the analyses run on a thread of
// their own.
func NewFollower(plugins []platform.Plugin, factories map[string]platform.Factory, out string, opts *Options, async bool, sched platform.SchedConfig) *Follower {
	return &Follower{plugins: plugins, factories: factories, out: out, opts: opts, async: async, sched: sched}
}

// followedImage is one process image and its analyses.
type followedImage struct {
	guest.Image
	app     string
	engine  cpu.CPU
	insts   []platform.Instance
	pipe    *platform.Pipeline
	syms    trace.Symbols
	ended   bool
	partial string
	files   []string
}

// ProcessRecord is one image in <app>_processes.json.
type ProcessRecord struct {
	Pid     int      `json:"pid"`
	Parent  int      `json:"parent"`
	Exec    int      `json:"exec"`
	Program string   `json:"program"`
	Name    string   `json:"name"` // as exec'd (a symlink's own name)
	Args    []string `json:"args"`
	Partial string   `json:"partial,omitempty"`
	Files   []string `json:"files"`
}

// name is the image's program name as exec'd.
func (im *followedImage) name() string {
	if im.Name != "" {
		return im.Name
	}
	return filepath.Base(im.Program)
}

// name is the program's name as exec'd.
func (r *ProcessRecord) name() string {
	if r.Name != "" {
		return r.Name
	}
	return filepath.Base(r.Program)
}

// start registers the first process's first image, whose analyses the
// command built before the run.
func (fw *Follower) start(img guest.Image, engine cpu.CPU, syms trace.Symbols, insts []platform.Instance, pipe *platform.Pipeline) {
	fw.cur = map[int]*followedImage{}
	fw.stems = map[string]bool{}
	app := filepath.Base(img.Program)
	fw.stems[app] = true
	im := &followedImage{Image: img, app: app, engine: engine, insts: insts, pipe: pipe, syms: syms}
	fw.images = append(fw.images, im)
	fw.cur[img.Pid] = im
}

// stem is the file name stem of an image: <program>_<pid> (the program's
// name as exec'd), with .<n> when the process ran the same program before.
func (fw *Follower) stem(img guest.Image) string {
	name := img.Name
	if name == "" {
		name = filepath.Base(img.Program)
	}
	base := fmt.Sprintf("%s_%d", name, img.Pid)
	s := base
	for n := 2; fw.stems[s]; n++ {
		s = fmt.Sprintf("%s.%d", base, n)
	}
	fw.stems[s] = true
	return s
}

// newImage builds the analyses of img over engine.
func (fw *Follower) newImage(img guest.Image, engine *emu.Engine, syms trace.Symbols) ([]trace.Analysis, error) {
	env := platform.NewEnv(syms, img.Program, img.Args)
	env.Pid = img.Pid
	env.Sched = fw.sched
	env.App = fw.stem(img)
	var insts []platform.Instance
	for _, p := range fw.plugins {
		inst, err := fw.factories[p.Name](env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
		insts = append(insts, inst)
	}
	pipe := platform.NewPipeline(env, engine.Blocks(), insts, fw.async)
	im := &followedImage{Image: img, app: env.App, engine: engine, insts: insts, pipe: pipe, syms: syms}
	fw.images = append(fw.images, im)
	fw.cur[img.Pid] = im
	return []trace.Analysis{pipe}, nil
}

// Fork implements guest.Follower.
func (fw *Follower) Fork(img guest.Image, syms *loader.SymbolTable) (cpu.CPU, []trace.Analysis, error) {
	e, err := fw.newEngine(syms)
	if err != nil {
		return nil, nil, err
	}
	as, err := fw.newImage(img, e, syms)
	if err != nil {
		e.Close()
		return nil, nil, err
	}
	return fw.opts.Status.CPU(e), as, nil // its instructions on the status line too
}

// Exec implements guest.Follower.
func (fw *Follower) Exec(img guest.Image) ([]trace.Analysis, error) {
	prev := fw.cur[img.Pid]
	if prev == nil {
		return nil, fmt.Errorf("process %d has no engine with the analyses' hooks", img.Pid)
	}
	e, ok := prev.engine.(*emu.Engine)
	if !ok {
		return nil, fmt.Errorf("process %d: not an emulator engine", img.Pid)
	}
	// The process's symbol table: the exec adds the new program's
	// objects to it.
	return fw.newImage(img, e, prev.syms)
}

// Ended implements guest.Follower: the image's analyses have finished;
// its files are written now.
func (fw *Follower) Ended(img guest.Image, partial string) {
	im := fw.cur[img.Pid]
	if im == nil || im.ended {
		return
	}
	fw.write(im, partial)
}

// write writes the files of an image that ended.
func (fw *Follower) write(im *followedImage, partial string) {
	im.ended, im.partial = true, partial
	if err := im.pipe.Err(); err != nil {
		fw.warnings = append(fw.warnings, fmt.Sprintf("process %d (%s): %v", im.Pid, im.app, err))
		return
	}
	if err := os.MkdirAll(fw.out, 0o755); err != nil {
		fw.warnings = append(fw.warnings, fmt.Sprintf("--out %s: %v", fw.out, HostErr(err)))
		return
	}
	for i, inst := range im.insts {
		if partial != "" {
			inst.MarkPartial(partial)
		}
		ps, err := inst.Write(fw.out)
		im.files = append(im.files, ps...)
		fw.written = append(fw.written, ps...)
		if err != nil {
			fw.warnings = append(fw.warnings, fmt.Sprintf("process %d (%s): writing the %s profile: %v", im.Pid, im.app, fw.plugins[i].Name, err))
		}
	}
}

// sync is the run's TimeControl when following: every live image's
// stream is delivered and its analyses' delays collected, in the order the
// images started.
func (fw *Follower) sync() []trace.Delay {
	var out []trace.Delay
	for _, im := range fw.images {
		if im.ended {
			continue
		}
		if im != fw.images[0] {
			im.engine.Drain()
		}
		out = append(out, im.pipe.Sync()...)
	}
	return out
}

// Finish writes, after the run, the first process's last image when it is
// not its first (the command writes that one), and <app>_processes.json;
// it returns the paths written after the run.
func (fw *Follower) Finish(res *guest.Result) ([]string, error) {
	root := fw.images[0]
	last := fw.cur[root.Pid]
	var out []string
	if last != root && !last.ended {
		partial := ""
		if res.Partial {
			partial = res.Reason
			if partial == "" {
				partial = "the run did not finish"
			}
		}
		fw.write(last, partial)
		out = append(out, last.files...)
	}
	if len(fw.images) == 1 {
		return out, nil // one process, one image: what a single program writes
	}
	var recs []ProcessRecord
	for _, im := range fw.images {
		r := ProcessRecord{Pid: im.Pid, Parent: im.Parent, Exec: im.Exec, Program: im.Program, Name: im.Name, Args: im.Args, Partial: im.partial, Files: []string{}}
		if r.Args == nil {
			r.Args = []string{}
		}
		if im == root && !im.ended && res.Partial {
			r.Partial = res.Reason
		}
		for _, f := range im.files {
			r.Files = append(r.Files, filepath.Base(f))
		}
		recs = append(recs, r)
	}
	data, err := json.MarshalIndent(recs, "", " ")
	if err != nil {
		return out, err
	}
	path := filepath.Join(fw.out, root.app+processesFileSuffix)
	if err := report.WriteBytesAtomic(path, append(data, '\n')); err != nil {
		return out, err
	}
	return append(out, path), nil
}

// SetRootFiles records the files the command wrote for the first image.
func (fw *Follower) SetRootFiles(paths []string) {
	if root := fw.images[0]; !root.ended {
		root.files = paths
	}
}

// ProcessSection is report.html's view of a process tree, from the
// <app>_processes.json among files: one row per process image (pid,
// parent, program, how it ended) and the names of its files. Nil when
// there is none.
func ProcessSection(files []string) *report.Section {
	var b strings.Builder
	for _, path := range files {
		if !strings.HasSuffix(path, processesFileSuffix) {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var recs []ProcessRecord
		if err := json.Unmarshal(data, &recs); err != nil {
			fmt.Fprintf(&b, "<p class=\"partial\">%s: %s</p>\n", report.Esc(filepath.Base(path)), report.Esc(err.Error()))
			continue
		}
		fmt.Fprintf(&b, "<p>%d process images: each process's profile is its own, before and after each exec.</p>\n", len(recs))
		b.WriteString("<table class=\"sortable\"><thead><tr><th>pid</th><th>parent</th><th>exec</th><th>program</th><th>command</th><th>files</th></tr></thead><tbody>\n")
		for _, r := range recs {
			var links []string // named, not linked: the page refers to nothing outside itself
			for _, f := range r.Files {
				links = append(links, "<code>"+report.Esc(f)+"</code>")
			}
			status := ""
			if r.Partial != "" {
				status = " <span class=\"partial\">(partial: " + report.Esc(r.Partial) + ")</span>"
			}
			fmt.Fprintf(&b, "<tr><td>%d</td><td>%d</td><td>%d</td><td>%s</td><td><code>%s</code>%s</td><td>%s</td></tr>\n",
				r.Pid, r.Parent, r.Exec, report.Esc(r.name()), report.Esc(ShellJoin(r.Args)), status, strings.Join(links, " "))
		}
		b.WriteString("</tbody></table>\n")
	}
	if b.Len() == 0 {
		return nil
	}
	return &report.Section{ID: "processes", Title: "Processes", HTML: b.String()}
}

// PrintProcesses says on stderr which processes were profiled.
func (fw *Follower) PrintProcesses(w io.Writer) {
	if len(fw.images) <= 1 {
		return
	}
	var names []string
	for _, im := range fw.images {
		names = append(names, fmt.Sprintf("%d %s", im.Pid, im.name()))
	}
	fmt.Fprintf(w, "emuprof: profiled %d process images: %s\n", len(fw.images), strings.Join(names, ", "))
	for _, w2 := range fw.warnings {
		fmt.Fprintf(w, "emuprof: warning: %s\n", w2)
	}
}

// RootEnded says whether the first process's first image ended during the
// run (it exec'd): its files are written already.
func (fw *Follower) RootEnded() bool { return fw.images[0].ended }

// Written is the files written by images that ended during the run.
func (fw *Follower) Written() []string { return fw.written }
