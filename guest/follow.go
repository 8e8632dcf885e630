package guest

import (
	"fmt"

	"emuprof/cpu"
	"emuprof/loader"
	"emuprof/sched"
	"emuprof/trace"
)

// Following children (issue 9, item 3). With Config.Follow set, every
// process image gets analyses of its own: a child at its fork (its own
// engine with the analyses' hooks, its own symbol table, a copy of its
// parent's, and so its own block table), and a process that execs, for the
// new image (same engine, same pid). The image it leaves ends there: its
// analyses finish (the stream up to the exec) and Follower.Ended is called,
// so its profile is written when it execs. A process's stream holds its own
// threads' events only (scheduler events are routed to the engine of the
// thread's process). Without Follow, the analyses follow the first process
// alone, across its execs, as one profile.

// Image is one program run by one process: a process's first image (at its
// fork, the parent's program) or the program it exec'd.
type Image struct {
	Pid, Parent int
	Program     string   // host path of the executable
	Name        string   // its name as exec'd (a symlink's own name: gcc, not x86_64-linux-gnu-gcc-12)
	Args        []string // its argv
	Exec        int      // 0: the process's first image; n: after its n-th exec
}

// Follower gives followed process images their analyses.
type Follower interface {
	// Fork returns the engine of a new child process, with the analyses'
	// hooks, naming blocks with syms, and the analyses of its first
	// image. An error leaves the child unprofiled (a warning).
	Fork(img Image, syms *loader.SymbolTable) (cpu.CPU, []trace.Analysis, error)
	// Exec returns the analyses of the image a process exec'd (same
	// engine). An error leaves the image unprofiled (a warning).
	Exec(img Image) ([]trace.Analysis, error)
	// Ended says that the analyses of img have finished: at its exec,
	// its process's exit, or the end of the run (partial: why the
	// image's stream is incomplete, "" when it is complete). The first
	// process's last image is not reported: the run's result is its.
	Ended(img Image, partial string)
}

// image describes p's current image.
func (p *Process) image() Image {
	img := Image{Pid: p.pid, Parent: p.forkParent, Program: p.cfg.Program, Name: p.name, Args: p.cfg.Args, Exec: p.execs}
	if p == p.m.root {
		img.Parent = int(p.getppid())
	}
	return img
}

// endImage finishes the analyses of p's current image (the stream so far)
// and reports it ended.
func (p *Process) endImage(partial string) {
	if p.cfg.Follow == nil || len(p.cfg.Analyses) == 0 {
		return
	}
	p.cpu.Drain()
	for _, a := range p.cfg.Analyses {
		a.Finish()
	}
	p.cfg.Analyses = nil
	p.cfg.Follow.Ended(p.image(), partial)
}

// startImage gives p's new image (after an exec) its analyses.
func (p *Process) startImage() {
	if p.cfg.Follow == nil {
		return
	}
	as, err := p.cfg.Follow.Exec(p.image())
	if err != nil {
		p.m.warnings = append(p.m.warnings, fmt.Sprintf("process %d (%s) not profiled: %v", p.pid, p.cfg.Program, err))
		return
	}
	p.cfg.Analyses = as
}

// newChildCPU starts the engine of a child of p: with the analyses' hooks
// when following children.
func (p *Process) newChildCPU(pid int) (cpu.CPU, *loader.SymbolTable, []trace.Analysis, error) {
	syms := p.syms.Clone()
	if p.cfg.Follow != nil {
		img := p.image()
		img.Pid, img.Parent, img.Exec = pid, p.pid, 0
		c, as, err := p.cfg.Follow.Fork(img, syms)
		if err == nil {
			return c, syms, as, nil
		}
		p.m.warnings = append(p.m.warnings, fmt.Sprintf("process %d (%s) not profiled: %v", pid, p.cfg.Program, err))
	}
	c, err := p.cfg.NewCPU()
	return c, syms, nil, err
}

// followExec puts the exec'ing thread's end (in the image it leaves) or
// start (in the new one) into the followed image's stream, as the
// scheduler reports a thread's life.
func (p *Process) followExec(t *sched.Thread, kind trace.Kind) {
	if p.cfg.Follow == nil || len(p.cfg.Analyses) == 0 || !p.cfg.Needs.Threads {
		return
	}
	p.cpu.Emit(trace.Event{Kind: kind, Tid: uint32(t.Tid), Time: t.Clock})
}
