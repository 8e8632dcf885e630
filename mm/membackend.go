package mm

import (
	"errors"
	"fmt"
)

// MemBackend is a Backend kept in Go memory, for tests and tools that run
// the syscall layer without a CPU. It is as strict as Unicorn: mapping a
// mapped page or unmapping, protecting or accessing an unmapped page fails.
// Reads and writes ignore page protections, as Unicorn's uc_mem_read and
// uc_mem_write do.
type MemBackend struct {
	pages map[uint64]*memPage
	// Calls records the page operations performed, one string per call
	// ("map 0x1000+0x2000 rw-"), for tests that check what reached the CPU.
	Calls []string
}

type memPage struct {
	prot Prot
	data [PageSize]byte
}

// errUnmapped is what MemBackend returns for an access to an unmapped page.
var errUnmapped = errors.New("unmapped page")

// NewMemBackend returns an empty MemBackend.
func NewMemBackend() *MemBackend {
	return &MemBackend{pages: make(map[uint64]*memPage)}
}

func (m *MemBackend) pageRange(op string, addr, size uint64) error {
	if addr%PageSize != 0 || size%PageSize != 0 || size == 0 || addr+size < addr {
		return fmt.Errorf("membackend: %s %#x+%#x: unaligned", op, addr, size)
	}
	return nil
}

// MapPages maps zero-filled pages; all of them must be unmapped.
func (m *MemBackend) MapPages(addr, size uint64, prot Prot) error {
	if err := m.pageRange("map", addr, size); err != nil {
		return err
	}
	for a := addr; a < addr+size; a += PageSize {
		if m.pages[a] != nil {
			return fmt.Errorf("membackend: map %#x+%#x: page %#x already mapped", addr, size, a)
		}
	}
	for a := addr; a < addr+size; a += PageSize {
		m.pages[a] = &memPage{prot: prot}
	}
	m.Calls = append(m.Calls, fmt.Sprintf("map %#x+%#x %v", addr, size, prot))
	return nil
}

func (m *MemBackend) allMapped(op string, addr, size uint64) error {
	if err := m.pageRange(op, addr, size); err != nil {
		return err
	}
	for a := addr; a < addr+size; a += PageSize {
		if m.pages[a] == nil {
			return fmt.Errorf("membackend: %s %#x+%#x: page %#x: %w", op, addr, size, a, errUnmapped)
		}
	}
	return nil
}

// UnmapPages unmaps pages; all of them must be mapped.
func (m *MemBackend) UnmapPages(addr, size uint64) error {
	if err := m.allMapped("unmap", addr, size); err != nil {
		return err
	}
	for a := addr; a < addr+size; a += PageSize {
		delete(m.pages, a)
	}
	m.Calls = append(m.Calls, fmt.Sprintf("unmap %#x+%#x", addr, size))
	return nil
}

// ProtectPages changes the protection of mapped pages.
func (m *MemBackend) ProtectPages(addr, size uint64, prot Prot) error {
	if err := m.allMapped("protect", addr, size); err != nil {
		return err
	}
	for a := addr; a < addr+size; a += PageSize {
		m.pages[a].prot = prot
	}
	m.Calls = append(m.Calls, fmt.Sprintf("protect %#x+%#x %v", addr, size, prot))
	return nil
}

// PageProt returns the protection of the page containing addr.
func (m *MemBackend) PageProt(addr uint64) (Prot, bool) {
	p := m.pages[PageDown(addr)]
	if p == nil {
		return 0, false
	}
	return p.prot, true
}

// access copies between p and guest memory at addr; it fails before
// copying anything if a page is unmapped.
func (m *MemBackend) access(op string, addr uint64, p []byte, write bool) error {
	if addr+uint64(len(p)) < addr {
		return fmt.Errorf("membackend: %s %#x+%#x: wraps", op, addr, len(p))
	}
	for a := PageDown(addr); a < addr+uint64(len(p)); a += PageSize {
		if m.pages[a] == nil {
			return fmt.Errorf("membackend: %s %#x+%#x: page %#x: %w", op, addr, len(p), a, errUnmapped)
		}
	}
	for done := 0; done < len(p); {
		a := addr + uint64(done)
		pg := m.pages[PageDown(a)]
		off := a % PageSize
		var n int
		if write {
			n = copy(pg.data[off:], p[done:])
		} else {
			n = copy(p[done:], pg.data[off:])
		}
		done += n
	}
	return nil
}

// ReadMem copies guest memory at addr into p.
func (m *MemBackend) ReadMem(addr uint64, p []byte) error { return m.access("read", addr, p, false) }

// WriteMem copies p into guest memory at addr.
func (m *MemBackend) WriteMem(addr uint64, p []byte) error { return m.access("write", addr, p, true) }
