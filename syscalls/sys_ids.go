package syscalls

// The guest's identity is fixed for the run (Config.Uid, Config.Gid):
// setuid and friends succeed when they set every id to what it already is
// (or leave it, -1), which is what programs dropping privileges they do not
// have do (posix_spawn's POSIX_SPAWN_RESETIDS, make, sudo-less tools), and
// fail with EPERM when they would change it.

// sameIDs reports whether every id argument is -1 or id.
func sameIDs(id int, args ...uint64) bool {
	for _, a := range args {
		if v := int32(a); v != -1 && int(uint32(v)) != id {
			return false
		}
	}
	return true
}

func setIDs(id int, args ...uint64) Outcome {
	if sameIDs(id, args...) {
		return ok(0)
	}
	return fail(ePERM)
}

func sysSetuid(k *Kernel, c *Call) Outcome {
	if int32(c.Args[0]) == -1 {
		return fail(eINVAL)
	}
	return setIDs(k.cfg.Uid, c.Args[0])
}

func sysSetgid(k *Kernel, c *Call) Outcome {
	if int32(c.Args[0]) == -1 {
		return fail(eINVAL)
	}
	return setIDs(k.cfg.Gid, c.Args[0])
}

func sysSetreuid(k *Kernel, c *Call) Outcome { return setIDs(k.cfg.Uid, c.Args[0], c.Args[1]) }
func sysSetregid(k *Kernel, c *Call) Outcome { return setIDs(k.cfg.Gid, c.Args[0], c.Args[1]) }
func sysSetresuid(k *Kernel, c *Call) Outcome {
	return setIDs(k.cfg.Uid, c.Args[0], c.Args[1], c.Args[2])
}
func sysSetresgid(k *Kernel, c *Call) Outcome {
	return setIDs(k.cfg.Gid, c.Args[0], c.Args[1], c.Args[2])
}
