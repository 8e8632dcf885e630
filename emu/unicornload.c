// libunicorn is opened with dlopen when the first engine is made, not
// linked at load time: the dynamic loader's relocation of its 19 MB took
// about a millisecond before any of emuprof's code ran, and a SIGTERM,
// SIGINT or SIGHUP then killed emuprof with the default action, no
// profile written. Opened later, it loads after main installed the stop
// handling (cmd/emuprof/stops.go).
//
// The functions below are the Unicorn API that emu/ calls, defined here
// with the header's prototypes and forwarding to libunicorn's, so the rest
// of emu/*.c is written against the plain API. libunicorn is opened
// RTLD_GLOBAL: the executable comes first in the global scope, so
// libunicorn still binds to unicornfix.c's replacements, and
// unicornfix.c's dlsym(RTLD_NEXT, ...) finds libunicorn's originals.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hooks.h"

// The functions, as X(name, return type, parameters, arguments).
#define UC_FUNCS(X)                                                                                      \
	X(uc_version, unsigned int, (unsigned int *major, unsigned int *minor), (major, minor))          \
	X(uc_strerror, const char *, (uc_err code), (code))                                              \
	X(uc_open, uc_err, (uc_arch arch, uc_mode mode, uc_engine **uc), (arch, mode, uc))               \
	X(uc_close, uc_err, (uc_engine * uc), (uc))                                                      \
	X(uc_emu_start, uc_err, (uc_engine * uc, uint64_t begin, uint64_t until, uint64_t timeout, size_t count), \
	  (uc, begin, until, timeout, count))                                                            \
	X(uc_emu_stop, uc_err, (uc_engine * uc), (uc))                                                   \
	X(uc_mem_map_ptr, uc_err, (uc_engine * uc, uint64_t address, size_t size, uint32_t perms, void *ptr), \
	  (uc, address, size, perms, ptr))                                                               \
	X(uc_mem_unmap, uc_err, (uc_engine * uc, uint64_t address, size_t size), (uc, address, size))    \
	X(uc_mem_protect, uc_err, (uc_engine * uc, uint64_t address, size_t size, uint32_t perms),        \
	  (uc, address, size, perms))                                                                    \
	X(uc_mem_read, uc_err, (uc_engine * uc, uint64_t address, void *bytes, size_t size),             \
	  (uc, address, bytes, size))                                                                    \
	X(uc_mem_write, uc_err, (uc_engine * uc, uint64_t address, const void *bytes, size_t size),      \
	  (uc, address, bytes, size))                                                                    \
	X(uc_reg_read, uc_err, (uc_engine * uc, int regid, void *value), (uc, regid, value))             \
	X(uc_reg_write, uc_err, (uc_engine * uc, int regid, const void *value), (uc, regid, value))      \
	X(uc_reg_read_batch, uc_err, (uc_engine * uc, int *regs, void **vals, int count),                \
	  (uc, regs, vals, count))                                                                       \
	X(uc_reg_write_batch, uc_err, (uc_engine * uc, int *regs, void *const *vals, int count),         \
	  (uc, regs, vals, count))                                                                       \
	X(uc_context_alloc, uc_err, (uc_engine * uc, uc_context * *context), (uc, context))              \
	X(uc_context_save, uc_err, (uc_engine * uc, uc_context * context), (uc, context))                \
	X(uc_context_restore, uc_err, (uc_engine * uc, uc_context * context), (uc, context))             \
	X(uc_context_free, uc_err, (uc_context * context), (context))

#define POINTER(name, ret, params, args) static ret(*p_##name) params;
UC_FUNCS(POINTER)
// The two variadic functions: their extra arguments are read here.
static uc_err (*p_uc_hook_add)(uc_engine *, uc_hook *, int, void *, void *, uint64_t, uint64_t, ...);
static uc_err (*p_uc_ctl)(uc_engine *, uc_control_type, ...);

#define FORWARD(name, ret, params, args) \
	ret name params { return p_##name args; }
UC_FUNCS(FORWARD)

uc_err uc_hook_add(uc_engine *uc, uc_hook *hh, int type, void *callback, void *user_data, uint64_t begin,
		   uint64_t end, ...) {
	va_list ap;
	va_start(ap, end);
	uc_err err;
	if (type == UC_HOOK_INSN) { // the instruction (UC_X86_INS_*)
		int insn = va_arg(ap, int);
		err = p_uc_hook_add(uc, hh, type, callback, user_data, begin, end, insn);
	} else if (type == UC_HOOK_TCG_OPCODE) { // the opcode and its flags
		int op = va_arg(ap, int), flags = va_arg(ap, int);
		err = p_uc_hook_add(uc, hh, type, callback, user_data, begin, end, op, flags);
	} else {
		err = p_uc_hook_add(uc, hh, type, callback, user_data, begin, end);
	}
	va_end(ap);
	return err;
}

// uc_ctl's control word says how many arguments follow (UC_CTL_IO_* and
// the count in bits 26-29, unicorn.h): each is an integer or a pointer, a
// 64-bit word here, and passed on as such.
uc_err uc_ctl(uc_engine *uc, uc_control_type control, ...) {
	int n = (control >> 26) & 0xf;
	uint64_t a[4] = {0};
	if (n > 4)
		return UC_ERR_ARG;
	va_list ap;
	va_start(ap, control);
	for (int i = 0; i < n; i++)
		a[i] = va_arg(ap, uint64_t);
	va_end(ap);
	return p_uc_ctl(uc, control, a[0], a[1], a[2], a[3]);
}

// emu_unicorn_open opens libunicorn, trying each of the n names in turn,
// and finds its functions. It returns 1, or 0 with why in msg (the loader's
// words for the last name tried, or the missing function).
int emu_unicorn_open(const char *const *names, int n, char *msg, size_t len) {
	void *h = NULL;
	const char *lib = NULL;
	for (int i = 0; i < n && !h; i++) {
		lib = names[i];
		h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
		if (!h) {
			const char *e = dlerror();
			snprintf(msg, len, "%s", e ? e : lib);
		}
	}
	if (!h)
		return 0;
	// Found by the handle, which names libunicorn and what it needs: never
	// the executable's definitions above.
#define FIND(name, ret, params, args)                                                          \
	if (!(p_##name = (ret(*) params)dlsym(h, #name))) {                                     \
		snprintf(msg, len, "%s has no function %s (is it Unicorn 2?)", lib, #name); \
		return 0;                                                                      \
	}
	UC_FUNCS(FIND)
	FIND(uc_hook_add, uc_err, (uc_engine *, uc_hook *, int, void *, void *, uint64_t, uint64_t, ...), ())
	FIND(uc_ctl, uc_err, (uc_engine *, uc_control_type, ...), ())
	return 1;
}
