package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"emuprof/internal/stophook"
)

// WriteFileAtomic writes an output file as a shell's `>` would, but so that
// readers never see a partial regular file:
//   - a regular file (or a new one) is written to a temporary file in the
//     same directory, renamed into place;
//   - a symlink is followed: its target is written, the link stays;
//   - a device, FIFO or socket (/dev/null, /dev/full, `-o >(cmd)`) is
//     written in place, since renaming over it would replace it;
//   - a directory is refused.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	if stophook.Enabled() { // tests: a stop while the file is written, and after
		name := filepath.Base(path)
		w := write
		write = func(bw io.Writer) error {
			err := w(bw)
			stophook.At("write:" + name)
			return err
		}
		defer stophook.At("wrote:" + name)
	}
	if err := writeTarget(path, write); err != nil {
		if pe, ok := err.(*fs.PathError); ok {
			err = pe.Err // the path is said once, the one asked for
		}
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	return nil
}

func writeTarget(path string, write func(io.Writer) error) error {
	st, err := os.Stat(path) // follows links
	switch {
	case err == nil && st.IsDir():
		return errors.New("is a directory")
	case err == nil && !st.Mode().IsRegular():
		return writeInPlace(path, write)
	case err == nil:
		if path, err = filepath.EvalSymlinks(path); err != nil {
			return err
		}
	case errors.Is(err, fs.ErrNotExist):
		if path, err = danglingTarget(path); err != nil {
			return err
		}
	default:
		return err
	}
	return writeAtomic(path, write)
}

// danglingTarget is where a new file at path goes: path itself, or, when
// path is a symlink to a file that does not exist yet, the file it names.
func danglingTarget(path string) (string, error) {
	for range 40 { // Linux's limit of links followed (ELOOP)
		dest, err := os.Readlink(path)
		if err != nil {
			return path, nil // not a link: the file is created here
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", errors.New("too many levels of symbolic links")
}

func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func writeAtomic(path string, write func(io.Writer) error) (err error) {
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
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 64<<10) // a profile's JSON in a few writes, not one per 4 KB (ext4: 5-10 µs each)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// WriteBytesAtomic writes data to path like WriteFileAtomic.
func WriteBytesAtomic(path string, data []byte) error {
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
