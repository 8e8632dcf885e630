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
	j := NewJSONWriter(w)
	j.Value(v)
	return j.Close()
}

// JSONWriter writes one JSON value given in pieces, as WriteJSON writes
// it: the pieces are the value's compact encoding, in order, cut anywhere
// (Raw), or encodings of parts of it by encoding/json (Value, Array). A
// large value encoded in parts never has its whole encoding in memory:
// json.Marshal's buffer doubles as it grows, each time in fresh pages.
type JSONWriter struct {
	iw  indentWriter
	buf bytes.Buffer
	enc *json.Encoder
	err error
}

// NewJSONWriter returns a JSONWriter that writes to w.
func NewJSONWriter(w io.Writer) *JSONWriter {
	j := &JSONWriter{iw: indentWriter{w: w, x: indenter{indent: " "}}}
	j.enc = json.NewEncoder(&j.buf)
	return j
}

// Raw writes compact JSON text.
func (j *JSONWriter) Raw(text []byte) {
	if j.err == nil {
		_, j.err = j.iw.Write(text)
	}
}

// Compact returns json.Marshal(v), valid until the next call.
func (j *JSONWriter) Compact(v any) ([]byte, error) {
	j.buf.Reset()
	if err := j.enc.Encode(v); err != nil {
		return nil, err
	}
	b := j.buf.Bytes()
	return b[:len(b)-1], nil // Encode's newline
}

// Value writes v's encoding.
func (j *JSONWriter) Value(v any) {
	if j.err != nil {
		return
	}
	b, err := j.Compact(v)
	if err != nil {
		j.err = err
		return
	}
	j.Raw(b)
}

// Array writes the encoding of s (null when nil), chunk elements at a time.
func Array[T any](j *JSONWriter, s []T, chunk int) {
	switch {
	case s == nil:
		j.Raw([]byte("null"))
		return
	case len(s) == 0:
		j.Raw([]byte("[]"))
		return
	}
	j.Raw([]byte{'['})
	for i := 0; i < len(s) && j.err == nil; i += chunk {
		b, err := j.Compact(s[i:min(len(s), i+chunk)])
		if err != nil {
			j.err = err
			return
		}
		if i > 0 {
			j.Raw([]byte{','})
		}
		j.Raw(b[1 : len(b)-1]) // the elements, without the chunk's brackets
	}
	j.Raw([]byte{']'})
}

// Close ends the text with a newline and returns the first error, and
// whether json replaced bytes that were not UTF-8 (see WriteJSON).
func (j *JSONWriter) Close() (replaced bool, err error) {
	if j.err != nil {
		return false, j.err
	}
	if err := j.iw.flush(); err != nil {
		return false, err
	}
	return j.iw.replaced, nil
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
