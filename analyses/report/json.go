package report

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// MarshalIndent returns json.MarshalIndent(v, "", " ") followed by a
// newline, the form of the analyses' JSON files.
func MarshalIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	if _, err := WriteJSON(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteJSON writes v to w as json.MarshalIndent(v, "", " ") followed by a
// newline, at about a third of the cost for large values: json.Indent
// re-reads the encoding through its validating scanner, one indirect call
// per byte, where the compact output of json.Marshal only needs its strings
// skipped and its punctuation spaced; and the indented text goes to w in
// pieces from one small buffer rather than as a copy of the whole (fresh
// memory is what costs most here: every new page is a page fault).
// replaced reports whether the encoding may have replaced bytes that were
// not UTF-8 in v's strings with U+FFFD (json writes them as \ufffd), so
// that v does not read back as it is (it is also true for a string that
// holds the text \ufffd).
func WriteJSON(w io.Writer, v any) (replaced bool, err error) {
	iw := &indentWriter{w: w, x: indenter{indent: " "}}
	if err := json.NewEncoder(iw).Encode(v); err != nil { // the compact encoding and a newline
		return false, err
	}
	if err := iw.flush(); err != nil {
		return false, err
	}
	return iw.replaced, nil
}

// indentWriter indents the compact JSON written to it into w.
type indentWriter struct {
	w        io.Writer
	x        indenter
	buf      []byte
	tail     []byte // the last bytes written, to find \ufffd across writes
	replaced bool
}

const indentPiece = 8 << 10 // bytes of input indented at a time

var escapedFFFD = []byte(`\ufffd`)

func (iw *indentWriter) Write(p []byte) (int, error) {
	if !iw.replaced {
		head := append(iw.tail, p[:min(len(p), len(escapedFFFD)-1)]...)
		iw.replaced = bytes.Contains(head, escapedFFFD) || bytes.Contains(p, escapedFFFD)
		if len(p) >= len(escapedFFFD)-1 {
			head = p
		}
		iw.tail = append(iw.tail[:0], head[max(0, len(head)-(len(escapedFFFD)-1)):]...)
	}
	if iw.buf == nil {
		iw.buf = make([]byte, 0, 2*indentPiece)
	}
	for off := 0; off < len(p); off += indentPiece {
		iw.buf = iw.x.append(iw.buf[:0], p[off:min(len(p), off+indentPiece)])
		if _, err := iw.w.Write(iw.buf); err != nil {
			return off, err
		}
	}
	return len(p), nil
}

// flush ends the text with the newline json.Encoder wrote (the indenter
// drops space between tokens).
func (iw *indentWriter) flush() error {
	_, err := iw.w.Write([]byte{'\n'})
	return err
}

// spaces are the indentation appended per line (sliced; longer runs are
// appended in pieces).
var spaces = strings.Repeat(" ", 128)

// AppendIndent appends to dst the JSON text src, as produced by
// json.Marshal (valid and compact), indented as json.Indent(dst, src, "",
// indent) does: one element or member per line, indent repeated once per
// level of nesting, ": " after keys, and empty objects and arrays kept as
// {} and []. Space between tokens in src is dropped.
func AppendIndent(dst, src []byte, indent string) []byte {
	x := indenter{indent: indent}
	return x.append(dst, src)
}

// indenter is AppendIndent's state, so that the text can come in pieces.
type indenter struct {
	indent  string
	depth   int
	pending bool // after { or [: indent unless it closes at once
	inStr   bool // inside a string
	esc     bool // after a backslash in a string
}

func (x *indenter) newline(dst []byte) []byte {
	dst = append(dst, '\n')
	if x.indent == " " {
		for n := x.depth; n > 0; {
			k := min(n, len(spaces))
			dst = append(dst, spaces[:k]...)
			n -= k
		}
		return dst
	}
	for range x.depth {
		dst = append(dst, x.indent...)
	}
	return dst
}

// append indents src, the next piece of the text, onto dst.
func (x *indenter) append(dst, src []byte) []byte {
	i := 0
	if x.inStr {
		i = x.skipString(src, 0)
		dst = append(dst, src[:i]...)
	}
	for ; i < len(src); i++ {
		c := src[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		if x.pending && c != '}' && c != ']' {
			x.pending = false
			x.depth++
			dst = x.newline(dst)
		}
		switch c {
		case '"':
			x.inStr = true
			j := x.skipString(src, i+1)
			dst = append(dst, src[i:j]...)
			i = j - 1
		case '{', '[':
			x.pending = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			dst = x.newline(dst)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if x.pending {
				x.pending = false
			} else {
				x.depth--
				dst = x.newline(dst)
			}
			dst = append(dst, c)
		default: // a number, true, false or null: up to the next token
			j := i + 1
			for j < len(src) {
				if d := src[j]; d == ',' || d == ':' || d == '}' || d == ']' || d == ' ' || d == '\t' || d == '\n' || d == '\r' {
					break
				}
				j++
			}
			dst = append(dst, src[i:j]...)
			i = j - 1
		}
	}
	return dst
}

// skipString returns the end of the string that src[i:] is inside of (just
// past its closing quote), or len(src) if it goes on in the next piece.
func (x *indenter) skipString(src []byte, i int) int {
	esc := x.esc
	for ; i < len(src); i++ {
		switch c := src[i]; {
		case esc:
			esc = false
		case c == '\\':
			esc = true
		case c == '"':
			x.inStr, x.esc = false, false
			return i + 1
		}
	}
	x.esc = esc
	return i
}
