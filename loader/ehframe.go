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
			encodings[off] = cieEncoding(body)
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
	return cieEncoding(data[off+8 : off+4+length])
}

// cieEncoding reads a CIE body (after the CIE id) and returns the pointer
// encoding of its FDEs (augmentation 'R'); absptr when there is none.
func cieEncoding(b []byte) byte {
	if len(b) < 2 {
		return 0
	}
	version := b[0]
	i := 1
	augStart := i
	for i < len(b) && b[i] != 0 {
		i++
	}
	aug := string(b[augStart:i])
	i++ // NUL
	if len(aug) > 1 && aug[:2] == "eh" {
		i += 8
	}
	_, n := cfi.ULEB128(b[min(i, len(b)):]) // code alignment
	i += n
	_, n = cfi.ULEB128(b[min(i, len(b)):]) // data alignment (sleb, same length)
	i += n
	if version == 1 {
		i++
	} else {
		_, n = cfi.ULEB128(b[min(i, len(b)):])
		i += n
	}
	if len(aug) == 0 || aug[0] != 'z' {
		return 0
	}
	_, n = cfi.ULEB128(b[min(i, len(b)):]) // augmentation data length
	i += n
	for _, c := range aug[1:] {
		if i >= len(b) {
			return 0
		}
		switch c {
		case 'R':
			return b[i]
		case 'L':
			i++
		case 'P':
			enc := b[i]
			i++
			_, n := cfi.ReadEncoded(b[i:], enc&0x0f, 0)
			if n == 0 {
				return 0
			}
			i += n
		}
	}
	return 0
}
