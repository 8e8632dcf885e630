// Inline counting: the generated code of a block counts its instructions
// itself, instead of calling the block hook hook_count at every block.
//
// Unicorn 2.0.1 emits the block hook at the start of every translation
// block (translator_loop's gen_uc_tracecode, before gen_tb_start's
// exit check) through the function pointer uc->add_inline_hook, which
// translate-all.c sets to uc_add_inline_hook_x86_64 through the GOT: the
// executable's definition below takes its place, as unicornfix.c's do.
// For hook_count it emits, as TCG ops (what QEMU's TCG plugins call
// inline ops):
//
//	s->last_slot = slot;   (tb_gen_code fills the slot's start and length)
//	s->inline_count += *slot;   (the block's instructions << INLINE_SHIFT, + 1 block)
//	if (s->inline_count > 0)
//		emu_count_slow(uc, slot, 0, s);   (hook.c: takes the count back, calls hook_count, fills *slot)
//
// *slot is this translation's instruction count from the block table
// (the Go decoder's, so virtual time is unchanged), SLOT_UNKNOWN until
// the first call found the block there with no speedup saving. The fast
// path is taken only where hook_count would count the block as it is:
// inline_count stays at or below 0 while the instructions fit the budget's
// room (hooks.h, inline_rebase), and SLOT_UNKNOWN puts it above 0 whatever
// was counted; engines whose memory events take
// each block's time (eager_time) never count inline (emu_install_base). The hook's other bookkeeping
// (no_event, its cache of counts) serves events, which an engine with
// hook_count makes only for memory, and those engines keep the hook. A block the hook stops leaves
// last_slot (or last_block and last_len) at it: they are read only after a fault, and
// such a stop is not one. emu_table_clear resets every slot, so the
// hook sees each block again as it did before (emuBlockMiss). A
// translation that restarts (code buffer full) emits again with a new
// slot; slots live as long as the engine's state.
//
// The opcode numbers, TCGLabel's bits and struct hook's layout are
// 2.0.1's (its tcg-opc.h, tcg.h, uc_priv.h); the hook's layout is checked
// against the hook just added (emu_inline_check), and any other Unicorn
// keeps calling hook_count.
#define _GNU_SOURCE
#include <stdlib.h>

#include "hooks.h"

struct emu_slot *emu_slot_new(struct emu_state *s) {
	struct emu_slots *c = s->slots;
	if (!c || c->used == sizeof c->n / sizeof c->n[0]) {
		c = malloc(sizeof *c);
		if (!c)
			return NULL;
		c->next = s->slots;
		c->used = 0;
		s->slots = c;
	}
	struct emu_slot *n = &c->n[c->used++];
	*n = (struct emu_slot){.n = SLOT_UNKNOWN};
	return n;
}

void emu_slots_reset(struct emu_state *s) {
	for (struct emu_slots *c = s->slots; c; c = c->next)
		for (uint32_t i = 0; i < c->used; i++)
			c->n[i].n = SLOT_UNKNOWN;
}

void emu_slots_free(struct emu_state *s) {
	while (s->slots) {
		struct emu_slots *c = s->slots;
		s->slots = c->next;
		free(c);
	}
}

#ifdef __linux__
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <unistd.h>

void emu_count_slow(uc_engine *uc, uint64_t slot, uint32_t unused, void *user);

struct label201 { // TCGLabel's first word
	unsigned present : 1;
	unsigned has_value : 1;
	unsigned id : 14;
	unsigned refs : 16;
};

typedef struct TCGContext TCGContext;
typedef struct TCGTemp TCGTemp;
typedef uintptr_t TCGArg;
typedef uintptr_t TCGv; // a temp's offset in TCGContext (TCGv_i32, TCGv_i64)

enum { // 2.0.1's tcg-opc.h
	OP_SET_LABEL = 1,
	OP_ST_I32 = 16,
	OP_LD_I64 = 73,
	OP_ST_I64 = 77,
	OP_ADD_I64 = 78,
};
enum { TYPE_I64 = 1, COND_LE = 10 };

// libunicorn's TCG functions (opened with dlopen: found in emu_inline_check).
static struct {
	void (*op1)(TCGContext *, int, TCGArg);
	void (*op3)(TCGContext *, int, TCGArg, TCGArg, TCGArg);
	TCGv (*const_i64)(TCGContext *, int64_t);
	TCGv (*const_i32)(TCGContext *, int32_t);
	TCGTemp *(*temp_new)(TCGContext *, int type, _Bool local);
	void (*temp_free)(TCGContext *, TCGTemp *);
	void (*brcond_i64)(TCGContext *, int cond, TCGv a, TCGv b, void *label);
	void *(*new_label)(TCGContext *);
	void (*callN)(TCGContext *, void *func, TCGTemp *ret, int nargs, TCGTemp **args);
} tcg;
static const char *const tcg_names[] = {"tcg_gen_op1_x86_64", "tcg_gen_op3_x86_64", "tcg_const_i64_x86_64",
                                        "tcg_const_i32_x86_64", "tcg_temp_new_internal_x86_64",
                                        "tcg_temp_free_internal_x86_64", "tcg_gen_brcond_i64_x86_64",
                                        "gen_new_label_x86_64", "tcg_gen_callN_x86_64"};

typedef void (*inline_hook_fn)(struct uc_struct *uc, struct hook201 *hk, void **args, int n);

#define UC201_VERSION 0x020001
#define UC201_TCG_CTX 0x2c0 // offsetof(struct uc_struct, tcg_ctx), checked in emu_inline_check
#define UC201_CTX_UC 0x9970 // offsetof(TCGContext, uc)

static _Atomic int usable;     // 1: struct hook's layout checked, -1: not 2.0.1's
static void *count_hook;       // hook_count
static struct hook201 slow_hook; // what uc_add_inline_hook needs to call emu_count_slow

static TCGTemp *temp(TCGContext *c, TCGv v) { return (TCGTemp *)((char *)c + v); }
static TCGArg arg(TCGContext *c, TCGv v) { return (TCGArg)temp(c, v); }

static TCGv new_i64(TCGContext *c) {
	return (TCGv)((char *)tcg.temp_new(c, TYPE_I64, 0) - (char *)c);
}

static void free_temp(TCGContext *c, TCGv v) { tcg.temp_free(c, temp(c, v)); }

static void set_label(TCGContext *c, void *l) {
	((struct label201 *)l)->present = 1;
	tcg.op1(c, OP_SET_LABEL, (TCGArg)l);
}

// The translation being made on this thread in tb_gen_code (below), and
// the slot emit_count gave it: tb_gen_code fills the slot's start and
// length from the block it returns, so the code stores only the slot.
static __thread int in_gen;
static __thread struct emu_slot *gen_slot;

typedef struct tb201 *(*gen_fn)(void *cpu, uint64_t pc, uint64_t cs_base, uint32_t flags, int cflags);

struct tb201 *tb_gen_code_x86_64(void *cpu, uint64_t pc, uint64_t cs_base, uint32_t flags, int cflags) {
	static gen_fn real;
	if (!real && !(real = (gen_fn)dlsym(RTLD_NEXT, "tb_gen_code_x86_64")))
		abort(); // libunicorn calls this one, so it has its own
	int outer = in_gen;
	struct emu_slot *outer_slot = gen_slot;
	in_gen = 1;
	gen_slot = NULL;
	struct tb201 *tb = real(cpu, pc, cs_base, flags, cflags);
	if (gen_slot) {
		gen_slot->pc = tb->pc;
		gen_slot->len = tb->size;
	}
	if (tb)
		emu_note_translation(tb->pc, tb->size);
	in_gen = outer;
	gen_slot = outer_slot;
	return tb;
}

// emit_count emits the code above; args are gen_uc_tracecode's temps:
// uc, pc (i64), size (i32), user data. The count is added before the
// test, and emu_count_slow takes it back: the fast path is then one
// basic block, with its temps (they die at a branch) and one branch.
// Inside tb_gen_code the block is stored as its slot (one store of a
// pointer the code holds anyway), else as its start and length.
static void emit_count(struct uc_struct *uc, struct hook201 *hk, struct emu_state *s, void **args, inline_hook_fn real) {
	TCGContext *c = *(TCGContext **)((char *)uc + UC201_TCG_CTX);
	struct emu_slot *slot = emu_slot_new(s);
	TCGArg pc = (TCGArg)args[1], size = (TCGArg)args[2];
	TCGv p = tcg.const_i64(c, (int64_t)(uintptr_t)s);
	if (!slot || !in_gen) {
		TCGv z = tcg.const_i64(c, 0);
		tcg.op3(c, OP_ST_I64, arg(c, z), arg(c, p), offsetof(struct emu_state, last_slot));
		free_temp(c, z);
	}
	if (!slot) {
		free_temp(c, p);
		real(uc, hk, args, 4); // hook_count, as Unicorn alone
		return;
	}
	s->inline_blocks++;
	TCGv sl = tcg.const_i64(c, (int64_t)(uintptr_t)slot);
	if (in_gen) {
		gen_slot = slot;
		tcg.op3(c, OP_ST_I64, arg(c, sl), arg(c, p), offsetof(struct emu_state, last_slot));
	} else {
		tcg.op3(c, OP_ST_I64, pc, arg(c, p), offsetof(struct emu_state, last_block));
		tcg.op3(c, OP_ST_I32, size, arg(c, p), offsetof(struct emu_state, last_len));
	}
	TCGv cnt = new_i64(c), n = new_i64(c), zero = tcg.const_i64(c, 0);
	tcg.op3(c, OP_LD_I64, arg(c, cnt), arg(c, p), offsetof(struct emu_state, inline_count));
	tcg.op3(c, OP_LD_I64, arg(c, n), arg(c, sl), offsetof(struct emu_slot, n));
	tcg.op3(c, OP_ADD_I64, arg(c, cnt), arg(c, cnt), arg(c, n));
	tcg.op3(c, OP_ST_I64, arg(c, cnt), arg(c, p), offsetof(struct emu_state, inline_count));
	void *end = tcg.new_label(c);
	tcg.brcond_i64(c, COND_LE, cnt, zero, end);
	free_temp(c, zero);
	free_temp(c, n);
	free_temp(c, cnt);
	free_temp(c, sl);
	free_temp(c, p);
	TCGv a[4] = {tcg.const_i64(c, (int64_t)(uintptr_t)uc), tcg.const_i64(c, (int64_t)(uintptr_t)slot),
	             tcg.const_i32(c, 0), tcg.const_i64(c, (int64_t)(uintptr_t)s)};
	void *slow_args[4];
	for (int i = 0; i < 4; i++)
		slow_args[i] = temp(c, a[i]);
	// Unicorn's uc_add_inline_hook registers the callee in the context's
	// helper tables on every call (two mallocs, two inserts, an snprintf);
	// once is enough for tcg_gen_callN to find it.
	if (s->slow_emitted) {
		tcg.callN(c, (void *)emu_count_slow, NULL, 4, (TCGTemp **)slow_args);
	} else {
		real(uc, &slow_hook, slow_args, 4);
		s->slow_emitted = 1;
		s->slow_registered++;
	}
	s->slow_calls++;
	for (int i = 0; i < 4; i++)
		free_temp(c, a[i]);
	set_label(c, end);
}

void uc_add_inline_hook_x86_64(struct uc_struct *uc, struct hook201 *hk, void **args, int n) {
	static inline_hook_fn real;
	if (!real && !(real = (inline_hook_fn)dlsym(RTLD_NEXT, "uc_add_inline_hook_x86_64")))
		abort(); // libunicorn calls this one, so it has its own
	if (atomic_load_explicit(&usable, memory_order_acquire) == 1 && n == 4 && hk->callback == count_hook &&
	    hk->type == UC_HOOK_BLOCK) {
		struct emu_state *s = hk->user_data;
		if (s->inline_on && (void *)s->uc == (void *)uc) {
			emit_count(uc, hk, s, args, real);
			return;
		}
	}
	real(uc, hk, args, n);
}

// emu_tcg_ctx_ok reports whether uc->tcg_ctx is where 2.0.1 keeps it:
// the context's uc points back (meminline.c relies on it too).
int emu_tcg_ctx_ok(struct emu_state *s) {
	char *ctx = NULL;
	void *back = NULL;
	return emu_read_self(&ctx, (char *)s->uc + UC201_TCG_CTX, sizeof ctx) && ctx != NULL &&
	       emu_read_self(&back, ctx + UC201_CTX_UC, sizeof back) && back == (void *)s->uc;
}

// emu_inline_check runs once hook_count is added to s's engine as h: the
// hook's fields must read back where 2.0.1 keeps them, and uc->tcg_ctx
// must be where 2.0.1 keeps it (the context's uc points back). Else
// s, and every engine after, calls hook_count.
void emu_inline_check(struct emu_state *s, uc_hook h, void *callback) {
	int state = atomic_load_explicit(&usable, memory_order_acquire);
	if (state == 0) {
		struct hook201 got;
		int ok = uc_version(NULL, NULL) >> 8 == UC201_VERSION && emu_read_self(&got, (void *)h, sizeof got) &&
		         got.type == UC_HOOK_BLOCK && got.callback == callback && got.user_data == s && got.begin == 1 &&
		         got.end == 0 && emu_tcg_ctx_ok(s);
		void **fn = (void **)&tcg;
		for (size_t i = 0; ok && i < sizeof tcg_names / sizeof tcg_names[0]; i++)
			ok = (fn[i] = dlsym(RTLD_DEFAULT, tcg_names[i])) != NULL;
		if (ok) {
			count_hook = callback;
			slow_hook = (struct hook201){.type = UC_HOOK_BLOCK, .callback = (void *)emu_count_slow};
		}
		int unknown = 0;
		atomic_compare_exchange_strong(&usable, &unknown, ok ? 1 : -1);
		state = atomic_load_explicit(&usable, memory_order_acquire);
	}
	if (state != 1)
		s->inline_on = 0;
}

#else
void emu_inline_check(struct emu_state *s, uc_hook h, void *callback) {
	(void)h;
	(void)callback;
	s->inline_on = 0;
}
#endif
