package syscalls

import (
	"bytes"
	"encoding/binary"

	"emuprof/mm"
	"emuprof/trace"
)

// le is the guest's byte order.
var le = binary.LittleEndian

// maxChunk bounds the host buffer used to move file data in one step.
const maxChunk = 1 << 20

// emit reports a kernel access of n bytes at addr.
func (k *Kernel) emit(kind trace.Kind, addr, n uint64) {
	if n > 0 && k.cfg.OnKernelAccess != nil {
		k.cfg.OnKernelAccess(kind, addr, n)
	}
}

// accessOK is Linux's access_ok: [addr, addr+n) lies in the user address
// space.
func accessOK(addr, n uint64) bool { return addr+n >= addr && addr+n <= mm.TaskSize }

// accessible returns the length of the longest prefix of [addr, addr+n)
// that the kernel may store into (write) or load from: below the end of
// the user address space, in mappings whose protection allows it, as the
// MMU checks the kernel's own accesses to user memory. Loads need any
// access (x86 has no write-only or execute-only pages), stores PROT_WRITE.
// The engine's own memory access ignores protections, so every access on
// behalf of a guest pointer goes through here.
func (k *Kernel) accessible(addr, n uint64, write bool) uint64 {
	var done uint64
	for done < n {
		a := addr + done
		if a < addr || a >= mm.TaskSize {
			break
		}
		v, found := k.as.Find(a)
		if !found || write && v.Prot&mm.ProtWrite == 0 || v.Prot&(mm.ProtRead|mm.ProtWrite|mm.ProtExec) == 0 {
			break
		}
		done = min(n, v.End-addr)
	}
	return k.as.PastEOFIn(addr, done) // pages past the end of a file: EFAULT
}

// readRaw loads guest memory without reporting it. It fails with EFAULT,
// reading nothing, unless all of it is readable.
func (k *Kernel) readRaw(addr uint64, p []byte) Errno {
	if len(p) == 0 {
		return 0
	}
	if k.accessible(addr, uint64(len(p)), false) < uint64(len(p)) || k.mem.ReadMem(addr, p) != nil {
		return eFAULT
	}
	return 0
}

// copyIn loads guest memory and reports a KernelRead.
func (k *Kernel) copyIn(addr uint64, p []byte) Errno {
	if e := k.readRaw(addr, p); e != 0 {
		return e
	}
	k.emit(trace.KindKernelRead, addr, uint64(len(p)))
	return 0
}

// copyOut stores p into guest memory and reports a KernelWrite. Like
// Linux's copy_to_user, it stores the prefix that is writable and fails
// with EFAULT when that is not all of p.
func (k *Kernel) copyOut(addr uint64, p []byte) Errno {
	if len(p) == 0 {
		return 0
	}
	n := k.accessible(addr, uint64(len(p)), true)
	if n > 0 {
		if k.mem.WriteMem(addr, p[:n]) != nil {
			return eFAULT
		}
		k.emit(trace.KindKernelWrite, addr, n)
	}
	if n < uint64(len(p)) {
		return eFAULT
	}
	return 0
}

// scratch returns a reusable buffer of n bytes (n <= maxChunk) whose
// contents are undefined.
func (k *Kernel) scratch(n int) []byte {
	if cap(k.buf) < n {
		k.buf = make([]byte, n)
	}
	return k.buf[:n]
}

// readString loads a NUL-terminated string of at most max bytes (without
// the NUL) from guest memory. Longer strings fail with tooLong.
func (k *Kernel) readString(addr uint64, max int, tooLong Errno) (string, Errno) {
	var out []byte
	for a := addr; ; {
		n := int(mm.PageSize - a%mm.PageSize)
		chunk := make([]byte, n)
		if k.readRaw(a, chunk) != 0 {
			return "", eFAULT
		}
		if i := bytes.IndexByte(chunk, 0); i >= 0 {
			out = append(out, chunk[:i]...)
			if len(out) > max {
				return "", tooLong
			}
			k.emit(trace.KindKernelRead, addr, uint64(len(out)+1))
			return string(out), 0
		}
		out = append(out, chunk...)
		if len(out) > max {
			return "", tooLong
		}
		a += uint64(n)
	}
}

// readPath loads a path argument.
func (k *Kernel) readPath(addr uint64) (string, Errno) {
	if addr == 0 {
		return "", eFAULT
	}
	return k.readString(addr, pathMax-1, eNAMETOOLONG)
}

// getU64 loads a 64-bit value.
func (k *Kernel) getU64(addr uint64) (uint64, Errno) {
	var b [8]byte
	if e := k.copyIn(addr, b[:]); e != 0 {
		return 0, e
	}
	return le.Uint64(b[:]), 0
}

// getU32 loads a 32-bit value.
func (k *Kernel) getU32(addr uint64) (uint32, Errno) {
	var b [4]byte
	if e := k.copyIn(addr, b[:]); e != 0 {
		return 0, e
	}
	return le.Uint32(b[:]), 0
}

// putU64 stores a 64-bit value.
func (k *Kernel) putU64(addr, v uint64) Errno {
	var b [8]byte
	le.PutUint64(b[:], v)
	return k.copyOut(addr, b[:])
}

// putU32 stores a 32-bit value.
func (k *Kernel) putU32(addr uint64, v uint32) Errno {
	var b [4]byte
	le.PutUint32(b[:], v)
	return k.copyOut(addr, b[:])
}

// timespec is a struct timespec or timeval (16 bytes on x86-64).
type timespec struct{ sec, nsec int64 }

func nsToTimespec(ns int64) timespec {
	s, n := ns/1e9, ns%1e9
	if n < 0 {
		s, n = s-1, n+1e9
	}
	return timespec{s, n}
}

func (t timespec) ns() int64 { return t.sec*1e9 + t.nsec }

// getTimespec loads a struct timespec.
func (k *Kernel) getTimespec(addr uint64) (timespec, Errno) {
	var b [16]byte
	if e := k.copyIn(addr, b[:]); e != 0 {
		return timespec{}, e
	}
	return timespec{int64(le.Uint64(b[:])), int64(le.Uint64(b[8:]))}, 0
}

// putTimespec stores a struct timespec (or, with nsec in µs, a timeval).
func (k *Kernel) putTimespec(addr uint64, t timespec) Errno {
	var b [16]byte
	le.PutUint64(b[:], uint64(t.sec))
	le.PutUint64(b[8:], uint64(t.nsec))
	return k.copyOut(addr, b[:])
}

// iovec is a struct iovec.
type iovec struct{ base, len uint64 }

// readIovecs loads an iovec array and clamps the total length to
// MAX_RW_COUNT the way Linux does.
func (k *Kernel) readIovecs(addr, cnt uint64) ([]iovec, Errno) {
	if cnt > iovMax {
		return nil, eINVAL
	}
	if cnt == 0 {
		return nil, 0
	}
	b := make([]byte, 16*cnt)
	if e := k.copyIn(addr, b); e != 0 {
		return nil, e
	}
	iov := make([]iovec, cnt)
	for i := range iov {
		iov[i] = iovec{le.Uint64(b[16*i:]), le.Uint64(b[16*i+8:])}
		if int64(iov[i].len) < 0 {
			return nil, eINVAL
		}
	}
	var total uint64
	for i := range iov {
		if !accessOK(iov[i].base, iov[i].len) {
			return nil, eFAULT
		}
		if total+iov[i].len > maxRWCount {
			iov[i].len = maxRWCount - total
		}
		total += iov[i].len
	}
	return iov, 0
}

// Accessible reports whether the kernel may load from (write false) or
// store into all of [addr, addr+n) on behalf of the guest: the runtime's
// system calls (futex) check guest pointers with it, as the kernel's own do.
func (k *Kernel) Accessible(addr, n uint64, write bool) bool {
	return k.accessible(addr, n, write) == n
}

// FutexKey checks a futex word's address as Linux's get_futex_key does:
// EINVAL unless it is 4-byte aligned, EFAULT outside the user address
// space, and for a shared (not FUTEX_PRIVATE_FLAG) futex, EFAULT unless its
// page is mapped and accessible (the key comes from the page). It loads
// nothing: a wake on a private futex never touches the word.
func (k *Kernel) FutexKey(addr uint64, private bool) Errno {
	switch {
	case addr%4 != 0:
		return eINVAL
	case !accessOK(addr, 4):
		return eFAULT
	case !private && !k.Accessible(addr, 4, false):
		return eFAULT
	}
	return 0
}
