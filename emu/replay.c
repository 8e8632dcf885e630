// Replay (Options.Replay): entering a replay when a thread's blocks repeat
// a period whose events repeat, and leaving it, which writes the periods'
// events; replay.h says what a replay is.
#include <stdlib.h>
#include <string.h>
#include "table.h"
#include "fold.h"

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

// emu_replay_try starts replaying at block b (at units, whose logic has put
// it in the repeat ring and decided that it starts an event with stack
// pointer sp) if b started an event a period ago from the same state; it
// reports whether it did (b is then replayed: its event is the
// template's first). The ring before b's update was at ring_at_before;
// the update overwrote lost there, or cleared the ring (cleared: what it
// held).
__attribute__((noinline)) int emu_replay_try(struct emu_state *s, const struct emu_block *b, int64_t units, uint64_t sp, uint32_t ring_at_before, uint32_t lost, const uint32_t *cleared) {
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

// replay_write writes a period's events, the period starting at time t0.
static void replay_write(struct emu_state *s, int64_t t0) {
	struct emu_replay *r = s->rp;
	for (uint32_t j = 0; j < r->nev; j++) {
		struct emu_event *e = push(s);
		*e = r->tmpl[j];
		e->time += t0;
	}
}

// emu_replay_exit stops replaying: the whole periods' events, the state of
// a period's start, then the partial period's events from its blocks.
__attribute__((noinline)) void emu_replay_exit(uc_engine *uc, struct emu_state *s) {
	struct emu_replay *r = s->rp;
	r->on = 0;
	int64_t t0 = slice_clock(s->time_base, r->first, s->ns_per_insn);
	int64_t dt = r->uper * s->ns_per_insn / 100;
	if (s->repeat_events && r->count >= 3 && s->cap - s->n >= 1 + 2 * r->nev) {
		// A Repeat event stands for the periods between the first and
		// the last (trace.Encoding.RepeatEvents), all in this buffer.
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

int emu_replay_init(struct emu_state *s) {
	if (!s->rp)
		s->rp = calloc(1, sizeof *s->rp);
	if (!s->rp)
		return 0;
	s->rp->recording = 1;
	return 1;
}

// emu_replay_forget ends a replay (writing its events) and forgets the
// blocks the hook remembers.
void emu_replay_forget(struct emu_state *s) {
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
	emu_replay_forget(s);
}

// emu_replay_end ends an engine run: a replay in progress writes its
// events (Go may emit or drain next).
void emu_replay_end(struct emu_state *s) {
	replay_stop(s->uc, s);
}

uint64_t emu_replayed_blocks(struct emu_state *s) { return s->rp ? s->rp->replayed : 0; }
