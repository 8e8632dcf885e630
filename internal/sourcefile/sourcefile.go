// Package sourcefile reads the source files a line table names, for the
// reports that show hot lines beside their text.
package sourcefile

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// MaxBytes is the largest source file Lines reads. A larger one is refused
// whole rather than cut: a listing that silently ends early would show its
// hot lines beyond the cut as empty.
const MaxBytes = 4 << 20

// Lines returns the lines of the file at path, without their line
// terminators ("\n" or "\r\n"). It fails on a file that cannot be read and
// on one larger than MaxBytes.
func Lines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("larger than %d bytes", MaxBytes)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, MaxBytes+1) // any line of a file that fits
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}
