package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"emuprof/analyses/report"
)

// TestReportFlameAndSource: `emuprof profile` of coz_rounds with a
// progress point writes a page with a flame graph of instructions per
// calling context (callgrind) and one of work, idleness and overhead
// (parallel), and every analysis's source annotation beside the source
// text: instructions per line, work/idleness/overhead per line, speedup
// potential per line. Headless Chromium runs its script with no error or
// console message and sets up every graph.
func TestReportFlameAndSource(t *testing.T) {
	prog := guestBin(t, "glibc-static", "coz_rounds")
	dir := t.TempDir()
	out := run(t, nil, dir, emuprofBin, "profile", "--progress", "round_done", "--out", dir, "--", prog, "200")
	if out.code != 0 {
		t.Fatalf("exit %d: %s", out.code, out.stderr)
	}
	path := filepath.Join(dir, "report.html")
	page, _ := checkPage(t, path)
	loop := regexp.QuoteMeta(report.Esc("for (x = 0; x < 20000; x++) {"))
	for _, want := range []string{
		`<section id="callgrind"`, `<svg class="flame" id="callgrind-flame-0-0"`,
		`<svg class="flame" id="parallel-flame-coz_rounds-0"`, `data-flame="parallel-flame-coz_rounds-1" aria-pressed="false">idleness</button>`,
		// the loop of a(): its instructions, its work and idleness, its speedup potential
		`<tr style="background:rgba\(255,170,0,[0-9.]+\)"><td class="num">15</td><td class="num v">[0-9.]+M</td><td class="num v">[0-9.]+M</td><td><code>    ` + loop,
		`<tr style="background:rgba\(255,170,0,[0-9.]+\)"><td class="num">15</td><td class="num v">[0-9.]+M</td><td class="num v">[0-9.]+M</td><td></td><td><code>    ` + loop,
		`src/coz_rounds.c: speedup potential per line</h4>`,
		`<tr style="background:rgba\(255,170,0,[0-9.]+\)"><td class="num">15</td><td class="num v">[0-9.]+ %</td>`,
	} {
		if !regexp.MustCompile(want).MatchString(page) {
			t.Errorf("report.html lacks %s", want)
		}
	}
	// The sections come from the files: emuprof report DIR writes the
	// same bytes.
	if out := run(t, nil, dir, emuprofBin, "report", dir); out.code != 0 {
		t.Fatalf("emuprof report: exit %d: %s", out.code, out.stderr)
	}
	if again, _ := os.ReadFile(path); string(again) != page {
		t.Errorf("emuprof report DIR wrote different bytes than the run")
	}
	dom := chromium(t, path)
	rendered(t, dom, "trms", "paths", "parallel", "causal")
	// One graph per metric: instructions; work, idleness, overhead (no
	// lock was waited for: no lock-wait graph).
	if !strings.Contains(dom[:strings.Index(dom, "<head")], `data-report-flames="4"`) {
		t.Errorf("the script did not set up the 4 flame graphs: %.600s", dom[:strings.Index(dom, "<head")])
	}
}

// A flame graph of 10,000 calling contexts renders in headless Chromium
// without a console message, and a click on a context zooms to it: it
// spans the graph, its ancestors stay full width, its siblings are hidden.
func TestFlameGraphZoomBrowser(t *testing.T) {
	f := report.Flame{ID: "big", Metrics: []string{"work"}, Units: []string{"ns"}}
	for i := 0; i < 10000; i++ {
		p := -1
		if i > 0 {
			p = (i - 1) / 4
		}
		f.Nodes = append(f.Nodes, report.FlameNode{Parent: p, Name: fmt.Sprintf("f%d", i), Self: []float64{float64(1 + i%7)}})
	}
	page := report.Page{Title: "flame", Sections: []report.Section{{ID: "flame", Title: "flame", HTML: f.HTML()}}}
	html := string(page.Bytes())
	// After the page's script: click f2 (depth 1, the second child of the
	// root) and record what the graph shows.
	probe := `<script>//<![CDATA[
(function () {
  var g = document.querySelector('g[data-n="f2"]'), root = document.querySelector('g[data-n="f0"]'), sib = document.querySelector('g[data-n="f1"]');
  g.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  var kid = document.querySelector('g[data-n="f9"]');
  document.documentElement.setAttribute('data-zoom', [g.querySelector('rect').getAttribute('width'), root.querySelector('rect').getAttribute('width'), sib.style.display, kid.style.display, g.querySelector('text').textContent].join(','));
  root.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  document.documentElement.setAttribute('data-unzoom', sib.style.display + ',' + g.querySelector('rect').getAttribute('width'));
})();
//]]></script>
</body>`
	html = strings.Replace(html, "</body>", probe, 1)
	path := filepath.Join(t.TempDir(), "flame.html")
	if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := chromium(t, path)
	tag := dom[:strings.Index(dom, "<head")]
	if !strings.Contains(tag, `data-report-flames="1"`) || strings.Contains(tag, "data-report-error") {
		t.Fatalf("the flame graph's script did not run cleanly: %.600s", tag)
	}
	// f2 spans 1100 px less the 0.5 px gap; so does the root; f1 is
	// hidden, f9 (a child of f2) shown; f2's label fits.
	if !strings.Contains(tag, `data-zoom="1099.50,1099.50,none,,f2"`) {
		t.Errorf("after a click on f2: %.600s", tag)
	}
	if m := regexp.MustCompile(`data-unzoom="([^"]*)"`).FindStringSubmatch(tag); m == nil || !strings.HasPrefix(m[1], ",") || strings.HasPrefix(m[1], ",1099") {
		t.Errorf("after a click on the root, the graph is not zoomed out: %.600s", tag)
	}
}
