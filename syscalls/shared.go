package syscalls

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"emuprof/mm"
	"emuprof/trace"
)

// MAP_SHARED file mappings, coherent with their file as on Linux.
//
// Linux maps the file's page cache, so stores through a shared mapping and
// read/write on the file see one copy of the data. Here the mapping is
// guest memory and the file is a host file, so the kernel keeps them
// coherent at the points where the guest can tell the difference, without
// tracking stores (no per-access cost):
//
//   - write, pwrite, writev, copy_file_range, sendfile into a file copy the
//     written bytes into every shared mapping of the same inode (any open
//     file, path or hard link);
//   - read, pread, readv, sendfile, copy_file_range from a file and mmap of
//     it first write back the mapped pages that overlap the range read;
//   - msync, munmap, mmap MAP_FIXED and mremap over a mapping, and the end
//     of the run (Kernel.Close: exit, crash, deadlock, interrupt) write back
//     the pages concerned;
//   - truncation zeroes what the mappings hold past the new end.
//
// Between those points the guest's memory is the authoritative copy of the
// mapped range: writing back compares it with the file and writes the
// pages that differ, up to the end of the file (bytes past EOF in the last
// page are not written, as on Linux). Two shared mappings of the same file
// range in this process see each other's stores only when one is written
// back: without a hook on every store the kernel cannot do better, so it
// says so (Warnings) when a program creates such aliases.

// sharedFile is an open file that MAP_SHARED mappings refer to: the File
// handle of their VMAs. The mappings hold a reference to the open file, so
// it stays open after the guest closes its descriptor, as on Linux.
type sharedFile struct {
	of *openFile
	h  *hostFile
	// writable says whether stores may reach the file: it was open for
	// writing (Linux's VM_MAYWRITE). Mappings of read-only files cannot
	// become writable, so they are never written back.
	writable bool
}

// syncChunk bounds the buffers used to compare a mapping with its file.
const syncChunk = 256 << 10

// identity returns the file's FileInfo from the first time it is asked, for
// os.SameFile (device and inode): it stays valid after writes.
func (h *hostFile) identity() os.FileInfo {
	if h.id == nil {
		h.id, _ = h.f.Stat()
	}
	return h.id
}

// sharedHandle returns the handle for shared mappings of the open file f,
// creating it (and taking a reference to f) on first use.
func (k *Kernel) sharedHandle(f *openFile, h *hostFile) *sharedFile {
	for _, s := range k.shared {
		if s.of == f {
			return s
		}
	}
	s := &sharedFile{of: f, h: h, writable: f.writable()}
	f.refs++
	k.shared = append(k.shared, s)
	return s
}

// pruneShared drops the handles no mapping refers to any more, releasing
// their open files when no descriptor refers to them either. As on Linux,
// an error closing the host file does not fail the munmap (or mmap) that
// dropped the last mapping.
func (k *Kernel) pruneShared() {
	if len(k.shared) == 0 {
		return
	}
	live := map[*sharedFile]bool{}
	for _, v := range k.as.VMAs() {
		if s, isShared := v.File.(*sharedFile); isShared {
			live[s] = true
		}
	}
	kept := k.shared[:0]
	for _, s := range k.shared {
		if live[s] {
			kept = append(kept, s)
		} else {
			_ = k.unrefShared(s)
		}
	}
	clear(k.shared[len(kept):])
	k.shared = kept
}

// unrefShared drops the mappings' reference to s's open file.
func (k *Kernel) unrefShared(s *sharedFile) error {
	s.of.refs--
	if s.of.refs > 0 {
		return nil
	}
	return s.of.ops.release()
}

// sharedVMAs returns the shared file mappings of inode id, or all of them
// when all is set.
func (k *Kernel) sharedVMAs(id os.FileInfo, all bool) []mm.VMA {
	if len(k.shared) == 0 || id == nil && !all {
		return nil
	}
	var out []mm.VMA
	for _, v := range k.as.VMAs() {
		if s, isShared := v.File.(*sharedFile); isShared && (all || os.SameFile(s.h.identity(), id)) {
			out = append(out, v)
		}
	}
	return out
}

// sameInode returns the mappings of vs whose file is the inode of v's.
func sameInode(vs []mm.VMA, v mm.VMA) []mm.VMA {
	id := v.File.(*sharedFile).h.identity()
	var out []mm.VMA
	for _, w := range vs {
		if os.SameFile(w.File.(*sharedFile).h.identity(), id) {
			out = append(out, w)
		}
	}
	return out
}

// fileRange returns the file offsets [lo, hi) that guest range [a, b) of
// v maps.
func fileRange(v mm.VMA, a, b uint64) (uint64, uint64) {
	return v.Offset + (a - v.Start), v.Offset + (b - v.Start)
}

// syncBuffers returns two buffers of n <= syncChunk bytes.
func (k *Kernel) syncBuffers(n int) ([]byte, []byte) {
	if len(k.syncBuf) < 2*syncChunk {
		k.syncBuf = make([]byte, 2*syncChunk)
	}
	return k.syncBuf[:n], k.syncBuf[syncChunk : syncChunk+n]
}

// writeBack writes back the pages of guest range [lo, hi) (page aligned,
// inside v; nothing when empty) that differ from the file, and shows the
// bytes that changed in the other shared mappings of the file in others.
func (k *Kernel) writeBack(v mm.VMA, lo, hi uint64, others []mm.VMA) error {
	s := v.File.(*sharedFile)
	if !s.writable {
		return nil
	}
	fi, err := s.h.f.Stat()
	if err != nil {
		return err
	}
	size := uint64(max(fi.Size(), 0))
	off, _ := fileRange(v, lo, hi)
	if off >= size {
		return nil
	}
	hi = min(hi, lo+(size-off)) // bytes past EOF are not written
	var wrote bool
	for a := lo; a < hi; {
		n := min(hi-a, syncChunk)
		mem, file := k.syncBuffers(int(n))
		if err := k.mem.ReadMem(a, mem); err != nil {
			return &mm.BackendError{Op: "read", Addr: a, Size: n, Err: err}
		}
		fo, _ := fileRange(v, a, a+n)
		got, err := s.h.f.ReadAt(file, int64(fo))
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		clear(file[got:])
		for p := uint64(0); p < n; p += mm.PageSize {
			q := min(p+mm.PageSize, n)
			if bytes.Equal(mem[p:q], file[p:q]) {
				continue
			}
			if _, err := s.h.f.WriteAt(mem[p:q], int64(fo+p)); err != nil {
				return err
			}
			wrote = true
			if len(others) > 0 {
				k.showChanges(others, a+p, fo+p, mem[p:q], file[p:q])
			}
		}
		a += n
	}
	if wrote {
		k.stampFile(s.h.f, s.h.host, stampM|stampC)
	}
	return nil
}

// showChanges copies into the mappings others (but not back to addr) the
// bytes of page mem (at guest address addr, file offset off) that differ
// from old: only those, so that stores made through another mapping
// elsewhere in the page survive.
func (k *Kernel) showChanges(others []mm.VMA, addr, off uint64, mem, old []byte) {
	for i := 0; i < len(mem); {
		if mem[i] == old[i] {
			i++
			continue
		}
		j := i
		for j < len(mem) && mem[j] != old[j] {
			j++
		}
		k.toMappings(others, off+uint64(i), mem[i:j], addr+uint64(i), false)
		i = j
	}
}

// toMappings stores data, the file's bytes at off, into every mapping of vs
// that maps them, except at guest address skip (the source of the data).
// emit reports the stores as KernelWrite.
func (k *Kernel) toMappings(vs []mm.VMA, off uint64, data []byte, skip uint64, emit bool) {
	end := off + uint64(len(data))
	for _, v := range vs {
		lo, hi := fileRange(v, v.Start, v.End)
		lo, hi = max(lo, off), min(hi, end)
		if lo >= hi {
			continue
		}
		addr := v.Start + (lo - v.Offset)
		if addr == skip {
			continue
		}
		// Like the page cache, the kernel stores whatever the protection.
		if k.mem.WriteMem(addr, data[lo-off:hi-off]) == nil && emit {
			k.emit(trace.KindKernelWrite, addr, hi-lo)
		}
	}
}

// syncFile writes back what the shared mappings of h's inode hold for file
// range [off, end): the kernel is about to read it. Guest range
// [skip, skipEnd) is left out (it is about to be filled from the file).
func (k *Kernel) syncFile(h *hostFile, off, end, skip, skipEnd uint64) error {
	if len(k.shared) == 0 || off >= end || !k.mapped(h.identity()) {
		return nil
	}
	vs := k.sharedVMAs(h.identity(), false)
	for _, v := range vs {
		lo, hi := fileRange(v, v.Start, v.End)
		lo, hi = max(lo, mm.PageDown(off)), min(hi, mm.PageUp(end))
		if lo >= hi {
			continue
		}
		a, b := v.Start+(lo-v.Offset), v.Start+(hi-v.Offset)
		if a < skipEnd && skip < b {
			// Write back the parts around the skipped range.
			if err := k.writeBack(v, a, max(a, min(b, skip)), vs); err != nil {
				return err
			}
			a = max(a, min(b, skipEnd))
		}
		if err := k.writeBack(v, a, b, vs); err != nil {
			return err
		}
	}
	return nil
}

// syncRange writes back the shared file mappings in guest range
// [addr, end), which is about to be unmapped, replaced, moved or msynced.
func (k *Kernel) syncRange(addr, end uint64) error {
	if len(k.shared) == 0 {
		return nil
	}
	addr, end = mm.PageDown(addr), mm.PageUp(end)
	all := k.sharedVMAs(nil, true)
	for _, v := range all {
		lo, hi := max(v.Start, addr), min(v.End, end)
		if lo >= hi {
			continue
		}
		if err := k.writeBack(v, lo, hi, sameInode(all, v)); err != nil {
			return err
		}
	}
	return nil
}

// syncBeforeUnmap is syncRange for mappings about to go away (munmap, mmap
// MAP_FIXED, mremap): as on Linux, a failure to write back does not fail
// the call, and the data lost is reported to the user. Only emulator
// failures are returned.
func (k *Kernel) syncBeforeUnmap(addr, end uint64) error {
	err := k.syncRange(addr, end)
	var be *mm.BackendError
	if err == nil || errors.As(err, &be) {
		return err
	}
	k.warn(fmt.Sprintf("writing back a shared file mapping failed, stores were lost: %v", err))
	return nil
}

// fileWritten shows data, just written to h at off, in the shared mappings
// of h's inode. oldSize is the file's size before the write: a write past
// it exposes [oldSize, off), which reads as zeros, as on Linux.
func (k *Kernel) fileWritten(h *hostFile, off int64, data []byte, oldSize int64) {
	vs := k.sharedVMAs(h.identity(), false)
	if len(vs) == 0 {
		return
	}
	if end := off + int64(len(data)); oldSize >= 0 && end > oldSize {
		k.setFileEnds(vs, end) // before the data goes there
	}
	if oldSize >= 0 && off > oldSize {
		k.zeroMappings(vs, uint64(oldSize), uint64(off))
	}
	k.toMappings(vs, uint64(off), data, 0, true)
}

// zeroMappings zeroes what the mappings vs hold for file range [off, end).
func (k *Kernel) zeroMappings(vs []mm.VMA, off, end uint64) {
	var zero []byte
	for _, v := range vs {
		lo, hi := fileRange(v, v.Start, v.End)
		lo, hi = max(lo, off), min(hi, end)
		for lo < hi {
			n := min(hi-lo, syncChunk)
			if len(zero) < int(n) {
				zero = make([]byte, n)
			}
			_ = k.mem.WriteMem(v.Start+(lo-v.Offset), zero[:n])
			lo += n
		}
	}
}

// mapped reports whether inode id may have shared mappings: a quick test
// on the handles, so that I/O on other files costs no more than this.
func (k *Kernel) mapped(id os.FileInfo) bool {
	for _, s := range k.shared {
		if os.SameFile(s.h.identity(), id) {
			return true
		}
	}
	return false
}

// mappedSize returns the size of h when it has shared mappings (-1
// otherwise), for fileWritten.
func (k *Kernel) mappedSize(h *hostFile) int64 {
	if len(k.shared) == 0 || !k.mapped(h.identity()) {
		return -1
	}
	fi, err := h.f.Stat()
	if err != nil {
		return -1
	}
	return fi.Size()
}

// sizeIfMapped returns the size of the file open as hf when it has shared
// mappings (-1 otherwise), for fileResized.
func (k *Kernel) sizeIfMapped(hf *os.File) int64 {
	if len(k.shared) == 0 {
		return -1
	}
	fi, err := hf.Stat()
	if err != nil || len(k.sharedVMAs(fi, false)) == 0 {
		return -1
	}
	return fi.Size()
}

// fileResized tells the shared mappings of inode id that its size changed
// from oldSize to size (truncate, ftruncate, O_TRUNC): from the lower of the
// two on, the file reads as zeros, and so must the mappings (Linux zeroes
// the partial page and drops the pages past the end).
func (k *Kernel) fileResized(id os.FileInfo, oldSize, size int64) {
	if len(k.shared) == 0 || id == nil || oldSize < 0 {
		return
	}
	vs := k.sharedVMAs(id, false)
	k.zeroMappings(vs, uint64(max(min(oldSize, size), 0)), ^uint64(0))
	k.setFileEnds(vs, size)
}

// setFileEnds tells the address space where the file mapped by vs (shared
// mappings of one inode) ends now, size: pages past it are SIGBUS, pages
// below it that were past it come back as zeros (a write fills them next).
func (k *Kernel) setFileEnds(vs []mm.VMA, size int64) {
	end := mm.PageUp(uint64(max(size, 0)))
	for _, v := range vs {
		eof := v.Start
		if end > v.Offset {
			eof += min(v.Size(), end-v.Offset)
		}
		_ = k.as.SetFileEnd(v.Start, v.End, eof) // past the limit: those pages stay past the end
	}
}

// truncateHost truncates the open host file hf to size, keeping its shared
// mappings coherent.
func (k *Kernel) truncateHost(hf *os.File, size int64) error {
	old := k.sizeIfMapped(hf)
	if err := hf.Truncate(size); err != nil {
		return err
	}
	if old >= 0 {
		fi, _ := hf.Stat()
		k.fileResized(fi, old, size)
	}
	return nil
}

// truncatePath truncates the host file at host to size, keeping its shared
// mappings coherent.
func (k *Kernel) truncatePath(host string, size int64) error {
	old := int64(-1)
	var fi os.FileInfo
	if len(k.shared) > 0 {
		if fi, _ = os.Stat(host); fi != nil {
			old = fi.Size()
		}
	}
	if err := os.Truncate(host, size); err != nil {
		return err
	}
	k.fileResized(fi, old, size)
	return nil
}

// loadFile fills guest range [addr, addr+size) from h at off (after
// writing back what shared mappings hold for that range); what lies past
// the end of the file stays as it is (zeros in a new mapping).
func (k *Kernel) loadFile(h *hostFile, addr, size, off uint64) error {
	if err := k.syncFile(h, off, off+size, addr, addr+size); err != nil {
		return err
	}
	for done := uint64(0); done < size; {
		buf := k.scratch(int(min(size-done, maxChunk)))
		got, err := h.f.ReadAt(buf, int64(off+done))
		if got == 0 {
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			break // the rest reads as zeros
		}
		if werr := k.mem.WriteMem(addr+done, buf[:got]); werr != nil {
			return &mm.BackendError{Op: "write", Addr: addr + done, Size: uint64(got), Err: werr}
		}
		k.emit(trace.KindKernelWrite, addr+done, uint64(got))
		done += uint64(got)
	}
	return nil
}

// syncAll writes back every shared file mapping and drops the handles: the
// process is ending.
func (k *Kernel) syncAll() error {
	var first error
	if len(k.shared) > 0 {
		first = k.syncRange(0, mm.TaskSize)
	}
	for _, s := range k.shared {
		if err := k.unrefShared(s); err != nil && first == nil {
			first = err
		}
	}
	k.shared = nil
	return first
}

// checkAliases warns when the shared mapping at addr maps file bytes that
// another shared mapping maps too, and stores may be made through either:
// those stores show in the other mapping only at the next write-back.
func (k *Kernel) checkAliases(addr uint64) {
	v, found := k.as.Find(addr)
	if !found || v.File == nil {
		return
	}
	s := v.File.(*sharedFile)
	lo, hi := fileRange(v, v.Start, v.End)
	for _, w := range k.sharedVMAs(s.h.identity(), false) {
		wlo, whi := fileRange(w, w.Start, w.End)
		if w.Start == v.Start || whi <= lo || hi <= wlo {
			continue
		}
		if s.writable || w.File.(*sharedFile).writable {
			k.warn(fmt.Sprintf("%s is mapped MAP_SHARED twice over the same bytes: a store through one mapping "+
				"shows in the other only at the next msync, munmap or read or write of the file", v.Name))
			return
		}
	}
}

// warn records a warning for the user, once.
func (k *Kernel) warn(msg string) {
	if !slices.Contains(k.warnings, msg) {
		k.warnings = append(k.warnings, msg)
	}
}

// Warnings returns what the kernel could not emulate exactly in this run,
// one sentence each, in the order they arose.
func (k *Kernel) Warnings() []string { return slices.Clone(k.warnings) }
