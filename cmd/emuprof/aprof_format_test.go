package main

// The .aprof files of `emuprof trms` checked without package trms's
// reader: the lines are split as aprof-plot's AprofReport reads them
// (aprof's report format, version 6, as aprof's valgrind/aprof/report.c
// writes it), and every tuple must satisfy what its fields mean. See
// docs/TESTING.md for the fields checked.

import (
	"fmt"
	"hash/crc32"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var aprofRoutine = regexp.MustCompile(`^r "([^"]+)" "([^"]+)" ([0-9]+)$`)

// checkAprofFile checks one report's syntax and invariants and returns its
// input metric and the number of tuples.
func checkAprofFile(t *testing.T, path string) (metric string, tuples int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if !strings.HasSuffix(text, "\n") {
		t.Fatalf("%s: does not end with a newline", path)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	bad := func(i int, f string, a ...any) {
		t.Helper()
		t.Errorf("%s:%d: %q: %s", filepath.Base(path), i+1, lines[i], fmt.Sprintf(f, a...))
	}
	num := func(s string) *big.Int {
		n, ok := new(big.Int).SetString(s, 10)
		if !ok || n.Sign() < 0 {
			t.Fatalf("%s: %q is not a non-negative integer", path, s)
		}
		return n
	}
	mul := func(a, b *big.Int) *big.Int { return new(big.Int).Mul(a, b) }
	header := map[string]string{}
	routines := map[string]bool{}
	contexts := map[string]bool{}
	lastRoutine := ""
	seen := map[string]bool{} // routine or context, input
	selfSum := new(big.Int)
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 {
			bad(i, "empty line")
			continue
		}
		switch tag := f[0]; tag {
		case "c":
		case "v", "k", "e", "m", "i", "t", "a", "f":
			if _, dup := header[tag]; dup {
				bad(i, "header line %s twice", tag)
			}
			header[tag] = strings.TrimSpace(l[1:])
		case "r":
			m := aprofRoutine.FindStringSubmatch(l)
			if m == nil {
				bad(i, "not r \"NAME\" \"OBJECT\" ID")
				continue
			}
			if routines[m[3]] {
				bad(i, "routine id %s twice", m[3])
			}
			routines[m[3]], lastRoutine = true, m[3]
		case "u":
			if len(f) < 3 || f[1] != lastRoutine {
				bad(i, "u line not after its routine's r line")
			}
		case "x": // context: routine, id, parent (-1: a root)
			if len(f) != 4 || !routines[f[1]] || contexts[f[2]] || f[3] != "-1" && !contexts[f[3]] {
				bad(i, "context of an unknown routine or parent, or twice")
			}
			contexts[f[2]] = true
		case "p", "q":
			// id input min max sum sqr calls real self minself maxself
			// sqrself, and for drms: rmssum rmssumsq (aprof: deprecated,
			// skipped by aprof-plot) ext thr extself thrself.
			want := map[string]int{"rms": 13, "drms": 19}[header["i"]]
			if len(f) != want {
				bad(i, "%d fields, want %d for input metric %q", len(f), want, header["i"])
				continue
			}
			if tag == "p" && f[1] != lastRoutine {
				bad(i, "tuple of routine %s listed under routine %s", f[1], lastRoutine)
			}
			if key := tag + f[1] + " " + f[2]; seen[key] {
				bad(i, "two tuples of one input size")
			} else {
				seen[key] = true
			}
			in, lo, hi, sum, sq, calls := num(f[2]), num(f[3]), num(f[4]), num(f[5]), num(f[6]), num(f[7])
			self, slo, shi, ssq := num(f[9]), num(f[10]), num(f[11]), num(f[12])
			num(f[8])
			selfSum.Add(selfSum, self)
			switch {
			case calls.Sign() == 0 || lo.Sign() == 0:
				bad(i, "no call, or a zero cost (aprof-plot skips the line)")
			case lo.Cmp(hi) > 0 || mul(lo, calls).Cmp(sum) > 0 || sum.Cmp(mul(hi, calls)) > 0:
				bad(i, "cumulative cost: not min·calls <= sum <= max·calls")
			case mul(sq, calls).Cmp(mul(sum, sum)) < 0 || sq.Cmp(mul(hi, sum)) > 0:
				bad(i, "cumulative sum of squares: not sum²/calls <= sqr <= max·sum")
			case slo.Cmp(shi) > 0 || mul(slo, calls).Cmp(self) > 0 || self.Cmp(mul(shi, calls)) > 0 || self.Cmp(sum) > 0 || shi.Cmp(hi) > 0:
				bad(i, "self cost: not min·calls <= self <= max·calls, or above the cumulative cost")
			case mul(ssq, calls).Cmp(mul(self, self)) < 0:
				bad(i, "self sum of squares below self²/calls")
			}
			if want == 19 {
				total := mul(in, calls) // the drms of the tuple's calls
				rms, rsq, ext, thr, extSelf, thrSelf := num(f[13]), num(f[14]), num(f[15]), num(f[16]), num(f[17]), num(f[18])
				induced := new(big.Int).Add(ext, thr)
				switch {
				case rms.Cmp(total) > 0:
					bad(i, "RMS sum above the DRMS of the calls (RMS <= DRMS)")
				case mul(rsq, calls).Cmp(mul(rms, rms)) < 0:
					bad(i, "RMS sum of squares below its square / calls")
				case induced.Cmp(total) > 0:
					bad(i, "induced input above the DRMS of the calls")
				case total.Cmp(new(big.Int).Add(rms, induced)) > 0:
					bad(i, "DRMS above RMS + induced input: only induced reads make the difference")
				case extSelf.Cmp(ext) > 0 || thrSelf.Cmp(thr) > 0:
					bad(i, "self induced input above the cumulative")
				}
			}
			tuples++
		default:
			bad(i, "tag %q that aprof-plot does not know", tag)
		}
	}
	for _, tag := range []string{"v", "k", "m", "i", "a", "f"} {
		if _, ok := header[tag]; !ok {
			t.Errorf("%s: no %s line", path, tag)
		}
	}
	if header["v"] != "6" || header["m"] != "bb-count" {
		t.Errorf("%s: version %q, metric %q: want 6, bb-count", path, header["v"], header["m"])
	}
	metric = header["i"]
	if !strings.HasSuffix(path, "_"+metric+".aprof") {
		t.Errorf("%s: input metric %q does not match the file name", path, metric)
	}
	// Every block's cost belongs to one activation: the self costs add up
	// to the thread's total.
	if k := header["k"]; selfSum.String() != k {
		t.Errorf("%s: self costs add up to %s, total cost k %s", path, selfSum, k)
	}
	// The last line: the count and CRC-32 of the lines before it.
	end := len(lines) - 1
	before := strings.Join(lines[:end], "\n") + "\n"
	want := "c end of report: " + strconv.Itoa(end) + " lines, crc32 " + fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(before)))
	if lines[end] != want {
		t.Errorf("%s: last line %q, want %q", path, lines[end], want)
	}
	return metric, tuples
}

// TestAprofFormatInvariants: condvar_pc's reports (two threads, input
// induced by the other thread and by the kernel), with and without calling
// contexts.
func TestAprofFormatInvariants(t *testing.T) {
	for _, flags := range [][]string{nil, {"--cct"}} {
		r := runTrms(t, flags, guestBin(t, "glibc-static", "condvar_pc"), "100")
		files, _ := filepath.Glob(filepath.Join(r.dir, "*.aprof"))
		got := map[string]int{}
		for _, p := range files {
			m, n := checkAprofFile(t, p)
			got[m] += n
		}
		if len(files) != 2 || got["rms"] < 50 || got["drms"] < 50 {
			t.Errorf("%v: reports %v, tuples %v: want one rms and one drms report of 50 tuples or more", flags, files, got)
		}
	}
}
