package loader

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// Scripts: a file that starts with "#!" runs its interpreter, as Linux's
// binfmt_script does.

// ScriptBufSize is how much of a file the kernel reads to find the #! line
// (BINPRM_BUF_SIZE).
const ScriptBufSize = 256

// MaxScriptDepth is how many scripts one exec may go through: fs/exec.c's
// exec_binprm runs binary handlers at depths 0..5 and fails with ELOOP past
// that, so a chain of 5 scripts ending at an ELF runs and 6 do not.
const MaxScriptDepth = 5

// ErrNoInterpreter says a #! line names no interpreter, or one that does
// not fit in the kernel's buffer (Linux: ENOEXEC).
var ErrNoInterpreter = errors.New("#! line names no interpreter")

// ParseScript reads the #! line at the start of head (the first
// ScriptBufSize bytes of a file). ok is false when head does not start with
// "#!". Following binfmt_script: blanks after "#!" are skipped, the
// interpreter ends at the first blank, and everything after the blanks
// that follow it, up to the end of the line without its trailing blanks, is
// one optional argument (blanks included). A line longer than the buffer is
// cut at the buffer's end, unless the interpreter's name itself would be
// cut (ErrNoInterpreter).
func ParseScript(head []byte) (interp, arg string, ok bool, err error) {
	if !bytes.HasPrefix(head, []byte("#!")) {
		return "", "", false, nil
	}
	if len(head) > ScriptBufSize {
		head = head[:ScriptBufSize]
	}
	blank := func(c byte) bool { return c == ' ' || c == '\t' }
	line := head[2:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	} else if len(head) == ScriptBufSize {
		// fs/binfmt_script.c: without a newline the line ends before the
		// buffer's last byte, and the interpreter's name must be followed
		// by a blank or NUL in it, else it may be cut (ENOEXEC).
		line = head[2 : ScriptBufSize-1]
		k := 0
		for k < len(line) && blank(line[k]) {
			k++
		}
		if k == len(line) || bytes.IndexFunc(line[k:], func(r rune) bool { return r == ' ' || r == '\t' || r == 0 }) < 0 {
			return "", "", true, ErrNoInterpreter
		}
	}
	// A NUL ends the line too (the kernel works on C strings).
	if i := bytes.IndexByte(line, 0); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimRightFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
	i := 0
	for i < len(line) && blank(line[i]) {
		i++
	}
	j := i
	for j < len(line) && !blank(line[j]) {
		j++
	}
	if i == j {
		return "", "", true, ErrNoInterpreter
	}
	interp = string(line[i:j])
	for j < len(line) && blank(line[j]) {
		j++
	}
	return interp, string(line[j:]), true, nil
}

// ReadScriptHead returns the first ScriptBufSize bytes of the file at path.
func ReadScriptHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, ScriptBufSize)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	return buf[:n], nil
}

// ScriptArgs is the argument vector of a script's interpreter: the
// interpreter as the #! line names it, its optional argument, the path the
// script was run by, then the original arguments after argv[0].
func ScriptArgs(interp, arg, script string, args []string) []string {
	out := []string{interp}
	if arg != "" {
		out = append(out, arg)
	}
	out = append(out, script)
	if len(args) > 1 {
		out = append(out, args[1:]...)
	}
	return out
}

// ResolveProgram follows the #! lines of the program at host path prog,
// run with args: it returns the host path of the ELF file to load and the
// arguments it gets (prog and args unchanged when prog is not a script).
// Interpreters resolve inside sysroot, relative ones from the host's
// working directory. Errors are one line naming the program.
func ResolveProgram(prog string, args []string, sysroot string) (string, []string, error) {
	if sysroot == "" {
		sysroot = "/"
	}
	name, as := prog, prog
	for depth := 0; ; depth++ {
		if err := CheckExec(prog); err != nil { // execve: EACCES
			return "", nil, err
		}
		head, err := ReadScriptHead(prog)
		if err != nil {
			return "", nil, fileError(prog, err)
		}
		interp, arg, ok, err := ParseScript(head)
		if !ok {
			return prog, args, nil
		}
		if err != nil {
			return "", nil, badInput(name, "%v", err)
		}
		if depth >= MaxScriptDepth {
			return "", nil, badInput(name, "too many levels of #! interpreters")
		}
		host := interp
		if filepath.IsAbs(interp) {
			if host, err = resolveIn(sysroot, interp); err != nil {
				return "", nil, badInput(name, "interpreter %s not found in sysroot %s", interp, sysroot)
			}
		}
		if fi, err := os.Stat(host); err != nil {
			return "", nil, badInput(name, "interpreter %s not found in sysroot %s", interp, sysroot)
		} else if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			return "", nil, badInput(name, "interpreter %s is not an executable file", interp)
		}
		args = ScriptArgs(interp, arg, as, args)
		prog, as = host, interp
	}
}
