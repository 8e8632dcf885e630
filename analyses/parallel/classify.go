package parallel

import (
	"path"
	"strings"
)

// Which code belongs to the parallel runtime (TM09 §2.2: "any time spent in
// a routine in the Pthreads library can be labeled as parallel overhead";
// spec §4.3–4.4: classify by symbol, not by library, since glibc 2.34 keeps
// the pthread code in libc.so.6).

// runtimePrefixes name the routines of thread libraries and OpenMP runtimes
// (glibc's nptl, musl's pthread, libgomp, LLVM/Intel OpenMP, C11 threads).
var runtimePrefixes = []string{
	"pthread_", "__pthread_", "___pthread_", "__GI___pthread_", "__GI_pthread_", "__libc_pthread_",
	"__lll_", "lll_", "__GI___lll_", "__futex", "futex_", "__nptl_", "nptl_",
	"start_thread", "__start_thread", "__clone", "create_thread", "__allocate_stack",
	"__condvar_", "__new_sem_", "__old_sem_", "__sem_", "sem_",
	"call_once", "__call_once", "thrd_", "mtx_", "cnd_", "__thrd_", "__mtx_", "__cnd_",
	"GOMP_", "gomp_", "omp_", "__kmp", "__kmpc_", "__cilkrts_", "Cilk_",
}

// runtimeNames are exact names of runtime routines that no prefix covers
// (musl's internal waiting primitives, libgomp's inlined spin helpers when
// kept out of line).
var runtimeNames = map[string]bool{
	"__wait": true, "__wake": true, "__timedwait": true, "__timedwait_cp": true,
	"__lock": true, "__unlock": true, "__lockfile": true, "__unlockfile": true,
	"__tl_lock": true, "__tl_unlock": true, "__tl_sync": true, "__vm_wait": true, "__vm_lock": true, "__vm_unlock": true,
	"do_spin": true, "do_wait": true, "cpu_relax": true, "clone": true, "clone3": true,
}

// runtimeObjects are libraries that are runtime code as a whole.
var runtimeObjects = []string{"libpthread", "libgomp", "libomp", "libiomp", "libtbb", "libcilkrts"}

// isRuntimeRoutine reports whether a routine named name in object obj is
// parallel-runtime code.
func isRuntimeRoutine(name, obj string) bool {
	if runtimeNames[name] {
		return true
	}
	for _, p := range runtimePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	base := path.Base(obj)
	for _, p := range runtimeObjects {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}

// isHelperObject reports whether obj is the C library, the dynamic linker
// or a library they use (libgcc_s unwinds for pthread_exit): code there
// that the runtime calls is the runtime's helper (malloc, mmap, memset,
// TLS setup), while code of the program or of any other library that the
// runtime calls is a callback (a thread's start routine, an outlined
// parallel region).
func isHelperObject(obj, program string) bool {
	base := path.Base(obj)
	if base == path.Base(program) {
		return false
	}
	for _, p := range []string{"libc.", "libc-", "ld-linux", "ld-musl", "ld64.", "libpthread", "libdl.", "librt.", "libgcc_s", "libm."} {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}

// spinNames are runtime routines that are nothing but a spin-wait loop.
var spinNames = map[string]bool{
	"pthread_spin_lock": true, "__pthread_spin_lock": true, "do_spin": true, "do_wait": true, "cpu_relax": true,
}

// spinCycle is how many consecutive blocks a thread must run inside a cycle
// of at most len(thread.ring) blocks of runtime code before they count as
// spinning: the common spin loops (libgomp's do_spin, glibc's spinlock)
// are one or two blocks that re-read a word until another thread changes it.
const spinCycle = 8

// WaitClass says what a futex wait is for, from the routines on the
// waiter's stack (innermost first).
type WaitClass uint8

// Wait classes.
const (
	WaitLock    WaitClass = iota // a mutex, spinlock, rwlock, OpenMP lock or critical section
	WaitCond                     // a condition variable
	WaitBarrier                  // a barrier (pthread or OpenMP)
	WaitJoin                     // joining a thread
	WaitSem                      // a semaphore
	WaitFutex                    // a futex the names do not explain (stripped runtimes)
	WaitSleep                    // not a futex: sleep
	WaitIO                       // not a futex: pipe, poll, stdin
	WaitOther                    // anything else
	numWaitClasses
)

var waitClassNames = [...]string{"lock", "condvar", "barrier", "join", "semaphore", "futex", "sleep", "io", "other"}

func (c WaitClass) String() string {
	if int(c) < len(waitClassNames) {
		return waitClassNames[c]
	}
	return "?"
}

// futexClass classifies a futex wait by one routine name of the waiter's
// stack, innermost first; ok is false when the name says nothing.
func futexClass(name string) (WaitClass, bool) {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "unlock"):
		return 0, false
	case strings.Contains(n, "mutex"), strings.Contains(n, "lll_lock"), strings.Contains(n, "lock_wait"),
		strings.Contains(n, "spin_lock"), strings.Contains(n, "rwlock"), strings.Contains(n, "mtx_"),
		strings.Contains(n, "critical"), n == "__lock", n == "__lockfile", strings.HasPrefix(n, "gomp_set_lock"),
		strings.HasPrefix(n, "omp_set_lock"), strings.HasPrefix(n, "omp_set_nest_lock"):
		return WaitLock, true
	case strings.Contains(n, "barrier"):
		return WaitBarrier, true
	case strings.Contains(n, "cond"), strings.Contains(n, "cnd_"):
		return WaitCond, true
	case strings.Contains(n, "join"):
		return WaitJoin, true
	case strings.Contains(n, "sem_"):
		return WaitSem, true
	}
	return 0, false
}
