package report

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// An output path is written as a shell's `>` writes it (issue 31.1): the
// temporary file and rename only for a regular file; a device or FIFO is
// written in place (a copy of /dev/full reports ENOSPC and stays a device),
// a symlink is followed and stays a link, a directory is refused; no
// temporary file is left.
func TestWriteFileAtomicTargets(t *testing.T) {
	dir := t.TempDir()
	hello := func(w io.Writer) error { _, err := io.WriteString(w, "hello"); return err }
	devFull := filepath.Join(dir, "full")
	if err := syscall.Mknod(devFull, syscall.S_IFCHR|0o666, 1<<8|7); err != nil { // /dev/full is char 1:7
		t.Fatal(err)
	}
	devNull := filepath.Join(dir, "null")
	if err := syscall.Mknod(devNull, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	read := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		read <- string(b)
	}()
	if err := WriteFileAtomic(fifo, hello); err != nil {
		t.Errorf("fifo: %v", err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the fifo was replaced (%v)", err) // its reader waits still
	}
	if got := <-read; got != "hello" {
		t.Errorf("fifo: reader got %q", got)
	}
	err := WriteFileAtomic(devFull, hello)
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("/dev/full copy: error %v, want ENOSPC", err)
	}
	if err := WriteFileAtomic(devNull, hello); err != nil {
		t.Errorf("/dev/null copy: %v", err)
	}
	for _, dev := range []string{devFull, devNull, fifo} {
		if st, err := os.Lstat(dev); err != nil || st.Mode().IsRegular() {
			t.Errorf("%s replaced by a regular file (%v)", dev, err)
		}
	}
	real := filepath.Join(dir, "real")
	if err := os.WriteFile(real, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("new", dangling); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{link, dangling} {
		if err := WriteFileAtomic(l, hello); err != nil {
			t.Errorf("%s: %v", l, err)
		}
		if st, err := os.Lstat(l); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: no longer a symlink (%v)", l, err)
		}
	}
	for _, f := range []string{real, filepath.Join(dir, "new")} {
		if b, err := os.ReadFile(f); err != nil || string(b) != "hello" {
			t.Errorf("%s: %q %v, want the link's target written", f, b, err)
		}
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(sub, hello); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: error %v, want 'is a directory'", err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), "tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	ents, _ = os.ReadDir(sub)
	if len(ents) != 0 {
		t.Errorf("files left in the directory: %v", ents)
	}
}
