package syscalls

// I/O priorities (block/ioprio.c): ioprio_set records the process's
// priority with Linux's checks and ioprio_get reports it; the emulated
// disk has no queue for it to order.

const (
	ioprioWhoProcess = 1
	ioprioWhoPgrp    = 2
	ioprioWhoUser    = 3
	ioprioClassNone  = 0
	ioprioClassRT    = 1
	ioprioClassBE    = 2
	ioprioClassIdle  = 3
	ioprioNrLevels   = 8
	// ioprioDefault is what a group or user query reports for a process
	// without a priority (IOPRIO_DEFAULT: best effort, level 4).
	ioprioDefault = ioprioClassBE<<13 | 4
)

// ioprioTarget is the ESRCH/EINVAL check of who and which: only this
// process, its group and its user are known here.
func (k *Kernel) ioprioTarget(which, who int32, tid int) Errno {
	switch which {
	case ioprioWhoProcess:
		if who < 0 || !k.ownPid(int(who), tid) {
			return eSRCH
		}
	case ioprioWhoPgrp:
		if who != 0 && int(who) != k.cfg.Pid {
			return eSRCH
		}
	case ioprioWhoUser:
		if who != 0 && int(who) != k.uids.real {
			return eSRCH
		}
	default:
		return eINVAL
	}
	return 0
}

func sysIoprioGet(k *Kernel, c *Call) Outcome {
	which, who := int32(c.Args[0]), int32(c.Args[1])
	if e := k.ioprioTarget(which, who, c.Tid); e != 0 {
		return fail(e)
	}
	if which != ioprioWhoProcess && k.ioprio>>13 == ioprioClassNone {
		return ok(ioprioDefault)
	}
	return ok(uint64(k.ioprio))
}

// sysIoprioSet is ioprio_check_cap, then the target.
func sysIoprioSet(k *Kernel, c *Call) Outcome {
	which, who, prio := int32(c.Args[0]), int32(c.Args[1]), uint32(c.Args[2])
	class, level := prio>>13&7, prio&7
	switch class {
	case ioprioClassRT:
		const capSysNice, capSysAdmin = 23, 21
		if !k.capable(capSysNice) && !k.capable(capSysAdmin) {
			return fail(ePERM)
		}
	case ioprioClassBE, ioprioClassIdle:
	case ioprioClassNone:
		if level != 0 {
			return fail(eINVAL)
		}
	default:
		return fail(eINVAL)
	}
	if e := k.ioprioTarget(which, who, c.Tid); e != 0 {
		return fail(e)
	}
	k.ioprio = prio & 0xffff
	return ok(0)
}
