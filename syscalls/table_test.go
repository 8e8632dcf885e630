package syscalls

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// unistdHeader is linux-libc-dev's list of the x86-64 system calls, the
// independent oracle for the table's numbers and names.
const unistdHeader = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"

// linuxNames parses the #define __NR_<name> <nr> lines of a unistd_64.h.
func linuxNames(path string) (map[int]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names := map[int]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || fields[0] != "#define" || !strings.HasPrefix(fields[1], "__NR_") {
			continue
		}
		nr, err := strconv.Atoi(fields[2])
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, sc.Text(), err)
		}
		if prev, dup := names[nr]; dup {
			return nil, fmt.Errorf("%s: %d is both %s and %s", path, nr, prev, fields[1][5:])
		}
		names[nr] = fields[1][5:]
	}
	return names, sc.Err()
}

// tableProblems checks declared table entries against linux, the names
// Linux gives its numbers: each number is declared once; a number Linux
// defines has its Linux name, and each of them is declared; a number it
// does not define is a newer kernel's call, which continues a run of
// numbers (every number from the last one linux defines below it is
// declared); each entry is consistent with its support level.
func tableProblems(declared []entry, linux map[int]string) []string {
	var bad []string
	last := 0
	for nr := range linux {
		last = max(last, nr)
	}
	numbers := map[int]bool{}
	for _, e := range declared {
		numbers[e.Nr] = true
	}
	continues := func(nr int) bool {
		for n := nr - 1; n >= 0; n-- {
			if !numbers[n] {
				return false
			}
			if linux[n] != "" {
				return true
			}
		}
		return false
	}
	first := map[int]int{} // number -> index of its first declaration
	names := map[string]int{}
	for i, e := range declared {
		if name, defined := linux[e.Nr]; defined && e.Name != name {
			bad = append(bad, fmt.Sprintf("entry %d: %d named %q, Linux calls it %q", i, e.Nr, e.Name, name))
		} else if !defined && (e.Name == "" || !continues(e.Nr)) {
			bad = append(bad, fmt.Sprintf("entry %d: %d is not a Linux system call number", i, e.Nr))
		}
		if j, dup := first[e.Nr]; dup {
			bad = append(bad, fmt.Sprintf("entries %d and %d: both declare %d (%s); only the last would be kept", j, i, e.Nr, e.Name))
		} else {
			first[e.Nr] = i
		}
		if nr, dup := names[e.Name]; dup && nr != e.Nr {
			bad = append(bad, fmt.Sprintf("entry %d: %d and %d are both %q", i, nr, e.Nr, e.Name))
		}
		names[e.Name] = e.Nr
		switch {
		case e.Support == Partial && e.Note == "":
			bad = append(bad, fmt.Sprintf("%s: partial without a note", e.Name))
		case e.Support == Refused && (e.Errno == 0 || e.fn != nil):
			bad = append(bad, fmt.Sprintf("%s: refused needs an errno and no handler (errno %d, handler %v)", e.Name, e.Errno, e.fn != nil))
		case e.Support == Unsupported && (e.fn != nil || e.Note == ""):
			bad = append(bad, fmt.Sprintf("%s: unsupported with a handler or without a note", e.Name))
		case (e.Support == Full || e.Support == Partial) && e.fn == nil:
			bad = append(bad, fmt.Sprintf("%s: %s without a handler", e.Name, e.Support))
		}
	}
	for nr := 0; nr <= last; nr++ {
		if _, declared := first[nr]; !declared && linux[nr] != "" {
			bad = append(bad, fmt.Sprintf("%d (%s) is not in the table", nr, linux[nr]))
		}
	}
	return bad
}

// The table names every x86-64 system call as Linux does.
func TestTable(t *testing.T) {
	linux, err := linuxNames(unistdHeader)
	if err != nil {
		t.Fatalf("the oracle (linux-libc-dev, installed with gcc): %v", err)
	}
	if len(linux) < 300 || linux[0] != "read" || linux[202] != "futex" {
		t.Fatalf("%s: %d names, 0 %q, 202 %q: not the x86-64 list", unistdHeader, len(linux), linux[0], linux[202])
	}
	declared := declareTable()
	for _, p := range tableProblems(declared, linux) {
		t.Error(p)
	}
	// Table() is what `emuprof syscalls` prints: every declared number
	// once, in increasing order.
	tab := Table()
	for i := 1; i < len(tab); i++ {
		if tab[i-1].Nr >= tab[i].Nr {
			t.Errorf("Table(): %d (%s) listed before %d (%s)", tab[i-1].Nr, tab[i-1].Name, tab[i].Nr, tab[i].Name)
		}
	}
	if len(tab) != len(declared) {
		t.Errorf("Table() lists %d calls, %d are declared", len(tab), len(declared))
	}
	for nr, name := range linux {
		if got := Name(uint64(nr)); got != name {
			t.Errorf("Name(%d) = %q, Linux calls it %q", nr, got, name)
		}
	}
	byName := map[string]Entry{}
	for _, e := range tab {
		byName[e.Name] = e
	}
	if e := byName["rseq"]; e.Support != Refused || e.Errno != eNOSYS {
		t.Errorf("rseq entry %+v", e)
	}
	if e := byName["shmget"]; e.Support != Unsupported {
		t.Errorf("shmget entry %+v", e)
	}
}

// The table check finds each kind of mistake.
func TestTableProblems(t *testing.T) {
	linux := map[int]string{0: "read", 1: "write", 39: "getpid", 41: "socket", 60: "exit"}
	ok := func(nr int) entry { return entry{Entry: Entry{Nr: nr, Name: linux[nr], Support: Full}, fn: sysGetpid} }
	good := []entry{ok(0), ok(39), ok(1), ok(41), ok(60)}
	with := func(extra ...entry) []entry { return append(append([]entry{}, good...), extra...) }
	drop := func(nr int) []entry {
		var out []entry
		for _, e := range good {
			if e.Nr != nr {
				out = append(out, e)
			}
		}
		return out
	}
	replace := func(e entry) []entry { return append(drop(e.Nr), e) }
	for _, c := range []struct {
		what  string
		table []entry
		want  string
	}{
		{"a number declared twice", with(ok(39)), "entries 1 and 5: both declare 39 (getpid)"},
		{"a number Linux does not define", with(entry{Entry: Entry{Nr: 30, Name: "shmat", Support: Unsupported, Note: "n"}}), "30 is not a Linux system call number"},
		{"a number without a name", with(entry{Entry: Entry{Nr: 61, Support: Unsupported, Note: "n"}}), "61 is not a Linux system call number"},
		{"a wrong name", replace(entry{Entry: Entry{Nr: 1, Name: "wirte", Support: Full}, fn: sysWrite}), `1 named "wirte", Linux calls it "write"`},
		{"a name given twice", with(entry{Entry: Entry{Nr: 61, Name: "read", Support: Unsupported, Note: "n"}}), `0 and 61 are both "read"`},
		{"a number Linux defines left out", drop(60), "60 (exit) is not in the table"},
		{"a partial call without a note", replace(entry{Entry: Entry{Nr: 0, Name: "read", Support: Partial}, fn: sysRead}), "read: partial without a note"},
		{"a refused call without an errno", replace(entry{Entry: Entry{Nr: 41, Name: "socket", Support: Refused}}), "socket: refused"},
		{"a call without a handler", replace(entry{Entry: Entry{Nr: 0, Name: "read", Support: Full}}), "read: full without a handler"},
		{"an unsupported call without a note", replace(entry{Entry: Entry{Nr: 0, Name: "read", Support: Unsupported}}), "read: unsupported with a handler or without a note"},
		{"an unsupported call with a handler", replace(entry{Entry: Entry{Nr: 0, Name: "read", Support: Unsupported, Note: "n"}, fn: sysRead}), "read: unsupported with a handler or without a note"},
	} {
		got := tableProblems(c.table, linux)
		if len(got) != 1 || !strings.Contains(got[0], c.want) {
			t.Errorf("%s: problems %q, want one with %q", c.what, got, c.want)
		}
	}
	newer := func(nr int, name string) entry {
		return entry{Entry: Entry{Nr: nr, Name: name, Support: Unsupported, Note: "n"}}
	}
	if got := tableProblems(with(newer(61, "wait4"), newer(62, "kill")), linux); len(got) != 0 {
		t.Errorf("a good table, with a call newer than the oracle: %q", got)
	}
}

// A call that needs the runtime stops a kernel that has none with one
// clear error, naming the call.
func TestTaskCallWithoutRuntime(t *testing.T) {
	h := newHarness(t, Config{})
	out := h.k.Do(&Call{Nr: NrFutex})
	if out.Err == nil || !strings.Contains(out.Err.Error(), "futex") || !strings.Contains(out.Err.Error(), "runtime") {
		t.Errorf("futex without a runtime: %+v", out)
	}
}

// The exported numbers are Linux's.
func TestNumbers(t *testing.T) {
	linux, err := linuxNames(unistdHeader)
	if err != nil {
		t.Fatalf("the oracle: %v", err)
	}
	for nr, name := range map[int]string{NrRtSigreturn: "rt_sigreturn", NrPause: "pause", NrNanosleep: "nanosleep",
		NrRtSigtimedwait: "rt_sigtimedwait", NrRtSigsuspend: "rt_sigsuspend", NrFutex: "futex", NrClockNanosleep: "clock_nanosleep"} {
		if linux[nr] != name {
			t.Errorf("%d is %q, Linux calls %s %q", nr, linux[nr], name, linux[nr])
		}
	}
}
