// The run loop: one slice of a thread on the engine, and why it stopped.

package emu

/*
#include "hooks.h"
*/
import "C"
import (
	"emuprof/cpu"
	"errors"
	"unsafe"
)

// Run executes from pc until a syscall, the instruction budget runs out, a
// fault, or an exception. budget 0 means no limit.
func (e *Engine) Run(pc, budget uint64) cpu.Stop {
	if budget == 0 {
		budget = ^uint64(0)
	}
	var total cpu.Stop
	if len(e.mem.later) > 0 {
		// Regions mapped from inside the engine in the last run.
		if err := e.coalesceLater(); err != nil {
			return cpu.Stop{Err: err}
		}
	}
	for {
		// A slice may take several engine runs (retranslation, an
		// instruction completed here): later runs' events continue the
		// slice's time instead of starting again from its beginning.
		e.st.prior = C.int64_t(int64(total.Insns)*100 - int64(total.Saved))
		s := e.run(pc, budget-total.Insns)
		total.Insns += s.Insns
		total.Blocks += s.Blocks
		total.Saved += s.Saved
		s.Insns, s.Blocks, s.Saved = total.Insns, total.Blocks, total.Saved
		if s.Reason == cpu.StopRequest && s.Err == nil && len(e.flush) > 0 {
			for _, page := range e.flush {
				C.emu_remove_cache(e.uc, C.uint64_t(page), C.uint64_t(page+0x1000))
			}
			e.flush = e.flush[:0]
			pc = e.PC()
			continue
		}
		if s.Reason == cpu.StopInvalid && s.Err == nil {
			if done, fault := e.emulateMissing(); done {
				if fault != nil {
					fault.Insns, fault.Blocks, fault.Saved = s.Insns, s.Blocks, s.Saved
					return *fault
				}
				pc = e.PC()
				if total.Insns >= budget {
					s.Reason = cpu.StopQuantum
					return s
				}
				continue
			}
		}
		if s.Reason == cpu.StopSyscall {
			if kind, ok := e.patched[e.PC()-2]; ok {
				// The TSC counts virtual time: sped-up instructions
				// count for less (total.Saved is 0 without speedups).
				e.answer(kind, total.Insns-total.Saved/100)
				pc = e.PC()
				if total.Insns >= budget {
					s.Reason = cpu.StopQuantum
					return s
				}
				continue
			}
		}
		return s
	}
}

func (e *Engine) run(pc, budget uint64) cpu.Stop {
	e.st.insns, e.st.blocks, e.st.saved, e.st.budget = 0, 0, 0, C.uint64_t(budget)
	e.st.reason = C.STOP_NONE
	e.st.fault_pc = 0
	e.st.last_block, e.st.last_len, e.st.last_slot = 0, 0, nil
	C.emu_replay_begin(e.st)
	err := C.emu_run(e.st, C.uint64_t(pc))
	C.emu_replay_end(e.st) // before Go emits or drains
	e.noteTranslations()
	s := cpu.Stop{Reason: cpu.StopReason(e.st.reason), Insns: uint64(e.st.insns), Blocks: uint64(e.st.blocks), Saved: uint64(e.st.saved),
		IntNo: uint32(e.st.intno)}
	if e.failure != nil {
		s.Err, e.failure = e.failure, nil
		return s
	}
	if e.st.xlated_lost != 0 {
		s.Err = errors.New("emu: out of memory recording translated pages")
		return s
	}
	if e.st.mem_lost != 0 {
		s.Err = errors.New("emu: a block made more memory events than the buffer's slack holds")
		return s
	}
	switch err {
	case C.UC_ERR_OK:
	case C.UC_ERR_INSN_INVALID:
		s.Reason = cpu.StopInvalid
	case C.UC_ERR_READ_UNMAPPED, C.UC_ERR_WRITE_UNMAPPED, C.UC_ERR_FETCH_UNMAPPED,
		C.UC_ERR_READ_PROT, C.UC_ERR_WRITE_PROT, C.UC_ERR_FETCH_PROT:
		s.Reason = cpu.StopFault
		s.FaultAddr = uint64(e.st.fault_addr)
		switch err {
		case C.UC_ERR_READ_UNMAPPED, C.UC_ERR_READ_PROT:
			s.FaultAccess = cpu.FaultRead
		case C.UC_ERR_WRITE_UNMAPPED, C.UC_ERR_WRITE_PROT:
			s.FaultAccess = cpu.FaultWrite
		default:
			s.FaultAccess = cpu.FaultFetch
		}
		s.FaultProt = err == C.UC_ERR_READ_PROT || err == C.UC_ERR_WRITE_PROT || err == C.UC_ERR_FETCH_PROT
		if pc := uint64(e.st.fault_pc); pc != 0 {
			// The engine's RIP after a fault can be a block start before
			// the faulting instruction; the hook saw the precise one when
			// memory hooks are on. Without them it saw the last RIP
			// stored, which can be an earlier block's chained to the
			// faulting one: then the faulting block's start is the best
			// known (guest.faultPC finds the instruction in it).
			var lb C.uint64_t
			var n C.uint32_t
			C.emu_last_block(e.st, &lb, &n)
			if lb, n := uint64(lb), uint64(n); n != 0 && pc-lb >= n && s.FaultAccess != cpu.FaultFetch {
				pc = lb
			}
			_ = e.setReg(C.UC_X86_REG_RIP, pc)
		}
	default:
		if s.Reason != cpu.StopIntr {
			s.Err = ucErr("emulation", err)
		}
	}
	return s
}

// InlineCounted returns how many translations count their block's
// instructions themselves (0 when the engine calls its block hook at
// every block).
func (e *Engine) InlineCounted() uint64 { return uint64(e.st.inline_blocks) }

// noteTranslations adds the pages of the run's translations (chain.c
// records them where jumps are chained) to the code pages forgetCode
// removes translations from.
func (e *Engine) noteTranslations() {
	if n := int(e.st.n_xlated); n > 0 {
		for _, p := range unsafe.Slice((*uint64)(unsafe.Pointer(e.st.xlated)), n) {
			e.codePages[p] = true
		}
		e.st.n_xlated = 0
	}
}

// ChainedSites returns how many direct jumps to another page were
// translated as chained jumps (chain.c) so far.
func (e *Engine) ChainedSites() uint64 { return uint64(e.st.chained_sites) }

// MemoryInline reports whether the engine's generated code writes its
// memory events (meminline.c) instead of Unicorn's memory hooks.
func (e *Engine) MemoryInline() bool { return e.st.mem_inline != 0 }

// HookedRegions reports how many regions Unicorn recorded in the block
// hook's hooked_regions (regions.c keeps them empty on 2.0.1), or -1.
func (e *Engine) HookedRegions() int { return int(C.emu_hooked_regions(e.st)) }

// LastBlockSlotted reports whether the last block entered is known by its
// inline-count slot (inline.c, made in tb_gen_code) rather than stored.
func (e *Engine) LastBlockSlotted() bool { return e.st.last_slot != nil }

// SlowCalls reports how many calls of emu_count_slow the engine's inline
// counting emitted, and how many of them through Unicorn's
// uc_add_inline_hook (the first only: inline.c).
func (e *Engine) SlowCalls() (emitted, registered uint64) {
	return uint64(e.st.slow_calls), uint64(e.st.slow_registered)
}
