// C side of the emu binding: the per-event hooks. They never call into Go per
// event: they append fixed-size records to a buffer that Go drains in batches,
// and count instructions per block from a table that Go fills once per block.
#ifndef EMUPROF_HOOKS_H
#define EMUPROF_HOOKS_H

#include <stdint.h>
#include <stdbool.h>
#include <unicorn/unicorn.h>

// Must match trace.Event (40 bytes) and its Kind / End values.
struct emu_event {
	uint64_t addr;
	uint64_t aux;
	int64_t time;
	uint32_t size;
	uint32_t tid;
	uint32_t block;
	uint8_t kind;
	uint8_t end;
	uint8_t flags;
	uint8_t folded; // Block: how many more blocks the event stands for (a run)
};

enum {
	EV_BLOCK = 1,
	EV_READ = 2,
	EV_WRITE = 3,
	EV_REPEAT = 14, // analyses.KindRepeat
};

// FLAG_REPEAT is analyses.FlagRepeat (checkEventLayout).
#define FLAG_REPEAT 16

// Block terminators after which a run of blocks may go on (analyses.End).
enum {
	END_OTHER = 0, // fell through, or the block was cut
	END_JUMP = 3,  // unconditional jump (a tail call only into another routine)
	END_COND = 4,  // conditional branch
};

// Why uc_emu_start returned.
enum {
	STOP_NONE = 0,    // ran out of code or the engine stopped on its own
	STOP_SYSCALL = 1, // a syscall instruction executed; RIP is past it
	STOP_QUANTUM = 2, // the instruction budget ran out; RIP is at an unexecuted block
	STOP_FAULT = 3,   // invalid memory access (fault_addr, fault_type)
	STOP_INTR = 4,    // CPU exception / interrupt (intno)
	STOP_REQUEST = 5, // Go asked to stop (e.g. from a drain)
};

// One decoded block, keyed by (addr, len): Go fills all but used when it
// translates the block (emuBlockMiss) and hands it to emu_table_put.
struct emu_block {
	uint64_t addr;
	uint32_t len;
	uint32_t insns;
	uint32_t id; // trace.BlockTable id
	uint32_t saved; // hundredths of an instruction its sped-up instructions save (--speedup)
	uint8_t end;
	uint8_t used;  // the table's slot holds a block (set by emu_table_put)
	uint8_t quiet; // no Block events for this block (Options.BlockFilter)
	uint32_t fold; // run key (Options.Fold): 0, or equal for blocks of one routine and line
	uint8_t head;  // a routine's entry: it starts a run, never extends one
	uint32_t cycle; // periodic-run key (Options.FoldCycles): 0, or equal for blocks of one routine
	uint8_t track;  // Options.Repeats accepts the block
};

#define HOT_SLOTS 4096 // a power of two

struct emu_state {
	uc_engine *uc;
	uintptr_t handle; // cgo.Handle of the Go Engine

	// Counters for the current uc_emu_start call.
	uint64_t insns;
	uint64_t blocks;
	uint64_t saved;  // hundredths of an instruction saved by speedups (time only, not the budget)
	uint64_t budget; // stop before a block that would exceed it

	int reason;
	uint64_t fault_addr;
	uint64_t fault_pc; // RIP as the invalid-memory hook saw it
	uint64_t last_block; // start and length of the last block entered:
	uint32_t last_len;   // a fault is in it (RIP may be an earlier chained block's)
	struct emu_slot *last_slot; // if not NULL, the last block entered instead (inline.c)
	int fault_type;
	int fault_size;
	uint32_t intno;

	uint32_t tid;
	int64_t time_base;   // the thread's virtual clock at the slice's start (ns)
	int64_t ns_per_insn; // virtual cost of one instruction
	int64_t cur_time;    // virtual time of the current block's start: kept per block only with
	int eager_time;      // memory events (they take their block's); else set with each Block event
	int64_t prior;       // cost (hundredths of instructions) of the slice's earlier engine runs
	int want_blocks; // append Block events
	int want_sp;     // read RSP into Block events
	int repeat_events; // a replay writes a Repeat event for its middle periods (Options.RepeatEvents)
	uint64_t *rsp;   // where the engine keeps RSP (emu_rsp_slot), or NULL: uc_reg_read
	int want_touch;  // ask Go to back an unmapped page on a fault (emuTouch)

	// Run folding (Options.Fold): buf[fold_at-1] is a Block event that
	// the next block may extend, when fold_at == n (0: none).
	uint32_t fold_at;
	uint32_t fold_key;
	uint8_t fold_end;
	int fold_mem; // a run may go on past its blocks' memory events
	uint8_t fold_period; // the run at fold_at is periodic with this period (0: not)
	// The current thread's last blocks with events, the latest at
	// hist_at (hist_n of them: reset when the thread changes; 0 for a
	// block inside an ordinary run, which its event does not name), and
	// their periodic-run keys, for periodic runs (Options.FoldCycles).
	uint32_t hist[4];
	uint32_t hist_key[4];
	uint32_t hist_n;
	uint32_t hist_at;
	// Options.Repeats: the current thread's last four blocks Repeats
	// accepts since it last ran one it refuses, the latest at ring_at (0:
	// none). Go keeps each thread's across switches (Engine.SetTid).
	int want_repeat;
	uint32_t ring[4];
	uint32_t ring_at;
	// Access merging (Options.MergeMemory): buf[win_at..n) are the memory
	// events since the last other event; a new access may merge into the
	// last of them.
	uint32_t win_at;
	int mem_merge;

	// Options.Replay: while the thread's blocks repeat a period whose
	// events repeat, the hook only counts them (replay.h).
	struct emu_replay *rp;
	uint32_t drains; // buffers the hooks handed to Go in this engine run

	struct emu_event *buf;
	struct emu_event *spare; // the other buffer: Go drains one while hooks fill this
	uint32_t cap;
	uint32_t n;

	struct emu_block *table;
	// hot: copies of the insns of blocks hook_count found lately (with no
	// speedup), direct-mapped by address: 16 bytes a block instead of the
	// table's 48-byte entry on a line of its own, so that a program's hot
	// blocks stay in the host's cache beside its data (4096: sqlite3's
	// interpreter loop missed 1024 often). Emptied with the table.
	struct emu_hot {
		uint64_t addr;
		uint32_t len; // 0: empty
		uint32_t insns;
	} hot[HOT_SLOTS];
	// Inline counting (inline.c): the generated code of a block adds its
	// slot's count, (insns << INLINE_SHIFT) + 1, to inline_count, and
	// calls the hook when the sum is above 0. inline_count is the
	// instructions and blocks counted so since the last inline_rebase,
	// packed the same way, less inline_limit: the budget's room then (at
	// most INLINE_ROOM instructions, so that the blocks, never more than
	// the instructions, do not carry into them) above INLINE_ROOM. One
	// add and one test of the sum a block, where separate counters for
	// instructions and blocks and a budget took two more loads and a store.
	// Each translation's count is a slot in slot chunks, SLOT_UNKNOWN
	// until the hook has found the block in the table (reset with it).
	int64_t inline_count, inline_limit;
	// live_seq is odd while inline_rebase moves counts between insns and
	// the pair above, so that emu_live (live.go) never reads them half moved.
	uint64_t live_seq;
	struct emu_slots *slots;
	int inline_on;            // this engine's blocks are translated with inline counting
	uint64_t inline_blocks;   // translations made so
	int slow_emitted;         // emu_count_slow is in the engine's helper tables (inline.c)
	uint64_t slow_calls;      // calls of emu_count_slow emitted
	uint64_t slow_registered; // of them through uc_add_inline_hook
	void *block_hook;         // the block hook (uc_hook), or NULL (regions.c)
	int chain_on;             // direct jumps across pages are chained (chain.c): the block hook tells Go where code is
	uint64_t chained_sites;   // of them translated so
	// The pages of translations made since Go last read them (chain.c),
	// so that Go knows code pages its decoder has not seen yet.
	uint64_t *xlated;
	uint32_t n_xlated, cap_xlated;
	int xlated_lost; // a page could not be kept: Go must drop every translation
	// Inline memory events (meminline.c): the generated code writes
	// them, into buf[cap..cap+MEM_SLACK) too, until emu_settle.
	int mem_inline;
	uint32_t mem_halves; // n after a crossing load's halves (emu_mem_fault)
	uint64_t *rip;       // where 2.0.1 keeps RIP, which the code stores before each access
	// The instruction of each memory event (Aux): the code stores its PC as
	// RIP before each access (for hook_mem too), and in helper_pc before
	// each helper call, which helper_call says is running (meminline.c).
	uint64_t helper_pc;
	int helper_call;
	uint32_t mem_raw;    // with mem_merge: buf[mem_raw..n) are not merged yet (emu_compact)
	uint64_t mem_lost;   // events past the slack (never: MEM_SLACK's bound)
	char *arena;       // where buf, spare and the first table are (arena_alloc), or NULL
	size_t arena_size;
	uint64_t tmask;
	uint64_t tcount;
};

// MEM_SLACK: events past cap in buf and spare (meminline.c).
#define MEM_SLACK (1u << 16)
struct emu_state *emu_state_new(uc_engine *uc, uintptr_t handle, uint32_t cap, uint32_t slack);
void emu_state_free(struct emu_state *s);
uc_err emu_install_base(struct emu_state *s, int bare);
uc_err emu_install_mem(struct emu_state *s);
int emu_replay_init(struct emu_state *s);
void emu_replay_begin(struct emu_state *s);
void emu_replay_end(struct emu_state *s);
uint64_t emu_replayed_blocks(struct emu_state *s);
void emu_table_put(struct emu_state *s, const struct emu_block *b);
void emu_table_clear(struct emu_state *s);

// inline.c: slots of inline-counted translations; emu_inline_check turns
// inline counting off (s->inline_on) unless Unicorn is 2.0.1 as inline.c expects.
#define INLINE_SHIFT 24
#define INLINE_ROOM ((1ll << INLINE_SHIFT) - 1)
// A slot's count before the hook filled it: with it inline_count, at
// least -inline_limit > -(1 << 48), is above 0.
#define SLOT_UNKNOWN (1ull << 62)
struct emu_slot {
	uint64_t n;   // the count, (insns << INLINE_SHIFT) + 1, or SLOT_UNKNOWN
	uint64_t pc;  // the translation's start and length (tb_gen_code's, inline.c)
	uint32_t len;
};
struct emu_slots {
	struct emu_slots *next;
	uint32_t used;
	struct emu_slot n[340];
};
struct emu_slot *emu_slot_new(struct emu_state *s);
// emu_last_block reports the last block entered (0, 0: none).
void emu_last_block(struct emu_state *s, uint64_t *pc, uint32_t *len);
void emu_slots_reset(struct emu_state *s);
void emu_slots_free(struct emu_state *s);
void emu_inline_check(struct emu_state *s, uc_hook h, void *callback);
int emu_tcg_ctx_ok(struct emu_state *s);
// meminline.c: inline memory events.
void emu_mem_inline_check(struct emu_state *s);
void emu_mem_pc_check(struct emu_state *s);
void emu_settle(struct emu_state *s);
void emu_compact(struct emu_state *s);
void emu_mem_fault(struct emu_state *s, int type, uint64_t addr, uint32_t size);
uc_err emu_run(struct emu_state *s, uint64_t pc);
struct emu_state *emu_running(void); // the engine emu_run runs on this thread, or NULL
void emu_note_translation(uint64_t pc, uint32_t size);
// emu_flush_raw makes the generated code's events since the last call
// events as hook_mem's: merged (mem_merge) and in batches of cap.
static inline void emu_flush_raw(struct emu_state *s) {
	if (s->mem_merge) {
		if (s->n != s->mem_raw)
			emu_compact(s);
	} else if (s->n > s->cap) {
		emu_settle(s);
	}
}

// A thread's part of the fold state (fold.h), which Go keeps while
// another thread runs: its Repeats ring.
struct emu_thread_fold {
	uint32_t ring[4];
	uint32_t ring_at;
};
void emu_cut(struct emu_state *s);
struct emu_thread_fold emu_switch_thread(struct emu_state *s, uint32_t tid, struct emu_thread_fold next);
void emu_forget_thread(struct emu_state *s, uint32_t tid);
uc_err emu_remove_cache(uc_engine *uc, uint64_t begin, uint64_t end);

void emu_event_layout(uint64_t out[12]);
uc_err emu_reg_read_batch(uc_engine *uc, int *regs, uint64_t *vals, int n);
uc_err emu_reg_write_batch(uc_engine *uc, int *regs, uint64_t *vals, int n);

// inline_rebase moves what inline counting counted (inline_count) into
// insns and blocks and sets inline_limit to the budget's room: every C
// path that reads or counts insns while generated code may have counted
// calls it first (hook_count, emu_count_slow, the end of emu_run), and
// emu_run at its start, for the slice's budget. After it inline_count +
// inline_limit is 0 (as in a new, zeroed state): nothing is counted twice.
static inline void inline_rebase(struct emu_state *s) {
	__atomic_store_n(&s->live_seq, s->live_seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	uint64_t p = (uint64_t)(s->inline_count + s->inline_limit);
	s->insns += p >> INLINE_SHIFT;
	s->blocks += p & INLINE_ROOM;
	uint64_t room = s->insns < s->budget ? s->budget - s->insns : 0;
	if (room > INLINE_ROOM)
		room = INLINE_ROOM;
	s->inline_limit = (int64_t)(room << INLINE_SHIFT) | INLINE_ROOM;
	s->inline_count = -s->inline_limit;
	__atomic_store_n(&s->live_seq, s->live_seq + 1, __ATOMIC_RELEASE);
}

// slice_units is a slice's cost after insns instructions of which speedups
// saved `saved` hundredths, in hundredths of an instruction (prior: its
// earlier engine runs'); slice_clock is the virtual time at that cost
// from base (ns). The block hooks and emu_live (live.go) share them.
static inline int64_t slice_units(int64_t prior, uint64_t insns, uint64_t saved) {
	return prior + (int64_t)insns * 100 - (int64_t)saved;
}
static inline int64_t slice_clock(int64_t base, int64_t units, int64_t ns_per_insn) {
	return base + units * ns_per_insn / 100;
}

// unicornfix.c: the engine maps, unmaps and protects memory, and closes,
// only through these (memory_mapping's cache); how often libunicorn called
// its page_collection_lock, and found a region in memory_mapping's cache
// (Linux only; 0 elsewhere); where Unicorn 2.0.1 keeps RSP (NULL on any
// other Unicorn, or off Linux).
uc_err emu_mem_map_ptr(uc_engine *uc, uint64_t addr, size_t n, uint32_t perms, void *host);
uc_err emu_mem_unmap(uc_engine *uc, uint64_t addr, size_t n);
uc_err emu_mem_protect(uc_engine *uc, uint64_t addr, size_t n, uint32_t perms);
uc_err emu_close(uc_engine *uc);
uint64_t *emu_rsp_slot(uc_engine *uc);
// emu_read_self copies n bytes of this process at src into dst, or
// returns 0 where they cannot be read (unicornfix.c).
int emu_read_self(void *dst, const void *src, size_t n);
// regions.c: the block hook's hooked_regions stay empty (2.0.1).
void emu_regions_skip(struct emu_state *s, uc_hook h, void *cb);
void emu_regions_forget(uc_engine *uc);
int emu_hooked_regions(struct emu_state *s);
uint64_t emu_page_collections(void);
uint64_t emu_mapping_hits(void);
// uc_emu_start(uc, pc, 0, 0, 0), with the engine known to the TLB fill;
// whether stores to writable, non-executable pages take the fast path
// (2.0.1 on Linux), and how many TLB fills made one.
uc_err emu_emu_start(uc_engine *uc, uint64_t pc);
int emu_clean_stores(void);
uint64_t emu_tb_cache_hits(void); // block lookups unicornfix.c's cache answered
uint64_t emu_cleaned_fills(void);

// TranslationBlock's first fields in Unicorn 2.0.1 (QEMU 5.0's exec-all.h),
// as unicornfix.c's block cache and inline.c's tb_gen_code read them.
struct tb201 {
	uint64_t pc, cs_base;
	uint32_t flags;
	uint16_t size, icount;
	uint32_t cflags; // CF_INVALID 0x40000; cf_mask compares (cflags & 0xff0effff)
};

// struct hook of Unicorn 2.0.1's uc_priv.h, as inline.c and regions.c read it
// (checked on the first engine against a hook emuprof added).
struct hook201 {
	int type, insn, refs, op, op_flags;
	_Bool to_delete;
	uint64_t begin, end;
	void *callback;
	void *user_data;
	void *hooked_regions;
};

#endif
