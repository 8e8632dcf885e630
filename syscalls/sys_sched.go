package syscalls

// Process groups and sessions (setpgid, setsid), and NUMA memory policy
// (get_mempolicy, set_mempolicy) of the emulated one-node machine, and
// fallocate.

// sysSetpgid: the process leads its own group and session (getpgid,
// getsid), and a session leader cannot move to another group: EPERM, as
// Linux says to a login shell.
func sysSetpgid(k *Kernel, c *Call) Outcome {
	pid, pgid := int(int32(c.Args[0])), int(int32(c.Args[1]))
	if pgid < 0 {
		return fail(eINVAL)
	}
	if pid < 0 || pid != 0 && pid != k.cfg.Pid {
		return fail(eSRCH)
	}
	return fail(ePERM)
}

// sysSetsid: a process group leader cannot start a session (it already
// leads one).
func sysSetsid(*Kernel, *Call) Outcome { return fail(ePERM) }

// Memory policies (uapi/linux/mempolicy.h).
const (
	mpolDefault       = 0
	mpolPreferred     = 1
	mpolBind          = 2
	mpolInterleave    = 3
	mpolLocal         = 4
	mpolPreferredMany = 5
	mpolWeightedIntlv = 6
	mpolMax           = 7

	mpolFStaticNodes   = 1 << 15
	mpolFRelativeNodes = 1 << 14
	mpolFNumaBalancing = 1 << 13
	mpolModeFlags      = mpolFStaticNodes | mpolFRelativeNodes | mpolFNumaBalancing

	mpolFNode        = 1
	mpolFAddr        = 2
	mpolFMemsAllowed = 4

	// numaNodes is nr_node_ids: the emulated machine has one node.
	numaNodes = 1
)

// memPolicy is the task policy set_mempolicy sets.
type memPolicy struct {
	mode, flags int
	nodes       uint64 // user nodemask (bit 0: node 0)
}

// getNodes loads a nodemask argument of maxnode bits (get_nodes).
func (k *Kernel) getNodes(addr, maxnode uint64) (uint64, Errno) {
	if maxnode == 0 || addr == 0 {
		return 0, 0
	}
	maxnode--
	if maxnode == 0 {
		return 0, 0
	}
	if maxnode > mmPageBits {
		return 0, eINVAL
	}
	words := (maxnode + 63) / 64
	b := make([]byte, 8*words)
	if e := k.copyIn(addr, b); e != 0 {
		return 0, e
	}
	// Bits past the last node the kernel knows (MAX_NUMNODES, 1024 on
	// distribution kernels) must be clear.
	mask := le.Uint64(b)
	for i := uint64(0); i < words; i++ {
		w := le.Uint64(b[8*i:])
		if i == words-1 && maxnode%64 != 0 {
			w &= 1<<(maxnode%64) - 1
		}
		if i >= maxNumNodes/64 && w != 0 {
			return 0, eINVAL
		}
	}
	if words == 1 && maxnode%64 != 0 {
		mask &= 1<<(maxnode%64) - 1
	}
	return mask, 0
}

const (
	mmPageBits  = 4096 * 8
	maxNumNodes = 1024
)

func sysSetMempolicy(k *Kernel, c *Call) Outcome {
	mode := int(int32(c.Args[0]))
	flags := mode & mpolModeFlags
	mode &^= mpolModeFlags
	if uint32(mode) >= mpolMax || flags&mpolFStaticNodes != 0 && flags&mpolFRelativeNodes != 0 {
		return fail(eINVAL)
	}
	if flags&mpolFNumaBalancing != 0 && mode != mpolBind && mode != mpolPreferredMany {
		return fail(eINVAL)
	}
	nodes, e := k.getNodes(c.Args[1], c.Args[2])
	if e != 0 {
		return fail(e)
	}
	relative := flags&(mpolFStaticNodes|mpolFRelativeNodes) != 0
	switch mode {
	case mpolDefault:
		if nodes != 0 {
			return fail(eINVAL)
		}
		k.mempolicy = memPolicy{}
		return ok(0)
	case mpolPreferred:
		if nodes == 0 {
			if relative {
				return fail(eINVAL)
			}
			mode = mpolLocal
		}
	case mpolLocal:
		if nodes != 0 || relative {
			return fail(eINVAL)
		}
	default:
		if nodes == 0 {
			return fail(eINVAL)
		}
	}
	// The nodes must include an existing one (node 0), unless they are
	// relative to the allowed set.
	if mode != mpolLocal && flags&mpolFRelativeNodes == 0 && nodes&(1<<numaNodes-1) == 0 {
		return fail(eINVAL)
	}
	k.mempolicy = memPolicy{mode: mode, flags: flags &^ mpolFNumaBalancing, nodes: nodes}
	return ok(0)
}

// putNodes stores a nodemask of maxnode bits (copy_nodes_to_user).
func (k *Kernel) putNodes(addr, maxnode, nodes uint64) Errno {
	n := (maxnode - 1 + 63) / 64 * 8 // ALIGN(maxnode-1, 64)/8 bytes
	if n > 4096 {
		return eINVAL
	}
	b := make([]byte, n)
	if n >= 8 {
		le.PutUint64(b, nodes)
	}
	return k.copyOut(addr, b)
}

func sysGetMempolicy(k *Kernel, c *Call) Outcome {
	modeAddr, maskAddr, maxnode, addr, flags := c.Args[0], c.Args[1], c.Args[2], c.Args[3], c.Args[4]
	if maskAddr != 0 && maxnode < numaNodes {
		return fail(eINVAL)
	}
	if flags&^(mpolFNode|mpolFAddr|mpolFMemsAllowed) != 0 {
		return fail(eINVAL)
	}
	pol := k.mempolicy
	var mode int
	var nodes uint64
	switch {
	case flags&mpolFMemsAllowed != 0:
		if flags&(mpolFNode|mpolFAddr) != 0 {
			return fail(eINVAL)
		}
		nodes = 1<<numaNodes - 1
	default:
		if flags&mpolFAddr != 0 {
			if _, found := k.as.Find(addr); !found {
				return fail(eFAULT)
			}
		} else if addr != 0 {
			return fail(eINVAL)
		}
		switch {
		case flags&mpolFNode != 0 && flags&mpolFAddr != 0:
			mode = 0 // the node of the page: the only one
		case flags&mpolFNode != 0:
			if pol.mode != mpolInterleave {
				return fail(eINVAL)
			}
			mode = 0 // the next interleave node
		default:
			mode = pol.mode | pol.flags
		}
		switch {
		case pol.flags&(mpolFStaticNodes|mpolFRelativeNodes) != 0:
			nodes = pol.nodes
		case pol.mode == mpolBind || pol.mode == mpolInterleave || pol.mode == mpolPreferred ||
			pol.mode == mpolPreferredMany || pol.mode == mpolWeightedIntlv:
			nodes = pol.nodes & (1<<numaNodes - 1)
		}
	}
	if modeAddr != 0 {
		if e := k.putU32(modeAddr, uint32(mode)); e != 0 {
			return fail(e)
		}
	}
	if maskAddr != 0 {
		if e := k.putNodes(maskAddr, maxnode, nodes); e != 0 {
			return fail(e)
		}
	}
	return ok(0)
}

// fallocate modes (uapi/linux/falloc.h).
const (
	fallocKeepSize      = 0x01
	fallocPunchHole     = 0x02
	fallocCollapseRange = 0x08
	fallocZeroRange     = 0x10
	fallocInsertRange   = 0x20
	fallocUnshareRange  = 0x40
	fallocWriteZeroes   = 0x80
)

// sysFallocate allocates (extends the size unless FALLOC_FL_KEEP_SIZE),
// punches holes and zeroes ranges of host files, with vfs_fallocate's
// checks. Collapsing and inserting ranges are refused (EOPNOTSUPP, as by
// file systems without them); blocks are not reserved on the host (the
// host's st_blocks may say less).
func sysFallocate(k *Kernel, c *Call) Outcome {
	mode, off, n := uint32(c.Args[1]), int64(c.Args[2]), int64(c.Args[3])
	f, e := k.file(fdArg(c.Args[0]))
	if e != 0 {
		return fail(e)
	}
	const modeMask = fallocPunchHole | fallocCollapseRange | fallocZeroRange | fallocInsertRange |
		fallocUnshareRange | fallocWriteZeroes
	if off < 0 || n <= 0 {
		return fail(eINVAL)
	}
	if mode&^(modeMask|fallocKeepSize) != 0 {
		return fail(eOPNOTSUPP)
	}
	switch mode & modeMask {
	case 0, fallocUnshareRange, fallocZeroRange:
	case fallocPunchHole:
		if mode&fallocKeepSize == 0 {
			return fail(eOPNOTSUPP)
		}
	case fallocCollapseRange, fallocInsertRange, fallocWriteZeroes:
		if mode&fallocKeepSize != 0 {
			return fail(eOPNOTSUPP)
		}
	default:
		return fail(eOPNOTSUPP) // modes are exclusive
	}
	if !f.writable() {
		return fail(eBADF)
	}
	switch f.ops.(type) {
	case *pipeEnd, *stream:
		return fail(eSPIPE)
	case dirOps:
		return fail(eISDIR)
	case *hostFile:
	default:
		return fail(eNODEV)
	}
	if off+n < 0 || off+n > maxFileBytes {
		return fail(eFBIG)
	}
	if mode&(fallocCollapseRange|fallocInsertRange|fallocUnshareRange|fallocWriteZeroes) != 0 {
		return fail(eOPNOTSUPP)
	}
	hf, host := f.ops.(hostOps).hostFile()
	fi, err := hf.Stat()
	if err != nil {
		return fail(hostErrno(err))
	}
	size := fi.Size()
	end := off + n
	if mode&(fallocPunchHole|fallocZeroRange) != 0 {
		// The range reads as zeros afterwards.
		zeroEnd := min(end, size)
		for p := off; p < zeroEnd; {
			chunk := k.scratch(int(min(zeroEnd-p, maxChunk)))
			clear(chunk)
			w, e := f.ops.write(k, chunk, p)
			if e != 0 {
				return fail(e)
			}
			p += int64(w)
		}
	}
	if mode&fallocKeepSize == 0 && end > size {
		if e := k.fsizeAllows(size, end); e != 0 {
			return fail(e)
		}
		if err := k.truncateHost(hf, end); err != nil {
			return fail(hostErrno(err))
		}
	}
	k.stampFile(hf, host, stampM|stampC)
	return ok(0)
}
