package syscalls

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// /proc/cpuinfo says what the emulated CPU's CPUID says (emu/faults.c).
func TestCPUInfoMatchesCPUID(t *testing.T) {
	src, err := os.ReadFile("../emu/faults.c")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("0x%08x", cpuid1ECX), fmt.Sprintf("0x%08x", cpuid1EDX),
		fmt.Sprintf("0x%08x", cpuidExt1ECX), fmt.Sprintf("0x%08x", cpuidExt1EDX),
		fmt.Sprintf("0x%08x", cpuidFamily<<8|cpuidModel<<4|cpuidStepping),
		fmt.Sprintf("leaf == 0 ? %d :", cpuidMaxLeaf), `"` + cpuidBrand + `"`,
		`"Auth"`, `"enti"`, `"cAMD"`,
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("emu/faults.c does not say %s: /proc/cpuinfo is out of step with CPUID", want)
		}
	}
	h := newHarness(t, Config{CPUs: 2})
	info := string(h.k.cpuinfo())
	if n := strings.Count(info, "processor\t:"); n != 2 {
		t.Errorf("%d processors", n)
	}
	flags := " " + cpuFlagList() + " "
	for _, f := range []string{"sse", "sse2", "pni", "ssse3", "sse4_1", "sse4_2", "popcnt", "cx16", "lahf_lm", "lm", "nx", "syscall"} {
		if !strings.Contains(flags, " "+f+" ") {
			t.Errorf("flag %s missing: %s", f, flags)
		}
	}
	for _, f := range []string{"avx", "avx2", "fma", "bmi1", "xsave", "hypervisor", "aes", "movbe"} {
		if strings.Contains(flags, " "+f+" ") {
			t.Errorf("flag %s the CPU does not have: %s", f, flags)
		}
	}
	for _, l := range []string{"vendor_id\t: AuthenticAMD\n", "model name\t: emuprof virtual x86-64 CPU\n",
		"cpu family\t: 6\n", "cpuid level\t: 7\n", "address sizes\t: 40 bits physical, 48 bits virtual\n"} {
		if !strings.Contains(info, l) {
			t.Errorf("cpuinfo lacks %q", l)
		}
	}
}

// /proc/self/status follows the process: name, ids, memory, threads,
// signals, CPUs.
func TestProcStatus(t *testing.T) {
	h := newHarness(t, Config{Pid: 4242, Uid: 1000, Gid: 100, CPUs: 4})
	h.k.Threads = func() int { return 3 }
	fd := h.must(nrOpen, h.str("/proc/self/status"), oRDONLY)
	buf := h.alloc(4096)
	n := h.must(nrRead, fd, buf, 4096)
	status := string(h.peek(buf, int(n)))
	for _, l := range []string{"Pid:\t4242\n", "Tgid:\t4242\n", "PPid:\t4241\n", "Uid:\t1000\t1000\t1000\t1000\n",
		"Gid:\t100\t100\t100\t100\n", "Threads:\t3\n", "Cpus_allowed_list:\t0-3\n", "Cpus_allowed:\tf\n",
		"CapEff:\t0000000000000000\n", "Umask:\t0022\n", "Mems_allowed_list:\t0\n"} {
		if !strings.Contains(status, l) {
			t.Errorf("status lacks %q:\n%s", l, status)
		}
	}
	if !strings.Contains(status, "\nVmRSS:\t") || !strings.Contains(status, "\nVmSize:\t    1024 kB\n") {
		t.Errorf("memory lines:\n%s", status)
	}
	fd = h.must(nrOpen, h.str("/proc/self/mountinfo"), oRDONLY)
	n = h.must(nrRead, fd, buf, 4096)
	if mi := string(h.peek(buf, int(n))); !strings.Contains(mi, " / / rw,relatime - ext4 ") ||
		!strings.Contains(mi, " /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n") {
		t.Errorf("mountinfo:\n%s", mi)
	}
}
