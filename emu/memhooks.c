// The memory hook: a Read or Write event per access, or an access merged
// into the previous one (Options.MergeMemory).
#include "state.h"

// MERGE_MAX bounds a merged access, far below the 32-bit size.
#define MERGE_MAX (1u << 20)

// merge_access folds an access into the previous event, a memory event
// since the last other event (Options.MergeMemory), returning 1 if it needs
// no event of its own: a read of bytes the previous access read or wrote,
// or a write of bytes it wrote, repeats it; an access of the same kind
// right after its bytes (or right before) extends it. Only the previous
// event is compared: looking four back found a tenth more repeats on qsort
// and cost more than they saved.
static int merge_access(struct emu_state *s, uint8_t kind, uint64_t addr, uint32_t size) {
	struct emu_event *p = &s->buf[s->n - 1];
	if (p->addr <= addr && addr + size <= p->addr + p->size && (kind == EV_READ || p->kind == EV_WRITE))
		return 1;
	if (p->kind != kind || p->size + size > MERGE_MAX)
		return 0;
	if (p->addr + p->size == addr) {
		p->size += size;
		return 1;
	}
	if (addr + size == p->addr) {
		p->addr = addr;
		p->size += size;
		return 1;
	}
	return 0;
}

// emu_compact merges the inline memory events the generated code wrote
// since mem_raw (meminline.c: it cannot merge) as hook_mem would have,
// one by one, and drains where push would have: into s->buf from the
// event at mem_raw on, reading ahead of the writes.
void emu_compact(struct emu_state *s) {
	uint32_t n = s->n;
	const struct emu_event *src = s->buf; // after a drain, the batch's buffer: read past the batch only
	s->n = s->mem_raw;
	for (uint32_t i = s->mem_raw; i < n; i++) {
		struct emu_event ev = src[i];
		if (s->win_at < s->n && merge_access(s, ev.kind, ev.addr, ev.size))
			continue;
		*push(s) = ev;
	}
	s->mem_raw = s->n;
	s->mem_halves = 0;
}

static void hook_mem(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user) {
	struct emu_state *s = user;
	uint8_t kind = type == UC_MEM_WRITE ? EV_WRITE : EV_READ;
	if (s->mem_merge && s->win_at < s->n && merge_access(s, kind, addr, (uint32_t)size))
		return;
	set_mem_event(s, push(s), kind, addr, (uint32_t)size);
}

// emu_install_mem gives s memory events: from its generated code
// (meminline.c) where s->mem_inline asks for it and Unicorn allows it,
// else from hook_mem.
uc_err emu_install_mem(struct emu_state *s) {
	if (s->mem_inline)
		emu_mem_inline_check(s);
	if (s->mem_inline)
		return UC_ERR_OK;
	emu_mem_pc_check(s);
	uc_hook h;
	return uc_hook_add(s->uc, &h, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, hook_mem, s, 1, 0);
}
