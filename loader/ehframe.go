package loader

import (
	"debug/elf"
	"encoding/binary"
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
			start, n := readEncoded(body, enc, fieldAddr)
			if n > 0 {
				size, m := readEncoded(body[n:], enc&0x0f, 0)
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
	_, n := uleb(b[min(i, len(b)):]) // code alignment
	i += n
	_, n = uleb(b[min(i, len(b)):]) // data alignment (sleb, same length)
	i += n
	if version == 1 {
		i++
	} else {
		_, n = uleb(b[min(i, len(b)):])
		i += n
	}
	if len(aug) == 0 || aug[0] != 'z' {
		return 0
	}
	_, n = uleb(b[min(i, len(b)):]) // augmentation data length
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
			_, n := readEncoded(b[i:], enc&0x0f, 0)
			if n == 0 {
				return 0
			}
			i += n
		}
	}
	return 0
}

// readEncoded reads a DW_EH_PE-encoded pointer at the start of b, whose
// address is at (for pc-relative encodings). It returns the value and the
// bytes read, 0 if b is too short or the encoding is unknown.
func readEncoded(b []byte, enc byte, at uint64) (uint64, int) {
	var v uint64
	var n int
	switch enc & 0x0f {
	case 0x00, 0x04, 0x0c:
		if len(b) < 8 {
			return 0, 0
		}
		v, n = binary.LittleEndian.Uint64(b), 8
	case 0x02:
		if len(b) < 2 {
			return 0, 0
		}
		v, n = uint64(binary.LittleEndian.Uint16(b)), 2
	case 0x0a:
		if len(b) < 2 {
			return 0, 0
		}
		v, n = uint64(int64(int16(binary.LittleEndian.Uint16(b)))), 2
	case 0x03:
		if len(b) < 4 {
			return 0, 0
		}
		v, n = uint64(binary.LittleEndian.Uint32(b)), 4
	case 0x0b:
		if len(b) < 4 {
			return 0, 0
		}
		v, n = uint64(int64(int32(binary.LittleEndian.Uint32(b)))), 4
	case 0x01, 0x09:
		v, n = uleb(b)
		if n == 0 {
			return 0, 0
		}
	default:
		return 0, 0
	}
	switch enc & 0x70 {
	case 0x00:
	case 0x10: // pcrel
		v += at
	default:
		return 0, 0 // datarel, textrel, funcrel: not used for code ranges here
	}
	return v, n
}

// uleb reads an unsigned LEB128 number; n is 0 if it does not end in b.
func uleb(b []byte) (v uint64, n int) {
	var shift uint
	for i, c := range b {
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}
