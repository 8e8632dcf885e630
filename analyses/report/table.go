package report

import (
	"bufio"
	"fmt"
	"io"
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
