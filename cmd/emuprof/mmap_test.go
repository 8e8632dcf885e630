package main

// MAP_SHARED file mappings must be coherent with their file, as on Linux:
// the guest and python3's mmap module, compared with native runs, stdout
// and the files they leave behind.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sameFiles compares the named files of two directories byte for byte.
func sameFiles(t *testing.T, native, emu string, names ...string) {
	t.Helper()
	for _, n := range names {
		want, werr := os.ReadFile(filepath.Join(native, n))
		got, gerr := os.ReadFile(filepath.Join(emu, n))
		if (werr != nil) != (gerr != nil) {
			t.Errorf("%s: native error %v, emu error %v", n, werr, gerr)
			continue
		}
		if !bytes.Equal(want, got) {
			i := 0
			for i < len(want) && i < len(got) && want[i] == got[i] {
				i++
			}
			t.Errorf("%s differs from the native run's (%d vs %d bytes) from offset %d: native %.40q, emu %.40q",
				n, len(want), len(got), i, want[i:], got[i:])
		}
	}
}

// sameRun compares what a native and an emulated run printed.
func sameRun(t *testing.T, what string, native, emu outcome, stderrToo bool) {
	t.Helper()
	if native.stdout != emu.stdout {
		t.Errorf("%s: stdout differs\nnative: %q\nemu:    %q", what, native.stdout, emu.stdout)
	}
	if stderrToo && native.stderr != emu.stderr {
		t.Errorf("%s: stderr differs\nnative: %q\nemu:    %q", what, native.stderr, emu.stderr)
	}
	if native.code != emu.code {
		t.Errorf("%s: exit status native %d, emu %d (emu stderr %.800s)", what, native.code, emu.code, emu.stderr)
	}
}

func TestMmapSharedGuest(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			prog := guestBin(t, v, "mmap_shared")
			nd, ed := t.TempDir(), t.TempDir()
			emu := func(args ...string) outcome {
				return run(t, nil, ed, emuprofBin, append(append(emuArgs(), prog), args...)...)
			}
			// run exits with a mapping never msynced or unmapped.
			sameRun(t, "run", run(t, nil, nd, prog, "run"), emu("run"), true)
			// crash dies of SIGSEGV with a dirty mapping (emuprof reports
			// the crash on stderr).
			sameRun(t, "crash", run(t, nil, nd, prog, "crash"), emu("crash"), false)
			// The files as the native program sees them afterwards.
			sameRun(t, "show", run(t, nil, nd, prog, "show"), run(t, nil, ed, prog, "show"), true)
			sameFiles(t, nd, ed, "shm.dat", "shm.link", "sent.dat", "ro.dat", "remap.dat", "late.dat", "crash.dat")
			// Aliased shared mappings agree after msync, and the user is
			// told that they would not before.
			native, e := run(t, nil, nd, prog, "alias"), emu("alias")
			sameRun(t, "alias", native, e, false)
			if want := "alias.dat is mapped MAP_SHARED twice"; !strings.Contains(e.stderr, want) {
				t.Errorf("alias: emu stderr %q lacks %q", e.stderr, want)
			}
			sameFiles(t, nd, ed, "alias.dat")
			// A run stopped by --max-insns writes back too.
			stopped := run(t, nil, ed, emuprofBin, append(emuArgs("--max-insns", "5000000"), prog, "spin")...)
			b, _ := os.ReadFile(filepath.Join(ed, "spin.dat"))
			if stopped.code != 124 || len(b) < 21 || string(b[9:21]) != "BEFORE-LIMIT" {
				t.Errorf("spin stopped by --max-insns: status %d, spin.dat %.30q", stopped.code, b)
			}
		})
	}
}

// pyMmap writes through python's mmap, reads the file back with os.pread
// and a file object, pwrites and reads through the mapping, grows a mapping
// with resize (ftruncate + mremap), and exits with a dirty mapping.
const pyMmap = `import mmap, os, sys
with open('py.dat', 'wb') as f:
    f.write(bytes(range(97, 123)) * 400)
with open('py.dat', 'r+b') as f:
    m = mmap.mmap(f.fileno(), 0)
    m[0:5] = b'HELLO'
    m.seek(5000)
    m.write(b'WRITTEN')
    print(os.pread(f.fileno(), 5, 0), os.pread(f.fileno(), 7, 5000))
    f.seek(0)
    print(f.read(8))
    os.pwrite(f.fileno(), b'PW', 8000)
    print(m[7998:8004])
    m.flush()
    m.move(100, 0, 5)
    m.close()
print(open('py.dat', 'rb').read(110))
f = open('py2.dat', 'w+b')
f.write(b'x' * 5000)
f.flush()
m2 = mmap.mmap(f.fileno(), 0)
m2[10:14] = b'LATE'
m2.resize(9000)
m2[8990:8994] = b'GROW'
print(len(m2), os.fstat(f.fileno()).st_size, m2[4998:5002])
sys.stdout.flush()
os._exit(0)
`

func TestMmapPython(t *testing.T) {
	const py = "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("%s missing: make deps installs it", py)
	}
	nd, ed := t.TempDir(), t.TempDir()
	native := run(t, nil, nd, py, "-c", pyMmap)
	emu := run(t, nil, ed, emuprofBin, append(emuArgs(), py, "-c", pyMmap)...)
	sameRun(t, "python3 mmap", native, emu, true)
	sameFiles(t, nd, ed, "py.dat", "py2.dat")
}

// Accesses to the pages of a file mapping past the end of the file
// (testdata/src/mmapeof.c): SIGBUS with BUS_ADRERR and the address, in
// private and shared mappings, after mprotect, in a forked child; SIGSEGV
// first where the protection forbids the access; EFAULT for the kernel's
// accesses; a shared mapping follows ftruncate and pwrite growing and
// shrinking the file. Byte for byte against the native run, in four
// builds. Before, those pages read as zeros (SIGSEGV once truncated).
func TestMmapPastEOFMatchesNative(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			out := compare(t, nil, t.TempDir(), guestBin(t, v, "mmapeof"))
			for _, l := range []string{"private page 1                   +0x1000 read  SIGBUS code 2 at +0x1000\n", "child                            killed by signal 7\n"} {
				if !strings.Contains(out.stdout, l) {
					t.Errorf("stdout lacks %q", l)
				}
			}
		})
	}
}
