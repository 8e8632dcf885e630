// The block table Go fills once per block (emu_table_put), the hooks'
// state that holds it, and the arena it and the event buffers live in.
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "table.h"
#include "replay.h"

static void table_insert(struct emu_block *tab, uint64_t mask, struct emu_block *src) {
	uint64_t i = block_slot(src->addr, src->len) & mask;
	while (tab[i].used)
		i = (i + 1) & mask;
	tab[i] = *src;
}

// The event buffers and the block table are one arena of transparent
// huge pages where the host has them (Linux's madvise mode): a hook
// touches the table's entries all over (they are hashed), and on a
// virtual machine a page fault costs 20 µs (docs/PERFORMANCE.md), so the
// table's 200 pages of 4 KB cost a parallel profile of a short program 4
// ms; one huge page costs one fault. Elsewhere they are calloc's.
#define ARENA_ALIGN (2u << 20)

// arena_reserve maps an arena for size bytes, or leaves s->arena NULL.
static void arena_reserve(struct emu_state *s, size_t size) {
#ifdef MADV_HUGEPAGE
	size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	// Twice as much, to align it: huge pages are aligned.
	char *p = mmap(NULL, size + ARENA_ALIGN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	char *a = (char *)(((uintptr_t)p + ARENA_ALIGN - 1) & ~(uintptr_t)(ARENA_ALIGN - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (a + size < p + size + ARENA_ALIGN)
		munmap(a + size, (size_t)(p + size + ARENA_ALIGN - (a + size)));
	madvise(a, size, MADV_HUGEPAGE);
	s->arena = a;
	s->arena_size = size;
#else
	(void)s;
	(void)size;
#endif
}

// arena_calloc returns n zeroed bytes at offset *at of the arena, or
// calloc's.
static void *arena_calloc(struct emu_state *s, size_t *at, size_t n) {
	n = (n + 63) & ~(size_t)63;
	if (s->arena && *at + n <= s->arena_size) {
		void *p = s->arena + *at;
		*at += n;
		return p;
	}
	return calloc(1, n);
}

// arena_free frees p unless it is in the arena.
static void arena_free(struct emu_state *s, void *p) {
	if (!s->arena || (char *)p < s->arena || (char *)p >= s->arena + s->arena_size)
		free(p);
}

// emu_table_put adds the block Go translated (all of *src but used), unless
// the table has it.
void emu_table_put(struct emu_state *s, const struct emu_block *src) {
	if (table_find(s, src->addr, src->len))
		return;
	if ((s->tcount + 1) * 2 > s->tmask + 1) {
		uint64_t nsize = (s->tmask + 1) * 2;
		struct emu_block *nt = calloc(nsize, sizeof *nt);
		if (!nt)
			abort();
		for (uint64_t i = 0; i <= s->tmask; i++)
			if (s->table[i].used)
				table_insert(nt, nsize - 1, &s->table[i]);
		arena_free(s, s->table);
		s->table = nt;
		s->tmask = nsize - 1;
	}
	struct emu_block b = *src;
	b.used = 1;
	table_insert(s->table, s->tmask, &b);
	s->tcount++;
}

void emu_table_clear(struct emu_state *s) {
	emu_replay_forget(s); // its blocks go
	memset(s->table, 0, (s->tmask + 1) * sizeof *s->table);
	memset(s->hot, 0, sizeof s->hot);
	emu_slots_reset(s); // their counts are the table's
	s->tcount = 0;
	s->hist_n = 0;
}

struct emu_state *emu_state_new(uc_engine *uc, uintptr_t handle, uint32_t cap, uint32_t slack) {
	struct emu_state *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->uc = uc;
	s->handle = handle;
	s->cap = cap;
	s->ns_per_insn = 1;
	s->tmask = (1u << 14) - 1;
	size_t room = (size_t)cap + slack; // slack: inline memory events (meminline.c)
	size_t bufs = 2 * ((room * sizeof *s->buf + 63) & ~(size_t)63), tab = (s->tmask + 1) * sizeof *s->table;
	if (bufs + tab <= ARENA_ALIGN)
		arena_reserve(s, bufs + tab);
	size_t at = 0;
	s->buf = arena_calloc(s, &at, room * sizeof *s->buf);
	s->spare = arena_calloc(s, &at, room * sizeof *s->spare);
	s->table = arena_calloc(s, &at, (s->tmask + 1) * sizeof *s->table);
	if (!s->buf || !s->spare || !s->table) {
		emu_state_free(s);
		return NULL;
	}
	return s;
}

void emu_state_free(struct emu_state *s) {
	if (!s)
		return;
	arena_free(s, s->buf);
	arena_free(s, s->spare);
	arena_free(s, s->table);
#ifdef MADV_HUGEPAGE
	if (s->arena)
		munmap(s->arena, s->arena_size);
#endif
	free(s->rp);
	emu_slots_free(s);
	free(s->xlated);
	free(s);
}
