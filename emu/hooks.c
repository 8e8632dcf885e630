#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/mman.h>
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

void emu_table_put(struct emu_state *s, uint64_t addr, uint32_t len, uint32_t insns, uint32_t saved, uint8_t end, uint32_t id, uint8_t quiet, uint32_t fold, uint8_t head, uint32_t cycle, uint8_t track) {
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
		arena_free(s, s->table);
		s->table = nt;
		s->tmask = nsize - 1;
	}
	struct emu_block b = {addr, len, insns, id, saved, end, 1, quiet, fold, head, cycle, track};
	table_insert(s->table, s->tmask, &b);
	s->tcount++;
}

static void replay_forget(struct emu_state *s);

void emu_table_clear(struct emu_state *s) {
	replay_forget(s); // its blocks go
	memset(s->table, 0, (s->tmask + 1) * sizeof *s->table);
	memset(s->hot, 0, sizeof s->hot);
	s->tcount = 0;
	s->hist_n = 0;
}

// hist_push records that the current thread ran block b (with an event).
static inline void hist_push(struct emu_state *s, const struct emu_block *b) {
	s->hist_at = (s->hist_at + 1) & 3;
	s->hist[s->hist_at] = b->id;
	s->hist_key[s->hist_at] = b->cycle;
	if (s->hist_n < 4)
		s->hist_n++;
}

// hist_back returns the slot of the block the thread ran i + 1 blocks ago.
static inline uint32_t hist_back(const struct emu_state *s, uint32_t i) {
	return (s->hist_at - i) & 3;
}

// cycle_period returns the smallest p (1 to 4) such that b is the block
// the thread ran p blocks ago and the p blocks since are of b's periodic-run
// key and named by their events, or 0: a periodic run may start at b
// (Options.FoldCycles).
static inline uint8_t cycle_period(const struct emu_state *s, const struct emu_block *b) {
	for (uint32_t i = 0; i < s->hist_n; i++) {
		uint32_t j = hist_back(s, i);
		if (s->hist_key[j] != b->cycle || !s->hist[j])
			return 0;
		if (s->hist[j] == b->id)
			return (uint8_t)(i + 1);
	}
	return 0;
}

static inline struct emu_event *push(struct emu_state *s) {
	if (s->n == s->cap) {
		s->drains++;
		emuDrain(s->handle); // rare: once per buffer; Go empties it
	}
	return &s->buf[s->n++];
}

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

// no_event: the block gets no event; no run goes on across it, nor does a
// merged access, nor a periodic run's history.
static inline void no_event(struct emu_state *s) {
	s->fold_at = 0;
	s->win_at = s->n;
	s->hist_n = 0;
}

// hook_count is the block hook of an engine without Block events
// (`emuprof run`, memory tracing alone): block_enter and no more, a
// shorter function than hook_block, which saves more registers.
// Its common case (a known block within the budget, no memory events)
// is inline and the rest out of line, so that the common case saves no
// registers: at one call per block, that was a third of the hook's time.
static inline struct emu_hot *hot_slot(struct emu_state *s, uint64_t addr) {
	return &s->hot[(addr ^ (addr >> 10)) & (HOT_SLOTS - 1)];
}

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

// read_sp returns the guest's RSP (at a block's start, in a block hook).
static inline uint64_t read_sp(uc_engine *uc, const struct emu_state *s) {
	uint64_t sp = 0;
	if (s->rsp)
		sp = *s->rsp;
	else
		uc_reg_read(uc, UC_X86_REG_RSP, &sp);
	return sp;
}

// Replay (Options.Replay). A loop that calls into other routines (a lock
// and an unlock per iteration) makes a few events an iteration that no
// run of blocks can fold, and the hook's event logic per block is then
// a good part of what `emuprof parallel` costs over `run`
// (docs/PERFORMANCE.md). When a thread's last blocks are a
// period whose first block started an event, and the hook's state (the
// run, the repeat ring, the last blocks) is the same at both ends of it,
// the same blocks from this state make the same events again, a period's
// units later. So the hook stops making them: it checks that each block
// is the period's next (and an event's stack pointer its template's) and
// counts. On leaving (another block, a stop) it writes the whole periods'
// events from the template, restores the state of a period's start and
// makes the partial period's events with the ordinary logic. The events
// are those the ordinary logic makes, in the same order, byte for byte;
// only when the hook writes them changes. Not with memory events (their
// order among the blocks'), nor with speedups (a period's time would not
// be an integral number of ns).
#define RP_BLOCKS 32 // longest period, in blocks
#define RP_LAST 64   // blocks remembered (a power of two above RP_BLOCKS)
#define RP_EVENTS 32 // most events a period may make
#define RP_RING 64   // event starts remembered (a power of two above RP_EVENTS)
#define RP_IDS 256   // event-starting blocks remembered by id (a power of two)
#define RP_FAILS 4      // failures in a row before a back-off (replay_failed)
#define RP_DRY 4096     // event starts without a replay that count as one such
#define RP_PAYS 8       // whole periods a replay must last to pay for itself (qsort's last 3)
#define RP_IDLE 64      // event starts of the first back-off
#define RP_IDLE_MAX 10  // the longest is RP_IDLE << RP_IDLE_MAX

static inline uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

// rp_state is the hook's state that its event logic reads, as it is
// when the block's logic has put the block in the repeat ring (all that
// it changes before it decides whether the block starts an event). It
// is copied as it is (once per event) and put in order (rings latest
// first) only to compare two (rp_same).
struct rp_state {
	uint32_t hist[4], hist_key[4], ring[4];
	uint32_t hist_n, hist_at, ring_at, fold_key;
	uint8_t fold_open; // fold_at == n: the last event may be extended
	uint8_t fold_end, fold_period;
};

// rp_block names a block by what finds it in the table, which grows
// (and moves) when a new block is translated.
struct rp_block {
	uint64_t addr;
	uint32_t len, id; // id: in a replay's period (seq)
};

struct rp_start { // an event-starting block of this engine run
	uint32_t id;
	uint64_t c;      // its number among the run's blocks
	uint32_t n;      // index of its event in the buffer
	uint32_t drains; // the buffers handed on before it
	int64_t units;
	struct rp_state st; // the state when its logic decided to start it
};

struct emu_replay {
	uint32_t gen;     // this engine run's (last_gen entries of other runs are stale)
	uint64_t c;       // blocks in this run
	struct rp_block blk[RP_LAST]; // the last blocks, by c
	uint64_t ne;      // event starts in this run
	struct rp_start ev[RP_RING];
	uint32_t last_id[RP_IDS], last_gen[RP_IDS];
	uint64_t last_ne[RP_IDS];
	uint32_t cand_p, cand_e; // the period of the last start that would have entered
	int recording;    // 0 while replay_exit regenerates events
	// Back-off: a replay that ends within a few periods cost more (the
	// template, the partial period again) than it saved, and so did the
	// remembering and trying of RP_DRY event starts without a replay;
	// after a few in a row the hook neither remembers nor tries for idle
	// event starts, twice as many each time.
	uint32_t idle, fails;
	uint32_t dry; // event starts since the last replay began
	// While replaying:
	int on;
	uint32_t len, pos, nev;
	struct rp_block seq[RP_BLOCKS];
	int8_t starts[RP_BLOCKS]; // the template event block i starts, or -1
	struct emu_event tmpl[RP_EVENTS]; // time: relative to the period's start
	uint64_t count;   // whole periods replayed
	int64_t first;    // units at the first replayed period's start
	int64_t units0;   // units at the current period's start
	int64_t uper;     // units a period
	struct rp_state st; // the state before every period's first block
	uint64_t replayed; // blocks replayed in the engine's life (tests)
};

static int replay_try(struct emu_state *s, const struct emu_block *b, int64_t units, uint64_t sp, uint32_t ring_at_before, uint32_t lost, const uint32_t *cleared);
static inline void replay_event_start(struct emu_state *s, const struct emu_block *b, int64_t units);
static void replay_idle(struct emu_state *s);
static void replay_failed(struct emu_replay *r);
static void replay_reset(struct emu_replay *r);

// ring_holds reports whether block id is among the thread's last four
// that Options.Repeats accepts (s->ring).
static inline int ring_holds(const struct emu_state *s, uint32_t id) {
	return id == s->ring[0] || id == s->ring[1] || id == s->ring[2] || id == s->ring[3];
}

// ring_push makes block id the latest of the ring and returns the one it
// replaces.
static inline uint32_t ring_push(struct emu_state *s, uint32_t id) {
	s->ring_at = (s->ring_at + 1) & 3;
	uint32_t lost = s->ring[s->ring_at];
	s->ring[s->ring_at] = id;
	return lost;
}

// replay_record remembers the block at addr (len bytes) as the engine
// run's latest, for a replay to find its period in (r->blk).
static inline void replay_record(struct emu_replay *r, uint64_t addr, uint32_t len) {
	struct rp_block *x = &r->blk[r->c & (RP_LAST - 1)];
	x->addr = addr;
	x->len = len;
	r->c++;
}

// run_to_extend returns the Block event that block b extends (rep: b is
// in the Repeats ring), or NULL.
// A block of the same routine and line as the run the last event
// describes, entered by falling through or a branch (not a call or
// a return), extends that event: it becomes the run's last block
// (Options.Fold). Not the routine's entry: a branch there may be a
// tail call, which call tracking must see.
// Between that event and this block there may only be the memory
// events of its blocks (fold_mem): any other event resets fold_at.
// A periodic run (fold_period) goes on only with the block it
// repeats, the one a period ago, of its routine (b->cycle); an
// ordinary one not with a block that repeats (Options.Repeats).
static inline struct emu_event *run_to_extend(const struct emu_state *s, const struct emu_block *b, int rep) {
	if (!(!b->head && s->fold_at && (s->fold_at == s->n || s->fold_mem) && (s->fold_period || !rep) &&
	      (s->fold_end == END_OTHER || s->fold_end == END_COND || s->fold_end == END_JUMP) &&
	      (s->fold_period ? b->cycle && s->fold_key == b->cycle && s->fold_period <= s->hist_n && s->hist[hist_back(s, s->fold_period - 1)] == b->id
			      : b->fold && s->fold_key == b->fold)))
		return NULL;
	struct emu_event *e = &s->buf[s->fold_at - 1];
	return e->tid == s->tid && e->folded < 255 ? e : NULL;
}

// extend_run makes block b the last of the run event e describes.
static inline void extend_run(struct emu_state *s, struct emu_event *e, const struct emu_block *b) {
	e->folded++;
	e->size += b->insns;
	e->block = b->id;
	e->end = b->end;
	s->fold_end = b->end;
	if (!s->fold_period)
		s->hist[s->hist_at] = 0; // now inside the run: its event does not name it
	hist_push(s, b);
}

// block_events is hook_block's part after block_enter: the block's
// events, for block b starting at units (hundredths of instructions into
// the slice). A replay regenerating a period's blocks (replay_exit) gives
// the stack pointer each event had (sp_given), instead of RSP now.
static inline __attribute__((always_inline)) void block_events(uc_engine *uc, struct emu_state *s, struct emu_block *b, int64_t units, int sp_given, uint64_t sp) {
	if (!(s->want_blocks && !b->quiet)) {
		no_event(s);
		return;
	}
	// Options.Repeats: is the block one of the thread's last four
	// it accepts since one it refuses? Every block counts, those
	// inside runs too. (Options.Replay may need the ring as it was:
	// what the update loses is kept.)
	uint8_t rep = 0;
	uint32_t ring_at_before = s->ring_at, lost = 0, cleared[4];
	int was_cleared = 0;
	if (s->want_repeat) {
		if (b->track) {
			rep = ring_holds(s, b->id);
			lost = ring_push(s, b->id);
		} else if (s->ring[s->ring_at]) {
			if (s->rp) {
				memcpy(cleared, s->ring, sizeof cleared);
				was_cleared = 1;
			}
			memset(s->ring, 0, sizeof s->ring);
		}
	}
	struct emu_event *run = run_to_extend(s, b, rep);
	if (run) {
		extend_run(s, run, b);
		return;
	}
	uint64_t esp = 0;
	if (sp_given)
		esp = sp;
	else if (s->want_sp)
		esp = read_sp(uc, s);
	if (s->rp && s->rp->recording) {
		// The block starts an event: a period may start here.
		if (s->rp->idle) {
			replay_idle(s);
		} else {
			if (replay_try(s, b, units, esp, ring_at_before, lost, was_cleared ? cleared : NULL))
				return;
			replay_event_start(s, b, units);
			if (++s->rp->dry == RP_DRY)
				replay_failed(s->rp); // code that does not loop so
		}
	}
	struct emu_event *e = push(s);
	e->addr = b->addr;
	e->aux = esp;
	if (!s->eager_time)
		s->cur_time = slice_clock(s->time_base, units, s->ns_per_insn);
	e->time = s->cur_time;
	e->size = b->insns;
	e->tid = s->tid;
	e->block = b->id;
	e->kind = EV_BLOCK;
	e->end = b->end;
	e->folded = 0;
	s->fold_end = b->end;
	s->win_at = s->n;
	// A periodic run starts at a block the thread ran a period ago,
	// all that period in the block's routine and named by events:
	// it goes on repeating those blocks (trace.Event.Period).
	// Otherwise an ordinary run may start, unless the block repeats.
	s->fold_period = b->cycle ? cycle_period(s, b) : 0;
	e->flags = (uint8_t)(s->fold_period << 1) | (rep ? FLAG_REPEAT : 0);
	s->fold_key = s->fold_period ? b->cycle : rep ? 0 : b->fold;
	s->fold_at = s->fold_key ? s->n : 0;
	hist_push(s, b);
}

static inline void rp_snap(const struct emu_state *s, const uint32_t ring[4], uint32_t ring_at, struct rp_state *st) {
	memcpy(st->hist, s->hist, sizeof st->hist);
	memcpy(st->hist_key, s->hist_key, sizeof st->hist_key);
	memcpy(st->ring, ring, sizeof st->ring);
	st->hist_n = s->hist_n;
	st->hist_at = s->hist_at;
	st->ring_at = ring_at;
	st->fold_key = s->fold_key;
	st->fold_open = s->fold_at != 0 && s->fold_at == s->n;
	st->fold_end = s->fold_end;
	st->fold_period = s->fold_period;
}

// rp_same compares two states, their rings in order (where each starts
// depends on how many blocks went by, not on what the logic does).
static int rp_same(const struct rp_state *a, const struct rp_state *b) {
	if (a->hist_n != b->hist_n || a->fold_key != b->fold_key || a->fold_open != b->fold_open ||
	    a->fold_end != b->fold_end || a->fold_period != b->fold_period)
		return 0;
	for (uint32_t i = 0; i < 4; i++) {
		uint32_t ja = (a->hist_at - i) & 3, jb = (b->hist_at - i) & 3;
		if (a->hist[ja] != b->hist[jb] || a->hist_key[ja] != b->hist_key[jb] ||
		    a->ring[(a->ring_at - i) & 3] != b->ring[(b->ring_at - i) & 3])
			return 0;
	}
	return 1;
}

static void rp_restore(struct emu_state *s, const struct rp_state *st) {
	memcpy(s->hist, st->hist, sizeof s->hist);
	memcpy(s->hist_key, st->hist_key, sizeof s->hist_key);
	memcpy(s->ring, st->ring, sizeof s->ring);
	s->hist_n = st->hist_n;
	s->hist_at = st->hist_at;
	s->ring_at = st->ring_at;
	s->fold_key = st->fold_key;
	s->fold_at = st->fold_open ? s->n : 0;
	s->fold_end = st->fold_end;
	s->fold_period = st->fold_period;
	s->win_at = s->n;
}

// replay_event_start remembers that block b (at units) starts an event;
// the repeat ring has taken b (see rp_state).
static inline void replay_event_start(struct emu_state *s, const struct emu_block *b, int64_t units) {
	struct emu_replay *r = s->rp;
	struct rp_start *v = &r->ev[r->ne & (RP_RING - 1)];
	v->id = b->id;
	v->c = r->c - 1; // hook_block counted it
	v->n = s->n;
	v->drains = s->drains;
	v->units = units;
	rp_snap(s, s->ring, s->ring_at, &v->st);
	uint32_t h = b->id & (RP_IDS - 1);
	r->last_id[h] = b->id;
	r->last_gen[h] = r->gen;
	r->last_ne[h] = r->ne;
	r->ne++;
}

// replay_advance counts a replayed block: the period's next, or its
// first again after a whole period.
static inline void replay_advance(struct emu_replay *r) {
	if (++r->pos == r->len) {
		r->pos = 0;
		r->count++;
		r->units0 += r->uper;
	}
	r->replayed++;
}

// replay_try starts replaying at block b (at units, whose logic has put
// it in the repeat ring and decided that it starts an event with stack
// pointer sp) if b started an event a period ago from the same state; it
// reports whether it did (b is then replayed: its event is the
// template's first). The ring before b's update was at ring_at_before;
// the update overwrote lost there, or cleared the ring (cleared: what it
// held).
static __attribute__((noinline)) int replay_try(struct emu_state *s, const struct emu_block *b, int64_t units, uint64_t sp, uint32_t ring_at_before, uint32_t lost, const uint32_t *cleared) {
	struct emu_replay *r = s->rp;
	uint32_t h = b->id & (RP_IDS - 1);
	if (r->last_id[h] != b->id || r->last_gen[h] != r->gen)
		return 0;
	uint64_t k = r->last_ne[h];
	uint32_t nev = (uint32_t)(r->ne - k);
	const struct rp_start *v = &r->ev[k & (RP_RING - 1)];
	uint64_t p = r->c - 1 - v->c; // b is block r->c - 1
	if (nev == 0 || nev > RP_EVENTS || p == 0 || p > RP_BLOCKS || v->id != b->id || v->drains != s->drains ||
	    v->n > s->n || s->n - v->n != nev)
		return 0;
	struct rp_state now;
	rp_snap(s, s->ring, s->ring_at, &now);
	if (!rp_same(&now, &v->st))
		return 0;
	// Two starts in a row found this period: the loop has gone round
	// at least once since it began (fewer false starts on other code).
	if (r->cand_p != p || r->cand_e != nev) {
		r->cand_p = (uint32_t)p;
		r->cand_e = nev;
		return 0;
	}
	int64_t uper = units - v->units;
	int64_t sum = 0;
	for (uint64_t i = 0; i < p; i++) {
		const struct rp_block *x = &r->blk[(v->c + i) & (RP_LAST - 1)];
		const struct emu_block *xb = table_find(s, x->addr, x->len);
		if (!xb || xb->saved)
			return 0;
		r->seq[i] = *x;
		r->seq[i].id = xb->id;
		r->starts[i] = -1;
		sum += (int64_t)xb->insns * 100;
	}
	if (sum != uper || r->seq[0].id != b->id)
		return 0;
	int64_t t0 = slice_clock(s->time_base, v->units, s->ns_per_insn);
	for (uint32_t j = 0; j < nev; j++) {
		const struct rp_start *w = &r->ev[(k + j) & (RP_RING - 1)];
		r->starts[w->c - v->c] = (int8_t)j;
		r->tmpl[j] = s->buf[v->n + j];
		r->tmpl[j].time -= t0;
	}
	if (s->want_sp && sp != r->tmpl[0].aux)
		return 0;
	r->len = (uint32_t)p;
	r->nev = nev;
	r->uper = uper;
	r->first = r->units0 = units;
	r->count = 0;
	// Every period ends in the state the hook is in now, before b:
	// the template's started from the same state (as b's logic will
	// have it) and ran the same blocks. A replay ends in it too.
	uint32_t ring_before[4];
	if (cleared) {
		memcpy(ring_before, cleared, sizeof ring_before);
	} else {
		memcpy(ring_before, s->ring, sizeof ring_before);
		if (s->want_repeat && b->track)
			ring_before[s->ring_at] = lost;
	}
	rp_snap(s, ring_before, ring_at_before, &r->st);
	r->on = 1;
	r->dry = 0;
	r->pos = 0;
	replay_advance(r);
	return 1;
}

// replay_step replays block b if it is the period's next, and reports
// whether it did.
static inline int replay_step(uc_engine *uc, struct emu_state *s, struct emu_block *b) {
	struct emu_replay *r = s->rp;
	if (b->id != r->seq[r->pos].id)
		return 0;
	int8_t j = r->starts[r->pos];
	if (j >= 0 && s->want_sp && read_sp(uc, s) != r->tmpl[j].aux)
		return 0;
	replay_advance(r);
	return 1;
}

// replay_write writes a period's events, the period starting at time t0.
static void replay_write(struct emu_state *s, int64_t t0) {
	struct emu_replay *r = s->rp;
	for (uint32_t j = 0; j < r->nev; j++) {
		struct emu_event *e = push(s);
		*e = r->tmpl[j];
		e->time += t0;
	}
}

// replay_exit stops replaying: the whole periods' events, the state of
// a period's start, then the partial period's events from its blocks.
static __attribute__((noinline)) void replay_exit(uc_engine *uc, struct emu_state *s) {
	struct emu_replay *r = s->rp;
	r->on = 0;
	int64_t t0 = slice_clock(s->time_base, r->first, s->ns_per_insn);
	int64_t dt = r->uper * s->ns_per_insn / 100;
	if (s->repeat_events && r->count >= 3 && s->cap - s->n >= 1 + 2 * r->nev) {
		// A Repeat event stands for the periods between the first and
		// the last (trace.Needs.RepeatEvents), all in this buffer.
		// The last is written out: the block that ends the replay may
		// extend its last event (a run).
		struct emu_event *h = push(s);
		memset(h, 0, sizeof *h);
		h->kind = EV_REPEAT;
		h->tid = s->tid;
		h->size = r->nev;
		h->aux = r->count - 2;
		h->addr = (uint64_t)dt;
		h->time = t0 + r->tmpl[0].time;
		replay_write(s, t0);
		replay_write(s, t0 + (int64_t)(r->count - 1) * dt);
	} else {
		for (uint64_t k = 0; k < r->count; k++)
			replay_write(s, t0 + (int64_t)k * dt);
	}
	rp_restore(s, &r->st);
	if (s->n > 0)
		s->cur_time = s->buf[s->n - 1].time;
	r->recording = 0;
	int64_t u = r->units0;
	for (uint32_t i = 0; i < r->pos; i++) {
		struct emu_block *b = table_find(s, r->seq[i].addr, r->seq[i].len); // ran: it is there
		int8_t j = r->starts[i];
		block_events(uc, s, b, u, 1, j >= 0 ? r->tmpl[j].aux : 0);
		u += (int64_t)b->insns * 100;
	}
	r->recording = 1;
	replay_reset(r); // what the hook remembers of this run's blocks went by
	if (r->count >= RP_PAYS)
		r->fails = 0;
	else
		replay_failed(r);
}

// replay_reset forgets the blocks and event starts the hook remembers
// (their entries by id become stale with the generation).
static void replay_reset(struct emu_replay *r) {
	r->gen++;
	r->c = 0;
	r->ne = 0;
	r->cand_p = r->cand_e = 0;
}

// replay_failed counts a replay that ended before RP_PAYS whole periods,
// or RP_DRY event starts without a replay: a few in a row start a
// back-off.
static void replay_failed(struct emu_replay *r) {
	r->dry = 0;
	if (++r->fails >= RP_FAILS)
		r->idle = RP_IDLE << min_u32(r->fails - RP_FAILS, RP_IDLE_MAX);
}

// replay_idle counts an event start of a back-off; at its end the hook
// remembers afresh.
static void replay_idle(struct emu_state *s) {
	struct emu_replay *r = s->rp;
	if (--r->idle == 0)
		replay_reset(r);
}

// replay_stop ends a replay in progress, if any.
static inline void replay_stop(uc_engine *uc, struct emu_state *s) {
	if (s->rp && s->rp->on)
		replay_exit(uc, s);
}

// fold_fast is hook_block's common case (99% of the blocks of a compute
// loop): block b extends the run its thread's last event describes, and
// no replay is on. It tests block_events' conditions for that before it
// changes anything, then makes hook_block's changes in hook_block's order
// (the replay's block record, the Repeats ring, the event, the history),
// and reports whether it did; if not, nothing changed and the general
// path runs. Inline in hook_block, it spares such a block the call and the
// large frame of hook_block_general.
static inline __attribute__((always_inline)) int fold_fast(struct emu_state *s, const struct emu_block *b, uint64_t addr, uint32_t len) {
	struct emu_replay *r = s->rp;
	if ((r && r->on) || !s->want_blocks || b->quiet)
		return 0;
	// Whether b repeats matters only to an ordinary run.
	int rep = !s->fold_period && s->want_repeat && b->track && ring_holds(s, b->id);
	struct emu_event *e = run_to_extend(s, b, rep);
	if (!e)
		return 0;
	if (r && !r->idle)
		replay_record(r, addr, len);
	if (s->want_repeat) {
		if (b->track)
			ring_push(s, b->id);
		else if (s->ring[s->ring_at])
			memset(s->ring, 0, sizeof s->ring);
	}
	extend_run(s, e, b);
	return 1;
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
			replay_exit(uc, s); // b is not the period's next (hook_block)
		if (!r->idle)
			replay_record(r, addr, len);
	}
	block_events(uc, s, b, units, 0, 0);
}

int emu_replay_init(struct emu_state *s) {
	if (!s->rp)
		s->rp = calloc(1, sizeof *s->rp);
	if (!s->rp)
		return 0;
	s->rp->recording = 1;
	return 1;
}

// replay_forget ends a replay (writing its events) and forgets the
// blocks the hook remembers.
static void replay_forget(struct emu_state *s) {
	struct emu_replay *r = s->rp;
	if (!r)
		return;
	replay_stop(s->uc, s);
	replay_reset(r);
}

// emu_replay_begin starts an engine run: what the hook remembers is of
// the previous one's blocks (another slice, maybe another thread).
void emu_replay_begin(struct emu_state *s) {
	s->drains = 0;
	replay_forget(s);
}

// emu_replay_end ends an engine run: a replay in progress writes its
// events (Go may emit or drain next).
void emu_replay_end(struct emu_state *s) {
	replay_stop(s->uc, s);
}

uint64_t emu_replayed_blocks(struct emu_state *s) { return s->rp ? s->rp->replayed : 0; }

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

static void hook_mem(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user) {
	struct emu_state *s = user;
	uint8_t kind = type == UC_MEM_WRITE ? EV_WRITE : EV_READ;
	if (s->mem_merge && s->win_at < s->n && merge_access(s, kind, addr, (uint32_t)size))
		return;
	struct emu_event *e = push(s);
	e->addr = addr;
	e->aux = 0;
	e->time = s->cur_time;
	e->size = (uint32_t)size;
	e->tid = s->tid;
	e->block = 0;
	e->kind = kind;
	e->end = 0;
	e->flags = 0;
	e->folded = 0;
}

static void hook_syscall(uc_engine *uc, void *user) {
	struct emu_state *s = user;
	s->reason = STOP_SYSCALL;
	uc_emu_stop(uc);
}

static bool hook_invalid(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user) {
	struct emu_state *s = user;
	// A page the address space backs on first touch (MAP_NORESERVE):
	// once Go has mapped it, the engine makes the access again.
	if (s->want_touch && (type == UC_MEM_READ_UNMAPPED || type == UC_MEM_WRITE_UNMAPPED) &&
	    emuTouch(s->handle, addr, size))
		return true;
	s->reason = STOP_FAULT;
	s->fault_addr = addr;
	s->fault_type = type;
	s->fault_size = size;
	uc_reg_read(uc, UC_X86_REG_RIP, &s->fault_pc);
	return false;
}

static void hook_intr(uc_engine *uc, uint32_t intno, void *user) {
	struct emu_state *s = user;
	s->reason = STOP_INTR;
	s->intno = intno;
	uc_emu_stop(uc);
}

// The CPU the guest sees. Unicorn 2.0.1 reports leaf-1 feature bits without
// FPU, TSC, MMX or SSE3 (the same for every CPU model), which makes glibc's
// ld.so refuse libraries marked x86-64-baseline ("CPU ISA level is lower
// than required"). So cpuid is answered here, with a fixed, host-independent
// x86-64-v2 CPU whose every advertised feature the emulator implements:
// no AVX, no BMI, no XSAVE, so guests pick SSE2..SSE4.2 code paths.
static void cpuid_leaf(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
	static const char brand[48] = "emuprof virtual x86-64 CPU";
	r[0] = r[1] = r[2] = r[3] = 0;
	switch (leaf) {
	case 0:
	case 0x80000000:
		r[0] = leaf == 0 ? 7 : 0x80000008;
		memcpy(&r[1], "Auth", 4); // ebx, edx, ecx spell AuthenticAMD
		memcpy(&r[3], "enti", 4);
		memcpy(&r[2], "cAMD", 4);
		break;
	case 1:
		r[0] = 0x00000663;          // family 6 model 6 stepping 3
		r[1] = 0x00010800;          // clflush 64 bytes, 1 logical cpu
		r[2] = 0x00982201;          // sse3 ssse3 cx16 sse4.1 sse4.2 popcnt
		r[3] = 0x078bfbff;          // fpu tsc cx8 cmov mmx fxsr sse sse2 ...
		break;
	case 0x80000001:
		r[0] = 0x00000663;
		r[2] = 0x00000001;          // lahf/sahf in 64-bit mode
		r[3] = 0x20100800;          // syscall nx lm
		break;
	case 0x80000002:
	case 0x80000003:
	case 0x80000004:
		memcpy(r, brand + 16 * (leaf - 0x80000002), 16);
		break;
	case 0x80000005:
		r[2] = r[3] = 0x20080140;   // L1d/L1i: 32 KiB, 8-way, 64-byte lines
		break;
	case 0x80000006:
		r[2] = 0x02006040;          // L2: 512 KiB, 8-way, 64-byte lines
		r[3] = 0x00406040;          // L3: 8 MiB
		break;
	case 0x80000008:
		r[0] = 0x00003028;          // 40-bit physical, 48-bit virtual addresses
		break;
	}
	(void)sub;
}

static int hook_cpuid(uc_engine *uc, void *user) {
	uint64_t rax, rcx;
	uint32_t r[4];
	uc_reg_read(uc, UC_X86_REG_RAX, &rax);
	uc_reg_read(uc, UC_X86_REG_RCX, &rcx);
	cpuid_leaf((uint32_t)rax, (uint32_t)rcx, r);
	uint64_t a = r[0], b = r[1], c = r[2], d = r[3];
	uc_reg_write(uc, UC_X86_REG_RAX, &a);
	uc_reg_write(uc, UC_X86_REG_RBX, &b);
	uc_reg_write(uc, UC_X86_REG_RCX, &c);
	uc_reg_write(uc, UC_X86_REG_RDX, &d);
	return 1; // skip the engine's own cpuid
}

struct emu_state *emu_state_new(uc_engine *uc, uintptr_t handle, uint32_t cap) {
	struct emu_state *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->uc = uc;
	s->handle = handle;
	s->cap = cap;
	s->ns_per_insn = 1;
	s->tmask = (1u << 14) - 1;
	size_t bufs = 2 * (((size_t)cap * sizeof *s->buf + 63) & ~(size_t)63), tab = (s->tmask + 1) * sizeof *s->table;
	if (bufs + tab <= ARENA_ALIGN)
		arena_reserve(s, bufs + tab);
	size_t at = 0;
	s->buf = arena_calloc(s, &at, (size_t)cap * sizeof *s->buf);
	s->spare = arena_calloc(s, &at, (size_t)cap * sizeof *s->spare);
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
	free(s);
}

uc_err emu_install_base(struct emu_state *s, int bare) {
	uc_hook h;
	uc_err err;
	// Block events are wanted or not for the engine's life (Options).
	if (!bare && (err = uc_hook_add(s->uc, &h, UC_HOOK_BLOCK, s->want_blocks ? hook_block : hook_count, s, 1, 0)))
		return err;
	if ((err = uc_hook_add(s->uc, &h, UC_HOOK_INSN, hook_syscall, s, 1, 0, UC_X86_INS_SYSCALL)))
		return err;
	if ((err = uc_hook_add(s->uc, &h, UC_HOOK_INSN, hook_cpuid, s, 1, 0, UC_X86_INS_CPUID)))
		return err;
	if ((err = uc_hook_add(s->uc, &h, UC_HOOK_MEM_INVALID, hook_invalid, s, 1, 0)))
		return err;
	return uc_hook_add(s->uc, &h, UC_HOOK_INTR, hook_intr, s, 1, 0);
}

uc_err emu_install_mem(struct emu_state *s) {
	uc_hook h;
	return uc_hook_add(s->uc, &h, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, hook_mem, s, 1, 0);
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
