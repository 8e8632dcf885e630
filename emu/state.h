// What every hook that makes events shares: appending to the event buffer
// (which hands a full one to Go) and reading the guest's RSP.
#ifndef EMUPROF_STATE_H
#define EMUPROF_STATE_H

#include "hooks.h"
#include "_cgo_export.h"

void emu_settle(struct emu_state *s);

// push appends an event. An inline memory event engine's hooks push only
// once emu_flush_raw has taken the generated code's events (n <= cap).
static inline struct emu_event *push(struct emu_state *s) {
	if (s->n >= s->cap) {
		if (s->n > s->cap) {
			emu_settle(s); // cannot happen (above); kept safe
		} else {
			s->drains++;
			emuDrain(s->handle); // rare: once per buffer; Go empties it
		}
	}
	struct emu_event *e = &s->buf[s->n++];
	s->mem_raw = s->n; // the inline memory events after it are the generated code's
	return e;
}

// access_pc is the address of the instruction making an access (0:
// unknown, a Unicorn other than 2.0.1): a helper's (fxsave, cmpxchg16b,
// ...) from its call, else the RIP the code stored before the access.
static inline uint64_t access_pc(const struct emu_state *s) {
	if (s->helper_call)
		return s->helper_pc;
	return s->rip ? *s->rip : 0;
}

// set_mem_event makes e a memory event of the running block: kind
// (EV_READ or EV_WRITE) of size bytes at addr, by the instruction at
// access_pc.
static inline void set_mem_event(struct emu_state *s, struct emu_event *e, uint8_t kind, uint64_t addr, uint32_t size) {
	e->addr = addr;
	e->aux = access_pc(s);
	e->time = s->cur_time;
	e->size = size;
	e->tid = s->tid;
	e->block = 0;
	e->kind = kind;
	e->end = 0;
	e->flags = 0;
	e->folded = 0;
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
