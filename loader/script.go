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

// MaxScriptDepth is how many scripts a chain of #! interpreters may hold:
// exec_binprm tries at most six binary handlers (depth 0 to 5), the last
// of which must load an ELF file, so five scripts run and a sixth is ELOOP.
const MaxScriptDepth = 5

// ErrNoInterpreter says a #! line names no interpreter, or one that does
// not fit in the kernel's buffer (Linux: ENOEXEC).
var ErrNoInterpreter = errors.New("#! line names no interpreter")

// ParseScript reads the #! line at the start of head (the first
// ScriptBufSize bytes of a file), as Linux's load_script does. ok is false
// when head does not start with "#!". The kernel's buffer is
// ScriptBufSize bytes, zero past the end of the file, and its last byte is
// the string's terminator: a line with no newline in the buffer ends
// there, unless no blank or NUL follows its first non-blank character (the
// interpreter's name could be cut: ErrNoInterpreter). Trailing blanks are
// cut; the interpreter ends at the first blank or NUL, and what follows
// the blanks after it, up to the end or a NUL, is one optional argument
// (blanks included).
func ParseScript(head []byte) (interp, arg string, ok bool, err error) {
	if !bytes.HasPrefix(head, []byte("#!")) {
		return "", "", false, nil
	}
	var buf [ScriptBufSize]byte
	copy(buf[:], head)
	bufEnd := ScriptBufSize - 1
	blank := func(c byte) bool { return c == ' ' || c == '\t' }
	nonBlank := func(i, end int) int { // next_non_spacetab
		for ; i < end; i++ {
			if !blank(buf[i]) {
				return i
			}
		}
		return -1
	}
	terminator := func(i, end int) int { // next_terminator
		for ; i < end; i++ {
			if blank(buf[i]) || buf[i] == 0 {
				return i
			}
		}
		return -1
	}
	end := bytes.IndexByte(buf[:], '\n')
	if end < 0 {
		i := nonBlank(2, bufEnd)
		if i < 0 || terminator(i, bufEnd) < 0 {
			return "", "", true, ErrNoInterpreter
		}
		end = bufEnd
	}
	for end > 2 && blank(buf[end-1]) {
		end--
	}
	name := nonBlank(2, end)
	if name < 0 {
		return "", "", true, ErrNoInterpreter
	}
	cstr := func(b []byte) string {
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		return string(b)
	}
	sep := terminator(name, end)
	if sep < 0 {
		return cstr(buf[name:end]), "", true, nil
	}
	interp = string(buf[name:sep])
	if buf[sep] != 0 {
		if a := nonBlank(sep, end); a >= 0 {
			arg = cstr(buf[a:end])
		}
	}
	return interp, arg, true, nil
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
