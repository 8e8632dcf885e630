// The block hook's hooked_regions, never filled.
//
// With a block hook, 2.0.1's translator_loop ends every translation with
// hooked_regions_check (uc_priv.h, inline): for each block and code hook
// whose range holds the block it calls g_hash_table_lookup on the hook's
// hooked_regions and, the first time, mallocs a HookedRegion and inserts
// it. The table serves only uc_hook_del (which invalidates the regions the
// hook instrumented), and emu/ never deletes a hook: its block hook lives
// as long as its engine. The bare engine, with no block hook, does none
// of it. libunicorn calls g_hash_table_lookup through its PLT, so the
// executable's definition below takes its place (unicornfix.c): for the
// hooked_regions of a block hook registered here it answers "present",
// and the translator skips the malloc and the insert. A hook is
// registered once its layout reads back as 2.0.1's, and forgotten before
// its engine closes (a later table may be allocated where it was).
#define _GNU_SOURCE
#include "hooks.h"

#ifdef __linux__
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SKIP_MAX 64
static struct {
	_Atomic(void *) table;
	void *uc;
} skip[SKIP_MAX];
static _Atomic int skip_n; // skip[0..skip_n) may hold tables
static pthread_mutex_t skip_mu = PTHREAD_MUTEX_INITIALIZER;

typedef void *(*lookup_fn)(void *, const void *);

void *g_hash_table_lookup(void *t, const void *key) {
	static lookup_fn real;
	int n = atomic_load_explicit(&skip_n, memory_order_acquire);
	for (int i = 0; i < n; i++)
		if (atomic_load_explicit(&skip[i].table, memory_order_relaxed) == t)
			return (void *)1;
	if (!real && !(real = (lookup_fn)dlsym(RTLD_NEXT, "g_hash_table_lookup")))
		abort(); // libunicorn calls this one, so it has its own
	return real(t, key);
}

// emu_regions_skip registers s's block hook h (callback cb), if it reads
// back as 2.0.1's, so that its hooked_regions stay empty.
void emu_regions_skip(struct emu_state *s, uc_hook h, void *cb) {
	s->block_hook = (void *)h;
	if (getenv("EMUPROF_HOOKED_REGIONS")) // for comparisons only
		return;
	struct hook201 got;
	if (uc_version(NULL, NULL) >> 8 != 0x020001 || !emu_read_self(&got, (void *)h, sizeof got) ||
	    got.type != UC_HOOK_BLOCK || got.callback != cb || got.user_data != s || got.begin != 1 || got.end != 0 ||
	    !got.hooked_regions)
		return;
	pthread_mutex_lock(&skip_mu);
	int n = atomic_load_explicit(&skip_n, memory_order_relaxed), i = 0;
	while (i < n && atomic_load_explicit(&skip[i].table, memory_order_relaxed))
		i++;
	if (i < SKIP_MAX) {
		skip[i].uc = s->uc;
		atomic_store_explicit(&skip[i].table, got.hooked_regions, memory_order_release);
		if (i == n)
			atomic_store_explicit(&skip_n, n + 1, memory_order_release);
	}
	pthread_mutex_unlock(&skip_mu);
}

// emu_regions_forget drops uc's tables (before uc_close frees them).
void emu_regions_forget(uc_engine *uc) {
	pthread_mutex_lock(&skip_mu);
	int n = atomic_load_explicit(&skip_n, memory_order_relaxed);
	for (int i = 0; i < n; i++)
		if (skip[i].uc == (void *)uc && atomic_load_explicit(&skip[i].table, memory_order_relaxed)) {
			atomic_store_explicit(&skip[i].table, NULL, memory_order_release);
			skip[i].uc = NULL;
		}
	pthread_mutex_unlock(&skip_mu);
}

// emu_hooked_regions reports how many regions s's block hook's
// hooked_regions holds (-1: unknown).
int emu_hooked_regions(struct emu_state *s) {
	struct hook201 got;
	unsigned (*size)(void *) = (unsigned (*)(void *))dlsym(RTLD_DEFAULT, "g_hash_table_size");
	if (!s->block_hook || !size || uc_version(NULL, NULL) >> 8 != 0x020001 ||
	    !emu_read_self(&got, s->block_hook, sizeof got) || !got.hooked_regions)
		return -1;
	return (int)size(got.hooked_regions);
}
#else
void emu_regions_skip(struct emu_state *s, uc_hook h, void *cb) {
	(void)cb;
	s->block_hook = (void *)h;
}
void emu_regions_forget(uc_engine *uc) { (void)uc; }
int emu_hooked_regions(struct emu_state *s) {
	(void)s;
	return -1;
}
#endif
