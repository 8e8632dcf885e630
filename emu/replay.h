// Replay's state and the parts of it the block hooks run inline (hook.c,
// fold.h); the rest, entering and leaving a replay, is in replay.c.
#ifndef EMUPROF_REPLAY_H
#define EMUPROF_REPLAY_H

#include <string.h>
#include "state.h"

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
	int recording;    // 0 while emu_replay_exit regenerates events
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

int emu_replay_try(struct emu_state *s, const struct emu_block *b, int64_t units, uint64_t sp, uint32_t ring_at_before, uint32_t lost, const uint32_t *cleared);
void emu_replay_exit(uc_engine *uc, struct emu_state *s);
void emu_replay_forget(struct emu_state *s);

// replay_record remembers the block at addr (len bytes) as the engine
// run's latest, for a replay to find its period in (r->blk).
static inline void replay_record(struct emu_replay *r, uint64_t addr, uint32_t len) {
	struct rp_block *x = &r->blk[r->c & (RP_LAST - 1)];
	x->addr = addr;
	x->len = len;
	r->c++;
}

// rp_snap copies the hook's state into st, with ring (at ring_at) for
// the repeat ring.
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

// replay_reset forgets the blocks and event starts the hook remembers
// (their entries by id become stale with the generation).
static inline void replay_reset(struct emu_replay *r) {
	r->gen++;
	r->c = 0;
	r->ne = 0;
	r->cand_p = r->cand_e = 0;
}

// replay_failed counts a replay that ended before RP_PAYS whole periods,
// or RP_DRY event starts without a replay: a few in a row start a
// back-off.
static inline void replay_failed(struct emu_replay *r) {
	r->dry = 0;
	if (++r->fails >= RP_FAILS)
		r->idle = RP_IDLE << min_u32(r->fails - RP_FAILS, RP_IDLE_MAX);
}

// replay_idle counts an event start of a back-off; at its end the hook
// remembers afresh.
static inline void replay_idle(struct emu_state *s) {
	struct emu_replay *r = s->rp;
	if (--r->idle == 0)
		replay_reset(r);
}

// replay_stop ends a replay in progress, if any.
static inline void replay_stop(uc_engine *uc, struct emu_state *s) {
	if (s->rp && s->rp->on)
		emu_replay_exit(uc, s);
}

#endif
