package guest

import (
	"fmt"

	"emuprof/cpu"
	"emuprof/loader"
	"emuprof/mm"
)

// planImage opens the ELF program at host path prog and its interpreter
// (resolved in sysroot) and lays them out. syms, if not nil, gives the
// files: an analysis may have read the program already, to check its
// progress points.
func planImage(syms *loader.SymbolTable, prog, sysroot string) (*loader.Layout, error) {
	open := loader.Open
	if syms != nil {
		open = syms.Open
	}
	exe, err := open(prog)
	if err != nil {
		return nil, err
	}
	var interp *loader.Object
	if exe.Interp != "" {
		ipath, err := loader.ResolveInterp(prog, exe.Interp, sysroot)
		if err != nil {
			return nil, err
		}
		if interp, err = open(ipath); err != nil {
			return nil, err
		}
	}
	return loader.Plan(exe, interp)
}

// loadImage maps p.layout into the (empty) address space, adds its symbols,
// sets the program break, builds the initial stack and sets the registers
// of the thread that starts the program.
func (p *Process) loadImage(args, env []string, execFn string, random [16]byte) error {
	for _, m := range p.layout.Mappings {
		prot := mm.Prot(m.Prot)
		if len(m.Data) > 0 && prot == 0 {
			// A PROT_NONE segment still holds its file's bytes (Linux maps
			// the file): mapped readable to load them, then protected.
			prot = mm.ProtRead
		}
		if err := p.as.MapFixed(m.Addr, m.Size, prot, m.Name, m.FileOff); err != nil {
			// Past execve's point of no return: Linux kills the process.
			return &loader.BadInputError{Path: p.cfg.Program, Reason: fmt.Sprintf("mapping segment at %#x: %v", m.Addr, err), Killed: 11}
		}
		if len(m.Data) > 0 {
			// Write through the CPU: segments may be read-only to the guest.
			if err := p.cpu.WriteMem(m.Addr+m.DataOff, m.Data); err != nil {
				return fmt.Errorf("%s: loading segment at %#x: %w", p.cfg.Program, m.Addr, err)
			}
		}
		if prot != mm.Prot(m.Prot) {
			if err := p.as.Protect(m.Addr, m.Size, mm.Prot(m.Prot)); err != nil {
				return fmt.Errorf("%s: protecting segment at %#x: %w", p.cfg.Program, m.Addr, err)
			}
		}
	}
	for _, r := range p.layout.PastEOF {
		// File pages past the end of the file: SIGBUS when touched.
		if err := p.as.SetFileEnd(r[0], r[1], r[0]); err != nil {
			return fmt.Errorf("%s: segment pages at %#x: %w", p.cfg.Program, r[0], err)
		}
	}
	if err := p.syms.AddLayout(p.layout); err != nil {
		return err
	}
	p.as.SetBrk(p.layout.BrkStart)
	if err := p.as.MapFixed(stackTop-stackSize, stackSize, mm.ProtRead|mm.ProtWrite, "[stack]", 0); err != nil {
		return fmt.Errorf("mapping the stack: %w", err)
	}
	uid, euid, gid, egid := p.cfg.Uid, p.cfg.Uid, p.cfg.Gid, p.cfg.Gid
	if p.kernel != nil { // an exec (the first image's kernel comes next: Load)
		p.kernel.SetCmdline(args)
		uid, euid, gid, egid = p.kernel.IDs()
	}
	data, sp, err := loader.BuildStack(loader.StackSpec{
		Top: stackTop, Args: args, Env: env, ExecFn: execFn, Random: random,
		Uid: uint64(uid), Gid: uint64(gid), Euid: uint64(euid), Egid: uint64(egid),
		HWCap: 0x178bfbff, Layout: p.layout,
	})
	if err != nil {
		return fmt.Errorf("building the initial stack: %w", err)
	}
	if err := p.cpu.WriteMem(sp, data); err != nil {
		return fmt.Errorf("writing the initial stack: %w", err)
	}
	// Linux starts a program with every general register zero.
	regs := cpu.Regs{RSP: sp, RIP: p.layout.Entry, RFLAGS: 0x202}
	return p.cpu.WriteRegs(&regs)
}
