package callgrind

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Summary is what a Callgrind file says per function and per line, as
// callgrind_annotate reads it: a function's inclusive cost is the cost of
// the calls to it from other functions (for a function nothing calls: its
// self cost and its calls').
type Summary struct {
	Total Costs
	Fns   map[string]*FnCosts // by name
	Lines map[Line]Costs      // the lines' own costs
	// LineCalls are the inclusive costs of the calls made on each line.
	LineCalls map[Line]Costs
	Events    []string
	Partial   string // the run did not finish (desc: Partial:)
}

// Costs are a position's or a function's Ir and Bb.
type Costs struct{ Ir, Bb uint64 }

func (c *Costs) add(o Costs) { c.Ir += o.Ir; c.Bb += o.Bb }

// FnCosts is one function (every function of that name, over objects).
type FnCosts struct {
	Self, Inclusive Costs
	Calls           uint64 // times it was called
	called          bool
	out             Costs // its calls' inclusive costs
}

// Line is a source line.
type Line struct {
	File string
	Line int
}

// Parse reads a Callgrind file (with name compression, positions "line"
// or "instr line", events beginning with Ir).
func Parse(r io.Reader) (*Summary, error) {
	s := &Summary{Fns: map[string]*FnCosts{}, Lines: map[Line]Costs{}, LineCalls: map[Line]Costs{}}
	names := map[string]map[string]string{"ob": {}, "fl": {}, "fn": {}}
	name := func(kind, v string) string {
		v = strings.TrimSpace(v)
		if !strings.HasPrefix(v, "(") {
			return v
		}
		end := strings.IndexByte(v, ')')
		if end < 0 {
			return v
		}
		id, rest := v[1:end], strings.TrimSpace(v[end+1:])
		if rest != "" {
			names[kind][id] = rest
			return rest
		}
		return names[kind][id]
	}
	fnOf := func(n string) *FnCosts {
		f := s.Fns[n]
		if f == nil {
			f = &FnCosts{}
			s.Fns[n] = f
		}
		return f
	}
	var (
		addr, hasLine     bool
		file, fn          string
		cfn               string
		calls             uint64
		inCall            bool
		prevAddr, prevLin int64
		header            = true
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	n := 0
	for sc.Scan() {
		n++
		l := sc.Text()
		if l == "" || l[0] == '#' {
			continue
		}
		bad := func(why string) error { return fmt.Errorf("line %d: %s: %.60q", n, why, l) }
		if header {
			switch {
			case strings.HasPrefix(l, "positions:"):
				p := strings.Fields(l[len("positions:"):])
				addr = len(p) > 0 && (p[0] == "instr" || p[0] == "addr")
				hasLine = strings.Contains(l, "line")
			case strings.HasPrefix(l, "desc: Partial:"):
				s.Partial = strings.TrimSpace(l[len("desc: Partial:"):])
			case strings.HasPrefix(l, "events:"):
				s.Events = strings.Fields(l[len("events:"):])
				header = false
			}
			continue
		}
		key, val, isKV := strings.Cut(l, "=")
		if isKV && !strings.ContainsAny(key, " \t") && key != "" && (key[0] < '0' || key[0] > '9') && key[0] != '+' && key[0] != '-' && key[0] != '*' {
			switch key {
			case "fl", "fi", "fe":
				file = name("fl", val)
			case "fn":
				fn = name("fn", val)
			case "ob", "cob":
				name("ob", val)
			case "cfi", "cfl":
				name("fl", val)
			case "cfn":
				cfn = name("fn", val)
			case "calls":
				f := strings.Fields(val)
				if len(f) == 0 {
					return nil, bad("calls= without a count")
				}
				c, err := strconv.ParseUint(f[0], 10, 64)
				if err != nil {
					return nil, bad("bad call count")
				}
				calls, inCall = c, true
			}
			continue
		}
		if strings.HasPrefix(l, "summary:") || strings.HasPrefix(l, "totals:") {
			continue
		}
		f := strings.Fields(l)
		// Subpositions: relative (+n, -n), the same (*), or absolute.
		pos := func(i int, prev *int64) error {
			if i >= len(f) {
				return bad("short cost line")
			}
			t := f[i]
			var v int64
			var err error
			switch {
			case t == "*":
				v = *prev
			case t[0] == '+' || t[0] == '-':
				var d int64
				d, err = strconv.ParseInt(t, 0, 64)
				v = *prev + d
			default:
				var u uint64
				u, err = strconv.ParseUint(t, 0, 64)
				v = int64(u)
			}
			if err != nil {
				return bad("bad position")
			}
			*prev = v
			return nil
		}
		i := 0
		if addr {
			if err := pos(i, &prevAddr); err != nil {
				return nil, err
			}
			i++
		}
		if hasLine {
			if err := pos(i, &prevLin); err != nil {
				return nil, err
			}
			i++
		}
		var c Costs
		for j, t := range f[i:] {
			v, err := strconv.ParseUint(t, 10, 64)
			if err != nil {
				return nil, bad("bad cost")
			}
			switch j {
			case 0:
				c.Ir = v
			case 1:
				c.Bb = v
			}
		}
		if inCall {
			callee := fnOf(cfn)
			callee.Calls += calls
			callee.called = true
			// A direct recursive call's cost is inside the outer
			// activation's: counting it again would make a recursive
			// function cost more than the program.
			if cfn != fn {
				callee.Inclusive.add(c)
				fnOf(fn).out.add(c)
				if hasLine {
					lc := s.LineCalls[Line{file, int(prevLin)}]
					lc.add(c)
					s.LineCalls[Line{file, int(prevLin)}] = lc
				}
			}
			inCall = false
			continue
		}
		fnOf(fn).Self.add(c)
		s.Total.add(c)
		if hasLine {
			lc := s.Lines[Line{file, int(prevLin)}]
			lc.add(c)
			s.Lines[Line{file, int(prevLin)}] = lc
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if header {
		return nil, fmt.Errorf("no events: line: not a Callgrind file")
	}
	for _, f := range s.Fns {
		if !f.called { // a root: itself and what it called
			f.Inclusive = f.Self
			f.Inclusive.add(f.out)
		}
	}
	return s, nil
}
