package loader

import (
	"debug/elf"
	"encoding/binary"

	"emuprof/loader/cfi"
)

// ehFrameFunctions returns the [start, start+size) ranges of the functions
// described by the .eh_frame section's FDEs, at link-time addresses.
// Shared libraries such as Debian's libc.so.6 keep only exported names in
// .dynsym, but every function, internal ones included, has an FDE: without
// these ranges each block of an unnamed function would look like a routine
// of its own. Malformed data ends the walk and keeps what was read.
func ehFrameFunctions(f *elf.File) (starts, sizes []uint64) {
	sec := f.Section(".eh_frame")
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil, nil
	}
	encodings := map[int]byte{} // CIE offset -> FDE pointer encoding
	for off := 0; off+8 <= len(data); {
		length := uint64(binary.LittleEndian.Uint32(data[off:]))
		hdr := 4
		if length == 0 {
			break // terminator
		}
		if length == 0xffffffff {
			if off+12 > len(data) {
				break
			}
			length, hdr = binary.LittleEndian.Uint64(data[off+4:]), 12
		}
		end := off + hdr + int(length)
		if length > uint64(len(data)) || end > len(data) || end < off {
			break
		}
		idOff := off + hdr
		id := binary.LittleEndian.Uint32(data[idOff:])
		body := data[idOff+4 : end]
		if id == 0 {
			encodings[off] = cfi.CIEEncoding(body)
		} else if cie := idOff - int(id); cie >= 0 {
			enc, ok := encodings[cie]
			if !ok {
				enc = cieEncodingAt(data, cie)
			}
			fieldAddr := sec.Addr + uint64(idOff+4)
			start, n := cfi.ReadEncoded(body, enc, fieldAddr)
			if n > 0 {
				size, m := cfi.ReadEncoded(body[n:], enc&0x0f, 0)
				if m > 0 && size > 0 && start != 0 {
					starts, sizes = append(starts, start), append(sizes, size)
				}
			}
		}
		off = end
	}
	return starts, sizes
}

// cieEncodingAt parses the CIE at off in data and returns its FDE encoding.
func cieEncodingAt(data []byte, off int) byte {
	if off+8 > len(data) {
		return 0
	}
	length := int(binary.LittleEndian.Uint32(data[off:]))
	if length == 0 || length == -1 || off+4+length > len(data) {
		return 0
	}
	return cfi.CIEEncoding(data[off+8 : off+4+length])
}
