// Stores without allocations on Debian's Unicorn 2.0.1.
//
// Unicorn 2.0.1 keeps no dirty-page bitmap, so every guest store to RAM
// takes QEMU's "not dirty" slow path (cputlb.c, notdirty_write), which
// calls page_collection_lock and page_collection_unlock around its check
// for translated code on the page. In QEMU they lock the pages a TB
// invalidation touches; Unicorn runs one vCPU and its page locks are
// no-ops, so all that is left of them is a GTree allocated and freed per
// store: a fifth of `emuprof run`'s time on store-heavy code. Unicorn
// itself dropped them in 2023 (upstream commit 75d26b7, "Ignore
// page_collection_lock": lock returns NULL, unlock does nothing; the
// collection is only ever handed back to unlock).
//
// libunicorn calls both through its PLT, so the executable's definitions
// take their place: Go links cgo programs with -rdynamic on ELF systems,
// which puts them in the executable's dynamic symbol table. Translations are still dropped when a store changes code
// (tb_invalidate_phys_page_fast is untouched): TestSelfModifyingCode.
// Other systems' Unicorn (Homebrew's is 2.1 or later) has the fix.
#include <stddef.h>
#include <stdint.h>

#include "hooks.h"

#ifdef __linux__
struct uc_struct;
struct page_collection;

// Calls, so that a test can see libunicorn reach this definition. One
// engine runs at a time per thread; a lost increment between two would
// not matter.
static uint64_t collection_calls;

struct page_collection *page_collection_lock_x86_64(struct uc_struct *uc, uintptr_t start, uintptr_t end) {
	(void)uc;
	(void)start;
	(void)end;
	collection_calls++;
	return NULL;
}

void page_collection_unlock_x86_64(struct page_collection *set) {
	(void)set;
}

uint64_t emu_page_collections(void) { return collection_calls; }
#else
uint64_t emu_page_collections(void) { return 0; }
#endif
