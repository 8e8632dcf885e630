package syscalls

import (
	"os"
	"path/filepath"
	"strings"
)

// /dev/shm, where shm_open and sem_open keep POSIX shared memory objects
// and named semaphores: on Linux a tmpfs, here a private host directory
// that the run's processes share (Fork), made when first used and removed
// when the last process closes, so that objects never reach the host's
// /dev/shm nor outlive the run. Its files are host files like any other:
// open, ftruncate, MAP_SHARED mappings, unlink (mm's shared mappings keep
// them coherent between the processes forked after the mapping).

const shmGuest = "/dev/shm"

// shmDir is the run's /dev/shm.
type shmDir struct {
	dir  string // "" until first used
	refs int    // the kernels sharing it
}

// isShmPath reports whether the cleaned guest path p is in /dev/shm.
func isShmPath(p string) bool { return p == shmGuest || strings.HasPrefix(p, shmGuest+"/") }

// shmHost returns the host path of guest path g in /dev/shm.
func (k *Kernel) shmHost(g string) string {
	s := k.shm
	if s.dir == "" {
		d, err := os.MkdirTemp("", "emuprof-shm-")
		if err == nil {
			err = os.Chmod(d, 0o777|os.ModeSticky)
		}
		if err != nil {
			k.warn("/dev/shm: " + err.Error())
			return filepath.Join(os.DevNull, "shm") // ENOTDIR: no /dev/shm
		}
		s.dir = d
	}
	return filepath.Join(s.dir, filepath.FromSlash(strings.TrimPrefix(g, shmGuest)))
}

// releaseShm drops this kernel's reference; the last removes the directory.
func (k *Kernel) releaseShm() error {
	s := k.shm
	if s.refs--; s.refs > 0 || s.dir == "" {
		return nil
	}
	dir := s.dir
	s.dir = ""
	return os.RemoveAll(dir)
}
