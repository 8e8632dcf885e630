package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// annotateIr is the Ir column of callgrind_annotate's line ending in
// suffix (commas dropped).
func annotateIr(t *testing.T, out, suffix string) uint64 {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(strings.TrimSpace(l), suffix) {
			f := strings.Fields(l)
			n, err := strconv.ParseUint(strings.ReplaceAll(f[0], ",", ""), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	t.Fatalf("callgrind_annotate: no line ending in %q:\n%.3000s", suffix, out)
	return 0
}

// TestCallgrindAnnotate: callgrind_annotate (valgrind's) reads the
// callgrind.out.<pid> of a run: its total is --stats' instruction count,
// str_tolower's inclusive cost is the parallel analysis's inclusive work
// of that context (one thread, 1 ns an instruction under --time-model
// insns: the same instructions,
// counted by another analysis), and --auto=yes annotates the guest's
// source with the exact count of the strlen loop's calls; on every build
// of the guest (static glibc and musl, dynamic, static-pie).
func TestCallgrindAnnotate(t *testing.T) {
	for _, variant := range variants {
		t.Run(variant, func(t *testing.T) {
			prog := guestBin(t, variant, "tolower")
			total, _ := statsInsns(t, prog)
			want := uint64(total)
			dir := t.TempDir()
			o := run(t, nil, dir, emuprofBin, "profile", "--analyses", "parallel", "--callgrind", "--time-model", "insns", "--clear-env", "--out", dir, "--", prog)
			if o.code != 0 {
				t.Fatalf("profile: exit %d: %s", o.code, o.stderr)
			}
			cg := filepath.Join(dir, "callgrind.out.1000")
			a := run(t, nil, dir, "callgrind_annotate", "--inclusive=yes", cg)
			if a.code != 0 || strings.Contains(a.stderr, "WARNING") {
				t.Fatalf("callgrind_annotate: exit %d: %s", a.code, a.stderr)
			}
			if got := annotateIr(t, a.stdout, "PROGRAM TOTALS"); got != want {
				t.Errorf("callgrind_annotate's total %d instructions, --stats %d", got, want)
			}
			var par struct {
				Contexts []struct {
					Routine string `json:"routine"`
					Total   struct {
						Work uint64 `json:"work"`
					} `json:"total"`
				} `json:"contexts"`
			}
			data, err := os.ReadFile(filepath.Join(dir, "tolower_parallel.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &par); err != nil {
				t.Fatal(err)
			}
			var work uint64
			for _, c := range par.Contexts {
				if c.Routine == "str_tolower" {
					work += c.Total.Work
				}
			}
			if got := annotateIr(t, a.stdout, "tolower.c:str_tolower ["+prog+"]"); work == 0 || got != work {
				t.Errorf("str_tolower inclusive: callgrind %d instructions, parallel's work %d ns", got, work)
			}
			// The speedscope file has every instruction, per calling context.
			var ss struct {
				Profiles []struct {
					Name    string   `json:"name"`
					Weights []uint64 `json:"weights"`
				} `json:"profiles"`
			}
			data, err = os.ReadFile(filepath.Join(dir, "tolower_callgrind.speedscope.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &ss); err != nil {
				t.Fatal(err)
			}
			var sum uint64
			for _, w := range ss.Profiles[0].Weights {
				sum += w
			}
			if len(ss.Profiles) != 1 || ss.Profiles[0].Name != "instructions" || sum != want {
				t.Errorf("speedscope: %d profiles, %d instructions; want 1, %d", len(ss.Profiles), sum, want)
			}
			// At link-time addresses, as callgrind writes them (PIE and
			// libraries too): objdump's.
			checkEveryInstruction(t, prog, cg, "wf_tolower")
			auto := run(t, nil, dir, "callgrind_annotate", "--auto=yes", cg)
			if !regexp.MustCompile(`-- Auto-annotated source: \S*testdata/src/tolower.c`).MatchString(auto.stdout) {
				t.Fatalf("callgrind_annotate --auto=yes annotates no tolower.c:\n%.3000s", auto.stdout)
			}
			// The loop condition calls strlen 73,600 times: once per
			// character (73,550) and once more per word (50).
			if !regexp.MustCompile(`\(73,600x\)`).MatchString(auto.stdout) ||
				!regexp.MustCompile(`[0-9,]+ \([ 0-9.]+%\) +[0-9,]+ \([ 0-9.]+%\) +\tfor \(i = 0; i < strlen\(s\); i\+\+\)`).MatchString(auto.stdout) {
				t.Errorf("the strlen loop is not annotated with its counts and 73,600 calls:\n%.6000s", auto.stdout)
			}
		})
	}
}

// checkEveryInstruction checks that the callgrind file has a cost line at
// every instruction of fn (a routine without branches, so all run) but
// its padding, as objdump lists them: per instruction address, not per
// block or line.
func checkEveryInstruction(t *testing.T, prog, cg, fn string) {
	t.Helper()
	dis := run(t, nil, t.TempDir(), "objdump", "-d", "--no-show-raw-insn", prog)
	_, body, ok := strings.Cut(dis.stdout, "<"+fn+">:\n")
	if !ok {
		t.Fatalf("objdump: no %s", fn)
	}
	var want []string
	for _, l := range strings.Split(body, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || !strings.HasSuffix(f[0], ":") {
			break
		}
		if !strings.HasPrefix(f[1], "nop") && f[1] != "xchg" {
			want = append(want, "0x"+strings.TrimSuffix(f[0], ":"))
		}
	}
	data, err := os.ReadFile(cg)
	if err != nil {
		t.Fatal(err)
	}
	// Names are compressed: "(id) name" once (on an fn= or cfn= line),
	// "(id)" after.
	m := regexp.MustCompile(`(?m)^c?fn=\((\d+)\) ` + fn + `$`).FindStringSubmatch(string(data))
	if m == nil {
		t.Fatalf("%s: no function %s", cg, fn)
	}
	head := regexp.MustCompile(`(?m)^fn=\(` + m[1] + `\)( ` + fn + `)?\n`).FindStringIndex(string(data))
	if head == nil {
		t.Fatalf("%s: no fn= line of %s", cg, fn)
	}
	sec := string(data)[head[1]:]
	sec, _, _ = strings.Cut(sec, "\n\n")
	have := map[string]bool{}
	for _, l := range strings.Split(sec, "\n") {
		have[strings.Fields(l + " x")[0]] = true
	}
	if len(want) < 3 {
		t.Fatalf("objdump lists %d instructions of %s", len(want), fn)
	}
	for _, a := range want {
		if !have[a] {
			t.Errorf("%s has no cost line at %s's instruction %s (lines %q)", filepath.Base(cg), fn, a, sec)
		}
	}
}
