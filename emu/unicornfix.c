// Two slow paths of Debian's Unicorn 2.0.1 on every guest store, removed.
//
// libunicorn calls the functions below through its PLT, so the
// executable's definitions take their place: Go links cgo programs with
// -rdynamic on ELF systems, which puts them in the executable's dynamic
// symbol table. Other systems' Unicorn (Homebrew's is 2.1 or later) has
// upstream's fixes; there none of this is compiled.
//
// 1. Unicorn 2.0.1 keeps no dirty-page bitmap, so every store to RAM takes
// QEMU's "not dirty" slow path (cputlb.c, notdirty_write), which calls
// page_collection_lock and page_collection_unlock around its check for
// translated code on the page. In QEMU they lock the pages a TB
// invalidation touches; Unicorn runs one vCPU and its page locks are
// no-ops, so all that is left of them is a GTree allocated and freed per
// store: a fifth of `emuprof run`'s time on store-heavy code. Unicorn
// itself dropped them in 2023 (upstream commit 75d26b7, "Ignore
// page_collection_lock": lock returns NULL, unlock does nothing; the
// collection is only ever handed back to unlock). Translations are still
// dropped when a store changes code (tb_invalidate_phys_page_fast is
// untouched): TestSelfModifyingCode.
//
// 2. The same slow path (and every load or store a memory hook watches)
// looks up the mapped region of the address with memory_mapping (uc.c),
// whose one-entry cache 2.0.1 never fills: a binary search per access,
// a tenth of `emuprof run` on qsort and xz. memory_mapping below keeps
// the regions of the last pages looked up, per host thread; regions are
// page-aligned, so a page's region is its every byte's. The engine maps,
// unmaps and protects memory, and closes, only through the emu_mem_*
// functions at the end: Unicorn splits, moves and frees regions in them
// (looking regions up between its own changes), so the cache is bypassed
// while one runs and holds nothing from before it afterwards.
//
// 3. Not a slow path of Unicorn but of its API: a Block event carries the
// guest's stack pointer (call tracking unwinds by it), and uc_reg_read
// reaches it through uc_reg_read_batch, a function pointer and a switch
// over every register: 4 % of `emuprof parallel` on lock-bound code.
// emu_rsp_slot finds where 2.0.1 keeps RSP (env.regs[R_ESP] of the X86CPU
// that uc->cpu points to) for the block hook to read it directly: the
// word uc_reg_read copies. The offsets are 2.0.1's; they are checked, by
// reads that cannot fault, against values written with uc_reg_write, so
// any other build or version keeps uc_reg_read.
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>

#include "hooks.h"

#ifdef __linux__
#include <dlfcn.h>
#include <stdatomic.h>
#include <unistd.h>

struct uc_struct;
struct page_collection;
struct MemoryRegion;

// Calls, so that tests can see libunicorn reach these definitions. A lost
// increment between two threads would not matter.
static uint64_t collection_calls, mapping_hits;

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

typedef struct MemoryRegion *(*mapping_fn)(struct uc_struct *, uint64_t);

static _Atomic uint64_t mapping_generation = 1;

struct mapping_entry {
	struct uc_struct *uc;
	uint64_t page, generation;
	struct MemoryRegion *mr;
};

#define MAPPING_SLOTS 64
static __thread struct mapping_entry mapping_cache[MAPPING_SLOTS];
static __thread int mapping_changes; // an emu_mem_* call runs on this thread

struct MemoryRegion *memory_mapping(struct uc_struct *uc, uint64_t address) {
	static mapping_fn unicorns;
	uint64_t page = address >> 12;
	struct mapping_entry *e = &mapping_cache[page & (MAPPING_SLOTS - 1)];
	uint64_t gen = atomic_load_explicit(&mapping_generation, memory_order_acquire);
	if (e->generation == gen && e->page == page && e->uc == uc && !mapping_changes) {
		mapping_hits++;
		return e->mr;
	}
	if (!unicorns) {
		unicorns = (mapping_fn)dlsym(RTLD_NEXT, "memory_mapping");
		if (!unicorns)
			abort(); // libunicorn calls this one, so it has its own
	}
	struct MemoryRegion *mr = unicorns(uc, address);
	if (mr && !mapping_changes) { // unmapped addresses (faults) are rare: not kept
		e->uc = uc;
		e->page = page;
		e->mr = mr;
		e->generation = gen;
	}
	return mr;
}

static void changes_begin(void) {
	mapping_changes++;
	atomic_fetch_add_explicit(&mapping_generation, 1, memory_order_acq_rel);
}

static void changes_end(void) {
	atomic_fetch_add_explicit(&mapping_generation, 1, memory_order_acq_rel);
	mapping_changes--;
}

uint64_t emu_page_collections(void) { return collection_calls; }
uint64_t emu_mapping_hits(void) { return mapping_hits; }

#define UC201_VERSION 0x020001 // uc_version's 2.0.1 (less its last byte, 0xff for a release)
#define UC201_CPU 384            // offsetof(struct uc_struct, cpu)
#define UC201_RSP 34672          // offsetof(X86CPU, env.regs[R_ESP])

// read_self copies n bytes (at most a pipe's buffer) at src, or reports
// that it cannot: a wrong guess of a layout reads nothing instead of
// faulting. write(2) checks the source like any system call (EFAULT),
// and a pipe needs no permission (process_vm_readv would, under some
// seccomp profiles).
static int read_self(void *dst, const void *src, size_t n) {
	int fds[2];
	if (pipe(fds) != 0)
		return 0;
	int ok = write(fds[1], src, n) == (ssize_t)n && read(fds[0], dst, n) == (ssize_t)n;
	close(fds[0]);
	close(fds[1]);
	return ok;
}

uint64_t *emu_rsp_slot(uc_engine *uc) {
	if (uc_version(NULL, NULL) >> 8 != UC201_VERSION)
		return NULL;
	char *cpu;
	if (!read_self(&cpu, (char *)uc + UC201_CPU, sizeof cpu) || !cpu)
		return NULL;
	uint64_t *slot = (uint64_t *)(cpu + UC201_RSP);
	static const uint64_t probes[2] = {0x5a17e0f1d2c3b4a5ull, 0x0123456789abcdefull};
	uint64_t saved, got;
	if (uc_reg_read(uc, UC_X86_REG_RSP, &saved) != UC_ERR_OK)
		return NULL;
	for (int i = 0; i < 2; i++) {
		if (uc_reg_write(uc, UC_X86_REG_RSP, &probes[i]) != UC_ERR_OK ||
		    !read_self(&got, slot, sizeof got) || got != probes[i]) {
			slot = NULL;
			break;
		}
	}
	uc_reg_write(uc, UC_X86_REG_RSP, &saved);
	return slot;
}
#else
uint64_t *emu_rsp_slot(uc_engine *uc) {
	(void)uc;
	return NULL;
}
static void changes_begin(void) {}
static void changes_end(void) {}
uint64_t emu_page_collections(void) { return 0; }
uint64_t emu_mapping_hits(void) { return 0; }
#endif

uc_err emu_mem_map_ptr(uc_engine *uc, uint64_t addr, size_t n, uint32_t perms, void *host) {
	changes_begin();
	uc_err err = uc_mem_map_ptr(uc, addr, n, perms, host);
	changes_end();
	return err;
}

uc_err emu_mem_unmap(uc_engine *uc, uint64_t addr, size_t n) {
	changes_begin();
	uc_err err = uc_mem_unmap(uc, addr, n);
	changes_end();
	return err;
}

uc_err emu_mem_protect(uc_engine *uc, uint64_t addr, size_t n, uint32_t perms) {
	changes_begin();
	uc_err err = uc_mem_protect(uc, addr, n, perms);
	changes_end();
	return err;
}

uc_err emu_close(uc_engine *uc) {
	changes_begin();
	uc_err err = uc_close(uc);
	changes_end();
	return err;
}
