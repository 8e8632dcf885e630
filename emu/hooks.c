#include <stdlib.h>
#include <string.h>
#include "hooks.h"
#include "_cgo_export.h"

static inline uint64_t block_slot(uint64_t addr, uint32_t len) {
	uint64_t h = (addr ^ ((uint64_t)len << 48)) * 0x9E3779B97F4A7C15ull;
	return h >> 20;
}

static struct emu_block *table_find(struct emu_state *s, uint64_t addr, uint32_t len) {
	uint64_t i = block_slot(addr, len) & s->tmask;
	for (;;) {
		struct emu_block *b = &s->table[i];
		if (!b->used)
			return NULL;
		if (b->addr == addr && b->len == len)
			return b;
		i = (i + 1) & s->tmask;
	}
}

static void table_insert(struct emu_block *tab, uint64_t mask, struct emu_block *src) {
	uint64_t i = block_slot(src->addr, src->len) & mask;
	while (tab[i].used)
		i = (i + 1) & mask;
	tab[i] = *src;
}

void emu_table_put(struct emu_state *s, uint64_t addr, uint32_t len, uint32_t insns, uint8_t end) {
	if (table_find(s, addr, len))
		return;
	if ((s->tcount + 1) * 2 > s->tmask + 1) {
		uint64_t nsize = (s->tmask + 1) * 2;
		struct emu_block *nt = calloc(nsize, sizeof *nt);
		if (!nt)
			abort();
		for (uint64_t i = 0; i <= s->tmask; i++)
			if (s->table[i].used)
				table_insert(nt, nsize - 1, &s->table[i]);
		free(s->table);
		s->table = nt;
		s->tmask = nsize - 1;
	}
	struct emu_block b = {addr, len, insns, end, 1};
	table_insert(s->table, s->tmask, &b);
	s->tcount++;
}

void emu_table_clear(struct emu_state *s) {
	memset(s->table, 0, (s->tmask + 1) * sizeof *s->table);
	s->tcount = 0;
}

static inline struct emu_event *push(struct emu_state *s) {
	if (s->n == s->cap)
		emuDrain(s->handle); // rare: once per buffer; Go empties it
	return &s->buf[s->n++];
}

// The block hook: counts instructions for virtual time and the quantum, and
// appends a Block event when an analysis wants them. Stopping here leaves the
// block unexecuted with RIP at its start, so its instructions are not counted.
static void hook_block(uc_engine *uc, uint64_t addr, uint32_t len, void *user) {
	struct emu_state *s = user;
	struct emu_block *b = table_find(s, addr, len);
	if (!b) {
		emuBlockMiss(s->handle, addr, len);
		b = table_find(s, addr, len);
		if (!b || s->reason == STOP_REQUEST) {
			// Go asked to stop before this block runs (e.g. it holds rdtsc
			// and needs a hook installed).
			if (s->reason == STOP_NONE)
				s->reason = STOP_REQUEST;
			uc_emu_stop(uc);
			return;
		}
	}
	if (s->insns > 0 && s->insns + b->insns > s->budget) {
		s->reason = STOP_QUANTUM;
		uc_emu_stop(uc);
		return;
	}
	s->insns += b->insns;
	s->blocks++;
	if (s->want_blocks) {
		struct emu_event *e = push(s);
		e->addr = addr;
		e->aux = 0;
		if (s->want_sp)
			uc_reg_read(uc, UC_X86_REG_RSP, &e->aux);
		e->size = b->insns;
		e->tid = s->tid;
		e->kind = EV_BLOCK;
		e->end = b->end;
		e->len = (uint16_t)len;
		e->pad = 0;
	}
}

static void hook_mem(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user) {
	struct emu_state *s = user;
	struct emu_event *e = push(s);
	e->addr = addr;
	e->aux = 0;
	e->size = (uint32_t)size;
	e->tid = s->tid;
	e->kind = type == UC_MEM_WRITE ? EV_WRITE : EV_READ;
	e->end = 0;
	e->len = 0;
	e->pad = 0;
}

static void hook_syscall(uc_engine *uc, void *user) {
	struct emu_state *s = user;
	s->reason = STOP_SYSCALL;
	uc_emu_stop(uc);
}

static bool hook_invalid(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user) {
	struct emu_state *s = user;
	s->reason = STOP_FAULT;
	s->fault_addr = addr;
	s->fault_type = type;
	s->fault_size = size;
	return false;
}

static void hook_intr(uc_engine *uc, uint32_t intno, void *user) {
	struct emu_state *s = user;
	s->reason = STOP_INTR;
	s->intno = intno;
	uc_emu_stop(uc);
}

static void hook_rdtsc(uc_engine *uc, uint64_t addr, uint32_t size, void *user) {
	struct emu_state *s = user;
	emuRDTSC(s->handle, addr);
}

struct emu_state *emu_state_new(uc_engine *uc, uintptr_t handle, uint32_t cap) {
	struct emu_state *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->uc = uc;
	s->handle = handle;
	s->cap = cap;
	s->buf = calloc(cap, sizeof *s->buf);
	s->tmask = (1u << 14) - 1;
	s->table = calloc(s->tmask + 1, sizeof *s->table);
	if (!s->buf || !s->table) {
		emu_state_free(s);
		return NULL;
	}
	return s;
}

void emu_state_free(struct emu_state *s) {
	if (!s)
		return;
	free(s->buf);
	free(s->table);
	free(s);
}

uc_err emu_install_base(struct emu_state *s, int bare) {
	uc_hook h;
	uc_err err;
	if (!bare && (err = uc_hook_add(s->uc, &h, UC_HOOK_BLOCK, hook_block, s, 1, 0)))
		return err;
	if ((err = uc_hook_add(s->uc, &h, UC_HOOK_INSN, hook_syscall, s, 1, 0, UC_X86_INS_SYSCALL)))
		return err;
	if ((err = uc_hook_add(s->uc, &h, UC_HOOK_MEM_INVALID, hook_invalid, s, 1, 0)))
		return err;
	return uc_hook_add(s->uc, &h, UC_HOOK_INTR, hook_intr, s, 1, 0);
}

uc_err emu_install_mem(struct emu_state *s) {
	uc_hook h;
	return uc_hook_add(s->uc, &h, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, hook_mem, s, 1, 0);
}

uc_err emu_install_code_hook(struct emu_state *s, uint64_t addr, uc_hook *h) {
	return uc_hook_add(s->uc, h, UC_HOOK_CODE, hook_rdtsc, s, addr, addr);
}

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

uc_err emu_set_cpu_model(uc_engine *uc, int model) {
	return uc_ctl_set_cpu_model(uc, model);
}
