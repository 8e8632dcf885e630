// Cross-page chaining: a direct jump, call or conditional branch to
// another guest page is chained to its target's translation, as one
// within a page is, instead of looking the target up at every execution.
//
// QEMU's softmmu translators (2.0.1's target/i386 use_goto_tb) chain a
// direct jump only within the page of its block, because the target
// page's mapping may change without its translations being removed; the
// others end in tcg_gen_lookup_and_goto_ptr (helper_lookup_tb_ptr: the
// jump cache, then the block's pc, flags and cflags, two host cache
// misses). Under emuprof a guest page's code changes only where the
// engine removes its translations (Engine.forgetCode on unmap, on
// protection without execute, on zeroing, on the kernel's writes; a
// store into code through QEMU's own invalidation), and removing a
// translation unlinks the jumps chained to it (tb_jmp_unlink): a jump
// chained across pages is as safe as one within. So where the jump's
// target is a constant (the last two ops store a movi'd temp into
// env->eip, as gen_goto_tb's cross-page path does; returns and indirect
// jumps store a loaded value), the lookup becomes goto_tb and exit_tb, a
// jump slot cpu_exec links to the target on first execution.
//
// cpu_exec links a slot only to a block within one page (tb_find: "not
// safe to make a direct jump to a TB spanning two pages"), and an unlinked
// slot leaves the generated code for cpu_exec every time, which costs
// more than the lookup. So the slot's unlinked path counts its runs in a
// word of its own and exits only on the first; from the second on (the
// target was not linked, or was unlinked since) it looks the target up as
// before:
//
//	goto_tb n                    (linked: straight to the target)
//	if (++*word > 1) goto lookup
//	exit_tb tb|n                 (cpu_exec links slot n, where it can)
//	lookup: lookup_and_goto_ptr
//
// Which of the block's two jump slots is free is known only once the
// block is translated (rep string instructions emit slot 1 first): the
// ops are emitted with slot 0 and tcg_gen_code (interposed) gives each a
// slot no goto_tb of the translator took, or, with none left, removes its
// goto_tb and makes its exit_tb(0) (never met on x86, kept for safety).
// The words are emu_slots of the engine (inline.c's chunks): a table
// clear sets them to SLOT_UNKNOWN, which only makes those sites look up.
//
// Only engines with a block hook chain (emu_state.chain_on): the hook is
// what tells Go which pages hold code, so that forgetCode removes their
// translations; the bare engine keeps Unicorn's rule. The opcode numbers,
// TCGOp's layout and TCGContext's op list and env offsets are 2.0.1's
// (its tcg-opc.h, tcg.h); they are checked on the first translation that
// could chain, and any other layout keeps the lookup.
// Options.NoChain (EMUPROF_CHAIN=0) turns it off, for comparisons.
#define _GNU_SOURCE
#include "hooks.h"

#ifdef __linux__
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct TCGContext TCGContext;
typedef uintptr_t TCGArg;

enum { // 2.0.1's tcg-opc.h, tcg.h
	OPC_SET_LABEL = 1,
	OPC_MOVI_I64 = 64,
	OPC_LD_I64 = 73,
	OPC_ST_I64 = 77,
	OPC_ADD_I64 = 78,
	OPC_EXIT_TB = 0x82,
	OPC_GOTO_TB = 0x83,
	COND_GT = 11,
};

// 2.0.1's layouts: TCGOp { opc:8 ...; QTAILQ_ENTRY link; TCGArg args[] },
// TCGContext's ops (QTAILQ_HEAD) and nb_ops, cpu_env (a TCGv, an offset
// in the context), and offsetof(CPUX86State, eip).
#define OP_NEXT 8
#define OP_PREV 16
#define OP_ARGS 0x18
#define CTX_NB_OPS 0x38
#define CTX_OPS 0x7388
#define CTX_OPS_TAIL 0x7390 // ops.tqh_circ.tql_prev
#define CTX_CPU_ENV 0x98f0
#define ENV_EIP 0x80
#define CTX_UC 0x9970 // offsetof(TCGContext, uc), after every temp (inline.c's UC201_CTX_UC)

// arg is temp v (an offset in c, as TCGv) as an op's argument.
static TCGArg arg(TCGContext *c, uintptr_t v) { return (TCGArg)((char *)c + v); }

static unsigned op_code(const char *op) { return *(const uint8_t *)op; }
static TCGArg *op_args(char *op) { return (TCGArg *)(op + OP_ARGS); }

// last_op returns the context's last op, or NULL.
static char *last_op(TCGContext *c) {
	char *link = *(char **)((char *)c + CTX_OPS_TAIL); // the last op's link, or the head
	return link == (char *)c + CTX_OPS ? NULL : link - OP_NEXT;
}

// prev_op returns the op before op, or NULL.
static char *prev_op(TCGContext *c, char *op) {
	char *link = *(char **)(op + OP_PREV);
	return link == (char *)c + CTX_OPS ? NULL : link - OP_NEXT;
}

static _Atomic int usable; // 1: 2.0.1's layout checked, -1: not
static void (*real_lookup)(TCGContext *);
static void (*real_goto_tb)(TCGContext *, unsigned);
static void (*real_func_start)(TCGContext *);
static int (*real_gen_code)(TCGContext *, void *tb, uintptr_t, uintptr_t);
// libunicorn's TCG functions, found by layout_ok.
static struct {
	void (*op1)(TCGContext *, int, TCGArg);
	void (*op3)(TCGContext *, int, TCGArg, TCGArg, TCGArg);
	void (*op_remove)(TCGContext *, void *op);
	uintptr_t (*const_i64)(TCGContext *, int64_t);
	void (*temp_free)(TCGContext *, void *temp);
	void (*brcond_i64)(TCGContext *, int cond, uintptr_t a, uintptr_t b, void *label);
	void *(*new_label)(TCGContext *);
} fn;
static const char *const fn_names[] = {"tcg_gen_op1_x86_64",   "tcg_gen_op3_x86_64",           "tcg_op_remove_x86_64",
                                       "tcg_const_i64_x86_64", "tcg_temp_free_internal_x86_64", "tcg_gen_brcond_i64_x86_64",
                                       "gen_new_label_x86_64"};

// layout_ok checks the op list of c, mid-translation: its ops, walked
// from the head, end at the tail in nb_ops steps, each op's prev link is
// the one before; and c's cpu_env is a temp of c.
static int layout_ok(TCGContext *c) {
	if (uc_version(NULL, NULL) >> 8 != 0x020001)
		return 0;
	void **f = (void **)&fn;
	for (size_t i = 0; i < sizeof fn_names / sizeof fn_names[0]; i++)
		if (!(f[i] = dlsym(RTLD_DEFAULT, fn_names[i])))
			return 0;
	int n = *(int *)((char *)c + CTX_NB_OPS), i = 0;
	char *link = (char *)c + CTX_OPS, *op = *(char **)link, *prev = NULL;
	for (; op && i <= n; i++, prev = op, op = *(char **)(op + OP_NEXT)) {
		char *back = *(char **)(op + OP_PREV);
		if (back != (prev ? prev + OP_NEXT : link))
			return 0;
	}
	uintptr_t env = *(uintptr_t *)((char *)c + CTX_CPU_ENV);
	return i == n && n > 0 && prev == last_op(c) && env > 0 && env < CTX_UC;
}

// The translation on this thread: the jump slots its goto_tb ops took,
// and the goto_tb/exit_tb pairs emitted here for chained jumps.
static __thread unsigned slots_taken;
static __thread int pairs;
static __thread char *pair_goto[2], *pair_exit[2];

// direct reports whether the ops end by storing a constant into
// env->eip: a movi_i64 of a temp, then a st_i64 of that temp at eip.
static int direct(TCGContext *c) {
	char *st = last_op(c), *mv = st ? prev_op(c, st) : NULL;
	if (!mv || op_code(st) != OPC_ST_I64 || op_code(mv) != OPC_MOVI_I64)
		return 0;
	TCGArg *a = op_args(st), *m = op_args(mv);
	TCGArg env = (TCGArg)((char *)c + *(uintptr_t *)((char *)c + CTX_CPU_ENV));
	return a[0] == m[0] && a[1] == env && a[2] == ENV_EIP;
}

void tcg_gen_lookup_and_goto_ptr_x86_64(TCGContext *c) {
	if (!real_lookup && !(real_lookup = dlsym(RTLD_NEXT, "tcg_gen_lookup_and_goto_ptr_x86_64")))
		abort(); // libunicorn calls this one, so it has its own
	struct emu_state *s = emu_running();
	if (!s || !s->chain_on) {
		real_lookup(c);
		return;
	}
	int state = atomic_load_explicit(&usable, memory_order_acquire);
	if (state == 0) {
		int unknown = 0;
		atomic_compare_exchange_strong(&usable, &unknown, layout_ok(c) ? 1 : -1);
		state = atomic_load_explicit(&usable, memory_order_acquire);
	}
	struct emu_slot *word;
	if (state != 1 || pairs == 2 || !direct(c) || !(word = emu_slot_new(s))) {
		real_lookup(c);
		return;
	}
	word->n = 0;
	fn.op1(c, OPC_GOTO_TB, 0);
	pair_goto[pairs] = last_op(c);
	uintptr_t p = fn.const_i64(c, (int64_t)(uintptr_t)&word->n), n = fn.const_i64(c, 0), one = fn.const_i64(c, 1);
	fn.op3(c, OPC_LD_I64, arg(c, n), arg(c, p), 0);
	fn.op3(c, OPC_ADD_I64, arg(c, n), arg(c, n), arg(c, one));
	fn.op3(c, OPC_ST_I64, arg(c, n), arg(c, p), 0);
	void *lookup = fn.new_label(c);
	fn.brcond_i64(c, COND_GT, n, one, lookup);
	fn.temp_free(c, (void *)arg(c, one));
	fn.temp_free(c, (void *)arg(c, n));
	fn.temp_free(c, (void *)arg(c, p));
	fn.op1(c, OPC_EXIT_TB, 0);
	pair_exit[pairs] = last_op(c);
	*(uint32_t *)lookup |= 1; // present (TCGLabel's first bit)
	fn.op1(c, OPC_SET_LABEL, (TCGArg)lookup);
	real_lookup(c);
	pairs++;
	s->chained_sites++;
}

void tcg_gen_goto_tb_x86_64(TCGContext *c, unsigned idx) {
	if (!real_goto_tb && !(real_goto_tb = dlsym(RTLD_NEXT, "tcg_gen_goto_tb_x86_64")))
		abort();
	slots_taken |= 1u << idx;
	real_goto_tb(c, idx);
}

void tcg_func_start_x86_64(TCGContext *c) {
	if (!real_func_start && !(real_func_start = dlsym(RTLD_NEXT, "tcg_func_start_x86_64")))
		abort();
	slots_taken = 0;
	pairs = 0;
	real_func_start(c);
}

// Later Unicorns pass tcg_gen_code more arguments (QEMU 7's pc_start):
// the two after tb are passed on as they came.
int tcg_gen_code_x86_64(TCGContext *c, void *tb, uintptr_t a3, uintptr_t a4) {
	if (!real_gen_code && !(real_gen_code = dlsym(RTLD_NEXT, "tcg_gen_code_x86_64")))
		abort();
	for (int i = 0; i < pairs; i++) {
		unsigned slot = !(slots_taken & 1) ? 0 : !(slots_taken & 2) ? 1 : 2;
		if (slot < 2) {
			slots_taken |= 1u << slot;
			op_args(pair_goto[i])[0] = slot;
			op_args(pair_exit[i])[0] = (TCGArg)tb + slot;
		} else {
			fn.op_remove(c, pair_goto[i]);
			op_args(pair_exit[i])[0] = 0;
		}
	}
	pairs = 0;
	slots_taken = 0;
	return real_gen_code(c, tb, a3, a4);
}

// emu_note_translation records the pages of a translation just made for
// the engine running here, if it chains: a jump may be chained to a
// translation that never ran its block hook (a stop requested in
// between), whose pages Go's decoder then never saw, and forgetCode must
// remove it too when its page changes.
void emu_note_translation(uint64_t pc, uint32_t size) {
	struct emu_state *s = emu_running();
	if (!s || !s->chain_on)
		return;
	for (uint64_t p = pc & ~0xfffull; p < pc + size; p += 0x1000) {
		if (s->n_xlated && s->xlated[s->n_xlated - 1] == p)
			continue;
		if (s->n_xlated == s->cap_xlated) {
			uint32_t cap = s->cap_xlated ? 2 * s->cap_xlated : 256;
			uint64_t *b = realloc(s->xlated, cap * sizeof *b);
			if (!b) {
				s->xlated_lost = 1;
				return;
			}
			s->xlated = b;
			s->cap_xlated = cap;
		}
		s->xlated[s->n_xlated++] = p;
	}
}
#else
void emu_note_translation(uint64_t pc, uint32_t size) { (void)pc, (void)size; }
#endif
