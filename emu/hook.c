// The hook entry: the block hooks (which count instructions for the
// quantum and virtual time, then make the block's events with fold.h),
// the syscall hook, and installing them on an engine.
#include "table.h"
#include "fold.h"
#include "faults.h"

// The block hooks count instructions for the quantum and, less what
// sped-up instructions save (emuprof run --speedup), for virtual time;
// hook_block also appends a Block event when an analysis wants them.
// Stopping here leaves the block unexecuted with RIP at its start, so its
// instructions are not counted.
//
// block_enter is the part of the block hooks every block takes: it finds
// block b (having Go translate it on first sight), stops the slice before
// it when its budget would run out, and counts it. It returns NULL when
// the block must not run, else b and, in *units, the block's start in
// hundredths of instructions; the block's virtual time (without speedups
// saved is 0 and this is insns × ns_per_insn exactly) is only worked out
// for events: per block when memory events take it (eager_time), else for
// the Block event (not for a block folded into a run, nor under
// `emuprof run`).
static inline __attribute__((always_inline)) struct emu_block *block_enter(uc_engine *uc, struct emu_state *s, uint64_t addr, uint32_t len, int64_t *units) {
	if (s->mem_inline)
		emu_flush_raw(s); // the last block's inline memory events (meminline.c)
	struct emu_block *b = table_find(s, addr, len);
	if (!b) {
		emuBlockMiss(s->handle, addr, len);
		b = table_find(s, addr, len);
		if (!b || s->reason == STOP_REQUEST) {
			// Go asked to stop before this block runs (it patched rdtsc
			// in it, or decoding failed).
			if (s->reason == STOP_NONE)
				s->reason = STOP_REQUEST;
			uc_emu_stop(uc);
			return NULL;
		}
	}
	if (s->insns > 0 && s->insns + b->insns > s->budget) {
		s->reason = STOP_QUANTUM;
		uc_emu_stop(uc);
		return NULL;
	}
	*units = slice_units(s->prior, s->insns, s->saved);
	if (s->eager_time)
		s->cur_time = slice_clock(s->time_base, *units, s->ns_per_insn);
	s->insns += b->insns;
	s->saved += b->saved;
	s->blocks++;
	s->last_block = addr;
	s->last_len = len;
	return b;
}

// hook_count is the block hook of an engine without Block events
// (`emuprof run`, memory tracing alone): block_enter and no more, a
// shorter function than hook_block, which saves more registers.
// Its common case (a known block within the budget, no memory events)
// is inline and the rest out of line, so that the common case saves no
// registers: at one call per block, that was a third of the hook's time.
static __attribute__((noinline)) void hook_count_slow(uc_engine *uc, struct emu_state *s, uint64_t addr, uint32_t len) {
	int64_t units;
	struct emu_block *b = block_enter(uc, s, addr, len, &units);
	if (!b)
		return;
	no_event(s);
	if (!b->saved) {
		struct emu_hot *h = hot_slot(s, addr);
		h->addr = addr;
		h->len = len;
		h->insns = b->insns;
	}
}

static void hook_count(uc_engine *uc, uint64_t addr, uint32_t len, void *user) {
	struct emu_state *s = user;
	if (s->inline_on)
		inline_rebase(s); // blocks translated before, or without a slot, counted inline
	const struct emu_hot *h = hot_slot(s, addr);
	if (__builtin_expect(h->addr != addr || h->len != len || s->eager_time || (s->insns > 0 && s->insns + h->insns > s->budget), 0)) {
		hook_count_slow(uc, s, addr, len);
		return;
	}
	s->insns += h->insns;
	s->blocks++;
	s->last_block = addr;
	s->last_len = len;
	no_event(s);
}

// emu_count_slow is the hook of a block whose generated code counts it
// (inline.c), called when that code must not have: insns plus the slot's
// count passed the budget's room (inline_count above 0), or the slot has no count yet. The code stored
// the slot in last_slot (or the block's start and length in last_block
// and last_len, last_slot NULL). It does what
// hook_count does, then gives the slot the block's count once the table
// has one that hook_count would add as it is (no speedup's saving).
void emu_count_slow(uc_engine *uc, uint64_t slot, uint32_t unused, void *user) {
	(void)unused;
	struct emu_state *s = user;
	struct emu_slot *sl = (struct emu_slot *)(uintptr_t)slot;
	uint64_t addr, *n = &sl->n;
	uint32_t len;
	emu_last_block(s, &addr, &len);
	s->inline_count -= (int64_t)*n; // the code counted the block before its test
	hook_count(uc, addr, len, s);
	if (*n == SLOT_UNKNOWN) {
		const struct emu_block *b = table_find(s, addr, len);
		if (b && !b->saved)
			*n = ((uint64_t)b->insns << INLINE_SHIFT) + 1;
	}
	inline_rebase(s); // the room after this block
}

void emu_last_block(struct emu_state *s, uint64_t *pc, uint32_t *len) {
	if (s->last_slot) {
		*pc = s->last_slot->pc;
		*len = s->last_slot->len;
	} else {
		*pc = s->last_block;
		*len = s->last_len;
	}
}

static void hook_block_general(uc_engine *uc, struct emu_state *s, struct emu_block *b, uint64_t addr, uint32_t len, int64_t units);

static void hook_block(uc_engine *uc, uint64_t addr, uint32_t len, void *user) {
	struct emu_state *s = user;
	int64_t units;
	struct emu_block *b = block_enter(uc, s, addr, len, &units);
	if (!b) {
		replay_stop(uc, s); // the block does not run
		return;
	}
	// The other common case: the next block of a replayed period.
	if (s->rp && s->rp->on && replay_step(uc, s, b))
		return;
	if (fold_fast(s, b, addr, len))
		return;
	hook_block_general(uc, s, b, addr, len, units);
}

// hook_block_general is hook_block past block_enter, for every block
// that neither replay_step nor fold_fast takes.
static __attribute__((noinline)) void hook_block_general(uc_engine *uc, struct emu_state *s, struct emu_block *b, uint64_t addr, uint32_t len, int64_t units) {
	if (s->rp) {
		struct emu_replay *r = s->rp;
		if (r->on)
			emu_replay_exit(uc, s); // b is not the period's next (hook_block)
		if (!r->idle)
			replay_record(r, addr, len);
	}
	block_events(uc, s, b, units, 0, 0);
}

static void hook_syscall(uc_engine *uc, void *user) {
	struct emu_state *s = user;
	s->reason = STOP_SYSCALL;
	uc_emu_stop(uc);
}

uc_err emu_install_base(struct emu_state *s, int bare) {
	uc_hook h;
	uc_err err;
	// Block events are wanted or not for the engine's life (Options).
	void *cb = s->want_blocks ? (void *)hook_block : (void *)hook_count;
	if (!bare && (err = uc_hook_add(s->uc, &h, UC_HOOK_BLOCK, cb, s, 1, 0)))
		return err;
	if (!bare)
		emu_regions_skip(s, h, cb);
	// Memory events take each block's time from the hook (eager_time).
	if (!bare && !s->want_blocks && !s->eager_time && s->inline_on)
		emu_inline_check(s, h, (void *)hook_count);
	else
		s->inline_on = 0;
	if ((err = uc_hook_add(s->uc, &h, UC_HOOK_INSN, hook_syscall, s, 1, 0, UC_X86_INS_SYSCALL)))
		return err;
	return emu_install_faults(s);
}
