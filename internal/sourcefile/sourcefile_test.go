package sourcefile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func write(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.c")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLines(t *testing.T) {
	got, err := Lines(write(t, "int a;\r\nint b;\n\nint c;"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"int a;", "int b;", "", "int c;"}; !slices.Equal(got, want) {
		t.Errorf("Lines = %q, want %q", got, want)
	}
}

// A file over 1 MiB (the old limit of one reader) with a line longer than
// 1 MiB (the old line limit of the other) is read whole.
func TestLinesOverOneMiB(t *testing.T) {
	long := strings.Repeat("x", 1<<20+10)
	got, err := Lines(write(t, "first\n"+long+"\nlast\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "first" || got[1] != long || got[2] != "last" {
		t.Errorf("Lines: %d lines, want first, the long one, last", len(got))
	}
}

func TestLinesRefusesOverMax(t *testing.T) {
	line := strings.Repeat("y", 99) + "\n"
	p := write(t, strings.Repeat(line, MaxBytes/len(line)+1))
	if got, err := Lines(p); err == nil {
		t.Errorf("Lines of a file over MaxBytes = %d lines, want an error", len(got))
	}
	p = write(t, strings.Repeat(line, MaxBytes/len(line)))
	if _, err := Lines(p); err != nil {
		t.Errorf("Lines of a file under MaxBytes: %v", err)
	}
}

func TestLinesMissing(t *testing.T) {
	if _, err := Lines(filepath.Join(t.TempDir(), "none.c")); !os.IsNotExist(err) {
		t.Errorf("Lines of a missing file: %v, want not-exist", err)
	}
}
