package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDebianSweep runs a wider set of real Debian programs than
// TestDebianPrograms (interpreters, compressors, text and number tools;
// dynamic, lazily bound) on small inputs and compares each with its native
// run byte for byte: a silent wrong result anywhere in the CPU or kernel
// emulation shows up as a difference here.
func TestDebianSweep(t *testing.T) {
	work := t.TempDir()
	var text, other bytes.Buffer
	words := strings.Fields("delta alpha charlie bravo echo alpha foxtrot golf hotel india")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&text, "%s %d %s\n", words[i%len(words)], (i*7919)%1000, words[(i*31/7)%len(words)])
	}
	other.Write(bytes.Replace(text.Bytes(), []byte("alpha 5"), []byte("ALPHA 5"), -1))
	type rec struct {
		ID   int       `json:"id"`
		Name string    `json:"name"`
		V    []float64 `json:"v"`
	}
	var recs []rec
	for i := 0; i < 500; i++ {
		recs = append(recs, rec{i, words[(i*7)%len(words)], []float64{float64(i) / 7, float64(i*i) / 13, 1 / float64(i+1)}})
	}
	js, _ := json.Marshal(recs)
	// Binary data: the start of an ELF file, the same on every machine
	// that has this test's own binary.
	bin, err := os.ReadFile(emuprofBin)
	if err != nil {
		t.Fatal(err)
	}
	var sql strings.Builder
	sql.WriteString("create table t(a,b);\n")
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&sql, "insert into t values(%d,'x%d');\n", i, i*37%101)
	}
	sql.WriteString("select b,count(*),sum(a) from t group by b order by 2 desc,1 limit 10;\n" +
		"with recursive c(x) as (select 1 union all select x+1 from c where x<20000) select sum(x*x%7) from c;\n")
	for name, data := range map[string][]byte{"in.txt": text.Bytes(), "in2.txt": other.Bytes(),
		"data.json": js, "bin.dat": bin[:200000], "s.sql": []byte(sql.String())} {
		if err := os.WriteFile(filepath.Join(work, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		prog  string
		args  []string
		stdin string
	}{
		{"/usr/bin/perl", []string{"-e", `my %h; $h{$_ % 97} += $_ for 1..200000; print join(",", map {"$_=$h{$_}"} sort {$a<=>$b} keys %h), "\n"; printf("%.10g %e\n", atan2(1,1)*4, 1/3)`}, ""},
		{"/usr/bin/perl", []string{"-ne", `@f=split; $c{$f[0]}++; END { print "$_ $c{$_}\n" for sort keys %c }`, "in.txt"}, ""},
		{"/usr/bin/sqlite3", []string{":memory:", "-init", "s.sql", ".quit"}, ""},
		{"/usr/bin/jq", []string{"-c", `[.[] | select(.id % 50 == 0) | {id, name}]`, "data.json"}, ""},
		{"/usr/bin/jq", []string{`[.[].v[0]] | add`, "data.json"}, ""},
		{"/usr/bin/mawk", []string{`{s[$1]+=$2} END {for (k in s) print k, s[k]; printf "%.15g %.15g\n", sin(1), exp(10)}`, "in.txt"}, ""},
		{"/bin/sed", []string{"-n", `s/\(al[a-z]*\) \([0-9]*\)/\2-\1/p`, "in.txt"}, ""},
		{"/bin/grep", []string{"-c", "-E", "alpha [0-9]{3}", "in.txt"}, ""},
		{"/bin/grep", []string{"-n", "-i", "HOTEL 9", "in.txt"}, ""},
		{"/bin/tar", []string{"--mtime=2020-01-01", "--owner=0", "--group=0", "--numeric-owner", "-cf", "-", "in.txt", "data.json"}, ""},
		{"/bin/bzip2", []string{"-c", "in.txt"}, ""},
		{"/bin/bzip2", []string{"-9", "-c", "bin.dat"}, ""},
		{"/usr/bin/zstd", []string{"-c", "-19", "in.txt"}, ""},
		{"/usr/bin/lz4", []string{"-c", "in.txt"}, ""},
		{"/usr/bin/xz", []string{"-c", "in.txt"}, ""},
		{"/usr/bin/xz", []string{"-T2", "-c", "bin.dat"}, ""},
		{"/bin/gzip", []string{"-9", "-c", "bin.dat"}, ""},
		{"/usr/bin/bc", []string{"-l", "-q"}, "scale=40\n4*a(1)\ne(1)\nsqrt(2)\n"},
		{"/usr/bin/od", []string{"-A", "x", "-t", "x1z", "-N", "256", "bin.dat"}, ""},
		{"/usr/bin/xxd", []string{"-l", "256", "bin.dat"}, ""},
		{"/usr/bin/cmp", []string{"in.txt", "in2.txt"}, ""},
		{"/usr/bin/diff", []string{"in.txt", "in2.txt"}, ""},
		{"/usr/bin/sha1sum", []string{"in.txt", "bin.dat"}, ""},
		{"/usr/bin/b2sum", []string{"in.txt"}, ""},
		{"/usr/bin/cksum", []string{"in.txt"}, ""},
		{"/usr/bin/cut", []string{"-d", " ", "-f2", "in.txt"}, ""},
		{"/usr/bin/paste", []string{"-d,", "in.txt", "in2.txt"}, ""},
		{"/usr/bin/nl", []string{"-ba", "in.txt"}, ""},
		{"/usr/bin/fold", []string{"-w", "7", "in.txt"}, ""},
		{"/usr/bin/tac", []string{"in.txt"}, ""},
		{"/usr/bin/rev", []string{"in.txt"}, ""},
		{"/usr/bin/seq", []string{"-w", "1", "3", "1000"}, ""},
		{"/usr/bin/factor", []string{"1234567890123", "600851475143", "97"}, ""},
		{"/usr/bin/numfmt", []string{"--to=iec", "1", "1000", "1048576", "123456789012"}, ""},
		{"/usr/bin/tail", []string{"-n", "7", "in.txt"}, ""},
		{"/usr/bin/sort", []string{"-u", "-k3,3", "-k2n", "in.txt"}, ""},
		{"/usr/bin/shuf", []string{"--random-source=in.txt", "-n", "5", "in.txt"}, ""},
		{"/usr/bin/file", []string{"bin.dat", "in.txt", "data.json"}, ""},
		{"/usr/bin/tclsh", nil, "puts [expr {2**100}]\nputs [format %.12f [expr {sqrt(2)}]]\nputs [lsort -integer {5 3 10 1}]\n"},
		{"/usr/bin/python3", []string{"-c", `import sqlite3,decimal,fractions,re,zlib; c=sqlite3.connect(":memory:"); print(c.execute("select 6*7").fetchone(), decimal.Decimal(1)/7, fractions.Fraction(3,9), re.sub(r"a+","b","caaat"), zlib.crc32(b"abc"))`}, ""},
		{"/usr/bin/python3", []string{"-c", `import threading; r=[]; t=[threading.Thread(target=lambda i=i: r.append(sum(range(i*1000)))) for i in range(4)]; [x.start() for x in t]; [x.join() for x in t]; print(sorted(r))`}, ""},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.prog)+" "+strings.Join(c.args, " "), func(t *testing.T) {
			if _, err := os.Stat(c.prog); err != nil {
				t.Fatalf("%s missing: make deps installs it", c.prog)
			}
			var stdin []byte
			if c.stdin != "" {
				stdin = []byte(c.stdin)
			}
			compare(t, stdin, work, c.prog, c.args...)
		})
	}
}
