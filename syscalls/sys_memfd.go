package syscalls

import (
	"fmt"
	"os"
)

// memfd_create (mm/memfd.c): an anonymous file, here an unlinked host file
// in the run's /dev/shm directory (shm.go), so that it is read, written,
// truncated and mapped like any host file, and MAP_SHARED mappings of it
// are shared with the processes forked afterwards. /proc/self/fd names it
// "/memfd:NAME (deleted)", as Linux does. Seals (F_ADD_SEALS, F_GET_SEALS)
// are recorded and reported; only F_SEAL_SHRINK, F_SEAL_GROW and
// F_SEAL_WRITE on ftruncate and write are enforced.

const (
	mfdCloexec      = 1
	mfdAllowSealing = 2
	mfdHugetlb      = 4
	mfdNoexecSeal   = 8
	mfdExec         = 0x10
	mfdNameMax      = 249
	// hugetlb page size bits (MFD_HUGE_*), accepted with MFD_HUGETLB.
	mfdHugeMask = 0x3f << 26

	sealSeal   = 1
	sealShrink = 2
	sealGrow   = 4
	sealWrite  = 8
	sealFWrite = 0x10
	sealExec   = 0x20
	sealAll    = sealSeal | sealShrink | sealGrow | sealWrite | sealFWrite | sealExec
)

// memfdState is what a memfd has beyond a host file: its seals.
type memfdState struct{ seals uint32 }

func sysMemfdCreate(k *Kernel, c *Call) Outcome {
	flags := uint32(c.Args[1])
	allowed := uint32(mfdCloexec | mfdAllowSealing | mfdHugetlb | mfdNoexecSeal | mfdExec)
	if flags&mfdHugetlb != 0 {
		allowed |= mfdHugeMask
	}
	if flags&^allowed != 0 || flags&(mfdNoexecSeal|mfdExec) == mfdNoexecSeal|mfdExec {
		return fail(eINVAL)
	}
	name, e := k.readString(c.Args[0], mfdNameMax, eINVAL)
	if e != 0 {
		return fail(e)
	}
	mode, seals := uint32(0o777), uint32(sealSeal)
	if flags&mfdAllowSealing != 0 {
		seals = 0
	}
	if flags&mfdNoexecSeal != 0 {
		mode, seals = 0o666, seals&^sealSeal|sealExec
	}
	k.memfds++
	host := k.shmHost(fmt.Sprintf("%s/.memfd-%d-%d", shmGuest, k.cfg.Pid, k.memfds))
	hf, err := os.OpenFile(host, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fail(hostErrno(err))
	}
	_ = hf.Chmod(goMode(mode))
	_ = os.Remove(host) // anonymous: gone with its last descriptor
	f := newOpenFile(&hostFile{f: hf, host: host, memfd: &memfdState{seals: seals}}, oRDWR|oLARGEFILE,
		"/memfd:"+name+" (deleted)")
	fd, e := k.install(f, 0, flags&mfdCloexec != 0)
	if e != 0 {
		_ = f.ops.release()
		return fail(e)
	}
	return ok(uint64(fd))
}

// memfdOf returns the seals of the memfd open as f (nil: not a memfd).
func memfdOf(f *openFile) *memfdState {
	if h, ok := f.ops.(*hostFile); ok {
		return h.memfd
	}
	return nil
}

// fcntlSeals is F_ADD_SEALS and F_GET_SEALS (memfd_fcntl).
func fcntlSeals(f *openFile, cmd int, arg uint64) Outcome {
	m := memfdOf(f)
	if m == nil {
		return fail(eINVAL)
	}
	if cmd == fGetSeals {
		return ok(uint64(m.seals))
	}
	seals := uint32(arg)
	switch {
	case seals&^sealAll != 0:
		return fail(eINVAL)
	case f.flags&oAccMode == oRDONLY:
		return fail(ePERM)
	case m.seals&sealSeal != 0:
		return fail(ePERM)
	}
	m.seals |= seals
	return ok(0)
}

// sealed says whether truncating f from cur to size breaks a seal (writes:
// hostFile.write).
func sealed(f *openFile, size, cur int64) bool {
	m := memfdOf(f)
	return m != nil && (size > cur && m.seals&sealGrow != 0 || size < cur && m.seals&sealShrink != 0)
}
