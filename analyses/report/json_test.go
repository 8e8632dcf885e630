package report

import (
	"bytes"
	"encoding/json"
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
