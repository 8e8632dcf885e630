package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// ELF files and #! scripts at the edges of what Linux's execve takes, run
// natively and under emuprof: the same exit status (and output), whether
// emuprof is given the file or the guest execs it.

// elfVariants writes damaged copies of the static hello guest into dir.
func elfVariants(t *testing.T, dir string) []string {
	t.Helper()
	base, err := os.ReadFile(guestBin(t, "glibc-static", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	phoff, phnum := le.Uint64(base[32:]), int(le.Uint16(base[56:]))
	ph := func(b []byte, typ uint32, nth int) int { // offset of the nth header of type typ
		for i := 0; i < phnum; i++ {
			o := int(phoff) + 56*i
			if le.Uint32(b[o:]) == typ {
				if nth == 0 {
					return o
				}
				nth--
			}
		}
		t.Fatalf("hello has no program header %d of type %d", nth, typ)
		return 0
	}
	const ptLoad, ptNote, ptPhdr = 1, 4, 6
	var names []string
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	b := clone(base) // a PT_PHDR that lies: Linux takes AT_PHDR from e_phoff
	o := ph(b, ptNote, 0)
	le.PutUint32(b[o:], ptPhdr)
	le.PutUint64(b[o+16:], 0x123000)
	write("wrong_phdr", b)
	b = clone(base) // no PT_LOAD: Linux maps nothing and dies at the entry
	for i := 0; i < phnum; i++ {
		if o := int(phoff) + 56*i; le.Uint32(b[o:]) == ptLoad {
			le.PutUint32(b[o:], 0)
		}
	}
	write("no_load", b)
	b = clone(base) // p_filesz > p_memsz
	o = ph(b, ptLoad, 3)
	le.PutUint64(b[o+40:], le.Uint64(b[o+32:])-0x100)
	write("filesz_over_memsz", b)
	b = clone(base) // a segment past the 47-bit user address space
	le.PutUint64(b[ph(b, ptLoad, 3)+16:], 0x800000000000)
	write("high_segment", b)
	lastLoad := ph(base, ptLoad, 3)
	write("data_past_eof", clone(base[:le.Uint64(base[lastLoad+8:])+0x100]))
	write("text_past_eof", clone(base[:0x50000]))
	flags := func(name string, nth int, f uint32) { // a PT_LOAD's p_flags
		b := clone(base)
		le.PutUint32(b[ph(b, ptLoad, nth)+4:], f)
		write(name, b)
	}
	flags("exec_only_headers", 0, 1)  // x86-64 reads what it may execute
	flags("write_only_headers", 0, 2) // and what it may write
	flags("prot_none_rodata", 2, 0)   // mapped with the file's bytes, unreadable
	b = clone(base)                   // GNU_RELRO past the mapping: mprotect changes what is mapped, then ENOMEM
	o = ph(b, 0x6474e552, 0)
	le.PutUint64(b[o+40:], 0xffffffff)
	write("relro_past_mapping", b)
	b = clone(base) // a segment over the next ones and past the memory limit
	le.PutUint64(b[ph(b, ptLoad, 2)+40:], 0x2000026fbc)
	write("huge_segment", b)
	b = clone(base) // a read-only segment's last file page keeps the file's bytes past p_filesz (padzero fails)
	le.PutUint64(b[ph(b, ptLoad, 0)+32:], 1)
	write("ro_page_tail", b)
	b = clone(base) // PT_INTERP is checked before any PT_LOAD: ENOEXEC for a bad one, not SIGSEGV
	le.PutUint64(b[ph(b, ptLoad, 1)+8:], 0x10000001000)
	o = ph(b, ptNote, 0)
	le.PutUint32(b[o:], 3)
	le.PutUint64(b[o+32:], 5000)
	write("bad_interp_bad_load", b)
	b = clone(base) // the text's file range a TiB past the end: mapped, SIGBUS at the first instruction
	o = ph(b, ptLoad, 1)
	le.PutUint64(b[o+8:], le.Uint64(b[o+8:])+1<<40)
	write("text_far_past_eof", b)
	b = clone(base) // the read-only data past the end: SIGBUS at its first read
	o = ph(b, ptLoad, 2)
	le.PutUint64(b[o+8:], le.Uint64(b[o+8:])+1<<40)
	write("rodata_far_past_eof", b)
	b = clone(base) // p_offset and p_vaddr at different page offsets: elf_map fails, SIGSEGV
	le.PutUint64(b[ph(b, ptLoad, 0)+8:], 8)
	write("incongruent_offset", b)
	b = clone(base) // program headers past the end: execve fails (ENOEXEC)
	le.PutUint64(b[32:], uint64(len(base))+100)
	write("phoff_past_eof", b)
	return names
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// scripts writes chains of #! scripts (chain1 .. chain7, chainN running
// N scripts before /bin/sh) and #! lines longer than the kernel's buffer.
func scripts(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	write("chain1", "#!/bin/sh\necho chain \"$@\"\n")
	for i := 2; i <= 7; i++ {
		write(fmt.Sprintf("chain%d", i), fmt.Sprintf("#!%s\n", filepath.Join(dir, fmt.Sprintf("chain%d", i-1))))
	}
	pad := func(c string, n int) string { return strings.Repeat(c, n) }
	write("long_arg", "#!/bin/echo "+pad("a", 290)+"\n")    // the argument is cut at byte 255
	write("long_blanks", "#!/bin/echo"+pad(" ", 290)+"x\n") // no argument: all blanks in the buffer
	write("long_lead", "#!"+pad(" ", 260)+"/bin/echo x\n")  // only blanks in the buffer: ENOEXEC
	write("long_name", "#!/bin/"+pad("e", 300)+"\n")        // the name could be cut: ENOEXEC
	write("long_args", "#!/bin/echo "+pad("a ", 150)+"\n")  // cut at byte 255, inside blanks
	write("nul_arg", "#!/bin/echo x\x00y\n")                // the argument ends at the NUL
	write("short_no_newline", "#!/bin/echo short")          // the file's end ends the line
	write("tab_sep", "#!\t/bin/echo\t one two \t\n")        // blanks around, kept inside
	write("no_interp", "#!   \n")                           // ENOEXEC
	return names
}

// execer forks and execs each of its arguments, printing how each ended.
const execer = `import os, sys
for f in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:
        try:
            os.execv(f, [f])
        except OSError as e:
            print(f, "errno", e.errno, flush=True)
            os._exit(99)
    _, st = os.waitpid(pid, 0)
    print(f, "status", os.waitstatus_to_exitcode(st), flush=True)
`

// TestExecEdgesMatchNative runs each file natively and under emuprof, as
// the program emuprof is given and as the target of a guest's execve.
func TestExecEdgesMatchNative(t *testing.T) {
	dir := t.TempDir()
	names := append(elfVariants(t, dir), scripts(t, dir)...)
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			cmd := exec.Command("./" + n)
			cmd.Dir = dir
			out, err := cmd.Output()
			native := outcome{stdout: string(out)}
			var ee *exec.ExitError
			switch {
			case errors.As(err, &ee) && ee.Exited():
				native.code = ee.ExitCode()
			case errors.As(err, &ee):
				native.code = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
			case err != nil: // execve failed: emuprof refuses the file
				native.code = 2
			}
			emu := run(t, nil, dir, emuprofBin, append(emuArgs(), "./"+n)...)
			if emu.code != native.code || emu.stdout != native.stdout {
				t.Errorf("exit %d, stdout %.300q; native: exit %d, stdout %.300q (emuprof stderr %.400s)", emu.code, emu.stdout, native.code, native.stdout, emu.stderr)
			}
			if emu.code == 139 && !strings.Contains(emu.stderr, "killed by SIGSEGV") || emu.code == 135 && !strings.Contains(emu.stderr, "killed by SIGBUS") {
				t.Errorf("stderr %q does not say the program was killed", emu.stderr)
			}
		})
	}
	script := filepath.Join(dir, "execer.py")
	if err := os.WriteFile(script, []byte(execer), 0o644); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, n := range names {
		args = append(args, "./"+n)
	}
	compare(t, nil, dir, "/usr/bin/python3", append([]string{script}, args...)...)
}
