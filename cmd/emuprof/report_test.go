package main

import (
	"bytes"
	gocontext "context"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// checkPage checks that report.html is well-formed (it parses as XML,
// strictly: the page is XHTML-compatible HTML5, SVG included),
// self-contained (no http(s) reference, no src, no href leaving the page)
// and returns it with the titles of its SVG plots.
func checkPage(t *testing.T, path string) (page string, plots []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page = string(data)
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	var stack []string
	inSVG := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed: %v", path, err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			stack = append(stack, e.Name.Local)
			if e.Name.Local == "svg" {
				inSVG++
			}
			for _, a := range e.Attr {
				switch a.Name.Local {
				case "src":
					t.Errorf("external source %q in <%s>", a.Value, e.Name.Local)
				case "href":
					if !strings.HasPrefix(a.Value, "#") {
						t.Errorf("link out of the page %q in <%s>", a.Value, e.Name.Local)
					}
				case "d":
					if e.Name.Local == "path" && strings.TrimSpace(a.Value) == "" {
						t.Errorf("empty SVG path")
					}
				}
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			if e.Name.Local == "svg" {
				inSVG--
			}
		case xml.CharData:
			if inSVG > 0 && len(stack) >= 2 && stack[len(stack)-1] == "title" && stack[len(stack)-2] == "svg" {
				plots = append(plots, string(e))
			}
		}
	}
	for _, bad := range []string{"http://", "https://", "<link", "<img", "<iframe", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("%s refers outside itself: contains %q", path, bad)
		}
	}
	return page, plots
}

func hasPlot(plots []string, title string) bool {
	for _, p := range plots {
		if p == title {
			return true
		}
	}
	return false
}

// emuprof trms writes report.html next to its reports: the routine table
// and, for routines with several input sizes, cost against input size
// with the fitted curve; emuprof report DIR rewrites the same bytes; a
// second run gives the same bytes; a directory with only merged reports
// (emuprof merge) renders too, its run described from the reports.
func TestReportTRMS(t *testing.T) {
	prog := guestBin(t, "glibc-static", "tolower")
	var pages []string
	var dir string
	for range 2 {
		dir = t.TempDir()
		out := run(t, nil, dir, emuprofBin, "trms", "--out", dir, "--clear-env", "--", prog)
		if out.code != 0 {
			t.Fatalf("exit %d: %s", out.code, out.stderr)
		}
		if !strings.Contains(out.stderr, filepath.Join(dir, "report.html")) {
			t.Errorf("report.html not announced: %s", out.stderr)
		}
		page, plots := checkPage(t, filepath.Join(dir, "report.html"))
		pages = append(pages, page)
		for _, want := range []string{"str_tolower: cost vs TRMS", "str_tolower: cost vs RMS", "addword: cost vs TRMS", "str_tolower: calls per input size"} {
			if !hasPlot(plots, want) {
				t.Errorf("no plot %q (plots: %q)", want, plots)
			}
		}
		for _, want := range []string{">str_tolower</td>", ">addword</td>", "class=\"sortable\"", ">virtual duration</th>", ">instructions</th>", ">emuprof version</th>", "fit n^"} {
			if !strings.Contains(page, want) {
				t.Errorf("report.html lacks %q", want)
			}
		}
		if strings.Contains(page, "class=\"partial\"") {
			t.Errorf("a complete run reported partial")
		}
	}
	if pages[0] != pages[1] {
		t.Errorf("two runs wrote different report.html")
	}
	os.Remove(filepath.Join(dir, "report.html"))
	if out := run(t, nil, dir, emuprofBin, "report", dir); out.code != 0 {
		t.Fatalf("emuprof report: exit %d: %s", out.code, out.stderr)
	}
	again, _ := checkPage(t, filepath.Join(dir, "report.html"))
	if again != pages[0] {
		t.Errorf("emuprof report DIR wrote different bytes than the run")
	}

	// Merged reports only: no run record, the run is told from the files.
	mdir := t.TempDir()
	for _, kind := range []string{"rms", "drms"} {
		in, _ := filepath.Glob(filepath.Join(dir, "*_"+kind+".aprof"))
		args := append([]string{"merge", "-o", filepath.Join(mdir, "merged_"+kind+".aprof")}, in...)
		if out := run(t, nil, mdir, emuprofBin, args...); out.code != 0 {
			t.Fatalf("merge: exit %d: %s", out.code, out.stderr)
		}
	}
	if out := run(t, nil, mdir, emuprofBin, "report", mdir); out.code != 0 {
		t.Fatalf("emuprof report (merged): exit %d: %s", out.code, out.stderr)
	}
	page, plots := checkPage(t, filepath.Join(mdir, "report.html"))
	if !hasPlot(plots, "str_tolower: cost vs TRMS") || !strings.Contains(page, ">command</th>") || !strings.Contains(page, "merged_drms.aprof") {
		t.Errorf("report of merged reports lacks the plots, the command or the file names")
	}
	if out := run(t, nil, t.TempDir(), emuprofBin, "report", t.TempDir()); out.code != 2 {
		t.Errorf("report of an empty directory: exit %d, want 2", out.code)
	}
}

// A partial run (--max-insns) says so in red in the run section.
func TestReportPartial(t *testing.T) {
	prog := guestBin(t, "glibc-static", "tolower")
	dir := t.TempDir()
	out := run(t, nil, dir, emuprofBin, "trms", "--out", dir, "--max-insns", "200000", "--", prog)
	if out.code != 124 {
		t.Fatalf("exit %d, want 124: %s", out.code, out.stderr)
	}
	page, _ := checkPage(t, filepath.Join(dir, "report.html"))
	if !regexp.MustCompile(`<p class="partial">Partial run: [^<]+</p>`).MatchString(page) {
		t.Errorf("no partial-run warning in the run section")
	}
	if !strings.Contains(page, ".partial { color: #c00") {
		t.Errorf("partial warnings are not red")
	}
}

// chromium renders a page in headless mode and returns the DOM after its
// scripts ran; the test fails on any message the page wrote to the console
// (errors included: Chromium logs them with --enable-logging). Chromium is
// a test dependency (scripts/deps.sh installs it): the test fails without
// it.
func chromium(t *testing.T, page string) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found (apt-get install chromium; scripts/deps.sh does): %v", err)
	}
	abs, _ := filepath.Abs(page)
	ctx, cancel := gocontext.WithTimeout(gocontext.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=5000", "--enable-logging=stderr", "--v=0",
		"--dump-dom", "file://"+abs)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, se.String())
	}
	for _, l := range strings.Split(se.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			t.Errorf("console message from %s: %s", filepath.Base(page), l)
		}
	}
	return so.String()
}

// rendered checks a page rendered by chromium: its script ran to the end
// without an error, and every section named in want drew SVG paths of
// non-zero length.
func rendered(t *testing.T, dom string, want ...string) {
	t.Helper()
	htmlTag := dom // the html element's start tag, where the script writes
	if i := strings.Index(dom, "<head"); i >= 0 {
		htmlTag = dom[:i]
	}
	if !strings.Contains(htmlTag, `data-report-js="ok"`) {
		t.Fatalf("the page's script did not run to the end: %.600s", htmlTag)
	}
	if m := regexp.MustCompile(`data-report-error="([^"]*)"`).FindStringSubmatch(htmlTag); m != nil {
		t.Errorf("script error: %s", m[1])
	}
	m := regexp.MustCompile(`data-report-plots="([^"]*)"`).FindStringSubmatch(htmlTag)
	if m == nil {
		t.Fatalf("no plot count: %.600s", htmlTag)
	}
	counts := map[string]int{}
	for _, f := range strings.Fields(m[1]) {
		k, v, _ := strings.Cut(f, "=")
		counts[k], _ = strconv.Atoi(v)
	}
	for _, s := range want {
		if counts[s] == 0 {
			t.Errorf("section %s drew no SVG path (counts %v)", s, counts)
		}
	}
}

// The page of a trms profile renders in headless Chromium: its script runs
// without error and the plots draw.
func TestReportBrowserTRMS(t *testing.T) {
	prog := guestBin(t, "glibc-static", "tolower")
	dir := t.TempDir()
	if out := run(t, nil, dir, emuprofBin, "trms", "--out", dir, "--", prog); out.code != 0 {
		t.Fatalf("exit %d: %s", out.code, out.stderr)
	}
	dom := chromium(t, filepath.Join(dir, "report.html"))
	rendered(t, dom, "trms")
	if !strings.Contains(dom, "str_tolower") {
		t.Errorf("rendered page lacks str_tolower")
	}
}

// One emulation under every analysis writes one page with a section per
// analysis, in headless Chromium without a script error or a console
// message, every section drawing its plots; emuprof report DIR gives the
// same bytes.
func TestReportBrowserAllAnalyses(t *testing.T) {
	prog := guestBin(t, "glibc-static", "coz_rounds")
	dir := t.TempDir()
	out := run(t, nil, dir, emuprofBin, "profile", "--analyses", "trms,paths,parallel,causal", "--progress", "round_done", "--out", dir, "--", prog, "1000")
	if out.code != 0 {
		t.Fatalf("exit %d: %s", out.code, out.stderr)
	}
	path := filepath.Join(dir, "report.html")
	page, plots := checkPage(t, path)
	// A plot is titled by the line's file base name, so that it fits; the
	// table names the line by its absolute path (the DWARF compilation
	// directory joined: where the guest was built).
	if !slices.Contains(plots, "coz_rounds.c:15") {
		t.Errorf("no causal plot of coz_rounds.c:15 (plots %q)", plots)
	}
	if !regexp.MustCompile(`>/[^<]*/src/coz_rounds\.c:15</td>`).MatchString(page) {
		t.Errorf("report.html names no /.../src/coz_rounds.c:15 in the causal table")
	}
	for _, want := range []string{`<section id="trms"`, `<section id="paths"`, `<section id="parallel"`, `<section id="causal"`, "Threads: where their time went"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	dom := chromium(t, path)
	rendered(t, dom, "trms", "paths", "parallel", "causal")
	if out := run(t, nil, dir, emuprofBin, "report", dir); out.code != 0 {
		t.Fatalf("emuprof report: exit %d: %s", out.code, out.stderr)
	}
	if again, _ := os.ReadFile(path); string(again) != page {
		t.Errorf("emuprof report DIR wrote different bytes than the run")
	}
}

// Issue 14's "done": `emuprof profile -- coz_fig1`, without --analyses,
// runs every analysis that needs no flag of its own and writes a page on
// which every section draws (non-empty SVG paths) in headless Chromium,
// with no console message: trms with its curve-bounding plots, paths with
// its chart and source listings, parallel; the guest's output is the
// native one.
func TestReportProfileDefault(t *testing.T) {
	prog := guestBin(t, "glibc-static", "coz_fig1")
	native := run(t, nil, t.TempDir(), prog)
	dir := t.TempDir()
	out := run(t, nil, dir, emuprofBin, "profile", "--out", dir, "--", prog)
	if out.code != native.code || out.stdout != native.stdout {
		t.Fatalf("exit %d (native %d), stdout %.300q; want the native %.300q\n%s", out.code, native.code, out.stdout, native.stdout, out.stderr)
	}
	path := filepath.Join(dir, "report.html")
	page, plots := checkPage(t, path)
	for _, want := range []string{`<section id="run"`, `<section id="trms"`, `<section id="paths"`, `<section id="parallel"`,
		"Guess: O(", `<table class="src">`, "Path executions of the busiest routines"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(page, `<section id="causal"`) {
		t.Errorf("causal ran without a progress point")
	}
	bounding := 0
	for _, p := range plots {
		if strings.HasSuffix(p, ": curve bounding (TRMS)") {
			bounding++
		}
	}
	if bounding == 0 {
		t.Errorf("no curve-bounding plot (plots %q)", plots)
	}
	rendered(t, chromium(t, path), "trms", "paths", "parallel")
}

// A real multithreaded program: `emuprof profile` of `xz -T2` with its
// default analyses compresses exactly as natively and writes a page on
// which the trms, paths and parallel sections draw in headless Chromium,
// with no console message. (Paths once rebuilt a libc routine's DAG on
// every execution of a block it could not place, which stalled this run.)
func TestReportXZ(t *testing.T) {
	work := t.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 60000; i++ {
		b.WriteString("record " + strconv.Itoa(i) + " value " + strconv.Itoa(i*2654435761%100003) + " " + strings.Repeat("ab", i%13) + "\n")
	}
	in := filepath.Join(work, "data.txt")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	native := run(t, nil, work, "/usr/bin/xz", "-T2", "-c", in)
	dir := filepath.Join(work, "out")
	out := run(t, nil, work, emuprofBin, "profile", "--out", dir, "--", "/usr/bin/xz", "-T2", "-c", in)
	if out.code != 0 || len(native.stdout) == 0 || out.stdout != native.stdout {
		t.Fatalf("exit %d, stdout of %d bytes , not the native %d bytes\n%s", out.code, len(out.stdout), len(native.stdout), out.stderr)
	}
	path := filepath.Join(dir, "report.html")
	page, _ := checkPage(t, path)
	for _, want := range []string{`<section id="trms"`, `<section id="paths"`, `<section id="parallel"`, ">lzma_"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	rendered(t, chromium(t, path), "trms", "paths", "parallel")
}
