// Block translation: what Go decides once per block when the hooks first
// meet it (decoding, symbols, run keys, speedups, patched instructions),
// and dropping what was learnt when code changes.

package emu

/*
#include "hooks.h"
*/
import "C"

import (
	"emuprof/decode"
	"emuprof/trace"
	"fmt"
	"runtime/cgo"
	"slices"
	"unsafe"
)

// Blocks returns the table of every block translated so far.
func (e *Engine) Blocks() *trace.BlockTable { return e.blocks }

//export emuBlockMiss
func emuBlockMiss(h C.uintptr_t, addr C.uint64_t, length C.uint32_t) {
	e := cgo.Handle(h).Value().(*Engine)
	n := int(length)
	if cap(e.scratch) < n {
		e.scratch = make([]byte, n)
	}
	code := e.scratch[:n]
	if n > 0 {
		if err := ucErr("reading code", C.uc_mem_read(e.uc, C.uint64_t(addr), unsafe.Pointer(&code[0]), C.size_t(n))); err != nil {
			e.failure = fmt.Errorf("decoding block at %#x: %w", uint64(addr), err)
			e.st.reason = C.STOP_REQUEST
			return
		}
	}
	info := e.dec.Block(code)
	for p := uint64(addr) &^ 0xfff; p < uint64(addr)+uint64(n); p += 0x1000 {
		e.codePages[p] = true
	}
	if (len(info.RDTSC) > 0 || len(info.X87) > 0) && e.patch(uint64(addr), code, info) {
		return
	}
	bi := trace.BlockInfo{Addr: uint64(addr), Len: uint32(length), Insns: uint32(info.Insns), End: info.End}
	if e.syms != nil {
		bi.Routine, _ = e.syms.Routine(uint64(addr))
		switch {
		case e.lines:
			bi.File, bi.Line, _ = e.syms.Line(uint64(addr))
			bi.Lines = e.lineSpans(uint64(addr), code)
		case e.fold != nil:
			// Runs are cut by line: the line looked up for them is
			// the block's, for the analyses too.
			bi.File, bi.Line, _ = e.syms.Line(uint64(addr))
		}
	}
	id := e.blocks.Add(bi)
	var saved uint32
	if e.speedup != nil {
		saved = e.saved(uint64(addr), code)
	}
	quiet := e.filter != nil && !e.filter(&bi)
	track := e.repeats != nil && e.repeats(&bi)
	key, cycle := e.runKey(&bi, track)
	b := C.struct_emu_block{addr: addr, len: length, insns: C.uint32_t(info.Insns), id: C.uint32_t(id), saved: C.uint32_t(saved),
		end: C.uint8_t(info.End), quiet: boolC(quiet), fold: C.uint32_t(key),
		head: boolC(bi.Routine.Entry == bi.Addr), cycle: C.uint32_t(cycle), track: boolC(track)}
	C.emu_table_put(e.st, &b)
}

// lineSpans returns the spans of a block's instructions on distinct source
// lines (trace.BlockInfo.Lines), nil when the block is on one line:
// each instruction is looked up only when the block crosses a line-table
// row of another line.
func (e *Engine) lineSpans(addr uint64, code []byte) []trace.LineSpan {
	if lr, ok := e.syms.(interface {
		LineRange(pc uint64) (string, int, uint64, bool)
	}); ok {
		if _, _, end, _ := lr.LineRange(addr); end >= addr+uint64(len(code)) {
			return nil
		}
	}
	e.starts = e.dec.Starts(code, e.starts[:0])
	var spans []trace.LineSpan
	for _, off := range e.starts {
		file, line, _ := e.syms.Line(addr + uint64(off))
		if n := len(spans); n > 0 && spans[n-1].File == file && spans[n-1].Line == line {
			spans[n-1].Insns++
			continue
		}
		spans = append(spans, trace.LineSpan{File: file, Line: line, Insns: 1, Off: off})
	}
	if len(spans) < 2 {
		return nil
	}
	return spans
}

// runKey identifies a block's routine and line for Options.Fold: blocks
// with equal non-zero keys may be reported as one run. Blocks of no named
// routine, and of linker stubs and the lazy-binding resolver (whose every
// jump call tracking reads as a tail call), are never folded.
type runKey struct {
	entry  uint64
	object string
	file   string
	line   int
	track  bool // Options.Repeats accepts the block: a run holds only such blocks or none
}

// runKey returns a block's key for ordinary runs (Options.Fold) and its
// key for periodic runs (Options.FoldCycles: its routine), 0 when it is
// not taken in them.
func (e *Engine) runKey(bi *trace.BlockInfo, track bool) (key, cycle uint32) {
	if e.fold == nil || bi.Routine.Name == "" || bi.Routine.Kind != trace.Ordinary {
		return 0, 0
	}
	k := runKey{entry: bi.Routine.Entry, object: bi.Routine.Object}
	if e.cycles != nil && e.cycles(bi) {
		cycle = e.keyID(k)
	}
	if !e.fold(bi) {
		return 0, cycle
	}
	k.file, k.line = bi.File, bi.Line
	k.track = track
	return e.keyID(k), cycle
}

// keyID numbers run keys from 1.
func (e *Engine) keyID(k runKey) uint32 {
	id, ok := e.runKeys[k]
	if !ok {
		id = uint32(len(e.runKeys) + 1)
		e.runKeys[k] = id
	}
	return id
}

// saved is what a block's sped-up instructions save, in hundredths of an
// instruction: the sum of their speedups in percent.
func (e *Engine) saved(addr uint64, code []byte) uint32 {
	e.starts = e.dec.Starts(code, e.starts[:0])
	var saved uint32
	for _, off := range e.starts {
		if pct := e.speedup(addr + uint64(off)); pct > 0 {
			saved += uint32(min(pct, 100))
		}
	}
	return saved
}

// patchKind is what a patched instruction was.
type patchKind uint8

const (
	patchRDTSC patchKind = iota + 1
	patchRDTSCP
	patchFPREM
	patchFPREM1
	patchFSCALE
	patchFLDL2T
)

// patch makes rdtsc and rdtscp return virtual time, and the x87
// instructions Unicorn computes wrongly (x87.go) compute what the hardware
// does. Unicorn 2.0 can neither hook rdtsc (UC_HOOK_INSN refuses RDTSC) nor
// keep a code hook on an instruction without miscompiling the surrounding
// code (measured: ld.so crashes), so each one is overwritten with `syscall`
// (plus a nop for rdtscp's third byte; the x87 ones are two bytes, d9 xx)
// and Run answers those syscalls itself. The block is stopped before it
// runs and retranslated from the patched bytes. It reports whether it
// stopped the block (it patched something, or failed).
func (e *Engine) patch(addr uint64, code []byte, info decode.Info) bool {
	stop := false
	put := func(off uint32, kind patchKind, bytes []byte) bool {
		a := addr + uint64(off)
		stop = true
		if err := e.writeMem(a, bytes); err != nil {
			e.failure = fmt.Errorf("patching the instruction at %#x: %w", a, err)
			return false
		}
		e.patched[a] = kind
		e.flush = append(e.flush, a&^0xfff)
		return true
	}
	for _, off := range info.RDTSC {
		kind, bytes := patchRDTSC, []byte{0x0f, 0x05}
		if code[off+1] == 0x01 { // rdtscp: 0f 01 f9
			kind, bytes = patchRDTSCP, []byte{0x0f, 0x05, 0x90}
		}
		if !put(off, kind, bytes) {
			break
		}
	}
	for _, off := range info.X87 {
		var kind patchKind
		switch code[off+1] {
		case 0xf8:
			kind = patchFPREM
		case 0xf5:
			kind = patchFPREM1
		case 0xfd:
			kind = patchFSCALE
		case 0xe9:
			kind = patchFLDL2T
		default:
			continue
		}
		if !put(off, kind, []byte{0x0f, 0x05}) {
			break
		}
	}
	if stop {
		e.st.reason = C.STOP_REQUEST
	}
	return stop
}

// answer completes a patched instruction (RIP is past the syscall bytes).
func (e *Engine) answer(kind patchKind, sliceInsns uint64) {
	switch kind {
	case patchRDTSC, patchRDTSCP:
		var tsc uint64
		if e.rdtsc != nil {
			tsc = e.rdtsc(sliceInsns)
		}
		_ = e.setReg(C.UC_X86_REG_RAX, tsc&0xffffffff)
		_ = e.setReg(C.UC_X86_REG_RDX, tsc>>32)
		if kind == patchRDTSCP {
			_ = e.setReg(C.UC_X86_REG_RCX, 0) // IA32_TSC_AUX: cpu 0
		}
	case patchFPREM, patchFPREM1:
		e.answerFPREM(kind == patchFPREM1)
	case patchFSCALE:
		e.answerFSCALE()
	case patchFLDL2T:
		e.answerFLDL2T()
	}
}

// FlushCode drops translated code and decoded blocks in [addr, addr+size):
// needed when the guest unmaps or changes code.
func (e *Engine) FlushCode(addr, size uint64) {
	C.emu_remove_cache(e.uc, C.uint64_t(addr), C.uint64_t(addr+size))
	C.emu_table_clear(e.st)
}

// forgetCode drops what was learnt about code in [addr, addr+size), when
// it stops being code (unmapped, no longer executable, dropped) or the
// kernel rewrites it: its translations, its decoded blocks, its patched
// instructions. Cheap when the range held no code. Translations are
// removed one run of code pages at a time, from the run's first page:
// Unicorn's removal (uc_ctl_remove_cache) finds a range's guest-physical
// address through its first page, as an instruction fetch, and removes
// nothing when that page is not executable.
func (e *Engine) forgetCode(addr, size uint64) {
	lo, hi := addr&^0xfff, addr+size
	var pages []uint64
	if uint64(len(e.codePages)) < size/0x1000 {
		for p := range e.codePages {
			if p >= lo && p < hi {
				pages = append(pages, p)
			}
		}
		slices.Sort(pages)
	} else {
		for p := lo; p < hi; p += 0x1000 {
			if e.codePages[p] {
				pages = append(pages, p)
			}
		}
	}
	if len(pages) == 0 {
		return
	}
	for _, p := range pages {
		delete(e.codePages, p)
	}
	for a := range e.patched {
		if a >= addr && a < hi {
			delete(e.patched, a)
		}
	}
	for i := 0; i < len(pages); {
		j := i + 1
		for j < len(pages) && pages[j] == pages[j-1]+0x1000 {
			j++
		}
		C.emu_remove_cache(e.uc, C.uint64_t(pages[i]), C.uint64_t(pages[j-1]+0x1000))
		i = j
	}
	C.emu_table_clear(e.st)
}

func boolC(b bool) C.uint8_t {
	if b {
		return 1
	}
	return 0
}
