// What every hook that makes events shares: appending to the event buffer
// (which hands a full one to Go) and reading the guest's RSP.
#ifndef EMUPROF_STATE_H
#define EMUPROF_STATE_H

#include "hooks.h"
#include "_cgo_export.h"

void emu_settle(struct emu_state *s);

static inline struct emu_event *push(struct emu_state *s) {
	if (s->n >= s->cap) {
		if (s->n > s->cap) {
			emu_settle(s); // the generated code wrote past cap (meminline.c)
		} else {
			s->drains++;
			emuDrain(s->handle); // rare: once per buffer; Go empties it
		}
	}
	return &s->buf[s->n++];
}

// read_sp returns the guest's RSP (at a block's start, in a block hook).
static inline uint64_t read_sp(uc_engine *uc, const struct emu_state *s) {
	uint64_t sp = 0;
	if (s->rsp)
		sp = *s->rsp;
	else
		uc_reg_read(uc, UC_X86_REG_RSP, &sp);
	return sp;
}

#endif
