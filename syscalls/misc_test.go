package syscalls

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"emuprof/mm"
	"emuprof/trace"
)

func TestMmapSemantics(t *testing.T) {
	h := newHarness(t, Config{})
	a := h.must(nrMmap, 0, 3*mm.PageSize, protRW, mapPrivAnon, negOne, 0)
	if a != mm.MmapBase-3*mm.PageSize {
		t.Fatalf("mmap = %#x", a)
	}
	h.poke(a, []byte("xyz"))
	h.errno(eEXIST, nrMmap, a+mm.PageSize, mm.PageSize, protRW, mapPrivAnon|mapFixedNoReplace, negOne, 0)
	h.errno(eINVAL, nrMmap, a+1, mm.PageSize, protRW, mapPrivAnon|mapFixed, negOne, 0)
	h.errno(eINVAL, nrMmap, 0, 0, protRW, mapPrivAnon, negOne, 0)
	h.errno(eINVAL, nrMmap, 0, 10, protRW, mapAnonymous, negOne, 0)
	h.errno(eBADF, nrMmap, 0, 10, protRW, mapPrivate, 77, 0)

	// munmap of the middle page splits the mapping.
	h.must(nrMunmap, a+mm.PageSize, mm.PageSize)
	var mine []mm.VMA
	for _, v := range h.as.VMAs() {
		if v.Start >= a && v.End <= a+3*mm.PageSize {
			mine = append(mine, v)
		}
	}
	if len(mine) != 2 || mine[0].End != a+mm.PageSize || mine[1].Start != a+2*mm.PageSize {
		t.Fatalf("after munmap: %+v", mine)
	}
	h.errno(eINVAL, nrMunmap, a+1, mm.PageSize)
	h.errno(eNOMEM, nrMprotect, a, 3*mm.PageSize, protRead)
	h.must(nrMprotect, a, mm.PageSize, protRead)
	if p, _ := h.mb.PageProt(a); p != mm.ProtRead {
		t.Errorf("page prot %v", p)
	}
	// MAP_FIXED replaces, and the old contents are gone.
	h.must(nrMmap, a, mm.PageSize, protRW, mapPrivAnon|mapFixed, negOne, 0)
	if got := h.peek(a, 3); string(got) != "\x00\x00\x00" {
		t.Errorf("MAP_FIXED kept %q", got)
	}
	// mremap moves the contents.
	h.poke(a, []byte("moved"))
	b := h.must(nrMremap, a, mm.PageSize, 8*mm.PageSize, mremapMayMove)
	if string(h.peek(b, 5)) != "moved" {
		t.Errorf("mremap contents %q", h.peek(b, 5))
	}
	// MADV_DONTNEED zeroes anonymous memory.
	h.must(nrMadvise, b, mm.PageSize, madvDontNeed)
	if string(h.peek(b, 5)) != "\x00\x00\x00\x00\x00" {
		t.Error("MADV_DONTNEED did not zero")
	}
}

func TestMmapFile(t *testing.T) {
	dir := t.TempDir()
	content := strings.Repeat("0123456789", 500) // 5000 bytes
	writeFile(t, filepath.Join(dir, "lib.so"), content)
	h := newHarness(t, Config{Cwd: dir})
	var mapped []string
	h.k.OnMapFile = func(p string, addr, size, off uint64, prot mm.Prot) {
		mapped = append(mapped, p)
		if size != 2*mm.PageSize || off != mm.PageSize || prot != mm.ProtRead|mm.ProtExec {
			t.Errorf("OnMapFile(%s, %#x, %#x, %#x, %v)", p, addr, size, off, prot)
		}
	}
	fd := h.must(nrOpen, h.str("lib.so"), oRDONLY|oCLOEXEC)
	h.events = nil
	a := h.must(nrMmap, 0, 8000, protRead|protExec, mapPrivate, fd, mm.PageSize)
	rest := uint64(len(content)) - mm.PageSize
	if got := h.only(trace.KindKernelWrite); !slices.Equal(got, []access{{trace.KindKernelWrite, a, rest}}) {
		t.Errorf("kernel writes %v, want (%#x,%d)", got, a, rest)
	}
	if got := string(h.peek(a, int(rest))); got != content[mm.PageSize:] {
		t.Error("mapped contents differ")
	}
	if got := h.peek(a+rest, 4); string(got) != "\x00\x00\x00\x00" {
		t.Errorf("tail after EOF %q", got)
	}
	if len(mapped) != 1 || filepath.Base(mapped[0]) != "lib.so" {
		t.Errorf("OnMapFile calls %v", mapped)
	}
	v, _ := h.as.Find(a)
	if !strings.HasSuffix(v.Name, "/lib.so") || v.Offset != mm.PageSize || v.Prot != mm.ProtRead|mm.ProtExec {
		t.Errorf("vma %+v", v)
	}
	h.errno(eACCES, nrMmap, 0, 10, protRead|protWrite, mapShared, fd, 0)
	// do_mmap checks the descriptor's access before asking the file for
	// its mmap: a write-only one is EACCES, a readable pipe ENODEV.
	h.errno(eACCES, nrMmap, 0, 10, protRead, mapPrivate, 1, 0)
	fds := h.alloc(8)
	h.must(nrPipe2, fds, 0)
	h.errno(eNODEV, nrMmap, 0, 10, protRead, mapPrivate, uint64(le.Uint32(h.peek(fds, 4))), 0)
	h.errno(eACCES, nrMmap, 0, 10, protRead|protWrite, mapShared, uint64(le.Uint32(h.peek(fds, 4))), 0)
	h.errno(eOPNOTSUPP, nrMmap, 0, 10, protRead, mapSharedValidate|mapSync, fd, 0)
}

func TestBrk(t *testing.T) {
	h := newHarness(t, Config{})
	h.k.SetBrkStart(0x600000)
	if b := h.must(nrBrk, 0); b != 0x600000 {
		t.Fatalf("brk(0) = %#x", b)
	}
	if b := h.must(nrBrk, 0x621000); b != 0x621000 {
		t.Fatalf("brk grow = %#x", b)
	}
	h.poke(0x620ff0, []byte("heap"))
	if v, found := h.as.Find(0x610000); !found || v.Name != "[heap]" {
		t.Errorf("heap vma %+v", v)
	}
	if b := h.must(nrBrk, 0x500000); b != 0x621000 {
		t.Errorf("brk below start = %#x", b)
	}
	if b := h.must(nrBrk, 0x601000); b != 0x601000 {
		t.Errorf("brk shrink = %#x", b)
	}
	if _, found := h.as.Find(0x610000); found {
		t.Error("shrunk heap still mapped")
	}
}

func TestUnsupported(t *testing.T) {
	if Name(nrTimerfdCreate) != "timerfd_create" || Name(nrKeyctl) != "keyctl" || Name(0) != "read" || Name(435) != "clone3" {
		t.Errorf("names: %s %s %s", Name(283), Name(0), Name(435))
	}
	if Name(1000) != "syscall_1000" || Name(400) != "syscall_400" {
		t.Errorf("unknown names %s %s", Name(1000), Name(400))
	}
	h := newHarness(t, Config{})
	out := h.k.Do(&Call{Tid: 1000, Nr: nrKeyctl, PC: 0x401a2c})
	var ue *UnsupportedError
	if !errors.As(out.Err, &ue) || ue.Nr != 250 || ue.Name != "keyctl" || ue.PC != 0x401a2c {
		t.Fatalf("outcome %+v", out)
	}
	if msg := out.Err.Error(); msg != "unsupported syscall 250 (keyctl) at 0x401a2c" {
		t.Errorf("message %q", msg)
	}

	e := newHarness(t, Config{Unsupported: FailENOSYS})
	for _, nr := range []uint64{nrKeyctl, 300, nrKeyctl} {
		if out := e.k.Do(&Call{Nr: nr}); out.Err != nil || out.Ret != eNOSYS.Ret() {
			t.Errorf("ENOSYS policy: %+v", out)
		}
	}
	if got := e.k.Unsupported(); !slices.Equal(got, []uint64{250, 300}) {
		t.Errorf("Unsupported() = %v", got)
	}
	// Refused calls fail with their errno under either policy.
	h.errno(eNOSYS, nrRseq, 0, 32, 0, 0)
	h.errno(eOPNOTSUPP, nrLgetxattr, h.str("/"), h.str("user.x"), 0, 0)
}

func TestClocks(t *testing.T) {
	const epoch = 1_700_000_000_123_456_789
	h := newHarness(t, Config{EpochNanos: epoch})
	h.now = 2_500_000_001
	ts := h.alloc(16)
	h.must(nrClockGettime, clockRealtimeArg, ts)
	if got := int64(h.u64(ts))*1e9 + int64(h.u64(ts+8)); got != epoch+h.now {
		t.Errorf("CLOCK_REALTIME = %d, want %d", got, epoch+h.now)
	}
	h.must(nrClockGettime, clockMonotonic, ts)
	if got := int64(h.u64(ts))*1e9 + int64(h.u64(ts+8)); got != MonotonicOffset+h.now {
		t.Errorf("CLOCK_MONOTONIC = %d", got)
	}
	h.errno(eINVAL, nrClockGettime, 99, ts)
	if sec := h.must(201, 0); sec != (epoch+uint64(h.now))/1e9 { // time
		t.Errorf("time() = %d", sec)
	}
	h.poke(ts, le.AppendUint64(le.AppendUint64(nil, 1), 500))
	out := h.call(nrNanosleep, ts, 0)
	if sw, isSleep := out.Wait.(*SleepWait); out.Ret != 0 || !isSleep || sw.Until != h.now+1_000_000_500 {
		t.Errorf("nanosleep %+v %#v", out, out.Wait)
	}
}

func TestProcessCalls(t *testing.T) {
	h := newHarness(t, Config{Pid: 42, Uid: 7, CPUs: 70, Hostname: "box"})
	if pid := h.must(nrGetpid); pid != 42 {
		t.Errorf("getpid = %d", pid)
	}
	if uid := h.must(nrGetuid); uid != 7 {
		t.Errorf("getuid = %d", uid)
	}
	u := h.alloc(390)
	h.must(nrUname, u)
	if s := string(h.peek(u, 5)); s != "Linux" {
		t.Errorf("sysname %q", s)
	}
	if s := string(h.peek(u+65, 4)); s != "box\x00" {
		t.Errorf("nodename %q", s)
	}
	if s := string(h.peek(u+4*65, 7)); s != "x86_64\x00" {
		t.Errorf("machine %q", s)
	}
	mask := h.alloc(128)
	if n := h.must(nrSchedGetaffin, 0, 128, mask); n != 16 {
		t.Errorf("sched_getaffinity = %d", n)
	}
	if m0, m1 := h.u64(mask), h.u64(mask+8); m0 != ^uint64(0) || m1 != 0x3f {
		t.Errorf("mask %#x %#x", m0, m1)
	}
	h.errno(eINVAL, nrSchedGetaffin, 0, 8, mask)
	rl := h.alloc(16)
	h.must(nrPrlimit64, 0, rlimitStack, 0, rl)
	if cur := h.u64(rl); cur != 8<<20 {
		t.Errorf("RLIMIT_STACK = %d", cur)
	}
	h.errno(eSRCH, nrPrlimit64, 5, rlimitStack, 0, rl)
	h.must(nrArchPrctl, archSetFS, 0x7000)
	if h.fs != 0x7000 {
		t.Errorf("FS = %#x", h.fs)
	}
	h.must(nrArchPrctl, archGetFS, rl)
	if h.u64(rl) != 0x7000 {
		t.Errorf("ARCH_GET_FS = %#x", h.u64(rl))
	}
	h.errno(eINVAL, nrArchPrctl, archCETStatus, rl)
	// The virtual CPU has CPUID enabled and no CPUID faulting (the table):
	// Linux's answers on such a CPU.
	if out := h.call(nrArchPrctl, archGetCPUID, 0); out.Ret != 1 {
		t.Errorf("ARCH_GET_CPUID = %+v, want 1", out)
	}
	h.errno(eNODEV, nrArchPrctl, archSetCPUID, 1)
	if out := h.call(nrExitGroup, 300); out.Action != ExitGroup || out.Status != 44 {
		t.Errorf("exit_group %+v", out)
	}
}

func TestSignals(t *testing.T) {
	h := newHarness(t, Config{})
	// raise(SIGABRT) as glibc does it: block all, tgkill, restore.
	all, old := h.alloc(8), h.alloc(8)
	h.poke(all, le.AppendUint64(nil, ^uint64(0)))
	h.must(nrRtSigprocmask, sigBlock, all, old, 8)
	if out := h.call(234, 1000, 1000, sigAbrt); out.Ret != 0 || out.Action != Continue {
		t.Fatalf("blocked tgkill %+v", out)
	}
	// Unblocked, it is the runtime's to deliver (its default action
	// kills the process).
	h.must(nrRtSigprocmask, sigSetMask, old, 0, 8)
	if !h.k.Deliverable(1000) {
		t.Errorf("unblocked SIGABRT not deliverable")
	}
	if info, ok := h.k.Dequeue(1000); !ok || info.Signo() != sigAbrt || int32(le.Uint32(info[8:])) != SITkill {
		t.Errorf("unblocked SIGABRT: %v %v", ok, info[:16])
	}
	// Ignored and default-ignored signals do nothing.
	if out := h.call(nrKill, 1000, sigChld); out.Action != Continue {
		t.Errorf("SIGCHLD %+v", out)
	}
	act := h.alloc(32)
	h.poke(act, le.AppendUint64(nil, sigIgn))
	h.must(13, sigTerm, act, 0, 8) // rt_sigaction
	if out := h.call(nrKill, 1000, sigTerm); out.Action != Continue {
		t.Errorf("ignored SIGTERM %+v", out)
	}
	h.errno(eINVAL, 13, sigKill, act, 0, 8)
	h.errno(eSRCH, nrKill, 99, sigTerm)
	ss := h.alloc(24)
	h.must(nrSigaltstack, 0, ss)
	if flags := le.Uint32(h.peek(ss+8, 4)); flags != ssDisable {
		t.Errorf("initial altstack flags %d", flags)
	}
	h.poke(ss, le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, 0x9000), 0), 1024))
	h.errno(eNOMEM, nrSigaltstack, ss, 0)
}

func TestCloseKeepsStreams(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f"), "x")
	h := newHarness(t, Config{Cwd: dir})
	h.must(nrOpen, h.str("f"), oRDONLY)
	if err := h.k.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "f")); err != nil {
		t.Fatal(err)
	}
}
