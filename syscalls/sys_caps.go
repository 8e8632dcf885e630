package syscalls

import "os"

// Capabilities, supplementary groups and namespaces: capget, capset,
// setgroups, unshare (kernel/capability.c, security/commoncap.c,
// kernel/groups.c, kernel/fork.c). The guest's identity is fixed (sys_ids.go):
// root (Config.Uid 0) holds every capability, anyone else none, as after a
// plain login; capset may drop them, never add. Namespaces cannot be
// emulated: unshare of one is EPERM, Linux's answer to a process without
// CAP_SYS_ADMIN (and for CLONE_NEWUSER, a system that disallows
// unprivileged user namespaces).

const (
	capV1      = 0x19980330
	capV2      = 0x20071026
	capV3      = 0x20080522
	capAll     = 1<<(capLastCap+1) - 1 // capLastCap: sys_process.go
	capSetpcap = 8
	ngroupsMax = 65536
)

// capSets are a process's capability sets.
type capSets struct{ effective, permitted, inheritable uint64 }

// initialCaps are the sets of a process of uid (exec gives root every
// capability again: no file capabilities, no ambient set).
func initialCaps(uid int) capSets {
	if uid == 0 {
		return capSets{effective: capAll, permitted: capAll}
	}
	return capSets{}
}

// capHeader is cap_validate_magic: the number of data structs of the
// header's version, or EINVAL after storing the kernel's version.
func (k *Kernel) capHeader(addr uint64) (words int, pid int32, e Errno) {
	version, e := k.getU32(addr)
	if e != 0 {
		return 0, 0, e
	}
	switch version {
	case capV1:
		words = 1
	case capV2, capV3:
		words = 2
	default:
		if e := k.putU32(addr, capV3); e != 0 {
			return 0, 0, e
		}
		return 0, 0, eINVAL
	}
	p, e := k.getU32(addr + 4)
	return words, int32(p), e
}

func sysCapget(k *Kernel, c *Call) Outcome {
	words, _, e := k.capHeader(c.Args[0])
	if c.Args[1] == 0 {
		if e == eINVAL {
			e = 0 // the probe for the kernel's version
		}
		return result(0, e)
	}
	if e != 0 {
		return fail(e)
	}
	pid, e := k.getU32(c.Args[0] + 4)
	if e != 0 {
		return fail(e)
	}
	switch {
	case int32(pid) < 0:
		return fail(eINVAL)
	case !k.ownPid(int(int32(pid)), c.Tid):
		return fail(eSRCH)
	}
	b := make([]byte, 12*words)
	for i := range words {
		s := uint(32 * i)
		le.PutUint32(b[12*i:], uint32(k.caps.effective>>s))
		le.PutUint32(b[12*i+4:], uint32(k.caps.permitted>>s))
		le.PutUint32(b[12*i+8:], uint32(k.caps.inheritable>>s))
	}
	return result(0, k.copyOut(c.Args[1], b))
}

// sysCapset is capset with cap_capset's rules: no capability beyond the
// permitted set (or, for the inheritable set without CAP_SETPCAP, beyond
// the inheritable and permitted ones), effective within permitted.
func sysCapset(k *Kernel, c *Call) Outcome {
	words, pid, e := k.capHeader(c.Args[0])
	if e != 0 {
		return fail(e)
	}
	if pid != 0 && int(pid) != k.cfg.Pid {
		return fail(ePERM)
	}
	b := make([]byte, 12*words)
	if e := k.copyIn(c.Args[1], b); e != 0 {
		return fail(e)
	}
	var n capSets
	for i := range words {
		s := uint(32 * i)
		n.effective |= uint64(le.Uint32(b[12*i:])) << s
		n.permitted |= uint64(le.Uint32(b[12*i+4:])) << s
		n.inheritable |= uint64(le.Uint32(b[12*i+8:])) << s
	}
	old := k.caps
	subset := func(a, b uint64) bool { return a&^b == 0 }
	if old.effective&(1<<capSetpcap) == 0 && !subset(n.inheritable, old.inheritable|old.permitted) ||
		!subset(n.inheritable, old.inheritable|capAll) ||
		!subset(n.permitted, old.permitted) || !subset(n.effective, n.permitted) {
		return fail(ePERM)
	}
	k.caps = n
	return ok(0)
}

// capable reports whether the process holds capability cap.
func (k *Kernel) capable(cap int) bool { return k.caps.effective&(1<<cap) != 0 }

// hostGroups are the supplementary groups of the user running emuprof,
// which a program started by that user has (nil: unknown, the gid alone).
func hostGroups() []uint32 {
	gs, err := os.Getgroups()
	if err != nil {
		return nil
	}
	out := make([]uint32, len(gs))
	for i, g := range gs {
		out[i] = uint32(g)
	}
	return out
}

// sysSetgroups: with CAP_SETGID the list replaces the supplementary
// groups getgroups reports; without it, EPERM.
func sysSetgroups(k *Kernel, c *Call) Outcome {
	if !k.capable(capSetgid) {
		return fail(ePERM)
	}
	n := uint32(c.Args[0])
	if n > ngroupsMax {
		return fail(eINVAL)
	}
	b := make([]byte, 4*n)
	if e := k.copyIn(c.Args[1], b); e != 0 {
		return fail(e)
	}
	groups := make([]uint32, n)
	for i := range groups {
		groups[i] = le.Uint32(b[4*i:])
	}
	k.groups = groups
	return ok(0)
}

// Namespace and sharing flags of unshare.
const (
	cloneVM       = 0x100
	cloneFS       = 0x200
	cloneFiles    = 0x400
	cloneSighand  = 0x800
	cloneThread   = 0x10000
	cloneNewNS    = 0x20000
	cloneSysvsem  = 0x40000
	cloneNewTime  = 0x80
	cloneNewCgrp  = 0x02000000
	cloneNewUTS   = 0x04000000
	cloneNewIPC   = 0x08000000
	cloneNewUser  = 0x10000000
	cloneNewPID   = 0x20000000
	cloneNewNet   = 0x40000000
	unshareNS     = cloneNewNS | cloneNewTime | cloneNewCgrp | cloneNewUTS | cloneNewIPC | cloneNewUser | cloneNewPID | cloneNewNet
	unshareShared = cloneVM | cloneFS | cloneFiles | cloneSighand | cloneThread | cloneSysvsem
)

// sysUnshare is ksys_unshare's checks: the sharing flags are no-ops for a
// process with one thread (EINVAL with more, for the thread, signal
// handler and memory ones), namespaces EPERM.
func sysUnshare(k *Kernel, c *Call) Outcome {
	flags := c.Args[0]
	if flags&^uint64(unshareNS|unshareShared) != 0 {
		return fail(eINVAL)
	}
	if flags&cloneNewUser != 0 {
		flags |= cloneThread | cloneFS
	}
	if flags&cloneVM != 0 {
		flags |= cloneSighand
	}
	if flags&cloneSighand != 0 {
		flags |= cloneThread
	}
	if flags&(cloneThread|cloneSighand|cloneVM) != 0 && len(k.threads) > 1 {
		return fail(eINVAL)
	}
	if flags&unshareNS != 0 {
		return fail(ePERM)
	}
	return ok(0)
}
