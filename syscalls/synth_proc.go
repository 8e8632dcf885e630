package syscalls

import (
	"fmt"
	"strings"
)

// /proc/self/status, /proc/self/mountinfo and /proc/cpuinfo, from what the
// kernel knows of the process and of the emulated CPU.

// The emulated CPU's CPUID registers, as emu/faults.c (cpuid_leaf) answers
// them: /proc/cpuinfo says what the CPUID instruction says.
const (
	cpuidMaxLeaf   = 7
	cpuidFamily    = 6
	cpuidModel     = 6
	cpuidStepping  = 3
	cpuidBrand     = "emuprof virtual x86-64 CPU"
	cpuidVendor    = "AuthenticAMD"
	cpuid1ECX      = 0x00982201
	cpuid1EDX      = 0x078bfbff
	cpuidExt1ECX   = 0x00000001
	cpuidExt1EDX   = 0x20100800
	cpuL2KiB       = 512
	cpuPhysBits    = 40
	cpuVirtBits    = 48
	cpuClflushSize = 64
)

// Linux's names of the CPUID bits (arch/x86/include/asm/cpufeatures.h),
// by word; "" for bits it does not show.
var (
	cpuFlags1EDX = [32]string{"fpu", "vme", "de", "pse", "tsc", "msr", "pae", "mce", "cx8", "apic", "", "sep",
		"mtrr", "pge", "mca", "cmov", "pat", "pse36", "pn", "clflush", "", "dts", "acpi", "mmx", "fxsr", "sse",
		"sse2", "ss", "ht", "tm", "ia64", "pbe"}
	cpuFlagsExt1EDX = [32]string{11: "syscall", 19: "mp", 20: "nx", 22: "mmxext", 25: "fxsr_opt", 26: "pdpe1gb",
		27: "rdtscp", 29: "lm", 30: "3dnowext", 31: "3dnow"}
	cpuFlags1ECX = [32]string{"pni", "pclmulqdq", "dtes64", "monitor", "ds_cpl", "vmx", "smx", "est", "tm2",
		"ssse3", "cid", "sdbg", "fma", "cx16", "xtpr", "pdcm", "", "pcid", "dca", "sse4_1", "sse4_2", "x2apic",
		"movbe", "popcnt", "tsc_deadline_timer", "aes", "xsave", "", "avx", "f16c", "rdrand", "hypervisor"}
	cpuFlagsExt1ECX = [32]string{"lahf_lm", "cmp_legacy", "svm", "extapic", "cr8_legacy", "abm", "sse4a",
		"misalignsse", "3dnowprefetch", "osvw", "ibs", "xop", "skinit", "wdt", "", "lwp", "fma4", "tce", "",
		"nodeid_msr", "", "tbm", "topoext", "perfctr_core", "perfctr_nb", "", "bpext", "ptsc", "perfctr_llc",
		"mwaitx", "", ""}
)

// cpuFlagList is the flags line of /proc/cpuinfo, in Linux's order: CPUID
// 1 EDX, 0x80000001 EDX, the synthetic ones every x86-64 gets, CPUID 1
// ECX, 0x80000001 ECX.
func cpuFlagList() string {
	var out []string
	add := func(names *[32]string, reg uint32) {
		for i, n := range names {
			if reg>>i&1 != 0 && n != "" {
				out = append(out, n)
			}
		}
	}
	add(&cpuFlags1EDX, cpuid1EDX)
	add(&cpuFlagsExt1EDX, cpuidExt1EDX)
	out = append(out, "nopl", "cpuid")
	add(&cpuFlags1ECX, cpuid1ECX)
	add(&cpuFlagsExt1ECX, cpuidExt1ECX)
	return strings.Join(out, " ")
}

// cpuinfo renders /proc/cpuinfo for Config.CPUs identical CPUs.
func (k *Kernel) cpuinfo() []byte {
	var b []byte
	flags := cpuFlagList()
	for i := range k.cfg.CPUs {
		b = fmt.Appendf(b, "processor\t: %d\n"+
			"vendor_id\t: %s\n"+
			"cpu family\t: %d\n"+
			"model\t\t: %d\n"+
			"model name\t: %s\n"+
			"stepping\t: %d\n"+
			"cpu MHz\t\t: 1000.000\n"+ // 1 ns per instruction
			"cache size\t: %d KB\n"+
			"physical id\t: 0\n"+
			"siblings\t: %d\n"+
			"core id\t\t: %d\n"+
			"cpu cores\t: %d\n"+
			"apicid\t\t: %d\n"+
			"initial apicid\t: %d\n"+
			"fpu\t\t: yes\n"+
			"fpu_exception\t: yes\n"+
			"cpuid level\t: %d\n"+
			"wp\t\t: yes\n"+
			"flags\t\t: %s\n"+
			"bugs\t\t:\n"+
			"bogomips\t: 2000.00\n"+
			"clflush size\t: %d\n"+
			"cache_alignment\t: %d\n"+
			"address sizes\t: %d bits physical, %d bits virtual\n"+
			"power management:\n\n",
			i, cpuidVendor, cpuidFamily, cpuidModel, cpuidBrand, cpuidStepping, cpuL2KiB,
			k.cfg.CPUs, i, k.cfg.CPUs, i, i, cpuidMaxLeaf, flags, cpuClflushSize, cpuClflushSize,
			cpuPhysBits, cpuVirtBits)
	}
	return b
}

// procStatus renders /proc/self/status: identity, memory from the address
// space, threads, signal masks, CPUs, as Linux lays it out.
func (k *Kernel) procStatus() []byte {
	name := k.commName()
	mf := k.memory()
	size, rssAnon, rssFile, data, stk, exe, lib := mf.size, mf.rssAnon, mf.rssFile, mf.data, mf.stk, mf.exe, mf.lib
	threads := 1
	if k.Threads != nil {
		threads = k.Threads()
	}
	fdSize := 64
	for fdSize < len(k.fds) {
		fdSize *= 2
	}
	var blocked, pnd uint64
	if t := k.threads[k.tid]; t != nil {
		blocked, pnd = t.sigmask, t.pending.mask
	}
	var ign, cgt uint64
	for sig := 1; sig <= nSig; sig++ {
		switch k.sigactions[sig].handler {
		case sigDfl:
		case sigIgn:
			ign |= sigBit(sig)
		default:
			cgt |= sigBit(sig)
		}
	}
	kb := func(n uint64) string { return fmt.Sprintf("%8d kB", n>>10) }
	cpus := k.affinity(k.tid)
	var mask strings.Builder
	for i := len(cpus) - 1; i >= 0; i-- {
		fmt.Fprintf(&mask, "%02x", cpus[i])
	}
	allowed := strings.TrimLeft(mask.String(), "0")
	if allowed == "" {
		allowed = "0"
	}
	pid := k.cfg.Pid
	var b strings.Builder
	line := func(key, format string, a ...any) { fmt.Fprintf(&b, key+":\t"+format+"\n", a...) }
	line("Name", "%s", name)
	line("Umask", "%04o", k.umask)
	line("State", "R (running)")
	line("Tgid", "%d", pid)
	line("Ngid", "0")
	line("Pid", "%d", pid)
	line("PPid", "%d", k.ppid())
	line("TracerPid", "0")
	u, g := k.uids, k.gids
	line("Uid", "%d\t%d\t%d\t%d", u.real, u.eff, u.saved, u.fs)
	line("Gid", "%d\t%d\t%d\t%d", g.real, g.eff, g.saved, g.fs)
	line("FDSize", "%d", fdSize)
	var groups strings.Builder
	for _, g := range k.groups {
		fmt.Fprintf(&groups, "%d ", g)
	}
	line("Groups", "%s ", strings.TrimSuffix(groups.String(), " "))
	line("NStgid", "%d", pid)
	line("NSpid", "%d", pid)
	line("NSpgid", "%d", pid)
	line("NSsid", "%d", pid)
	line("Kthread", "0")
	line("VmPeak", "%s", kb(size))
	line("VmSize", "%s", kb(size))
	line("VmLck", "%s", kb(k.lockedBytes()))
	line("VmPin", "%s", kb(0))
	line("VmHWM", "%s", kb(rssAnon+rssFile))
	line("VmRSS", "%s", kb(rssAnon+rssFile))
	line("RssAnon", "%s", kb(rssAnon))
	line("RssFile", "%s", kb(rssFile))
	line("RssShmem", "%s", kb(0))
	line("VmData", "%s", kb(data))
	line("VmStk", "%s", kb(stk))
	line("VmExe", "%s", kb(exe))
	line("VmLib", "%s", kb(lib))
	line("VmPTE", "%s", kb((size>>21+1)*4096))
	line("VmSwap", "%s", kb(0))
	line("HugetlbPages", "%s", kb(0))
	line("CoreDumping", "0")
	line("THP_enabled", "1")
	line("untag_mask", "0xffffffffffffffff")
	line("Threads", "%d", threads)
	line("SigQ", "0/%d", k.rlimits[rlimitSigPending].cur)
	line("SigPnd", "%016x", pnd)
	line("ShdPnd", "%016x", k.sharedSigs.mask)
	line("SigBlk", "%016x", blocked)
	line("SigIgn", "%016x", ign)
	line("SigCgt", "%016x", cgt)
	line("CapInh", "%016x", k.caps.inheritable)
	line("CapPrm", "%016x", k.caps.permitted)
	line("CapEff", "%016x", k.caps.effective)
	line("CapBnd", "%016x", uint64(capAll))
	line("CapAmb", "%016x", uint64(0))
	line("NoNewPrivs", "0")
	line("Seccomp", "0")
	line("Seccomp_filters", "0")
	line("Speculation_Store_Bypass", "not vulnerable")
	line("SpeculationIndirectBranch", "always enabled")
	line("Cpus_allowed", "%s", allowed)
	line("Cpus_allowed_list", "%s", strings.TrimSuffix(cpuList(cpus), "\n"))
	line("Mems_allowed", "%s", strings.Repeat("00000000,", 31)+"00000001")
	line("Mems_allowed_list", "0")
	line("voluntary_ctxt_switches", "0")
	line("nonvoluntary_ctxt_switches", "0")
	return []byte(b.String())
}

// cpuList renders a CPU mask as a list of ranges ("0-3,6").
func cpuList(mask []byte) string {
	var parts []string
	n := len(mask) * 8
	for i := 0; i < n; {
		if mask[i/8]>>(i%8)&1 == 0 {
			i++
			continue
		}
		j := i
		for j+1 < n && mask[(j+1)/8]>>((j+1)%8)&1 != 0 {
			j++
		}
		if i == j {
			parts = append(parts, fmt.Sprint(i))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", i, j))
		}
		i = j + 1
	}
	return strings.Join(parts, ",") + "\n"
}

// procMountinfo renders /proc/self/mountinfo: the root file system (the
// sysroot, with the device number stat reports for it) and the emulated
// /proc, /sys and /dev.
func (k *Kernel) procMountinfo() []byte {
	rootDev := uint64(devRootFS)
	if l, e := k.walk("/", true); e == 0 && l.fi != nil {
		rootDev = k.hostStat(l.fi, l.host).dev
	}
	var b []byte
	for _, m := range []struct {
		id, parent                  int
		dev                         uint64
		point, opts, fs, src, super string
	}{
		{21, 1, rootDev, "/", "rw,relatime", "ext4", "/dev/root", "rw"},
		{22, 21, devProc, "/proc", "rw,nosuid,nodev,noexec,relatime", "proc", "proc", "rw"},
		{23, 21, devSys, "/sys", "rw,nosuid,nodev,noexec,relatime", "sysfs", "sysfs", "rw"},
		{24, 21, devDevFS, "/dev", "rw,nosuid,relatime", "devtmpfs", "devtmpfs", "rw,mode=755"},
	} {
		b = fmt.Appendf(b, "%d %d %d:%d / %s %s - %s %s %s\n", m.id, m.parent, devMajor(m.dev), devMinor(m.dev),
			m.point, m.opts, m.fs, m.src, m.super)
	}
	return b
}
