// The hooks that stop the engine on a fault or an interrupt, and the one
// that answers cpuid with a fixed CPU.
#include <string.h>
#include "hooks.h"
#include "faults.h"
#include "_cgo_export.h"

static bool hook_invalid(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user) {
	struct emu_state *s = user;
	// A page the address space backs on first touch (MAP_NORESERVE):
	// once Go has mapped it, the engine makes the access again.
	if (s->want_touch && (type == UC_MEM_READ_UNMAPPED || type == UC_MEM_WRITE_UNMAPPED) &&
	    emuTouch(s->handle, addr, size))
		return true;
	emu_mem_fault(s, type, addr, (uint32_t)size); // inline memory events made before the access
	s->reason = STOP_FAULT;
	s->fault_addr = addr;
	s->fault_type = type;
	s->fault_size = size;
	uc_reg_read(uc, UC_X86_REG_RIP, &s->fault_pc);
	return false;
}

static void hook_intr(uc_engine *uc, uint32_t intno, void *user) {
	struct emu_state *s = user;
	s->reason = STOP_INTR;
	s->intno = intno;
	uc_emu_stop(uc);
}

// The CPU the guest sees. Unicorn 2.0.1 reports leaf-1 feature bits without
// FPU, TSC, MMX or SSE3 (the same for every CPU model), which makes glibc's
// ld.so refuse libraries marked x86-64-baseline ("CPU ISA level is lower
// than required"). So cpuid is answered here, with a fixed, host-independent
// x86-64-v2 CPU whose every advertised feature the emulator implements:
// no AVX, no BMI, no XSAVE, so guests pick SSE2..SSE4.2 code paths.
static void cpuid_leaf(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
	static const char brand[48] = "emuprof virtual x86-64 CPU";
	r[0] = r[1] = r[2] = r[3] = 0;
	switch (leaf) {
	case 0:
	case 0x80000000:
		r[0] = leaf == 0 ? 7 : 0x80000008;
		memcpy(&r[1], "Auth", 4); // ebx, edx, ecx spell AuthenticAMD
		memcpy(&r[3], "enti", 4);
		memcpy(&r[2], "cAMD", 4);
		break;
	case 1:
		r[0] = 0x00000663;          // family 6 model 6 stepping 3
		r[1] = 0x00010800;          // clflush 64 bytes, 1 logical cpu
		r[2] = 0x00982201;          // sse3 ssse3 cx16 sse4.1 sse4.2 popcnt
		r[3] = 0x078bfbff;          // fpu tsc cx8 cmov mmx fxsr sse sse2 ...
		break;
	case 0x80000001:
		r[0] = 0x00000663;
		r[2] = 0x00000001;          // lahf/sahf in 64-bit mode
		r[3] = 0x20100800;          // syscall nx lm
		break;
	case 0x80000002:
	case 0x80000003:
	case 0x80000004:
		memcpy(r, brand + 16 * (leaf - 0x80000002), 16);
		break;
	case 0x80000005:
		r[2] = r[3] = 0x20080140;   // L1d/L1i: 32 KiB, 8-way, 64-byte lines
		break;
	case 0x80000006:
		r[2] = 0x02006040;          // L2: 512 KiB, 8-way, 64-byte lines
		r[3] = 0x00406040;          // L3: 8 MiB
		break;
	case 0x80000008:
		r[0] = 0x00003028;          // 40-bit physical, 48-bit virtual addresses
		break;
	}
	(void)sub;
}

static int hook_cpuid(uc_engine *uc, void *user) {
	uint64_t rax, rcx;
	uint32_t r[4];
	uc_reg_read(uc, UC_X86_REG_RAX, &rax);
	uc_reg_read(uc, UC_X86_REG_RCX, &rcx);
	cpuid_leaf((uint32_t)rax, (uint32_t)rcx, r);
	uint64_t a = r[0], b = r[1], c = r[2], d = r[3];
	uc_reg_write(uc, UC_X86_REG_RAX, &a);
	uc_reg_write(uc, UC_X86_REG_RBX, &b);
	uc_reg_write(uc, UC_X86_REG_RCX, &c);
	uc_reg_write(uc, UC_X86_REG_RDX, &d);
	return 1; // skip the engine's own cpuid
}

uc_err emu_install_faults(struct emu_state *s) {
	uc_hook h;
	uc_err err;
	if ((err = uc_hook_add(s->uc, &h, UC_HOOK_INSN, hook_cpuid, s, 1, 0, UC_X86_INS_CPUID)))
		return err;
	if ((err = uc_hook_add(s->uc, &h, UC_HOOK_MEM_INVALID, hook_invalid, s, 1, 0)))
		return err;
	return uc_hook_add(s->uc, &h, UC_HOOK_INTR, hook_intr, s, 1, 0);
}
