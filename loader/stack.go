package loader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// StackSpec describes the initial process stack.
type StackSpec struct {
	Top                  uint64 // highest address (exclusive), e.g. 0x7ffffffff000
	Args, Env            []string
	ExecFn               string // AT_EXECFN
	Random               [16]byte
	Uid, Gid, Euid, Egid uint64
	Secure               bool
	HWCap                uint64 // e.g. 0x178bfbff
	Layout               *Layout
}

// Auxiliary vector keys (include/uapi/linux/auxvec.h).
const (
	atNull     = 0
	atPhdr     = 3
	atPhent    = 4
	atPhnum    = 5
	atPagesz   = 6
	atBase     = 7
	atFlags    = 8
	atEntry    = 9
	atUID      = 11
	atEUID     = 12
	atGID      = 13
	atEGID     = 14
	atPlatform = 15
	atHWCap    = 16
	atClkTck   = 17
	atSecure   = 23
	atRandom   = 25
	atHWCap2   = 26
	atExecFn   = 31
)

// Linux's limits on exec arguments: MAX_ARG_STRLEN, and a quarter of the
// default 8 MiB stack for strings and pointers together.
const (
	maxArgLen   = 32 * PageSize
	maxArgTotal = 2 << 20
)

// BuildStack returns the bytes to write at [sp, s.Top) and the initial rsp,
// laid out as Linux's exec and create_elf_tables do. From the top: a null
// pointer, the execfn string, the envp strings, the argv strings; then,
// 16-byte aligned, the platform string "x86_64" and the 16 AT_RANDOM bytes;
// below them auxv, the envp and argv arrays (NULL-terminated) and argc at rsp,
// which is 16-byte aligned. There is no vDSO, so no AT_SYSINFO_EHDR.
func BuildStack(s StackSpec) (data []byte, sp uint64, err error) {
	if s.Layout == nil {
		return nil, 0, errors.New("initial stack: no layout")
	}
	total := len(s.ExecFn) + 1
	for _, list := range [][]string{s.Args, s.Env} {
		for _, a := range list {
			if strings.IndexByte(a, 0) >= 0 {
				return nil, 0, fmt.Errorf("initial stack: argument or environment string %q contains a NUL byte", a)
			}
			if len(a)+1 > maxArgLen {
				return nil, 0, fmt.Errorf("initial stack: argument list too long (a string of %d bytes)", len(a))
			}
			total += len(a) + 1 + 8
		}
	}
	if total > maxArgTotal {
		return nil, 0, fmt.Errorf("initial stack: argument list too long (%d bytes)", total)
	}
	if s.Top%16 != 0 || s.Top < uint64(total)+512 {
		return nil, 0, fmt.Errorf("initial stack: bad top address %#x", s.Top)
	}

	p := s.Top - 8
	push := func(str string) uint64 {
		p -= uint64(len(str)) + 1
		return p
	}
	execFn := push(s.ExecFn)
	envp := make([]uint64, len(s.Env))
	for i := len(s.Env) - 1; i >= 0; i-- {
		envp[i] = push(s.Env[i])
	}
	argv := make([]uint64, len(s.Args))
	for i := len(s.Args) - 1; i >= 0; i-- {
		argv[i] = push(s.Args[i])
	}
	p &^= 15
	platform := push("x86_64")
	p -= 16
	random := p

	l := s.Layout
	secure := uint64(0)
	if s.Secure {
		secure = 1
	}
	auxv := [...][2]uint64{
		{atHWCap, s.HWCap},
		{atPagesz, PageSize},
		{atClkTck, 100},
		{atPhdr, l.Phdr},
		{atPhent, l.Phent},
		{atPhnum, l.Phnum},
		{atBase, l.InterpBase},
		{atFlags, 0},
		{atEntry, l.ExeEntry},
		{atUID, s.Uid},
		{atEUID, s.Euid},
		{atGID, s.Gid},
		{atEGID, s.Egid},
		{atSecure, secure},
		{atRandom, random},
		{atHWCap2, 0},
		{atExecFn, execFn},
		{atPlatform, platform},
		{atNull, 0},
	}
	words := uint64(len(argv)+1+len(envp)+1+1) + 2*uint64(len(auxv))
	sp = (p - 8*words) &^ 15

	data = make([]byte, s.Top-sp)
	put := func(addr uint64, str string) { copy(data[addr-sp:], str) } // NUL from make
	put(execFn, s.ExecFn)
	for i, a := range s.Env {
		put(envp[i], a)
	}
	for i, a := range s.Args {
		put(argv[i], a)
	}
	put(platform, "x86_64")
	copy(data[random-sp:], s.Random[:])

	w := data[:0] // argc, argv, NULL, envp, NULL, auxv, from sp upwards
	w = binary.LittleEndian.AppendUint64(w, uint64(len(argv)))
	for _, a := range argv {
		w = binary.LittleEndian.AppendUint64(w, a)
	}
	w = binary.LittleEndian.AppendUint64(w, 0)
	for _, e := range envp {
		w = binary.LittleEndian.AppendUint64(w, e)
	}
	w = binary.LittleEndian.AppendUint64(w, 0)
	for _, kv := range auxv {
		w = binary.LittleEndian.AppendUint64(w, kv[0])
		w = binary.LittleEndian.AppendUint64(w, kv[1])
	}
	return data, sp, nil
}
