package platform

import (
	"fmt"
	"runtime/debug"

	"emuprof/trace"
)

// Pipeline delivers one emulation's event stream to analyses: through the
// call-tracking stage when one of them needs calls, and, when Async, on a
// goroutine of its own, so that the analyses' work overlaps the engine's.
// Double buffering: the emulator fills one event buffer while the pipeline
// drains the other; Events returns as soon as the previous batch is done,
// so it relies on the emulator keeping a batch unchanged until the next
// Events call returns (cpu.CPU.SetSink), and processes it meanwhile. The
// analyses get it, or the call stage's pieces of it, only for the length
// of their Events call (trace.Analysis). Every analysis sees the same events in the
// same order either way, so outputs do not depend on the concurrency.
//
// A Pipeline is itself an trace.Analysis: the guest delivers to it.
type Pipeline struct {
	env   *Env
	list  []Instance
	calls bool // run the call-tracking stage
	async bool

	blocks *trace.BlockTable
	work   chan job
	done   chan struct{} // one receive per job
	busy   bool          // a job was sent and not yet received from done
	mem    uint64        // the analyses' memory after the last processed batch (MemoryBytes)
	err    error         // a panic in an analysis (reported once)
	failed bool
}

type job struct {
	batch []trace.Event
	view  trace.BlockView
}

// NewPipeline returns a pipeline feeding list; blocks is the emulator's
// block table (Block events' ids index it).
func NewPipeline(env *Env, blocks *trace.BlockTable, list []Instance, async bool) *Pipeline {
	p := &Pipeline{env: env, list: list, blocks: blocks, async: async}
	for _, a := range list {
		p.calls = p.calls || a.Needs().Calls
	}
	env.stage.SetCallMarks(NeedsOf(list).CallMarks)
	if async {
		p.work = make(chan job)
		p.done = make(chan struct{})
		go p.serve()
	}
	return p
}

// Needs is the union of the analyses' needs.
func (p *Pipeline) Needs() trace.Needs { return NeedsOf(p.list) }

// NeedsOf is the union of the needs of list: what the engine must report
// for them (the call-tracking stage reads Block events).
func NeedsOf(list []Instance) trace.Needs {
	var n trace.Needs
	for _, a := range list {
		n = trace.Combine(n, a.Needs())
	}
	if n.Calls {
		n.Blocks = true
	}
	return n
}

func (p *Pipeline) serve() {
	for j := range p.work {
		p.process(j)
		p.done <- struct{}{}
	}
}

// process runs one batch through the stage and the analyses.
func (p *Pipeline) process(j job) {
	p.guard(func() {
		p.env.view = j.view
		if p.calls {
			p.env.stage.Process(j.batch, j.view, p.deliver)
			return
		}
		p.deliver(j.batch)
	})
}

// deliver hands a piece of the stream to every analysis.
func (p *Pipeline) deliver(evs []trace.Event) {
	for _, a := range p.list {
		a.Events(evs)
	}
}

// guard runs f unless an analysis failed before. A panic in an analysis (a
// bug) stops the analyses, not the run: Err reports it, with its stack.
func (p *Pipeline) guard(f func()) {
	if p.failed {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			p.failed = true
			p.err = fmt.Errorf("analysis failed: %v\n%s", r, debug.Stack())
		}
	}()
	f()
}

// wait blocks until the batch in flight, if any, is done.
func (p *Pipeline) wait() {
	if p.busy {
		<-p.done
		p.busy = false
	}
	p.measure()
}

// measure records the analyses' memory (trace.MemoryUser), while no
// batch is being processed: the figure is the one after the batches
// delivered so far but the last, whatever the goroutines' timing.
func (p *Pipeline) measure() {
	var n uint64
	for _, a := range p.list {
		if m, ok := a.(trace.MemoryUser); ok {
			n += m.MemoryBytes()
		}
	}
	p.mem = n
}

// MemoryBytes implements trace.MemoryUser: the analyses' memory as
// measured when the previous batch was done.
func (p *Pipeline) MemoryBytes() uint64 { return p.mem }

// Events implements trace.Analysis: it hands batch on and returns once
// the previous batch has been processed.
func (p *Pipeline) Events(batch []trace.Event) {
	j := job{batch: batch, view: p.blocks.View()}
	if !p.async {
		p.process(j)
		p.measure()
		return
	}
	p.wait()
	p.work <- j
	p.busy = true
}

// Sync waits until every delivered batch was processed and returns the
// clock delays the analyses asked for meanwhile (the caller applies them
// before its next scheduling decision).
func (p *Pipeline) Sync() []trace.Delay {
	p.wait()
	d := p.env.clock.pending
	p.env.clock.pending = nil
	return d
}

// Finish implements trace.Analysis: the pending activations end (the
// stage's Returns are delivered) and every analysis finishes.
func (p *Pipeline) Finish() {
	p.wait()
	if p.async {
		close(p.work)
		p.async = false
	}
	p.guard(func() {
		if p.calls {
			p.env.stage.Finish(p.deliver)
		}
		for _, a := range p.list {
			a.Finish()
		}
	})
}

// Err reports an analysis that failed (a bug: its results are lost).
func (p *Pipeline) Err() error { return p.err }

// Instances returns the analyses the pipeline feeds.
func (p *Pipeline) Instances() []Instance { return p.list }
