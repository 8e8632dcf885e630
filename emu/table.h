// The block table's lookups, inline in the block hooks: Go fills the table
// once per block (emu_table_put, table.c); the hooks find a block in it by
// (addr, len), and hook_count keeps hot blocks' counts in s->hot.
#ifndef EMUPROF_TABLE_H
#define EMUPROF_TABLE_H

#include "hooks.h"

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

static inline struct emu_hot *hot_slot(struct emu_state *s, uint64_t addr) {
	return &s->hot[(addr ^ (addr >> 10)) & (HOT_SLOTS - 1)];
}

#endif
