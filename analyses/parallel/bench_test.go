package parallel

import (
	"sync"
	"syscall"
	"testing"

	"emuprof/analyses/platform"
	"emuprof/trace"
)

// BenchmarkBlocks: four threads on four cores run loops of three blocks
// on different lines, in slices of 100 blocks (the analysis's per-block
// cost, call tracking included).
func BenchmarkBlocks(b *testing.B) { benchStream(b, blocksScript(), 4) }

// blocksScript is BenchmarkBlocks's stream, written once (the benchmark
// runs more than once).
var blocksScript = sync.OnceValue(func() *script {
	s := mainAndWorkers()
	for tid := uint32(1); tid <= 4; tid++ {
		s.call(tid, "loop")
	}
	for slice := 0; slice < 1000; slice++ {
		for tid := uint32(1); tid <= 4; tid++ {
			f := s.top(tid)
			for i := 0; i < 100; i++ {
				s.tr.Block(tid, s.syms.base(f.fn)+0x40+uint64(i%3)*0x10, f.sp, 5, 16, trace.EndCond)
			}
		}
	}
	return s
})

// BenchmarkLockLoop: four threads on eight cores run a loop that locks and
// unlocks (runtime routines, called through the stage) around a little
// work, as mutex_counter does, in slices of 50 iterations: parallel's and
// the call stage's per-event cost on lock-heavy code.
func BenchmarkLockLoop(b *testing.B) { benchStream(b, lockLoopScript(), 8) }

// lockLoopScript is BenchmarkLockLoop's stream, written once.
var lockLoopScript = sync.OnceValue(func() *script {
	s := mainAndWorkers()
	for slice := 0; slice < 400; slice++ {
		for tid := uint32(1); tid <= 4; tid++ {
			for i := 0; i < 50; i++ {
				s.work(tid, 3).in(tid, "pthread_mutex_lock", 8).work(tid, 2).in(tid, "pthread_mutex_unlock", 6)
			}
		}
	}
	return s
})

// BenchmarkMutexLoop: four threads on eight cores run mutex_counter's loop
// as the engine gives it, six Block events an iteration: a line calls
// pthread_mutex_lock (one block here, a run of blocks there, that
// returns), the next calls __pthread_mutex_unlock, which jumps on to
// __pthread_mutex_unlock_usercnt (a tail call, that returns), and a third
// loops; two calls, a tail call and two returns an iteration, in slices of
// 50 iterations.
func BenchmarkMutexLoop(b *testing.B) { benchStream(b, mutexLoopScript(), 8) }

// mutexLoopScript is BenchmarkMutexLoop's stream, written once.
var mutexLoopScript = sync.OnceValue(func() *script {
	s := mainAndWorkers()
	lock, unlock := s.syms.base("pthread_mutex_lock"), s.syms.base("__pthread_mutex_unlock")
	usercnt := s.syms.base("__pthread_mutex_unlock_usercnt")
	for slice := 0; slice < 400; slice++ {
		for tid := uint32(1); tid <= 4; tid++ {
			f := s.top(tid)
			w := s.syms.base(f.fn)
			for range 50 {
				s.tr.Block(tid, w+0x100, f.sp, 4, 0x20, trace.EndCall)
				s.tr.Block(tid, lock, f.sp-8, 30, 0x60, trace.EndRet)
				s.tr.Block(tid, w+0x120, f.sp, 3, 0x20, trace.EndCall)
				s.tr.Block(tid, unlock, f.sp-8, 6, 0x20, trace.EndJump)
				s.tr.Block(tid, usercnt, f.sp-8, 20, 0x40, trace.EndRet)
				s.tr.Block(tid, w+0x140, f.sp, 4, 0x10, trace.EndJump)
			}
		}
	}
	return s
})

// benchStream feeds s's stream, as the engine gives it, to a fresh analysis
// on cpus cores per iteration, in batches of 4096 events, and reports the
// time per event.
func benchStream(b *testing.B, s *script, cpus int) {
	evs := s.events()
	cpu0 := cpuTime()
	b.ResetTimer()
	buf := make([]trace.Event, len(evs))
	var copyCPU int64
	for range b.N {
		b.StopTimer()
		c := cpuTime()
		copy(buf, evs) // the stage marks calls in place: a fresh stream, not timed
		copyCPU += cpuTime() - c
		b.StartTimer()
		env := platform.NewEnv(s.syms, "/bin/prog", nil)
		a, _ := New(cores(cpus), env)
		p := platform.NewPipeline(env, s.tr.Blocks, []platform.Instance{a}, false)
		for i := 0; i < len(evs); i += 4096 {
			p.Events(buf[i:min(i+4096, len(buf))])
		}
		p.Finish()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(evs)), "ns/event")
	// The process's CPU time (collector included), steadier than the
	// elapsed time on a loaded machine.
	b.ReportMetric(float64(cpuTime()-cpu0-copyCPU)/float64(b.N)/float64(len(evs)), "cpu-ns/event")
}

// cpuTime returns the process's user and system time in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// mainAndWorkers is the benchmarks' threads: main (1), which creates
// three workers (2 to 4).
func mainAndWorkers() *script {
	s := newScript().start(1, 0, 0, "main")
	for tid := uint32(2); tid <= 4; tid++ {
		s.start(tid, 1, 0, "worker")
	}
	return s
}
