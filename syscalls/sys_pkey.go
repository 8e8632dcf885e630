package syscalls

// Memory protection keys (mm/mprotect.c) on a CPU without them: the
// emulated CPU does not report PKU (OSPKE), so, as Linux there, no key can
// be allocated (arch_set_user_pkey_access: EINVAL), none is allocated
// (pkey_free EINVAL), and pkey_mprotect is mprotect for the default key -1
// only.

func sysPkeyAlloc(*Kernel, *Call) Outcome { return fail(eINVAL) }

func sysPkeyFree(*Kernel, *Call) Outcome { return fail(eINVAL) }

func sysPkeyMprotect(k *Kernel, c *Call) Outcome {
	if int32(c.Args[3]) != -1 {
		return fail(eINVAL)
	}
	return sysMprotect(k, c)
}
