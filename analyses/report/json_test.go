package report

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomValue is a random JSON value: nested objects and arrays (empty
// ones too), strings with quotes, backslashes, control bytes, HTML
// characters, invalid UTF-8 and non-ASCII runes, numbers and literals.
func randomValue(r *rand.Rand, depth int) any {
	k := r.IntN(9)
	if depth > 5 {
		k = r.IntN(5)
	}
	switch k {
	case 0:
		return r.Int64() - r.Int64()
	case 1:
		return r.NormFloat64() * 1e6
	case 2:
		return []bool{true, false}[r.IntN(2)]
	case 3:
		return nil
	case 4:
		return randomString(r)
	case 5, 6:
		m := map[string]any{}
		for range r.IntN(5) {
			m[randomString(r)+string(rune('a'+r.IntN(26)))] = randomValue(r, depth+1)
		}
		return m
	default:
		var a []any
		for range r.IntN(5) {
			a = append(a, randomValue(r, depth+1))
		}
		if a == nil && r.IntN(2) == 0 {
			return []any{}
		}
		return a
	}
}

func randomString(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteString([]string{"a", `"`, `\`, "\n", "\x01", "<", "&", "é", "\xff", "\u2028", "}", ",", ":", " ", "[", "\\\""}[r.IntN(16)])
	}
	return b.String()
}

// MarshalIndent writes what json.MarshalIndent(v, "", " ") writes, plus a
// newline, and AppendIndent what json.Indent writes, for random values and
// indents.
func TestMarshalIndentAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		v := randomValue(r, 0)
		want, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		got, err := MarshalIndent(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, append(want, '\n')) {
			t.Fatalf("value %d: MarshalIndent\n%s\nwant\n%s", i, got, want)
		}
		compact, _ := json.Marshal(v)
		for _, ind := range []string{"\t", "   ", ""} {
			var w bytes.Buffer
			if err := json.Indent(&w, compact, "", ind); err != nil {
				t.Fatal(err)
			}
			if got := AppendIndent([]byte("x"), compact, ind); string(got) != "x"+w.String() {
				t.Fatalf("value %d, indent %q: AppendIndent\n%s\nwant\n%s", i, ind, got, w.String())
			}
		}
	}
}

// Deep nesting indents past the run of spaces AppendIndent slices.
func TestAppendIndentDeep(t *testing.T) {
	src := strings.Repeat("[", 300) + "1" + strings.Repeat("]", 300)
	var want bytes.Buffer
	if err := json.Indent(&want, []byte(src), "", " "); err != nil {
		t.Fatal(err)
	}
	if got := AppendIndent(nil, []byte(src), " "); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("depth 300 differs")
	}
}

// Space between tokens (json.Marshal writes none) is dropped, as
// json.Indent drops it.
func TestAppendIndentSpace(t *testing.T) {
	src := []byte("{ \"a\" : [ 1 , 2 ,\n{} ] ,\t\"b\": \"x y\" }")
	var want bytes.Buffer
	if err := json.Indent(&want, src, "", " "); err != nil {
		t.Fatal(err)
	}
	if got := AppendIndent(nil, src, " "); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("got\n%s\nwant\n%s", got, want.Bytes())
	}
}

// The indenter gives the same text when the input comes in pieces cut
// anywhere (inside strings, escapes and numbers too), and WriteJSON
// reports the bytes json replaced.
func TestIndentInPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		v := randomValue(r, 0)
		compact, _ := json.Marshal(v)
		whole := AppendIndent(nil, compact, " ")
		for cut := 0; cut <= len(compact); cut += 1 + len(compact)/40 {
			x := indenter{indent: " "}
			got := x.append(x.append(nil, compact[:cut]), compact[cut:])
			if !bytes.Equal(got, whole) {
				t.Fatalf("value %d cut at %d:\n%s\nwant\n%s", i, cut, got, whole)
			}
		}
	}
	for _, c := range []struct {
		v    any
		want bool
	}{{"ok \ufffd é", false}, {"bad \xff", true}, {[]string{strings.Repeat("a", indentPiece-3), "\xfe"}, true}} {
		var b bytes.Buffer
		replaced, err := WriteJSON(&b, c.v)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.MarshalIndent(c.v, "", " ")
		if replaced != c.want || b.String() != string(want)+"\n" {
			t.Errorf("WriteJSON(%q): replaced %v, text %q", c.v, replaced, b.String())
		}
	}
}

// \ufffd is found across two writes.
func TestIndentWriterFFFDAcrossWrites(t *testing.T) {
	for cut := 1; cut < 9; cut++ {
		src := `["a\ufffd"]`
		var b bytes.Buffer
		iw := &indentWriter{w: &b, x: indenter{indent: " "}}
		iw.Write([]byte(src[:cut]))
		iw.Write([]byte(src[cut:]))
		if !iw.replaced || b.String() != "[\n \"a\\ufffd\"\n]" {
			t.Errorf("cut at %d: replaced %v, %q", cut, iw.replaced, b.String())
		}
	}
}

// A write that fails fails WriteJSON.
func TestWriteJSONError(t *testing.T) {
	if _, err := WriteJSON(failWriter{}, map[string]int{"a": 1}); err == nil {
		t.Error("no error")
	}
}

type failWriter struct{}

func (failWriter) Write(p []byte) (int, error) { return 0, io.ErrShortWrite }
