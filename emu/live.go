package emu

/*
#include "hooks.h"

// emu_live reads the running slice's counters from another thread: the
// block hook updates them with plain stores; relaxed atomic loads see
// whole values (a display may lag by a block). The time is worked out
// as the block hooks do (they keep cur_time only for events).
static void emu_live(struct emu_state *s, uint64_t *insns, int64_t *now) {
	// insns and what inline counting counted since its last rebase
	// (hooks.h), read again while a rebase was moving them (live_seq).
	uint64_t n, seq;
	do {
		seq = __atomic_load_n(&s->live_seq, __ATOMIC_ACQUIRE);
		n = __atomic_load_n(&s->insns, __ATOMIC_RELAXED);
		n += (uint64_t)(__atomic_load_n(&s->inline_count, __ATOMIC_RELAXED) + __atomic_load_n(&s->inline_limit, __ATOMIC_RELAXED)) >> INLINE_SHIFT;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((seq & 1) || seq != __atomic_load_n(&s->live_seq, __ATOMIC_RELAXED));
	uint64_t saved = __atomic_load_n(&s->saved, __ATOMIC_RELAXED);
	int64_t base = __atomic_load_n(&s->time_base, __ATOMIC_RELAXED);
	int64_t prior = __atomic_load_n(&s->prior, __ATOMIC_RELAXED);
	*insns = n;
	*now = slice_clock(base, slice_units(prior, n, saved), s->ns_per_insn);
}
*/
import "C"

// Live returns the instructions the running slice has executed so far and
// the virtual time of its current block, for a status display polled from
// another goroutine while Run is in progress (emuprof's live status). It
// reads only: the run is the same with or without it. The engine must not
// be closed meanwhile.
func (e *Engine) Live() (insns uint64, now int64) {
	var i C.uint64_t
	var t C.int64_t
	C.emu_live(e.st, &i, &t)
	return uint64(i), int64(t)
}
