// Small engine calls Go makes through C: register batches, the
// translation cache, and the event layout Go checks trace.Event against.
#include <stddef.h>
#include "hooks.h"

uc_err emu_reg_read_batch(uc_engine *uc, int *regs, uint64_t *vals, int n) {
	void *ptrs[64];
	if (n > 64)
		return UC_ERR_ARG;
	for (int i = 0; i < n; i++)
		ptrs[i] = &vals[i];
	return uc_reg_read_batch(uc, regs, ptrs, n);
}

uc_err emu_reg_write_batch(uc_engine *uc, int *regs, uint64_t *vals, int n) {
	void *ptrs[64];
	if (n > 64)
		return UC_ERR_ARG;
	for (int i = 0; i < n; i++)
		ptrs[i] = &vals[i];
	return uc_reg_write_batch(uc, regs, (void *const *)ptrs, n);
}

uc_err emu_remove_cache(uc_engine *uc, uint64_t begin, uint64_t end) {
	return uc_ctl_remove_cache(uc, begin, end);
}

// The C view of struct emu_event: sizes, offsets and kind codes, which the
// Go side compares with trace.Event.
void emu_event_layout(uint64_t out[12]) {
	out[0] = sizeof(struct emu_event);
	out[1] = offsetof(struct emu_event, aux);
	out[2] = offsetof(struct emu_event, time);
	out[3] = offsetof(struct emu_event, size);
	out[4] = offsetof(struct emu_event, tid);
	out[5] = offsetof(struct emu_event, block);
	out[6] = offsetof(struct emu_event, kind);
	out[7] = offsetof(struct emu_event, end);
	out[8] = EV_READ;
	out[9] = (uint64_t)EV_WRITE << 8 | EV_BLOCK;
	out[10] = (uint64_t)END_COND << 16 | (uint64_t)END_JUMP << 8 | END_OTHER;
	out[11] = offsetof(struct emu_event, folded);
}
