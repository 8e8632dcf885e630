package syscalls

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// Files and time. The guest's clock is virtual, so the times of what it
// does to host files must come from that clock, not from the host's:
//
//   - a host file the guest has not touched during the run shows its host
//     modification time as atime, mtime and ctime (the host's atime and
//     ctime change with every access by anyone, so they would make the run
//     depend on the host). That time may lie after the virtual clock's start;
//     it is kept as it is (the guest then sees a file from its future, as a
//     machine whose clock is behind would), so a run depends only on its
//     input files' contents and modification times;
//   - what the guest does stamps the file with the virtual time of the call,
//     as Linux would: creation sets all three times; a write, a truncation
//     or a change of a directory's entries sets mtime and ctime; chmod,
//     chown, link, unlink and rename set ctime; utimensat sets what it is
//     asked to and ctime. Reads do not change atime (as on a noatime mount);
//   - the stamps live in the kernel's table, per host inode (per path on
//     hosts without inode numbers), for the run only. The host file keeps the
//     host's own times for writes, except that utimensat applies explicit
//     times to the host file too (tar x, cp -p, touch -d) and UTIME_NOW sets
//     the host's current time there, as a native touch would.

// stampA, stampM and stampC select the times a stamp sets.
const (
	stampA = 1 << iota
	stampM
	stampC
)

// timesKey identifies a host file in the table: its device and inode, or its
// path on hosts that do not number files.
func timesKey(fi fs.FileInfo, host string) string {
	if id, ok := hostIDs(fi); ok {
		return "\x00" + strconv.FormatUint(id.dev, 16) + ":" + strconv.FormatUint(id.ino, 16)
	}
	return host
}

// pathKeyed reports whether the table is keyed by path on this host.
func pathKeyed(key string) bool { return !strings.HasPrefix(key, "\x00") }

// timesOf returns the times the guest sees for a host file.
func (k *Kernel) timesOf(fi fs.FileInfo, host string) fileTimes {
	if t, ok := k.times[timesKey(fi, host)]; ok {
		return t
	}
	mt := fi.ModTime().UnixNano()
	return fileTimes{atime: mt, mtime: mt, ctime: mt}
}

// stamp sets the times what selects of a host file to the virtual time of
// the call in progress.
func (k *Kernel) stamp(fi fs.FileInfo, host string, what int) {
	t := k.timesOf(fi, host)
	now := k.realtime(k.now)
	if what&stampA != 0 {
		t.atime = now
	}
	if what&stampM != 0 {
		t.mtime = now
	}
	if what&stampC != 0 {
		t.ctime = now
	}
	k.times[timesKey(fi, host)] = t
}

// stampPath stamps the host file at host, if it exists.
func (k *Kernel) stampPath(host string, what int) {
	if fi, err := os.Lstat(host); err == nil {
		k.stamp(fi, host, what)
	}
}

// touch records that the guest modified the host file (contents or
// directory entries) at the virtual time of the call.
func (k *Kernel) touch(host string) { k.stampPath(host, stampM|stampC) }

// stampFile stamps an open host file, which may have no path any more.
func (k *Kernel) stampFile(f *os.File, host string, what int) {
	if fi, err := f.Stat(); err == nil {
		k.stamp(fi, host, what)
	}
}

// created records that the guest created the host file: every time is now
// (this also forgets the stamps of an earlier file with the same inode).
func (k *Kernel) created(host string) { k.stampPath(host, stampA|stampM|stampC) }

// unlinked records that the guest removed the name host of the file fi.
func (k *Kernel) unlinked(fi fs.FileInfo, host string) {
	key := timesKey(fi, host)
	if pathKeyed(key) {
		delete(k.times, key)
		return
	}
	// Other names, or open descriptors, may still lead to the inode.
	k.stamp(fi, host, stampC)
}

// renamed records that the guest moved the file from old to new (which now
// exists): its ctime changes, and path keys move with it.
func (k *Kernel) renamed(old, new string) {
	fi, err := os.Lstat(new)
	if err != nil {
		return
	}
	if key := timesKey(fi, new); pathKeyed(key) {
		delete(k.times, new)
		var moved []string
		for p := range k.times {
			if p == old || strings.HasPrefix(p, old+string(os.PathSeparator)) {
				moved = append(moved, p)
			}
		}
		for _, p := range moved {
			k.times[new+p[len(old):]] = k.times[p]
			delete(k.times, p)
		}
	}
	k.stamp(fi, new, stampC)
}
