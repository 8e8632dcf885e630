package main

// Kernel features real programs hit (issue 8.7), against native runs:
// a closed standard input, standard output on /dev/full, FIFOs between
// threads, fallocate, and /proc files consistent with what the system
// calls say (and /proc/cpuinfo with the emulated CPU).

import (
	"os"
	"strings"
	"testing"
)

const python3 = "/usr/bin/python3"

func needPython(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(python3); err != nil {
		t.Fatalf("%s missing: make deps installs it", python3)
	}
}

// sh runs a shell command line natively and under emuprof: PROG in it
// stands for the program, or for emuprof running it.
func shBoth(t *testing.T, line, prog string) (native, emu outcome) {
	t.Helper()
	dir := t.TempDir()
	native = run(t, nil, dir, "/bin/sh", "-c", strings.ReplaceAll(line, "PROG", prog))
	emuCmd := emuprofBin + " " + strings.Join(emuArgs(), " ") + " " + prog
	emu = run(t, nil, dir, "/bin/sh", "-c", strings.ReplaceAll(line, "PROG", emuCmd))
	return native, emu
}

func sameOutcome(t *testing.T, what string, native, emu outcome) {
	t.Helper()
	if native != emu {
		t.Errorf("%s:\nnative: %+v\nemu:    %+v", what, native, emu)
	}
}

// A program started with its standard input closed sees it closed (EBADF),
// not /dev/null; the next open gets fd 0.
func TestClosedStdin(t *testing.T) {
	needPython(t)
	const py = `import sys, os
print(sys.stdin)
try:
    os.read(0, 1)
except OSError as e:
    print("read", e.errno)
print("open", os.open("/dev/null", os.O_RDONLY))`
	native, emu := shBoth(t, `exec PROG -c '`+py+`' <&-`, python3)
	sameOutcome(t, "python3 with stdin closed", native, emu)
	if !strings.Contains(native.stdout, "read 9\n") {
		t.Errorf("native run did not see a closed stdin: %q", native.stdout)
	}
	// /dev/null as stdin stays /dev/null.
	native, emu = shBoth(t, `exec PROG -c '`+py+`' </dev/null`, python3)
	sameOutcome(t, "python3 with stdin on /dev/null", native, emu)
}

// Writing to standard output on /dev/full fails with ENOSPC, as natively.
func TestStdoutDevFull(t *testing.T) {
	native, emu := shBoth(t, `PROG hello >/dev/full`, "/bin/echo")
	sameOutcome(t, "echo >/dev/full", native, emu)
	if !strings.Contains(native.stderr, "No space left on device") {
		t.Errorf("native: %+v", native)
	}
}

// FIFOs: a reader thread blocked in open until the writer opens,
// non-blocking opens, O_RDWR; fallocate and punching holes.
const pyFIFO = `
import os, threading, errno
os.mkfifo("f", 0o600)
print(oct(os.stat("f").st_mode))
try:
    os.open("f", os.O_WRONLY | os.O_NONBLOCK)
except OSError as e:
    print("nonblocking writer without reader:", errno.errorcode[e.errno])
got = []
def reader():
    fd = os.open("f", os.O_RDONLY)  # waits for the writer
    while True:
        b = os.read(fd, 100)
        if not b:
            break
        got.append(b)
    os.close(fd)
t = threading.Thread(target=reader)
t.start()
w = os.open("f", os.O_WRONLY)  # waits for the reader
os.write(w, b"through the fifo")
os.close(w)
t.join()
print(b"".join(got))
rw = os.open("f", os.O_RDWR)
os.write(rw, b"self")
print(os.read(rw, 10))
os.close(rw)
with open("g", "wb") as f:
    f.write(b"x" * 100)
fd = os.open("g", os.O_RDWR)
os.posix_fallocate(fd, 0, 5000)
print(os.fstat(fd).st_size)
try:
    os.posix_fallocate(fd, -1, 10)
except OSError as e:
    print("negative offset:", errno.errorcode[e.errno])
os.mknod("h", 0o600 | 0o010000)
print(oct(os.stat("h").st_mode))
`

func TestFIFOAndFallocate(t *testing.T) {
	needPython(t)
	// Each run in a directory of its own: the script creates its files.
	native := run(t, nil, t.TempDir(), python3, "-c", pyFIFO)
	emu := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs(), python3, "-c", pyFIFO)...)
	sameOutcome(t, "python3 FIFOs and fallocate", native, emu)
}

// /proc agrees with the system calls.
const pyProc = `
import os, threading, sys
ev = threading.Event()
t = threading.Thread(target=ev.wait)
t.start()
st = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines())
st = {k: v.strip() for k, v in st.items()}
print("Name", st["Name"] == os.path.basename(sys.executable)[:15])
print("Pid", st["Pid"] == str(os.getpid()), st["Tgid"] == str(os.getpid()))
print("PPid", st["PPid"] == str(os.getppid()))
print("Uid", st["Uid"].split() == [str(os.getuid())] * 4)
print("Threads", st["Threads"], threading.active_count())
cpus = sorted(os.sched_getaffinity(0))
print("Cpus", st["Cpus_allowed_list"] == (f"{cpus[0]}-{cpus[-1]}" if len(cpus) > 1 else str(cpus[0])))
print("VmRSS", st["VmRSS"].endswith(" kB"), int(st["VmSize"].split()[0]) > 0)
ev.set()
t.join()
root = [l.split() for l in open("/proc/self/mountinfo") if l.split()[4] == "/"]
dev = os.stat("/").st_dev
print("mountinfo /", root[-1][2] == f"{os.major(dev)}:{os.minor(dev)}")
print("exe", os.path.realpath("/proc/self/exe") == os.path.realpath(sys.executable))
fd = os.open("/dev/null", os.O_RDONLY)
print("fd", str(fd) in os.listdir("/proc/self/fd"), os.readlink(f"/proc/self/fd/{fd}"))
maps = open("/proc/self/maps").read()
print("maps", os.path.realpath(sys.executable) in maps, "[stack]" in maps)
`

func TestProcFiles(t *testing.T) {
	needPython(t)
	out := compare(t, nil, t.TempDir(), python3, "-c", pyProc)
	if strings.Contains(out.stdout, "False") {
		t.Errorf("an inconsistency:\n%s", out.stdout)
	}
	// /proc/cpuinfo describes the emulated CPU: SSE4.2 and POPCNT, no AVX.
	cpu := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs(), "/bin/grep", "-m3", "-e", "^flags", "-e", "^model name", "-e", "^vendor_id", "/proc/cpuinfo")...)
	flags := " " + cpu.stdout
	for _, want := range []string{"vendor_id\t: AuthenticAMD", "model name\t: emuprof virtual x86-64 CPU", " sse4_2 ", " popcnt ", " ssse3 "} {
		if !strings.Contains(flags, want) {
			t.Errorf("/proc/cpuinfo lacks %q:\n%s", want, cpu.stdout)
		}
	}
	for _, no := range []string{" avx", " fma ", " bmi1 ", " xsave "} {
		if strings.Contains(flags, no) {
			t.Errorf("/proc/cpuinfo claims %q:\n%s", no, cpu.stdout)
		}
	}
}
