package syscalls

import (
	"fmt"
	"os"
	"path"
)

// FIFOs (named pipes). mknod and mknodat create the node on the host, so
// that it is in the file system like any file; opening one never opens the
// host's FIFO (that would make the run depend on other host processes):
// the guest's openers share an in-kernel pipe, with Linux's open rules
// (fifo_open): O_RDWR never waits, O_RDONLY waits for a writer and
// O_WRONLY for a reader unless O_NONBLOCK (then a writer without a reader
// gets ENXIO). A waiting open parks the thread (ReadyWait on the FIFO).

// fifo is the pipe behind a FIFO node while it is open or waited for.
type fifo struct {
	p *pipe
	// rCount and wCount count the opens for reading and writing (Linux's
	// r_counter, w_counter): a waiting open proceeds when the other side's
	// count moves.
	rCount, wCount uint64
	// waiting are the threads parked in an open, by tid.
	waiting map[int]fifoWaiter
}

type fifoWaiter struct {
	write bool
	since uint64 // the other side's count when it began to wait
}

// waiters counts the threads waiting to open for writing (or reading).
func (ff *fifo) waiters(write bool) int {
	n := 0
	for _, w := range ff.waiting {
		if w.write == write {
			n++
		}
	}
	return n
}

// fifoNode is what an end of a FIFO's pipe knows of the node it was opened
// at.
type fifoNode struct {
	k   *Kernel
	key string
	st  statInfo // the node's attributes at open
}

// release forgets the FIFO when nobody has it open or waits for it (Linux
// frees the pipe, and the data in it).
func (n *fifoNode) release() { n.k.dropFIFO(n.key) }

// errFIFOWait is openFIFO's answer when the open has to wait; the FIFO's
// pipe id is in Kernel.fifoWait.
const errFIFOWait Errno = -1

// openFIFO opens the host FIFO node at l.
func (k *Kernel) openFIFO(l loc, flags, keep uint32) (*openFile, Errno) {
	key := l.host
	ff := k.fifos[key]
	if ff == nil {
		ff = &fifo{p: &pipe{ino: k.nextIno}, waiting: map[int]fifoWaiter{}}
		k.nextIno++
		k.fifos[key] = ff
	}
	p := ff.p
	acc := flags & oAccMode
	w, waited := ff.waiting[k.tid]
	delete(ff.waiting, k.tid)
	end := &pipeEnd{p: p, fifo: &fifoNode{k: k, key: key}}
	switch acc {
	case oRDONLY:
		if !waited {
			ff.rCount++
		}
		if p.writers == 0 && flags&oNONBLOCK == 0 && !(waited && ff.wCount != w.since) {
			if !waited {
				w = fifoWaiter{since: ff.wCount}
			}
			ff.waiting[k.tid] = w
			k.readyEvent(p.ino) // writers waiting for a reader may go
			k.fifoWait = p.ino
			return nil, errFIFOWait
		}
		p.readers++
	case oWRONLY:
		if p.readers == 0 && ff.waiters(false) == 0 && !(waited && ff.rCount != w.since) {
			if flags&oNONBLOCK != 0 {
				k.dropFIFO(key)
				return nil, eNXIO
			}
			if !waited {
				ff.wCount++
				w = fifoWaiter{write: true, since: ff.rCount}
			}
			ff.waiting[k.tid] = w
			k.fifoWait = p.ino
			return nil, errFIFOWait
		}
		if !waited {
			ff.wCount++
		}
		p.writers++
		end.writing = true
	default:
		ff.rCount++
		ff.wCount++
		p.readers++
		p.writers++
		end.both = true
	}
	end.fifo.st = k.hostStat(l.fi, l.host)
	k.readyEvent(p.ino) // waiting openers may go
	return newOpenFile(end, keep, l.guest), 0
}

// dropFIFO forgets a FIFO nobody has open or waits for.
func (k *Kernel) dropFIFO(key string) {
	if ff := k.fifos[key]; ff != nil && ff.p.readers == 0 && ff.p.writers == 0 && len(ff.waiting) == 0 {
		delete(k.fifos, key)
	}
}

// fifoWaitOutcome is the outcome of an open that waits for the other side
// of a FIFO.
func (k *Kernel) fifoWaitOutcome() Outcome {
	return Outcome{Ret: eINTR.Ret(), Wait: &ReadyWait{Object: k.fifoWait, Until: -1,
		What: fmt.Sprintf("open fifo pipe:[%d]", k.fifoWait)}}
}

// mknod modes.
const sIFWHT = 0o160000

func sysMknod(k *Kernel, c *Call) Outcome {
	return k.mknodat(atFDCWD, c.Args[0], uint32(c.Args[1]), c.Args[2])
}

func sysMknodat(k *Kernel, c *Call) Outcome {
	return k.mknodat(fdArg(c.Args[0]), c.Args[1], uint32(c.Args[2]), c.Args[3])
}

// mknodat creates regular files and FIFOs; device nodes and sockets are
// refused (EPERM: they would be host objects).
func (k *Kernel) mknodat(dirfd int, pathAddr uint64, mode uint32, dev uint64) Outcome {
	switch mode & sIFMT {
	case 0, sIFREG, sIFIFO, sIFCHR, sIFBLK, sIFSOCK, sIFWHT:
	case sIFDIR:
		return fail(ePERM)
	default:
		return fail(eINVAL)
	}
	p, e := k.readPath(pathAddr)
	if e != 0 {
		return fail(e)
	}
	l, e := k.lookup(dirfd, p, false)
	if e != 0 {
		return fail(e)
	}
	switch {
	case l.syn != nil:
		if l.exists() {
			return fail(eEXIST)
		}
		return fail(eACCES)
	case l.exists():
		return fail(eEXIST)
	case !lastNormal(p):
		return fail(eEXIST)
	}
	perm := mode & 0o7777 &^ k.umask
	if e := k.ovCreate(l); e != 0 {
		return fail(e)
	}
	switch mode & sIFMT {
	case 0, sIFREG:
		hf, err := os.OpenFile(l.host, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fail(hostErrno(err))
		}
		_ = hf.Chmod(goMode(perm))
		k.stampFile(hf, l.host, stampA|stampM|stampC)
		_ = hf.Close()
	case sIFIFO:
		if err := mkfifo(l.host, perm); err != nil {
			return fail(hostErrno(err))
		}
		_ = os.Chmod(l.host, goMode(perm)|os.ModeNamedPipe)
		k.stampPath(l.host, stampA|stampM|stampC)
	default:
		return fail(ePERM) // device nodes, sockets, whiteouts
	}
	k.ovCreated(l, false, false)
	k.touch(k.hostPath(path.Dir(l.guest)))
	k.dirEvent(l, inCreate)
	return ok(0)
}
