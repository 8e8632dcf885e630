// SSE helpers of Debian's Unicorn 2.0.1 that stalled on every call.
//
// QEMU 5.0's translator runs most SSE integer instructions as helper
// calls on the XMM registers in CPUX86State, and writes those registers
// in pieces: a register copy (movdqa, gen_op_movo) or a load from guest
// memory (gen_ldo_env_A0) as two 8-byte stores, a shift's immediate count
// (psrld xmm, imm: xmm_t0) as two 4-byte stores. Debian's compiler
// vectorized the helpers, which then read each operand with one 16-byte
// load (the count with one 8-byte load) right after those stores: a load
// wider than the store it depends on cannot take its data from the store
// buffer and waits for the stores to reach the cache. perf annotate of
// python3 hashing 20 MB (OpenSSL's SSSE3 SHA-256): 97 % of
// helper_psrld_xmm's samples on its count's load, 78 % of helper_pxor_xmm's
// on its destination's; the SSE helpers were 29 % of --bare-engine.
//
// The functions below compute what 2.0.1's ops_sse.h computes (the same
// elementwise operations, the same shift rules: a count above the element
// width clears, or sign-fills for psra), but read each operand in the
// pieces it was written in: 8-byte halves, and the count as two 4-byte
// words. They store the result as one 16-byte store, as Debian's do, so
// helpers not replaced here read it as before. libunicorn reaches them
// through its helper tables' relocations (R_X86_64_64 and GLOB_DAT against
// the exported names), so the executable's definitions take their place,
// as unicornfix.c's do. Each checks on its first call that the library is
// 2.0.1 (the helpers' signature is its ops_sse_header.h's) and otherwise
// calls the library's own.
#if defined(__linux__) && defined(__x86_64__)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <emmintrin.h>
#include <stdint.h>
#include <stdlib.h>

#include "hooks.h"

#define UC201_VERSION 0x020001

typedef void (*sse_fn)(void *env, void *d, void *s);

// 1: 2.0.1, these run; -1: another version, the library's run; 0: not yet known.
static int sse_state;

static int sse_ours(void) {
	if (sse_state == 0)
		sse_state = uc_version(NULL, NULL) >> 8 == UC201_VERSION ? 1 : -1;
	return sse_state == 1;
}

// sse_slow runs a helper's first call (ours, once the version is known to
// be 2.0.1) and every call on another version (the library's own). Out of
// line, so that the helpers' common path needs no stack frame.
__attribute__((noinline, cold)) static void sse_slow(sse_fn *real, const char *name, sse_fn ours, void *env, void *d,
						     void *s) {
	if (sse_ours()) {
		ours(env, d, s);
		return;
	}
	if (!*real && !(*real = (sse_fn)dlsym(RTLD_NEXT, name)))
		abort(); // libunicorn calls this one, so it has its own
	(*real)(env, d, s);
}

// load128 reads 16 bytes as two 8-byte loads, each of which the store
// buffer can answer; asm, so that the compiler cannot merge them again.
static inline __m128i load128(const void *p) {
	__m128i lo, hi;
	__asm__("movq %1, %0" : "=x"(lo) : "m"(*(const uint64_t *)p));
	__asm__("movq %1, %0" : "=x"(hi) : "m"(*((const uint64_t *)p + 1)));
	return _mm_unpacklo_epi64(lo, hi);
}

// count reads a shift's 64-bit count as the two 4-byte words the
// immediate form stores (volatile: not merged into one 8-byte load).
static inline __m128i count(const void *p) {
	const volatile uint32_t *w = p;
	return _mm_cvtsi64_si128((long long)((uint64_t)w[1] << 32 | w[0]));
}

#define SSE_HELPER(op, expr)                                                              \
	static void ours_##op(void *env, void *d, void *s) {                                \
		(void)env;                                                                   \
		__m128i a = load128(d);                                                      \
		_mm_storeu_si128((__m128i *)d, expr);                                        \
	}                                                                                    \
	void helper_##op##_xmm_x86_64(void *env, void *d, void *s) {                        \
		static sse_fn real;                                                          \
		if (__builtin_expect(sse_state == 1, 1))                                     \
			ours_##op(env, d, s);                                                \
		else                                                                         \
			sse_slow(&real, "helper_" #op "_xmm_x86_64", ours_##op, env, d, s); \
	}
// Elementwise: d = op(d, s).
#define SSE_BINARY(op, intrinsic) SSE_HELPER(op, intrinsic(a, load128(s)))
// Shifts by a register's or an immediate's count; the intrinsics clear
// (psrl, psll) or sign-fill (psra) when it exceeds the element width.
#define SSE_SHIFT(op, intrinsic) SSE_HELPER(op, intrinsic(a, count(s)))

SSE_BINARY(paddb, _mm_add_epi8)
SSE_BINARY(paddw, _mm_add_epi16)
SSE_BINARY(paddl, _mm_add_epi32)
SSE_BINARY(paddq, _mm_add_epi64)
SSE_BINARY(psubb, _mm_sub_epi8)
SSE_BINARY(psubw, _mm_sub_epi16)
SSE_BINARY(psubl, _mm_sub_epi32)
SSE_BINARY(psubq, _mm_sub_epi64)
SSE_BINARY(paddusb, _mm_adds_epu8)
SSE_BINARY(paddsb, _mm_adds_epi8)
SSE_BINARY(psubusb, _mm_subs_epu8)
SSE_BINARY(psubsb, _mm_subs_epi8)
SSE_BINARY(paddusw, _mm_adds_epu16)
SSE_BINARY(paddsw, _mm_adds_epi16)
SSE_BINARY(psubusw, _mm_subs_epu16)
SSE_BINARY(psubsw, _mm_subs_epi16)
SSE_BINARY(pminub, _mm_min_epu8)
SSE_BINARY(pmaxub, _mm_max_epu8)
SSE_BINARY(pminsw, _mm_min_epi16)
SSE_BINARY(pmaxsw, _mm_max_epi16)
SSE_BINARY(pand, _mm_and_si128)
SSE_BINARY(pandn, _mm_andnot_si128) // ~d & s
SSE_BINARY(por, _mm_or_si128)
SSE_BINARY(pxor, _mm_xor_si128)
SSE_BINARY(pcmpgtb, _mm_cmpgt_epi8)
SSE_BINARY(pcmpgtw, _mm_cmpgt_epi16)
SSE_BINARY(pcmpgtl, _mm_cmpgt_epi32)
SSE_BINARY(pcmpeqb, _mm_cmpeq_epi8)
SSE_BINARY(pcmpeqw, _mm_cmpeq_epi16)
SSE_BINARY(pcmpeql, _mm_cmpeq_epi32)
SSE_BINARY(pavgb, _mm_avg_epu8)
SSE_BINARY(pavgw, _mm_avg_epu16)
SSE_SHIFT(psrlw, _mm_srl_epi16)
SSE_SHIFT(psraw, _mm_sra_epi16)
SSE_SHIFT(psllw, _mm_sll_epi16)
SSE_SHIFT(psrld, _mm_srl_epi32)
SSE_SHIFT(psrad, _mm_sra_epi32)
SSE_SHIFT(pslld, _mm_sll_epi32)
SSE_SHIFT(psrlq, _mm_srl_epi64)
SSE_SHIFT(psllq, _mm_sll_epi64)

int emu_sse_replaced(void) { return sse_state == 1; }
#else
int emu_sse_replaced(void) { return 0; }
#endif
