// The event stream: the buffer the C hooks fill (hooks.h), the events Go
// appends to it, and its delivery to the sink in batches.

package emu

/*
#include "hooks.h"
*/
import "C"

import (
	"emuprof/trace"
	"runtime/cgo"
	"unsafe"
)

// SetSink sets where drained event batches go.
func (e *Engine) SetSink(f func([]trace.Event)) { e.sink = f }

// SetTid sets the thread id stamped on events from now on.
func (e *Engine) SetTid(tid uint32) {
	old := uint32(e.st.tid)
	prev := C.emu_switch_thread(e.st, C.uint32_t(tid), e.rings[tid])
	if e.repeats != nil && old != tid {
		// Options.Repeats: each thread's last blocks are its own.
		e.rings[old] = prev
	}
}

// forgetRing drops an exited thread's last blocks (Options.Repeats): a
// thread that reuses its id starts afresh, as the analyses see it.
func (e *Engine) forgetRing(tid uint32) {
	delete(e.rings, tid)
	C.emu_forget_thread(e.st, C.uint32_t(tid))
}

// Emit appends an event produced in Go (a syscall, a scheduling decision,
// a kernel access to guest memory) to the buffer the hooks fill, so that
// there is one stream in one order and no event forces a delivery.
func (e *Engine) Emit(ev trace.Event) {
	if e.st.n == e.st.cap {
		e.Drain()
	}
	e.events[e.st.n] = ev
	e.st.n++
	C.emu_cut(e.st)
	if ev.Kind == trace.KindThreadExit && e.repeats != nil {
		e.forgetRing(ev.Tid)
	}
}

// SetClock sets the virtual time of the running thread at the start of the
// next run slice; events of the slice are stamped from it.
func (e *Engine) SetClock(ns int64) {
	e.st.time_base = C.int64_t(ns)
	e.st.cur_time = C.int64_t(ns)
}

// Drain hands buffered events to the sink and continues in the other
// buffer: a batch stays valid until the sink's next call returns, so the
// sink may process it on another goroutine meanwhile (double buffering).
func (e *Engine) Drain() {
	n := int(e.st.n)
	if n == 0 {
		return
	}
	batch := e.events[:n]
	e.st.buf, e.st.spare = e.st.spare, e.st.buf
	e.events = unsafe.Slice((*trace.Event)(unsafe.Pointer(e.st.buf)), int(e.st.cap))
	e.st.n = 0
	C.emu_cut(e.st)
	if e.sink != nil {
		e.sink(batch)
	}
}

//export emuDrain
func emuDrain(h C.uintptr_t) {
	cgo.Handle(h).Value().(*Engine).Drain()
}
