package paths

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The report section lists the hottest paths with their lines, as
// well-formed XHTML; without a paths file there is no section.
func TestRenderHTML(t *testing.T) {
	a := newAsm(0x1000).
		label("B0").nop().
		label("B1").nop().je("B5").
		label("B2").nop().je("B4").
		label("B3").nop().jmp("B1").
		label("B4").nop().jmp("B1").
		label("B5").ret()
	p := newProgram(a).routine("loop<&>", 0x1000, a.pc())
	prof := newRunner(p).run(1, "B0", "B2", "B3", "B1", "B2", "B4", "B1", "B5").profile(t)
	dir := t.TempDir()
	files, err := NewInstance(prof, "prog", 10).Write(dir)
	if err != nil || len(files) != 1 || filepath.Base(files[0]) != "prog_paths.json" {
		t.Fatalf("Write: %v %v", files, err)
	}
	if _, err := os.Stat(files[0]); err != nil {
		t.Fatal(err)
	}
	sec, err := RenderHTML(append(files, filepath.Join(dir, "other.aprof")))
	if err != nil || sec == nil {
		t.Fatalf("RenderHTML: %v %v", sec, err)
	}
	if !strings.Contains(sec.HTML, "loop&lt;&amp;&gt;") || !strings.Contains(sec.HTML, "prog.c:") {
		t.Errorf("section lacks the routine or its lines:\n%s", sec.HTML)
	}
	d := xml.NewDecoder(strings.NewReader("<div>" + sec.HTML + "</div>"))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, sec.HTML)
		}
	}
	if sec, err := RenderHTML([]string{"x.aprof"}); sec != nil || err != nil {
		t.Errorf("section without a paths file: %v %v", sec, err)
	}
}

// Routines are named demangled in the report section and the summary
// (issue 25 point 6), as c++filt shows them; the profile keeps the
// symbol.
func TestPathsDemangled(t *testing.T) {
	a := newAsm(0x1000).
		label("B0").nop().je("B2").
		label("B1").nop().
		label("B2").ret()
	p := newProgram(a).routine("_ZN3emu13insert_sortedEPii", 0x1000, a.pc())
	prof := newRunner(p).run(1, "B0", "B1", "B2").profile(t)
	inst := NewInstance(prof, "prog", 10)
	files, err := inst.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sec, err := RenderHTML(files)
	if err != nil {
		t.Fatal(err)
	}
	var sum strings.Builder
	if err := inst.Summary(&sum); err != nil {
		t.Fatal(err)
	}
	_, body, err := inst.Section()
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"report": sec.HTML, "summary": sum.String(), "section": body} {
		if !strings.Contains(text, "emu::insert_sorted") || strings.Contains(text, "_ZN3emu") {
			t.Errorf("%s does not name emu::insert_sorted(int*, int):\n%s", what, text)
		}
	}
	if data, _ := os.ReadFile(files[0]); !strings.Contains(string(data), `"_ZN3emu13insert_sortedEPii"`) {
		t.Errorf("the profile lost the symbol's name")
	}
}
