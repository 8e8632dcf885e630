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
//
// 4. Beyond 1 and 2: 2.0.1's cpu_physical_memory_is_clean always answers
// true, so every TLB entry of writable RAM carries TLB_NOTDIRTY and no
// guest store takes the generated code's fast path: each one calls
// store_helper (memory_mapping, the page's translated-code check, then
// the store). QEMU keeps that flag only on pages holding translated
// code. tlb_set_page_with_attrs below fills the entry as 2.0.1 does, then
// clears the flag (tlb_set_dirty) when the page's region is writable and
// not executable: no translation can exist there (a fetch from it
// faults), and Unicorn checks a store's permission only in store_helper,
// so read-only and executable pages keep the slow path. The flag stays
// right when permissions change because emu_mem_protect flushes the TLB
// and the engine drops the translations of pages that stop being
// executable (forgetCode) before they can become writable and clean;
// mapping and unmapping flush the pages themselves. The region's
// permissions are read at 2.0.1's offset in MemoryRegion, checked on the
// first mapping against the region just mapped; any other version or
// layout keeps the slow path.
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>

#include "hooks.h"

#ifdef __linux__
#include <dlfcn.h>
#include <stdlib.h>
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

// emu_read_self copies n bytes (at most a pipe's buffer) at src, or reports
// that it cannot: a wrong guess of a layout reads nothing instead of
// faulting. write(2) checks the source like any system call (EFAULT),
// and a pipe needs no permission (process_vm_readv would, under some
// seccomp profiles).
int emu_read_self(void *dst, const void *src, size_t n) {
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
	if (!emu_read_self(&cpu, (char *)uc + UC201_CPU, sizeof cpu) || !cpu)
		return NULL;
	uint64_t *slot = (uint64_t *)(cpu + UC201_RSP);
	static const uint64_t probes[2] = {0x5a17e0f1d2c3b4a5ull, 0x0123456789abcdefull};
	uint64_t saved, got;
	if (uc_reg_read(uc, UC_X86_REG_RSP, &saved) != UC_ERR_OK)
		return NULL;
	for (int i = 0; i < 2; i++) {
		if (uc_reg_write(uc, UC_X86_REG_RSP, &probes[i]) != UC_ERR_OK ||
		    !emu_read_self(&got, slot, sizeof got) || got != probes[i]) {
			slot = NULL;
			break;
		}
	}
	uc_reg_write(uc, UC_X86_REG_RSP, &saved);
	return slot;
}
// 4: the TLB fill. running_uc is the engine emu_emu_start runs on this
// thread (fills happen only inside uc_emu_start); clean_state is 1 once
// the MemoryRegion layout and tlb_set_dirty were found, -1 if not.
#define UC201_MR_ADDR 64   // offsetof(MemoryRegion, addr)
#define UC201_MR_UC 128    // offsetof(MemoryRegion, uc)
#define UC201_MR_PERMS 136 // offsetof(MemoryRegion, perms)
#define UC201_MR_END 144   // offsetof(MemoryRegion, end)
#define QEMU_PAGE_WRITE 2  // PAGE_WRITE of the prot argument

static __thread struct uc_struct *running_uc;
// QEMU sizes the TLB (256 entries at first) only when it is flushed, by
// how full it was; Unicorn never flushes it while a program runs, so a
// program using more than 1 MB at a time missed it on most accesses (the
// load and store helpers, a TLB fill each). A flush every FILLS_PER_FLUSH
// fills lets QEMU grow it to the program's working set (up to twice
// FILLS_PER_FLUSH entries, 64 MB; it shrinks again when less is used).
#define FILLS_PER_FLUSH 8192
static __thread uint64_t fills_since_flush;
static _Atomic int clean_state;
static uint64_t cleaned_fills;
typedef void (*set_page_fn)(void *cpu, uint64_t vaddr, uint64_t paddr, uint32_t attrs, int prot, int mmu_idx, uint64_t size);
typedef void (*set_dirty_fn)(void *cpu, uint64_t vaddr);
static set_page_fn real_set_page;
static set_dirty_fn set_dirty;
typedef void (*tlb_flush_fn)(void *cpu);
static tlb_flush_fn tlb_flush;

// MemTxAttrs is a 32-bit struct of bit-fields, passed in a register like
// the uint32_t here.
void tlb_set_page_with_attrs_x86_64(void *cpu, uint64_t vaddr, uint64_t paddr, uint32_t attrs, int prot, int mmu_idx, uint64_t size) {
	if (!real_set_page) {
		real_set_page = (set_page_fn)dlsym(RTLD_NEXT, "tlb_set_page_with_attrs_x86_64");
		if (!real_set_page)
			abort(); // libunicorn calls this one, so it has its own
	}
	if (++fills_since_flush >= FILLS_PER_FLUSH && tlb_flush) {
		fills_since_flush = 0;
		tlb_flush(cpu);
	}
	real_set_page(cpu, vaddr, paddr, attrs, prot, mmu_idx, size);
	struct uc_struct *uc = running_uc;
	if (!uc || atomic_load_explicit(&clean_state, memory_order_acquire) != 1 || !(prot & QEMU_PAGE_WRITE) ||
	    size != 4096 || ((vaddr ^ paddr) >> 12) != 0)
		return;
	struct MemoryRegion *mr = memory_mapping(uc, vaddr);
	if (!mr)
		return;
	uint32_t perms = *(uint32_t *)((char *)mr + UC201_MR_PERMS);
	if ((perms & (UC_PROT_WRITE | UC_PROT_EXEC)) == UC_PROT_WRITE) {
		cleaned_fills++;
		set_dirty(cpu, vaddr); // clears TLB_NOTDIRTY of vaddr's entries only
	}
}

// 5: a second cache of translation blocks by guest PC, behind the jump
// cache. helper_lookup_tb_ptr (every indirect branch and return) and
// the execution loop look a block up in CPUState.tb_jmp_cache, 4096
// blocks direct-mapped by PC, and on a miss in the global hash table
// (tb_htable_lookup: xxhash, qht, and the PC's page through the TLB).
// Two hot targets on one index evict each other at every pass: sqlite3's
// interpreter loop, about 3 million lookups on a 300,000-row CTE, nearly
// all of eight PCs; bzip2's two hottest returns. tb_htable_lookup below
// answers from its own cache first, 8192 entries by another hash of the
// PC, per host thread, filled by Unicorn's answers. An entry holds what
// the lookup compared (engine, PC, cs_base, flags, cflags mask) and is
// trusted only while nothing could have changed the answer:
//   - a block removed from the table (uc_ctl_remove_cache, a store into
//     code) is marked CF_INVALID, which the hit checks as QEMU does;
//   - a flush of the whole translation cache (tb_flush, which reuses the
//     blocks' memory) and every TLB flush, whole or of a page (a change
//     of the mappings: where QEMU empties its jump cache) and closing an
//     engine start a new generation, and entries of an older one are
//     misses.
// The block's field offsets are 2.0.1's (those helper_lookup_tb_ptr
// compares), checked against the first block Unicorn's lookup returns.
#define TB201_CF_MASK 0xff0effffu
#define TBC_SLOTS 8192
struct tbc_entry {
	void *cpu;
	uint64_t pc, cs_base;
	uint32_t flags, cf_mask;
	uint64_t generation;
	struct tb201 *tb;
};
static __thread struct tbc_entry *tb_cache;
static _Atomic uint64_t tb_generation = 1;
static _Atomic int tb_layout; // 1: checked, -1: not 2.0.1's
static uint64_t tb_cache_hits;
typedef void *(*htable_fn)(void *cpu, uint64_t pc, uint64_t cs_base, uint32_t flags, uint32_t cf_mask);

static void tb_cache_void(void) { atomic_fetch_add_explicit(&tb_generation, 1, memory_order_acq_rel); }

void *tb_htable_lookup_x86_64(void *cpu, uint64_t pc, uint64_t cs_base, uint32_t flags, uint32_t cf_mask) {
	static htable_fn real;
	if (!real) {
		real = (htable_fn)dlsym(RTLD_NEXT, "tb_htable_lookup_x86_64");
		if (!real)
			abort(); // libunicorn calls this one, so it has its own
	}
	int layout = atomic_load_explicit(&tb_layout, memory_order_relaxed);
	if (layout < 0 || atomic_load_explicit(&clean_state, memory_order_acquire) != 1)
		return real(cpu, pc, cs_base, flags, cf_mask);
	if (!tb_cache && !(tb_cache = calloc(TBC_SLOTS, sizeof *tb_cache)))
		return real(cpu, pc, cs_base, flags, cf_mask);
	uint64_t gen = atomic_load_explicit(&tb_generation, memory_order_acquire);
	struct tbc_entry *e = &tb_cache[(pc * 0x9e3779b97f4a7c15ull) >> (64 - 13)];
	if (layout == 1 && e->generation == gen && e->pc == pc && e->cpu == cpu && e->cs_base == cs_base &&
	    e->flags == flags && e->cf_mask == cf_mask && (e->tb->cflags & TB201_CF_MASK) == cf_mask) {
		tb_cache_hits++;
		return e->tb;
	}
	struct tb201 *tb = real(cpu, pc, cs_base, flags, cf_mask);
	if (!tb)
		return NULL;
	if (layout == 0) {
		int ok = tb->pc == pc && tb->cs_base == cs_base && tb->flags == flags && (tb->cflags & TB201_CF_MASK) == cf_mask;
		int unknown = 0;
		atomic_compare_exchange_strong(&tb_layout, &unknown, ok ? 1 : -1);
		if (!ok)
			return tb;
	}
	*e = (struct tbc_entry){cpu, pc, cs_base, flags, cf_mask, gen, tb};
	return tb;
}

typedef void (*flush_page_fn)(void *cpu, uint64_t addr);

void tb_flush_x86_64(void *cpu) {
	static tlb_flush_fn real;
	if (!real && !(real = (tlb_flush_fn)dlsym(RTLD_NEXT, "tb_flush_x86_64")))
		abort();
	tb_cache_void();
	real(cpu);
	tb_cache_void();
}

void tlb_flush_x86_64(void *cpu) {
	static tlb_flush_fn real;
	if (!real && !(real = (tlb_flush_fn)dlsym(RTLD_NEXT, "tlb_flush_x86_64")))
		abort();
	tb_cache_void();
	real(cpu);
}

void tlb_flush_page_x86_64(void *cpu, uint64_t addr) {
	static flush_page_fn real;
	if (!real && !(real = (flush_page_fn)dlsym(RTLD_NEXT, "tlb_flush_page_x86_64")))
		abort();
	tb_cache_void();
	real(cpu, addr);
}

uint64_t emu_tb_cache_hits(void) { return tb_cache_hits; }

// check_layout runs after the engine's first mapping of [addr, addr+n)
// with perms: the region memory_mapping finds must read back as that.
static void check_layout(struct uc_struct *uc, uint64_t addr, size_t n, uint32_t perms) {
	if (atomic_load_explicit(&clean_state, memory_order_acquire) != 0)
		return;
	int ok = uc_version(NULL, NULL) >> 8 == UC201_VERSION;
	set_page_fn sp = ok ? (set_page_fn)dlsym(RTLD_NEXT, "tlb_set_page_with_attrs_x86_64") : NULL;
	set_dirty_fn sd = ok ? (set_dirty_fn)dlsym(RTLD_NEXT, "tlb_set_dirty_x86_64") : NULL;
	tlb_flush_fn tf = ok ? (tlb_flush_fn)dlsym(RTLD_NEXT, "tlb_flush_x86_64") : NULL;
	mapping_fn real_mapping = ok ? (mapping_fn)dlsym(RTLD_NEXT, "memory_mapping") : NULL;
	char *mr = (sp && sd && tf && real_mapping) ? (char *)real_mapping(uc, addr) : NULL;
	struct {
		uint64_t addr, end;
		void *uc;
		uint32_t perms;
	} got;
	ok = mr && emu_read_self(&got.addr, mr + UC201_MR_ADDR, 8) && emu_read_self(&got.end, mr + UC201_MR_END, 8) &&
	     emu_read_self(&got.uc, mr + UC201_MR_UC, 8) && emu_read_self(&got.perms, mr + UC201_MR_PERMS, 4) &&
	     got.addr == addr && got.end == addr + n && got.uc == uc && got.perms == perms;
	if (ok) {
		real_set_page = sp;
		set_dirty = sd;
		tlb_flush = tf;
	}
	int unknown = 0;
	atomic_compare_exchange_strong(&clean_state, &unknown, ok ? 1 : -1);
}

// flush_tlb empties the engine's TLB after a change of permissions, so
// that no entry cleaned while its page was writable and not executable
// outlives that.
static void flush_tlb(struct uc_struct *uc) {
	if (atomic_load_explicit(&clean_state, memory_order_acquire) != 1)
		return;
	void *cpu = *(void **)((char *)uc + UC201_CPU);
	if (cpu)
		tlb_flush(cpu);
}

uc_err emu_emu_start(uc_engine *uc, uint64_t pc) {
	struct uc_struct *outer = running_uc;
	running_uc = (struct uc_struct *)uc;
	uc_err err = uc_emu_start(uc, pc, 0, 0, 0);
	running_uc = outer;
	return err;
}

int emu_clean_stores(void) { return atomic_load(&clean_state) == 1; }
uint64_t emu_cleaned_fills(void) { return cleaned_fills; }
#else
uint64_t *emu_rsp_slot(uc_engine *uc) {
	(void)uc;
	return NULL;
}
uc_err emu_emu_start(uc_engine *uc, uint64_t pc) { return uc_emu_start(uc, pc, 0, 0, 0); }
int emu_clean_stores(void) { return 0; }
uint64_t emu_tb_cache_hits(void) { return 0; }
uint64_t emu_cleaned_fills(void) { return 0; }
static void check_layout(uc_engine *uc, uint64_t addr, size_t n, uint32_t perms) {
	(void)uc;
	(void)addr;
	(void)n;
	(void)perms;
}
static void flush_tlb(uc_engine *uc) { (void)uc; }
static void changes_begin(void) {}
static void tb_cache_void(void) {}
static void changes_end(void) {}
uint64_t emu_page_collections(void) { return 0; }
uint64_t emu_mapping_hits(void) { return 0; }
#endif

uc_err emu_mem_map_ptr(uc_engine *uc, uint64_t addr, size_t n, uint32_t perms, void *host) {
	changes_begin();
	uc_err err = uc_mem_map_ptr(uc, addr, n, perms, host);
	changes_end();
	if (err == UC_ERR_OK)
		check_layout((struct uc_struct *)uc, addr, n, perms);
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
	flush_tlb((struct uc_struct *)uc);
	return err;
}

uc_err emu_close(uc_engine *uc) {
	emu_regions_forget(uc);
	changes_begin();
	uc_err err = uc_close(uc);
	changes_end();
	tb_cache_void(); // a later engine's CPU may be allocated where this one's was
	return err;
}
