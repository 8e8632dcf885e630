// The calls by which Go changes the fold state (fold.h says what it is).
#include <string.h>
#include "hooks.h"

// emu_cut: Go appended an event, or emptied the buffer: no run goes on
// across it, nor does a merged access.
void emu_cut(struct emu_state *s) {
	s->fold_at = 0;
	s->win_at = s->n;
}

// emu_switch_thread stamps events with tid from now on. For another
// thread it returns the previous thread's part of the state, for Go to
// keep, and takes tid's (next: what this returned when tid last stopped
// running, or zero); the history is the previous thread's either way.
struct emu_thread_fold emu_switch_thread(struct emu_state *s, uint32_t tid, struct emu_thread_fold next) {
	struct emu_thread_fold prev;
	memcpy(prev.ring, s->ring, sizeof prev.ring);
	prev.ring_at = s->ring_at;
	if (tid != s->tid) {
		memcpy(s->ring, next.ring, sizeof s->ring);
		s->ring_at = next.ring_at;
	}
	s->tid = tid;
	s->hist_n = 0;
	return prev;
}

// emu_forget_thread: thread tid exited; if it is the current one, a thread
// that reuses its id starts with an empty ring, as the analyses see it.
void emu_forget_thread(struct emu_state *s, uint32_t tid) {
	if (s->tid == tid) {
		memset(s->ring, 0, sizeof s->ring);
		s->ring_at = 0;
	}
}
