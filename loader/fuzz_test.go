package loader

import (
	"errors"
	"strings"
	"testing"
)

// FuzzOpenBytes feeds arbitrary bytes through Open, Plan, BuildStack and the
// symbol table: errors must be one-line *BadInputErrors, nothing may panic,
// and layouts must keep their invariants.
func FuzzOpenBytes(f *testing.F) {
	f.Add(minimalELF())
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := OpenBytes("fuzz", data)
		if err != nil {
			var bad *BadInputError
			if !errors.As(err, &bad) || !strings.HasPrefix(err.Error(), "fuzz: ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("bad error %q (%T)", err, err)
			}
			return
		}
		var interp *Object
		if o.Interp != "" {
			interp = o
		}
		l, err := Plan(o, interp)
		if err == nil {
			checkMappings(t, l)
			if _, _, err := BuildStack(StackSpec{Top: 0x7ffffffff000, Args: []string{"fuzz"}, ExecFn: "fuzz", Layout: l}); err != nil {
				t.Fatal(err)
			}
		}
		st := NewSymbolTable()
		bias := uint64(0)
		if l != nil {
			bias = l.ExeBase
		}
		lo, hi := o.Span()
		if err := st.AddObjectFrom(o, bias, lo+bias, hi+bias); err != nil {
			t.Fatal(err)
		}
		for _, pc := range []uint64{o.Entry + bias, lo + bias, hi + bias - 1, hi + bias} {
			st.FormatLong(pc)
			st.Routine(pc)
		}
		st.FuncAddr("main")
		st.LineAddrs("a.c", 1)
	})
}
