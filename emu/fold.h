// The event logic of a block, inline in the block hooks (hook.c) and in a
// replay's exit (replay.c): Block events, runs of blocks folded into one
// (Options.Fold, FoldCycles), the Repeats ring, and the history periodic
// runs are found in.
//
// C owns the fold state; Go never writes its fields. The state (struct
// emu_state) is:
//   fold_at, fold_key, fold_end, fold_period  the run the last Block event
//                        describes, which the next block may extend;
//   hist, hist_key, hist_n, hist_at  the thread's last blocks with events
//                        (periodic runs);
//   ring, ring_at        the thread's last blocks Options.Repeats accepts;
//   win_at               where the memory events the next access may merge
//                        into start (memhooks.c).
// Who changes it: block_events, extend_run and no_event below (every
// block); rp_restore (replay.c, leaving a replay); emu_table_clear
// (table.c: the history names blocks that go); and, for Go, emu_cut when
// Go appends an event or drains the buffer, emu_switch_thread when another
// thread runs (its ring comes back from Go, which keeps each waiting
// thread's as an opaque struct emu_thread_fold) and emu_forget_thread when
// one exits (fold.c). What Go decides is per block and fixed at
// translation: the keys in struct emu_block (fold, cycle, head, track,
// quiet), and the configuration New sets once (want_repeat, fold_mem).
#ifndef EMUPROF_FOLD_H
#define EMUPROF_FOLD_H

#include <string.h>
#include "state.h"
#include "replay.h"

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

// no_event: the block gets no event; no run goes on across it, nor does a
// merged access, nor a periodic run's history.
static inline void no_event(struct emu_state *s) {
	s->fold_at = 0;
	s->win_at = s->n;
	s->hist_n = 0;
}

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
// the slice). A replay regenerating a period's blocks (emu_replay_exit) gives
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
			if (emu_replay_try(s, b, units, esp, ring_at_before, lost, was_cleared ? cleared : NULL))
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

#endif
