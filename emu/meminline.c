// Inline memory events: the generated code of a load or a store appends
// its Read or Write event itself, instead of Unicorn's memory hooks.
//
// With any UC_HOOK_MEM_READ or _WRITE hook, Unicorn 2.0.1 sends every
// load and store through its C slow path (tcg-target.inc.c's
// tcg_out_tlb_load jumps there unconditionally; load_helper and
// store_helper call the hooks), and its translator stores RIP before
// each access (gen_op_ld_v). Without them accesses take the TLB fast
// path. libunicorn's translator calls tcg_gen_qemu_{ld,st}_{i32,i64}
// through its PLT, so the executable's definitions below take their
// place (as unicornfix.c's do): for an engine with inline memory events
// (s->mem_inline) they emit, before the access, TCG ops that write the
// event hook_mem would push:
//
//	e = &s->buf[min(s->n, s->cap + MEM_SLACK - 1)]; s->n++;
//	*e = {addr, pc, s->cur_time, size, s->tid, 0, kind, 0, 0, 0}
//
// where pc is the instruction's address (the translator's last
// insn_start), also stored as RIP. An engine with hook_mem gets the same
// Aux: the code stores the PC as RIP before every access (2.0.1's
// gen_op_ld_v/st_v do it for most, not for SSE's or the helpers'), and
// before each helper call in s->helper_pc, which a helper's accesses
// take (access_pc).
// with no branch: a branch in the middle of a block would end the
// translator's temps. The buffer has MEM_SLACK events beyond cap that
// the code may fill; the next block hook (or push, or the end of the
// run) hands the first cap to Go as push would have when the buffer
// filled (emu_settle), and moves the rest to the start: the batches are
// the ones the hook makes. A block cannot make MEM_SLACK/2 events from
// its generated code (512 instructions, at most 64 accesses each).
//
// What the hook reported that the generated code does not see:
//   - accesses by helpers (fxsave, fxrstor, fldt, cmpxchg16b, ...): they
//     call cpu_{ld,st}*_mmuidx_ra, which are interposed the same way;
//   - a load that crosses a page: load_helper calls the read hook once
//     for the access and once for each aligned half (its recursion), so
//     three events. Such a load always misses the fast path and calls
//     helper_le_ld*_mmu from the code (through a relocation that binds
//     to the definitions below), which appends the two halves;
//   - a load that faults: the hook saw none on an unmapped page, one on
//     a non-readable one (before the check). Events are written before
//     the access, so the fault hook takes back what the hook would not
//     have made (emu_mem_fault). A store's event came before any check:
//     nothing to take back.
// The opcode numbers and the TCGContext layout are 2.0.1's (inline.c
// checks the layout); any other Unicorn keeps hook_mem. A merging
// engine (Options.MergeMemory) merges the code's events at the next
// block hook, as hook_mem would have one by one (emu_compact).
#define _GNU_SOURCE
#include <stddef.h>
#include <string.h>

#include "state.h"

// emu_settle hands buf[0..cap) to Go when the generated code wrote past
// cap, as push would have on the event at cap, and moves the rest to the
// new buffer's start.
void emu_settle(struct emu_state *s) {
	uint32_t n = s->n;
	if (n <= s->cap)
		return;
	if (n > s->cap + MEM_SLACK) {
		s->mem_lost += n - (s->cap + MEM_SLACK); // cannot happen (MEM_SLACK's bound): Go reports it
		n = s->cap + MEM_SLACK;
	}
	while (n > s->cap) { // more than once only with a buffer smaller than a block's events
		s->n = s->cap;
		s->drains++;
		emuDrain(s->handle); // swaps buf and spare; the batch is spare[0..cap)
		n -= s->cap;
		memcpy(s->buf, s->spare + s->cap, (size_t)n * sizeof *s->buf);
		s->n = n;
	}
	s->mem_halves = 0;
}

#ifdef __linux__
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct TCGContext TCGContext;
typedef struct TCGTemp TCGTemp;
typedef uintptr_t TCGArg;
typedef uintptr_t TCGv;

#define UC201_VERSION 0x020001
#define UC201_CTX_UC 0x9970 // offsetof(TCGContext, uc), as inline.c
enum { OP_LD32U_I64 = 71, OP_LD_I64 = 73, OP_ST32_I64 = 76, OP_ST_I64 = 77, OP_ADD_I64 = 78 }; // tcg-opc.h
enum { TYPE_I64 = 1, COND_LTU = 4 };

static struct {
	void (*op3)(TCGContext *, int, TCGArg, TCGArg, TCGArg);
	TCGv (*const_i64)(TCGContext *, int64_t);
	TCGTemp *(*temp_new)(TCGContext *, int type, _Bool local);
	void (*temp_free)(TCGContext *, TCGTemp *);
	void (*muli_i64)(TCGContext *, TCGv ret, TCGv arg, int64_t imm);
	void (*shli_i64)(TCGContext *, TCGv ret, TCGv arg, int64_t imm);
	void (*ori_i64)(TCGContext *, TCGv ret, TCGv arg, int64_t imm);
	void (*addi_i64)(TCGContext *, TCGv ret, TCGv arg, int64_t imm);
	void (*movcond_i64)(TCGContext *, int cond, TCGv ret, TCGv c1, TCGv c2, TCGv v1, TCGv v2);
} tcg;
static const char *const tcg_names[] = {"tcg_gen_op3_x86_64",       "tcg_const_i64_x86_64",
                                        "tcg_temp_new_internal_x86_64", "tcg_temp_free_internal_x86_64",
                                        "tcg_gen_muli_i64_x86_64",  "tcg_gen_shli_i64_x86_64",
                                        "tcg_gen_ori_i64_x86_64",   "tcg_gen_addi_i64_x86_64",
                                        "tcg_gen_movcond_i64_x86_64"};

enum { OP_INSN_START = 129 };

// The translator's current instruction (its insn_start op): the generated
// code stores it as RIP before an access, as 2.0.1's gen_op_ld_v and
// gen_op_st_v do when a memory hook exists, so that a fault's RIP is the
// instruction's (faults.c), as with the hook.
static __thread uint64_t insn_pc;
typedef void (*op2_fn)(TCGContext *, int, TCGArg, TCGArg);
void tcg_gen_op2_x86_64(TCGContext *c, int opc, TCGArg a1, TCGArg a2) {
	static op2_fn real;
	if (!real && !(real = (op2_fn)dlsym(RTLD_NEXT, "tcg_gen_op2_x86_64")))
		abort(); // libunicorn calls this one, so it has its own
	if (opc == OP_INSN_START)
		insn_pc = a1;
	real(c, opc, a1, a2);
}

typedef void (*gen_fn)(TCGContext *, TCGv val, TCGv addr, TCGArg idx, int memop);
static gen_fn real_ld32, real_st32, real_ld64, real_st64;

static _Atomic int usable; // 1: 2.0.1 with every function found, -1: not
// The engine running on this thread (emu_run), whose blocks are translated here.
static __thread struct emu_state *running;
// A helper's load is being made (its halves are appended by its wrapper).
static __thread int in_helper;

static TCGTemp *temp(TCGContext *c, TCGv v) { return (TCGTemp *)((char *)c + v); }
static TCGArg arg(TCGContext *c, TCGv v) { return (TCGArg)temp(c, v); }
static TCGv new_i64(TCGContext *c) { return (TCGv)((char *)tcg.temp_new(c, TYPE_I64, 0) - (char *)c); }
static void free_temp(TCGContext *c, TCGv v) { tcg.temp_free(c, temp(c, v)); }

// store_const emits *to = v.
static void store_const(TCGContext *c, TCGv v, void *to) {
	TCGv p = tcg.const_i64(c, (int64_t)(uintptr_t)to);
	tcg.op3(c, OP_ST_I64, arg(c, v), arg(c, p), 0);
	free_temp(c, p);
}

// store_pc emits *to = the translator's current instruction.
static void store_pc(TCGContext *c, void *to) {
	TCGv pc = tcg.const_i64(c, (int64_t)insn_pc);
	store_const(c, pc, to);
	free_temp(c, pc);
}

// emit_event emits the event write above for an access of 1 << (memop & 3) bytes at addr.
static void emit_event(TCGContext *c, struct emu_state *s, TCGv addr, int memop, uint8_t kind) {
	uint32_t size = 1u << (memop & 3);
	TCGv p = tcg.const_i64(c, (int64_t)(uintptr_t)s);
	TCGv n = new_i64(c), at = new_i64(c), e = new_i64(c), w = new_i64(c);
	TCGv lim = tcg.const_i64(c, (int64_t)s->cap + MEM_SLACK - 1);
	TCGv pc = tcg.const_i64(c, (int64_t)insn_pc);
	store_const(c, pc, s->rip);
	tcg.op3(c, OP_LD32U_I64, arg(c, n), arg(c, p), offsetof(struct emu_state, n));
	tcg.movcond_i64(c, COND_LTU, at, n, lim, n, lim);
	tcg.muli_i64(c, at, at, sizeof(struct emu_event));
	tcg.op3(c, OP_LD_I64, arg(c, e), arg(c, p), offsetof(struct emu_state, buf));
	tcg.op3(c, OP_ADD_I64, arg(c, e), arg(c, e), arg(c, at));
	tcg.op3(c, OP_ST_I64, arg(c, addr), arg(c, e), offsetof(struct emu_event, addr));
	tcg.op3(c, OP_ST_I64, arg(c, pc), arg(c, e), offsetof(struct emu_event, aux));
	tcg.op3(c, OP_LD_I64, arg(c, w), arg(c, p), offsetof(struct emu_state, cur_time));
	tcg.op3(c, OP_ST_I64, arg(c, w), arg(c, e), offsetof(struct emu_event, time));
	// size and tid, then block and kind..folded, as two words.
	tcg.op3(c, OP_LD32U_I64, arg(c, w), arg(c, p), offsetof(struct emu_state, tid));
	tcg.shli_i64(c, w, w, 32);
	tcg.ori_i64(c, w, w, size);
	tcg.op3(c, OP_ST_I64, arg(c, w), arg(c, e), offsetof(struct emu_event, size));
	TCGv k = tcg.const_i64(c, (int64_t)kind << 32);
	tcg.op3(c, OP_ST_I64, arg(c, k), arg(c, e), offsetof(struct emu_event, block));
	tcg.addi_i64(c, n, n, 1);
	tcg.op3(c, OP_ST32_I64, arg(c, n), arg(c, p), offsetof(struct emu_state, n));
	free_temp(c, k);
	free_temp(c, pc);
	free_temp(c, lim);
	free_temp(c, w);
	free_temp(c, e);
	free_temp(c, at);
	free_temp(c, n);
	free_temp(c, p);
}

// translating returns the engine whose block c translates, if it wants
// memory events with their instructions (inline, or hook_mem's with
// s->rip).
static struct emu_state *translating(TCGContext *c) {
	struct emu_state *s = running;
	if (!s || !s->rip || *(void **)((char *)c + UC201_CTX_UC) != (void *)s->uc)
		return NULL;
	return s;
}

static gen_fn find(const char *name) {
	gen_fn f = (gen_fn)dlsym(RTLD_NEXT, name);
	if (!f)
		abort(); // libunicorn calls this one, so it has its own
	return f;
}

#define GEN(name, real, kind)                                                           \
	void name(TCGContext *c, TCGv val, TCGv addr, TCGArg idx, int memop) {          \
		if (!real)                                                              \
			real = find(#name);                                             \
		struct emu_state *s = translating(c);                                   \
		if (s && s->mem_inline)                                                 \
			emit_event(c, s, addr, memop, kind);                            \
		else if (s)                                                             \
			store_pc(c, s->rip); /* for hook_mem (access_pc) */             \
		real(c, val, addr, idx, memop);                                         \
	}
GEN(tcg_gen_qemu_ld_i32_x86_64, real_ld32, EV_READ)
GEN(tcg_gen_qemu_st_i32_x86_64, real_st32, EV_WRITE)
GEN(tcg_gen_qemu_ld_i64_x86_64, real_ld64, EV_READ)
GEN(tcg_gen_qemu_st_i64_x86_64, real_st64, EV_WRITE)

// Every helper call stores its instruction in s->helper_pc first (not in
// RIP: helper_lookup_tb_ptr and others read RIP as the translator left
// it), for the accesses a helper makes (fxsave, fldt, cmpxchg16b, ...).
typedef void (*call_fn)(TCGContext *, void *func, TCGTemp *ret, int nargs, TCGTemp **args);
void tcg_gen_callN_x86_64(TCGContext *c, void *func, TCGTemp *ret, int nargs, TCGTemp **args) {
	static call_fn real;
	if (!real)
		real = (call_fn)find("tcg_gen_callN_x86_64");
	struct emu_state *s = translating(c);
	if (s)
		store_pc(c, &s->helper_pc);
	real(c, func, ret, nargs, args);
}

// append adds an event as hook_mem does (no merging: such engines keep it),
// into the slack when the generated code may have written there.
static void append(struct emu_state *s, uint8_t kind, uint64_t addr, uint32_t size) {
	if (s->n >= s->cap + MEM_SLACK / 2)
		emu_flush_raw(s);
	struct emu_event *e = &s->buf[s->n++]; // as the generated code's (emu_flush_raw takes them)
	set_mem_event(s, e, kind, addr, size);
}

// crossing reports whether a load of size bytes at addr spans two pages
// (load_helper's do_unaligned_access, with a RAM page's TLB entry).
static int crossing(uint64_t addr, uint32_t size) { return size > 1 && (addr & 0xfff) + size > 0x1000; }

// halves appends the two reads load_helper's recursion reported for a
// crossing load, and remembers where they end for emu_mem_fault.
static void halves(struct emu_state *s, uint64_t addr, uint32_t size) {
	uint64_t a1 = addr & ~(uint64_t)(size - 1);
	append(s, EV_READ, a1, size);
	append(s, EV_READ, a1 + size, size);
	s->mem_halves = s->n;
}

static struct emu_state *helping(void) {
	struct emu_state *s = running;
	return s && s->mem_inline ? s : NULL;
}

// calling returns the running engine if its memory events carry their
// instructions (access_pc).
static struct emu_state *calling(void) {
	struct emu_state *s = running;
	return s && s->rip ? s : NULL;
}

// The code's loads that miss the TLB fast path (every crossing one).
typedef uint64_t (*ld_mmu_fn)(void *env, uint64_t addr, uint32_t oi, uintptr_t ra);
#define LD_MMU(name, size)                                                      \
	uint64_t name(void *env, uint64_t addr, uint32_t oi, uintptr_t ra) {    \
		static ld_mmu_fn real;                                          \
		if (!real)                                                      \
			real = (ld_mmu_fn)find(#name);                          \
		struct emu_state *s;                                            \
		if (crossing(addr, size) && !in_helper && (s = helping()))      \
			halves(s, addr, size);                                  \
		return real(env, addr, oi, ra);                                 \
	}
LD_MMU(helper_le_lduw_mmu_x86_64, 2)
LD_MMU(helper_le_ldul_mmu_x86_64, 4)
LD_MMU(helper_le_ldq_mmu_x86_64, 8)

// The helpers' accesses.
typedef uint64_t (*cpu_ld_fn)(void *env, uint64_t addr, int mmu_idx, uintptr_t ra);
typedef void (*cpu_st_fn)(void *env, uint64_t addr, uint64_t val, int mmu_idx, uintptr_t ra);
#define CPU_LD(name, type, size)                                                \
	type name(void *env, uint64_t addr, int mmu_idx, uintptr_t ra) {        \
		static cpu_ld_fn real;                                          \
		if (!real)                                                      \
			real = (cpu_ld_fn)find(#name);                          \
		struct emu_state *s = helping(), *h = calling();                \
		if (h)                                                          \
			h->helper_call = 1;                                     \
		if (s) {                                                        \
			append(s, EV_READ, addr, size);                         \
			if (crossing(addr, size))                               \
				halves(s, addr, size);                          \
			in_helper = 1;                                          \
		}                                                               \
		type v = (type)real(env, addr, mmu_idx, ra);                    \
		in_helper = 0;                                                  \
		if (h)                                                          \
			h->helper_call = 0;                                     \
		return v;                                                       \
	}
CPU_LD(cpu_ldub_mmuidx_ra_x86_64, uint32_t, 1)
CPU_LD(cpu_ldsb_mmuidx_ra_x86_64, int, 1)
CPU_LD(cpu_lduw_mmuidx_ra_x86_64, uint32_t, 2)
CPU_LD(cpu_ldsw_mmuidx_ra_x86_64, int, 2)
CPU_LD(cpu_ldl_mmuidx_ra_x86_64, uint32_t, 4)
CPU_LD(cpu_ldq_mmuidx_ra_x86_64, uint64_t, 8)
#define CPU_ST(name, type, size)                                                        \
	void name(void *env, uint64_t addr, type val, int mmu_idx, uintptr_t ra) {      \
		static cpu_st_fn real;                                                  \
		if (!real)                                                              \
			real = (cpu_st_fn)find(#name);                                  \
		struct emu_state *s = helping(), *h = calling();                        \
		if (h)                                                                  \
			h->helper_call = 1;                                             \
		if (s)                                                                  \
			append(s, EV_WRITE, addr, size);                                \
		real(env, addr, (uint64_t)val, mmu_idx, ra);                            \
		if (h)                                                                  \
			h->helper_call = 0;                                             \
	}
CPU_ST(cpu_stb_mmuidx_ra_x86_64, uint32_t, 1)
CPU_ST(cpu_stw_mmuidx_ra_x86_64, uint32_t, 2)
CPU_ST(cpu_stl_mmuidx_ra_x86_64, uint32_t, 4)
CPU_ST(cpu_stq_mmuidx_ra_x86_64, uint64_t, 8)

// emu_mem_fault takes back, when a load faults (type UC_MEM_READ_UNMAPPED
// or _PROT at addr), the events the hook would not have made: it made
// none for an unmapped page and one (the access) for a non-readable one,
// before the check; a crossing load (its halves end at mem_halves) made
// the access's and its first half's before the second page's check.
void emu_mem_fault(struct emu_state *s, int type, uint64_t addr, uint32_t size) {
	in_helper = 0; // the fault leaves the helper
	s->helper_call = 0;
	if (!s->mem_inline || (type != UC_MEM_READ_UNMAPPED && type != UC_MEM_READ_PROT))
		return;
	int unmapped = type == UC_MEM_READ_UNMAPPED;
	uint32_t n = s->n, back = 0;
	if (s->mem_halves == n && n >= 3 && s->buf[n - 3].kind == EV_READ && s->buf[n - 3].size == size) {
		if (addr == s->buf[n - 1].addr)
			back = unmapped; // the second page
		else
			back = unmapped ? 3 : 2;
	} else if (n >= 1 && s->buf[n - 1].kind == EV_READ && s->buf[n - 1].addr == addr && s->buf[n - 1].size == size) {
		back = unmapped;
	}
	if (s->mem_merge && back > n - s->mem_raw)
		back = 0; // merged already (a flush in a block of MEM_SLACK/2 events: never)
	s->n = n - back;
	s->mem_halves = 0;
}

// rip_slot finds where 2.0.1 keeps RIP (env.eip, after the 16 registers
// of which RSP is the fifth: emu_rsp_slot), checked against uc_reg_write.
static int rip_slot(struct emu_state *s) {
	uint64_t *rsp = emu_rsp_slot(s->uc), was = 0, probe = 0x5a17e0f1d2c3b4a0ull, got = 0;
	if (!rsp || uc_reg_read(s->uc, UC_X86_REG_RIP, &was) != UC_ERR_OK)
		return 0;
	uint64_t *rip = rsp + 12;
	int ok = uc_reg_write(s->uc, UC_X86_REG_RIP, &probe) == UC_ERR_OK && emu_read_self(&got, rip, sizeof got) && got == probe;
	uc_reg_write(s->uc, UC_X86_REG_RIP, &was);
	s->rip = ok ? rip : NULL;
	return ok;
}

// mem_usable says whether Unicorn is 2.0.1 with every function found and
// its TCGContext where inline.c expects it (s->uc's tcg_ctx points back at
// it), and finds s->rip.
static int mem_usable(struct emu_state *s) {
	int state = atomic_load_explicit(&usable, memory_order_acquire);
	if (state == 0) {
		int ok = uc_version(NULL, NULL) >> 8 == UC201_VERSION && emu_tcg_ctx_ok(s) && rip_slot(s);
		void **fn = (void **)&tcg;
		for (size_t i = 0; ok && i < sizeof tcg_names / sizeof tcg_names[0]; i++)
			ok = (fn[i] = dlsym(RTLD_DEFAULT, tcg_names[i])) != NULL;
		int unknown = 0;
		atomic_compare_exchange_strong(&usable, &unknown, ok ? 1 : -1);
		state = atomic_load_explicit(&usable, memory_order_acquire);
	}
	if (state != 1 || !rip_slot(s)) {
		s->rip = NULL;
		return 0;
	}
	return 1;
}

// emu_mem_inline_check turns s's inline memory events off unless
// mem_usable.
void emu_mem_inline_check(struct emu_state *s) {
	if (!mem_usable(s))
		s->mem_inline = 0;
}

// emu_mem_pc_check gives hook_mem's events their instructions where
// mem_usable (else Aux 0).
void emu_mem_pc_check(struct emu_state *s) { (void)mem_usable(s); }

struct emu_state *emu_running(void) { return running; }

uc_err emu_run(struct emu_state *s, uint64_t pc) {
	struct emu_state *was = running;
	running = s;
	in_helper = 0;
	s->helper_call = 0;
	s->mem_halves = 0;
	s->mem_raw = s->n; // Go appended or drained since
	inline_rebase(s); // the new budget's room
	uc_err err = emu_emu_start(s->uc, pc);
	running = was;
	inline_rebase(s);
	if (s->mem_inline)
		emu_flush_raw(s);
	return err;
}

#else
void emu_mem_fault(struct emu_state *s, int type, uint64_t addr, uint32_t size) {
	(void)s, (void)type, (void)addr, (void)size;
}
void emu_mem_inline_check(struct emu_state *s) { s->mem_inline = 0; }
void emu_mem_pc_check(struct emu_state *s) { s->rip = NULL; }
struct emu_state *emu_running(void) { return NULL; }
uc_err emu_run(struct emu_state *s, uint64_t pc) {
	inline_rebase(s); // the new budget's room
	uc_err err = emu_emu_start(s->uc, pc);
	inline_rebase(s);
	return err;
}
#endif
