package paths

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The paths section shows a routine's hottest paths on its source text:
// the hottest path's lines highlighted, a mark per path on each line it
// runs, counts in the column heads, and a chart of the busiest routines;
// a source that is not readable is named instead.
func TestRenderSourceLines(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "loop.c")
	text := "int f(int x) {\n\tif (x & 1)\n\t\treturn 3 * x;\n\telse\n\t\treturn x / 2;\n}\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	at := func(ls ...string) []string {
		for i := range ls {
			ls[i] = src + ":" + ls[i]
		}
		return ls
	}
	pr := &Profile{Program: "prog", Copies: 1, ProbeHits: []uint64{0}, Routines: []Routine{
		{Name: "f", Object: "prog", Entry: "0x10", NumPaths: "2", CFG: CFGStatic, Paths: []Path{
			{ID: "0", Count: 30, Blocks: []string{"0x10", "0x20"}, Lines: at("2", "5")},
			{ID: "1", Count: 70, Blocks: []string{"0x10", "0x18"}, Lines: at("2", "3")},
		}},
		{Name: "g", Object: "prog", Entry: "0x40", NumPaths: "2", CFG: CFGStatic, Paths: []Path{
			{ID: "0", Count: 5, Blocks: []string{"0x40"}, Lines: []string{"/nonexistent/g.c:7"}},
			{ID: "1", Count: 1, Blocks: []string{"0x48"}, Lines: []string{"/nonexistent/g.c:9"}},
		}},
	}}
	data, err := pr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "prog_paths.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sec, err := RenderHTML([]string{file})
	if err != nil {
		t.Fatal(err)
	}
	h := sec.HTML
	row := func(n string) string {
		m := regexp.MustCompile(`<tr[^>]*><td class="num">` + n + `</td>.*?</tr>`).FindString(h)
		if m == "" {
			t.Fatalf("no source row %s:\n%s", n, h)
		}
		return m
	}
	// Path 1 is id 1 (70 executions): lines 2 and 3; path 2 (30): lines 2 and 5.
	for n, want := range map[string]struct {
		hot   bool
		marks int
	}{"1": {false, 0}, "2": {true, 2}, "3": {true, 1}, "4": {false, 0}, "5": {false, 1}, "6": {false, 0}} {
		r := row(n)
		if strings.Contains(r, `class="hot"`) != want.hot || strings.Count(r, "●") != want.marks {
			t.Errorf("line %s: %s; want hot %v, %d marks", n, r, want.hot, want.marks)
		}
	}
	for _, want := range []string{
		"return 3 * x;", `title="70 executions">1</th>`, `title="30 executions">2</th>`,
		"path 1</span> (id 1): 70 executions, 70.0%",
		"Source /nonexistent/g.c not readable here",
		"Path executions of the busiest routines",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("section lacks %q", want)
		}
	}
	if strings.Count(h, "<path ") < 3 { // f's two paths and g's
		t.Errorf("chart without bars:\n%s", h)
	}
	d := xml.NewDecoder(strings.NewReader("<div>" + h + "</div>"))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
	}
}
