package syscalls

import (
	"encoding/binary"
	"math/rand/v2"

	"emuprof/mm"
)

// Fork returns the kernel of a child process created by thread tid with
// fork, vfork or clone without CLONE_VM: process id pid, memory as (the
// copy of the parent's), a copy of the descriptor table sharing the open
// file descriptions (offsets, flags, pipes), the working directory, umask,
// limits, signal actions, the FIFOs' pipes and the calling thread's signal
// mask, name and CPU affinity mask.
// Shared mappings are shared with the parent (mm.AddressSpace.Fork);
// locked memory, POSIX record locks and pending signals are not inherited,
// and the child's getrandom stream is its own (seeded from the parent's).
// The callbacks (OnMapFile, SetFS, GetFS, OnPipeEvent, OnLockEvent) are the
// caller's to set; the child makes no kernel-access events.
func (k *Kernel) Fork(tid, pid int, as *mm.AddressSpace) *Kernel {
	c := *k
	k.forkText(&c)
	c.cfg.Pid = pid
	c.cfg.OnKernelAccess = nil
	c.as, c.mem = as, as.Backend()
	c.fds = make([]fdSlot, len(k.fds))
	for i, s := range k.fds {
		if s.f != nil {
			s.f.refs++
		}
		c.fds[i] = s
	}
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], k.rng.Uint64())
	binary.LittleEndian.PutUint64(seed[8:], uint64(pid))
	c.rng = rand.NewChaCha8(seed)
	// Inode numbers of pipes and other anonymous files stay distinct
	// between processes.
	c.nextIno = k.nextIno + uint64(pid)<<32
	c.threads = map[int]*threadState{}
	th := c.thread(pid)
	if pt := k.threads[tid]; pt != nil {
		th.sigmask, th.altStack, th.name, th.affinity = pt.sigmask, pt.altStack, pt.name, pt.affinity
	}
	c.sharedSigs, c.itimers = sigQueue{}, [3]itimer{}
	c.ptimers, c.nextTimerID = nil, 0
	c.start = k.now
	k.shm.refs++
	c.unsup, c.buf, c.shared, c.syncBuf, c.warnings, c.mlocked = nil, nil, nil, nil, nil, nil
	c.OnMapFile, c.SetFS, c.GetFS, c.SetGS, c.GetGS, c.OnPipeEvent, c.OnLockEvent, c.OnSignal = nil, nil, nil, nil, nil, nil, nil, nil
	// The file times, the locks, the FIFOs and the terminal's settings stay
	// shared: one view of the files per run.
	return &c
}
