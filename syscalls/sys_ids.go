package syscalls

// User and group ids as Linux keeps them (kernel/sys.c, kernel/groups.c,
// security/commoncap.c): real, effective, saved and file-system ids, which
// a process with CAP_SETUID (CAP_SETGID) may set to anything and any
// other only to one of its own. Changing uids moves the capabilities as
// cap_emulate_setxuid does: leaving uid 0 everywhere drops them all,
// leaving it as the effective uid drops the effective set, coming back
// restores it from the permitted one.
//
// The ids are the guest's: files the guest creates are still created by
// emuprof's own host user, and an open is checked by the host with
// emuprof's rights (docs/USAGE.md).

// idSet is a process's user or group ids.
type idSet struct{ real, eff, saved, fs int }

func sameSet(id int) idSet { return idSet{id, id, id, id} }

// has reports whether id is one of the set's real, effective or saved ids.
func (s idSet) has(id int) bool { return id == s.real || id == s.eff || id == s.saved }

// idArg is an id argument: -1 (keep) gives false.
func idArg(a uint64) (int, bool) {
	v := int32(a)
	return int(uint32(v)), v != -1
}

const (
	capSetgid = 6
	capSetuid = 7
)

// capFSMask are the capabilities the file-system uid carries
// (CAP_FS_MASK: chown, dac_override, dac_read_search, fowner, fsetid,
// linux_immutable, mknod, mac_override).
const capFSMask = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<9 | 1<<27 | 1<<32

// setUids makes n the process's uids, adjusting the capabilities.
func (k *Kernel) setUids(n idSet) {
	o := k.uids
	k.uids = n
	if (o.real == 0 || o.eff == 0 || o.saved == 0) && n.real != 0 && n.eff != 0 && n.saved != 0 && !k.keepCaps {
		k.caps.permitted, k.caps.effective = 0, 0
	}
	switch {
	case o.eff == 0 && n.eff != 0:
		k.caps.effective = 0
	case o.eff != 0 && n.eff == 0:
		k.caps.effective = k.caps.permitted
	}
	k.fsCaps(o.fs, n.fs)
}

// fsCaps moves the file-system capabilities when the fsuid leaves or
// reaches 0.
func (k *Kernel) fsCaps(old, fs int) {
	switch {
	case old == 0 && fs != 0:
		k.caps.effective &^= capFSMask
	case old != 0 && fs == 0:
		k.caps.effective |= k.caps.permitted & capFSMask
	}
}

func sysSetuid(k *Kernel, c *Call) Outcome {
	id, valid := idArg(c.Args[0])
	if !valid {
		return fail(eINVAL)
	}
	n := k.uids
	switch {
	case k.capable(capSetuid):
		n = sameSet(id)
	case id == n.real || id == n.saved:
		n.eff, n.fs = id, id
	default:
		return fail(ePERM)
	}
	k.setUids(n)
	return ok(0)
}

func sysSetgid(k *Kernel, c *Call) Outcome {
	id, valid := idArg(c.Args[0])
	if !valid {
		return fail(eINVAL)
	}
	switch {
	case k.capable(capSetgid):
		k.gids = sameSet(id)
	case id == k.gids.real || id == k.gids.saved:
		k.gids.eff, k.gids.fs = id, id
	default:
		return fail(ePERM)
	}
	return ok(0)
}

// setre is setreuid and setregid: the real id may become the real or
// effective one, the effective one any of the three; the saved id follows
// the effective one when the real one is set or the effective one becomes
// other than the old real one.
func setre(o idSet, privileged bool, r, e uint64) (idSet, Errno) {
	n := o
	if id, ok := idArg(r); ok {
		if !privileged && id != o.real && id != o.eff {
			return o, ePERM
		}
		n.real = id
	}
	if id, ok := idArg(e); ok {
		if !privileged && !o.has(id) {
			return o, ePERM
		}
		n.eff = id
	}
	_, rok := idArg(r)
	if eid, eok := idArg(e); rok || eok && eid != o.real {
		n.saved = n.eff
	}
	n.fs = n.eff
	return n, 0
}

// setres is setresuid and setresgid: each id given becomes what it says,
// for an unprivileged process only to one of its own three.
func setres(o idSet, privileged bool, args ...uint64) (idSet, Errno) {
	n := o
	for i, a := range args {
		id, ok := idArg(a)
		if !ok {
			continue
		}
		if !privileged && !o.has(id) {
			return o, ePERM
		}
		switch i {
		case 0:
			n.real = id
		case 1:
			n.eff = id
		case 2:
			n.saved = id
		}
	}
	n.fs = n.eff
	return n, 0
}

func sysSetreuid(k *Kernel, c *Call) Outcome {
	n, e := setre(k.uids, k.capable(capSetuid), c.Args[0], c.Args[1])
	if e != 0 {
		return fail(e)
	}
	k.setUids(n)
	return ok(0)
}

func sysSetregid(k *Kernel, c *Call) Outcome {
	n, e := setre(k.gids, k.capable(capSetgid), c.Args[0], c.Args[1])
	if e != 0 {
		return fail(e)
	}
	k.gids = n
	return ok(0)
}

func sysSetresuid(k *Kernel, c *Call) Outcome {
	n, e := setres(k.uids, k.capable(capSetuid), c.Args[0], c.Args[1], c.Args[2])
	if e != 0 {
		return fail(e)
	}
	k.setUids(n)
	return ok(0)
}

func sysSetresgid(k *Kernel, c *Call) Outcome {
	n, e := setres(k.gids, k.capable(capSetgid), c.Args[0], c.Args[1], c.Args[2])
	if e != 0 {
		return fail(e)
	}
	k.gids = n
	return ok(0)
}

// setfs is setfsuid and setfsgid: it returns the old fs id whatever
// happens, and sets the new one if the process may.
func setfs(o idSet, privileged bool, a uint64) (idSet, int) {
	id, ok := idArg(a)
	if ok && (privileged || o.has(id) || id == o.fs) {
		o.fs = id
	}
	return o, o.fs
}

func sysSetfsuid(k *Kernel, c *Call) Outcome {
	old := k.uids.fs
	n, _ := setfs(k.uids, k.capable(capSetuid), c.Args[0])
	k.uids = n
	k.fsCaps(old, n.fs)
	return ok(uint64(old))
}

func sysSetfsgid(k *Kernel, c *Call) Outcome {
	old := k.gids.fs
	k.gids, _ = setfs(k.gids, k.capable(capSetgid), c.Args[0])
	return ok(uint64(old))
}

// IDs are the process's real and effective user and group ids (the
// auxiliary vector's AT_UID, AT_EUID, AT_GID, AT_EGID at exec).
func (k *Kernel) IDs() (uid, euid, gid, egid int) {
	return k.uids.real, k.uids.eff, k.gids.real, k.gids.eff
}
