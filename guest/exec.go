package guest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	pathpkg "path"
	"path/filepath"
	"strconv"

	"emuprof/cpu"
	"emuprof/loader"
	"emuprof/sched"
	"emuprof/syscalls"
	"emuprof/trace"
)

// execve and execveat replace the image of the calling process in place:
// same pid, same kernel state (fds without O_CLOEXEC, cwd, signal mask),
// a fresh address space in the same engine, fresh registers. The analyses
// keep running across the exec: the new image's symbols are added to the
// symbol table (an object overlapping an old one replaces it), and code at
// reused addresses is retranslated under new block ids, so a profile covers
// the process before and after the exec, each block named by the image it
// belonged to.

const (
	atEmptyPath       = 0x1000
	atSymlinkNofollow = 0x100
	atFDCWD           = -100

	// maxArgStrlen and maxArgBytes bound execve's strings (MAX_ARG_STRLEN,
	// and a quarter of the default 8 MB stack limit for them all).
	maxArgStrlen = 32 * 4096
	maxArgBytes  = 2 << 20
	maxArgs      = 0x7fffffff
)

// readStrings reads a NULL-terminated array of string pointers (argv, envp).
func (p *Process) readStrings(addr uint64) ([]string, syscalls.Errno) {
	var out []string
	if addr == 0 {
		return nil, 0 // Linux takes a NULL argv or envp as empty
	}
	total := 0
	for i := uint64(0); ; i++ {
		var b [8]byte
		if err := p.cpu.ReadMem(addr+8*i, b[:]); err != nil {
			return nil, syscalls.EFAULT
		}
		ptr := binary.LittleEndian.Uint64(b[:])
		if ptr == 0 {
			return out, 0
		}
		s, e := p.kernel.ReadString(ptr, maxArgStrlen-1, syscalls.E2BIG)
		if e != 0 {
			return nil, e
		}
		if total += len(s) + 1 + 8; total > maxArgBytes || len(out) >= maxArgs {
			return nil, syscalls.E2BIG
		}
		out = append(out, s)
	}
}

// execve replaces the process's image with the program at path (relative
// to dirfd), run with argv and envp read from guest memory. Failures before
// the point of no return are errnos to the caller, as on Linux.
func (p *Process) execve(t *sched.Thread, r *cpu.Regs, dirfd int, pathAddr, argvAddr, envpAddr uint64, flags int) syscalls.Outcome {
	path, e := p.kernel.ReadPath(pathAddr)
	if e != 0 {
		return ret(e.Ret())
	}
	argv, en := p.readStrings(argvAddr)
	if en != 0 {
		return ret(en.Ret())
	}
	envp, en := p.readStrings(envpAddr)
	if en != 0 {
		return ret(en.Ret())
	}
	host, e := p.kernel.ExecTarget(dirfd, path, flags&atEmptyPath != 0, flags&atSymlinkNofollow == 0)
	if e != 0 {
		return ret(e.Ret())
	}
	// #! scripts, as binfmt_script: the interpreter resolves in the
	// guest's file system.
	named := path
	execFn := path
	for depth := 0; ; depth++ {
		head, err := loader.ReadScriptHead(host)
		if err != nil {
			return ret(syscalls.EACCES.Ret())
		}
		interp, arg, ok, err := loader.ParseScript(head)
		if !ok {
			break
		}
		if err != nil {
			return ret(syscalls.ENOEXEC.Ret())
		}
		if depth >= loader.MaxScriptDepth {
			return ret(syscalls.ELOOP.Ret())
		}
		ihost, e := p.kernel.ExecTarget(atFDCWD, interp, false, true)
		if e != 0 {
			return ret(e.Ret())
		}
		argv = loader.ScriptArgs(interp, arg, named, argv)
		named, host = interp, ihost
	}
	exe, err := loader.Open(host)
	if err != nil {
		return p.execFailed(t, err)
	}
	var interp *loader.Object
	if exe.Interp != "" {
		ipath, err := loader.ResolveInterp(host, exe.Interp, p.cfg.Sysroot)
		if errors.Is(err, fs.ErrPermission) {
			return ret(syscalls.EACCES.Ret()) // open_exec of the interpreter
		}
		if err != nil {
			return ret(syscalls.ENOENT.Ret()) // as Linux says for a missing PT_INTERP
		}
		if interp, err = loader.Open(ipath); err != nil {
			return p.execFailed(t, err)
		}
	}
	layout, err := loader.Plan(exe, interp)
	if err != nil {
		return p.execFailed(t, err)
	}

	// The point of no return: the other threads end, the image goes.
	for _, tid := range p.tids() {
		if th := p.sched.Thread(tid); th != t && th.State != sched.Exited {
			th.ExitStatus = 0
			p.sched.Exit(th)
		}
	}
	// A followed image ends here: its profile is written as it execs.
	p.followExec(t, trace.KindThreadExit)
	p.endImage("")
	comm := pathpkg.Base(path)
	if path == "" {
		comm = strconv.Itoa(dirfd) // execveat(fd, "", AT_EMPTY_PATH): /dev/fd/N
	}
	p.kernel.Exec(t.Tid, host, comm)
	for _, v := range p.as.VMAs() {
		if err := p.as.Unmap(v.Start, v.Size()); err != nil {
			return syscalls.Outcome{Err: fmt.Errorf("execve: unmapping %#x: %w", v.Start, err)}
		}
	}
	p.cfg.Program = host
	p.layout = layout
	p.setText()
	var random [16]byte
	p.kernel.Random(random[:])
	if err := p.loadImage(argv, envp, execFn, random); err != nil {
		if bad := (*loader.BadInputError)(nil); errors.As(err, &bad) && bad.Killed != 0 {
			return p.execFailed(t, err) // the old image is gone: the process dies
		}
		return syscalls.Outcome{Err: fmt.Errorf("execve %s: %w", host, err)}
	}
	if err := p.cpu.ReadRegs(r); err != nil {
		return syscalls.Outcome{Err: err}
	}
	if p.digest != nil {
		p.hash(0xe7ec, uint64(t.Tid), p.layout.Entry)
	}
	p.execs++
	p.cfg.Args = argv
	p.name = filepath.Base(execFn)
	p.startImage()
	p.followExec(t, trace.KindThreadStart)
	p.releaseVfork()
	p.sharedVM, p.borrows = false, false
	return ret(0)
}

// execFailed is execve's answer to a program the loader cannot load:
// ENOEXEC, or, for one Linux takes and then fails to map (past the point
// of no return), the death of the calling process by SIGSEGV before it
// runs another instruction.
func (p *Process) execFailed(t *sched.Thread, err error) syscalls.Outcome {
	if bad := (*loader.BadInputError)(nil); errors.As(err, &bad) && bad.Killed != 0 {
		p.doom(p, bad.Killed, t.Clock)
		return ret(0)
	}
	return ret(syscalls.ENOEXEC.Ret())
}
