// Package fstree describes a directory tree as lines of text, for tests
// that compare the files two runs leave behind (a native run and a run
// under emuprof, the real tree and an overlay's view of it).
package fstree

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Describe returns one line per file under dir, in lexical order: its path
// relative to dir, its mode, and the SHA-256 of a regular file's contents
// or a symbolic link's target. A regular file modified before mtimeBefore
// also shows that time (a time set explicitly; the host's time of a write
// differs from run to run).
func Describe(dir string, mtimeBefore time.Time) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		s := fmt.Sprintf("%s %v", rel, fi.Mode())
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s += fmt.Sprintf(" %x", sha256.Sum256(b))
			if fi.ModTime().Before(mtimeBefore) {
				s += fmt.Sprintf(" mtime %d", fi.ModTime().Unix())
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			tg, _ := os.Readlink(p)
			s += " -> " + tg
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("describing %s: %w", dir, err)
	}
	return out, nil
}
