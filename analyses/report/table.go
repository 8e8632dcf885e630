package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Table is a text table with aligned columns: left-aligned text, and
// right-aligned columns marked in Right.
type Table struct {
	Header []string
	Right  []bool // per column: align right (numbers)
	rows   [][]string
}

// Add appends a row.
func (t *Table) Add(cells ...string) { t.rows = append(t.rows, cells) }

// Len is the number of rows added.
func (t *Table) Len() int { return len(t.rows) }

// Write writes the table, columns separated by two spaces.
func (t *Table) Write(w io.Writer) error {
	width := make([]int, len(t.Header))
	all := append([][]string{t.Header}, t.rows...)
	for _, row := range all {
		for i, c := range row {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	b := bufio.NewWriter(w)
	for _, row := range all {
		var line strings.Builder
		for i, c := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i < len(t.Right) && t.Right[i] {
				line.WriteString(pad + c)
			} else if i == len(row)-1 {
				line.WriteString(c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(line.String())
		b.WriteByte('\n')
	}
	if err := b.Flush(); err != nil {
		return fmt.Errorf("report: write table: %w", err)
	}
	return nil
}

// WriteFileAtomic writes a file through a temporary file in the same
// directory renamed into place, so that readers never see a partial file.
func WriteFileAtomic(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	pattern := "." + base + ".tmp*"
	if len(pattern)+10 > 255 { // the longest name a file system takes
		pattern = ".emuprof-*.tmp" // a long name that fits must not fail for its temporary file
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 64<<10) // a profile's JSON in a few writes, not one per 4 KB (ext4: 5-10 µs each)
	if err = write(bw); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	return nil
}

// WriteBytesAtomic writes data to path like WriteFileAtomic.
func WriteBytesAtomic(path string, data []byte) error {
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
