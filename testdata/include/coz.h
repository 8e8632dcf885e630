/* coz.h - a minimal header compatible with Coz's progress-point macros
 * (plasma-umass/coz include/coz.h, written here from its documented
 * interface, not copied): COZ_PROGRESS, COZ_PROGRESS_NAMED(name),
 * COZ_BEGIN(name) and COZ_END(name) look up the profiler's
 * _coz_get_counter through a weak dlsym once per call site and, if a
 * profiler provides it, increment the site's counter. Natively, without
 * Coz, every macro is a no-op. Under emuprof the macros are recognised by
 * their call sites (see analyses/causal/cozmacros.go). */
#ifndef EMUPROF_TEST_COZ_H
#define EMUPROF_TEST_COZ_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#define COZ_COUNTER_TYPE_THROUGHPUT 1
#define COZ_COUNTER_TYPE_BEGIN 2
#define COZ_COUNTER_TYPE_END 3

void *dlsym(void *handle, const char *symbol) __attribute__((weak));

typedef struct {
	size_t count;
	size_t backoff;
} coz_counter_t;

typedef coz_counter_t *(*coz_get_counter_t)(int, const char *);

static coz_counter_t *_call_coz_get_counter(int type, const char *name)
{
	static unsigned char initialized;
	static coz_get_counter_t fn;
	if (!initialized) {
		if (dlsym) {
			void *p = dlsym(RTLD_DEFAULT, "_coz_get_counter");
			memcpy(&fn, &p, sizeof p);
		}
		initialized = 1;
	}
	return fn ? fn(type, name) : NULL;
}

#define COZ_INCREMENT_COUNTER(type, name)                                  \
	if (1) {                                                           \
		static unsigned char _initialized;                          \
		static coz_counter_t *_counter;                             \
		if (!_initialized) {                                        \
			_counter = _call_coz_get_counter(type, name);        \
			_initialized = 1;                                   \
		}                                                           \
		if (_counter)                                               \
			__atomic_add_fetch(&_counter->count, 1, __ATOMIC_RELAXED); \
	}

#define COZ_STR2(x) #x
#define COZ_STR(x) COZ_STR2(x)
#define COZ_PROGRESS_NAMED(name) COZ_INCREMENT_COUNTER(COZ_COUNTER_TYPE_THROUGHPUT, name)
#define COZ_PROGRESS COZ_INCREMENT_COUNTER(COZ_COUNTER_TYPE_THROUGHPUT, __FILE__ ":" COZ_STR(__LINE__))
#define COZ_BEGIN(name) COZ_INCREMENT_COUNTER(COZ_COUNTER_TYPE_BEGIN, name)
#define COZ_END(name) COZ_INCREMENT_COUNTER(COZ_COUNTER_TYPE_END, name)

#endif
