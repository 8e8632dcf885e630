package syscalls

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The emulated trees: /proc, /sys and /dev never reach the host. They hold
// what programs and C libraries read at startup (the CPU count, the
// executable's path, the memory map) with values that follow the Config, so
// that they are the same on every host.

type synthKind int

const (
	synDir synthKind = iota
	synFile
	synLink
	synDev
	synFD // an open file reached through /proc/self/fd/N that has no path
)

// synthNode is one file of the emulated trees, built on demand.
type synthNode struct {
	path   string
	kind   synthKind
	dev    devKind   // synDev
	target string    // synLink
	fd     *openFile // synLink to a pathless file; synFD
	// hostTarget is where a synLink leads on the host when its target
	// may lie outside the sysroot (/proc/self/exe).
	hostTarget string
	data       func(k *Kernel) []byte // synFile
	names      []string               // synDir
}

// isSynthPath reports whether the cleaned guest path p is in an emulated
// tree.
func isSynthPath(p string) bool {
	if isShmPath(p) {
		return false // shm.go
	}
	for _, root := range []string{"/proc", "/sys", "/dev"} {
		if p == root || strings.HasPrefix(p, root+"/") {
			return true
		}
	}
	return false
}

func dirNode(p string, names ...string) *synthNode {
	slices.Sort(names)
	return &synthNode{path: p, kind: synDir, names: names}
}

func linkNode(p, target string) *synthNode {
	return &synthNode{path: p, kind: synLink, target: target}
}

func fileNode(p string, data func(k *Kernel) []byte) *synthNode {
	return &synthNode{path: p, kind: synFile, data: data}
}

func textNode(p, text string) *synthNode {
	return fileNode(p, func(*Kernel) []byte { return []byte(text) })
}

// cpuRange is the "0-7" list of online CPUs.
func (k *Kernel) cpuRange() string {
	if k.cfg.CPUs == 1 {
		return "0\n"
	}
	return fmt.Sprintf("0-%d\n", k.cfg.CPUs-1)
}

// kernelRelease is the uname release and /proc/sys/kernel/osrelease.
const kernelRelease = "6.8.0-emuprof"

// synthAt returns the emulated node at the cleaned guest path p, nil if
// there is none.
func (k *Kernel) synthAt(p string) *synthNode {
	pid := strconv.Itoa(k.cfg.Pid)
	self := "/proc/" + pid
	if n, rest, ok := strings.Cut(strings.TrimPrefix(p, "/proc/"), "/"); strings.HasPrefix(p, "/proc/") && n != pid {
		if id, err := strconv.Atoi(n); err == nil && strconv.Itoa(id) == n {
			if q, state := k.tree().Peer(id); q != nil {
				if ok {
					rest = "/" + rest
				}
				return peerNode(p, rest, q, state)
			}
		}
	}
	switch p {
	case "/proc":
		names := []string{"cpuinfo", "loadavg", "meminfo", "self", "stat", "sys", "thread-self", "uptime", "version"}
		for _, id := range k.tree().Pids() {
			names = append(names, strconv.Itoa(id))
		}
		return dirNode(p, names...)
	case "/proc/self", "/proc/thread-self":
		return linkNode(p, pid)
	case "/proc/cpuinfo":
		return fileNode(p, (*Kernel).cpuinfo)
	case "/proc/meminfo":
		return fileNode(p, (*Kernel).meminfo)
	case "/proc/loadavg":
		return fileNode(p, (*Kernel).loadavg)
	case "/proc/stat":
		return fileNode(p, (*Kernel).procSysStat)
	case "/proc/version":
		return textNode(p, "Linux version "+kernelRelease+" (emuprof) #1 SMP PREEMPT_DYNAMIC\n")
	case "/proc/uptime":
		return fileNode(p, func(k *Kernel) []byte {
			t := monotonic(k.now)
			return fmt.Appendf(nil, "%d.%02d 0.00\n", t/1e9, t%1e9/1e7)
		})
	case "/proc/sys":
		return dirNode(p, "kernel", "vm")
	case "/proc/sys/kernel":
		return dirNode(p, "hostname", "osrelease", "ostype", "pid_max")
	case "/proc/sys/kernel/hostname":
		return textNode(p, k.cfg.Hostname+"\n")
	case "/proc/sys/kernel/osrelease":
		return textNode(p, kernelRelease+"\n")
	case "/proc/sys/kernel/ostype":
		return textNode(p, "Linux\n")
	case "/proc/sys/kernel/pid_max":
		return textNode(p, "4194304\n")
	case "/proc/sys/vm":
		return dirNode(p, "overcommit_memory")
	case "/proc/sys/vm/overcommit_memory":
		return textNode(p, "0\n")
	case self:
		return dirNode(p, "cmdline", "comm", "cwd", "exe", "fd", "maps", "mountinfo", "root", "stat", "statm", "status")
	case self + "/comm":
		return textNode(p, path.Base(k.exeGuest)+"\n")
	case self + "/cwd":
		return linkNode(p, k.cwd)
	case self + "/root":
		return linkNode(p, "/")
	case self + "/exe":
		if k.exeHost == "" {
			return nil
		}
		n := linkNode(p, k.exeGuest)
		n.hostTarget = k.exeHost
		return n
	case self + "/maps":
		return fileNode(p, (*Kernel).procMaps)
	case self + "/status":
		return fileNode(p, (*Kernel).procStatus)
	case self + "/cmdline":
		return fileNode(p, func(k *Kernel) []byte { return k.cmdline })
	case self + "/stat":
		return fileNode(p, func(k *Kernel) []byte { return k.procStat('R') })
	case self + "/statm":
		return fileNode(p, (*Kernel).procStatm)
	case self + "/mountinfo":
		return fileNode(p, (*Kernel).procMountinfo)
	case self + "/fd":
		var names []string
		for fd, s := range k.fds {
			if s.f != nil {
				names = append(names, strconv.Itoa(fd))
			}
		}
		return &synthNode{path: p, kind: synDir, names: names}
	case "/sys":
		return dirNode(p, "devices")
	case "/sys/devices":
		return dirNode(p, "system")
	case "/sys/devices/system":
		return dirNode(p, "cpu")
	case "/sys/devices/system/cpu":
		names := []string{"online", "possible", "present"}
		for i := range k.cfg.CPUs {
			names = append(names, "cpu"+strconv.Itoa(i))
		}
		return dirNode(p, names...)
	case "/sys/devices/system/cpu/online", "/sys/devices/system/cpu/possible",
		"/sys/devices/system/cpu/present":
		return textNode(p, k.cpuRange())
	case "/dev":
		return dirNode(p, "fd", "full", "null", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero")
	case "/dev/fd":
		return linkNode(p, "/proc/self/fd")
	case "/dev/stdin":
		return linkNode(p, "/proc/self/fd/0")
	case "/dev/stdout":
		return linkNode(p, "/proc/self/fd/1")
	case "/dev/stderr":
		return linkNode(p, "/proc/self/fd/2")
	case "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty":
		return &synthNode{path: p, kind: synDev, dev: devByName(p[len("/dev/"):])}
	}
	if n, ok := strings.CutPrefix(p, "/sys/devices/system/cpu/cpu"); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 0 && i < k.cfg.CPUs && strconv.Itoa(i) == n {
			return dirNode(p)
		}
	}
	if n, ok := strings.CutPrefix(p, self+"/fd/"); ok {
		fd, err := strconv.Atoi(n)
		if err != nil || strconv.Itoa(fd) != n {
			return nil
		}
		f, e := k.file(fd)
		if e != 0 {
			return nil
		}
		if h, isHost := f.ops.(*hostFile); isHost && h.keep {
			// A standard stream that is a host file: the link names its
			// path but leads to its descriptor (stdio.go), which is the
			// host's file also under an overlay.
			return &synthNode{path: p, kind: synLink, target: cmp.Or(f.guest, anonName(f)), fd: f}
		}
		if f.guest != "" {
			return linkNode(p, f.guest)
		}
		return &synthNode{path: p, kind: synLink, target: anonName(f), fd: f}
	}
	return nil
}

// anonName is the link target /proc/self/fd shows for a file without a path.
func anonName(f *openFile) string {
	switch o := f.ops.(type) {
	case *stream:
		if o.tty {
			return "/dev/pts/0"
		}
		return fmt.Sprintf("pipe:[%d]", o.ino)
	case *pipeEnd:
		return fmt.Sprintf("pipe:[%d]", o.p.ino)
	case *eventFD:
		return "anon_inode:[eventfd]"
	case *epollFile:
		return "anon_inode:[eventpoll]"
	case *timerFD:
		return "anon_inode:[timerfd]"
	case *socket:
		return fmt.Sprintf("socket:[%d]", o.ino)
	}
	return "anon_inode:[unknown]"
}

// synthStat returns the attributes of an emulated node.
func (k *Kernel) synthStat(n *synthNode) (statInfo, Errno) {
	if n.kind == synFD {
		return n.fd.ops.stat(k)
	}
	st := statInfo{ino: pathIno(n.path), nlink: 1, blksize: 4096}
	st.atime, st.mtime, st.ctime = k.cfg.EpochNanos, k.cfg.EpochNanos, k.cfg.EpochNanos
	switch {
	case strings.HasPrefix(n.path, "/proc"):
		st.dev = devProc
		if strings.HasPrefix(n.path, "/proc/"+strconv.Itoa(k.cfg.Pid)) {
			st.uid, st.gid = uint32(k.cfg.Uid), uint32(k.cfg.Gid)
		}
	case strings.HasPrefix(n.path, "/sys"):
		st.dev = devSys
	default:
		st.dev = devDevFS
	}
	switch n.kind {
	case synDir:
		st.mode, st.nlink = sIFDIR|0o555, 2
	case synFile:
		st.mode = sIFREG | 0o444
		if st.dev == devSys {
			st.size = 4096
		}
	case synLink:
		st.mode, st.size = sIFLNK|0o777, int64(len(n.target))
	case synDev:
		st.mode, st.rdev = sIFCHR|0o666, n.dev.rdev()
	}
	return st, 0
}

// synthList returns the entries of an emulated directory.
func (k *Kernel) synthList(n *synthNode) []dirent {
	parent := path.Dir(n.path)
	ents := []dirent{
		{name: ".", ino: pathIno(n.path), typ: dtDir},
		{name: "..", ino: pathIno(parent), typ: dtDir},
	}
	if parent == "/" {
		if l, e := k.walk("/", true); e == 0 {
			st := k.hostStat(l.fi, l.host)
			ents[1].ino = st.ino
		}
	}
	names := n.names
	if cur := k.synthAt(n.path); cur != nil {
		names = cur.names // listed when read, as /proc/self/fd must be
	}
	for _, name := range names {
		c := k.synthAt(path.Join(n.path, name))
		if c == nil && isShmPath(path.Join(n.path, name)) {
			ents = append(ents, dirent{name: name, ino: pathIno(shmGuest), typ: dtDir})
			continue
		}
		if c == nil {
			continue
		}
		typ := uint8(dtDir)
		switch c.kind {
		case synFile:
			typ = dtReg
		case synLink:
			typ = dtLnk
		case synDev:
			typ = dtChr
		}
		ents = append(ents, dirent{name: name, ino: pathIno(c.path), typ: typ})
	}
	slices.SortFunc(ents[2:], func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	return ents
}

// procMaps renders /proc/self/maps from the address space.
func (k *Kernel) procMaps() []byte {
	var b []byte
	for _, v := range k.as.VMAs() {
		share := byte('p')
		if v.Shared {
			share = 's'
		}
		var off, dev, ino uint64
		name := v.Name
		if v.Name != "" && v.Name[0] == '/' {
			off = v.Offset
			if l, e := k.walk(v.Name, true); e == 0 && l.fi != nil {
				st := k.hostStat(l.fi, l.host)
				dev, ino = st.dev, st.ino
				name = l.guest // the file's own path, links resolved, as Linux's d_path
			}
		}
		start := len(b)
		b = fmt.Appendf(b, "%08x-%08x %v%c %08x %02x:%02x %d ", v.Start, v.End, v.Prot, share,
			off, devMajor(dev), devMinor(dev), ino)
		if name != "" {
			for len(b)-start < 73 {
				b = append(b, ' ')
			}
			b = append(b, name...)
		}
		b = append(b, '\n')
	}
	return b
}

// Fixed memory figures of the emulated machine, in bytes.
const (
	memTotal = 8 << 30
	memFree  = 6 << 30
)

// meminfo renders /proc/meminfo.
func (k *Kernel) meminfo() []byte {
	return fmt.Appendf(nil, "MemTotal:       %8d kB\nMemFree:        %8d kB\nMemAvailable:   %8d kB\n"+
		"Buffers:               0 kB\nCached:                0 kB\nSwapTotal:             0 kB\n"+
		"SwapFree:              0 kB\n", memTotal>>10, memFree>>10, memFree>>10)
}
