// Line sets: --fixed-line FILE:LINE+FILE:LINE... speeds up several lines
// together in one experiment. Every execution of any line of the set
// pauses the other threads by the speedup times its cost, as one line's
// does: the question "what if this lock's acquire and release were both
// cheap?", which no single line's experiment asks (a lock split makes both
// cheap; docs/TIME-MODEL.md, locksplit).

package causal

import (
	"strings"
)

// setSep joins the lines of a set (causal.sh, whose "+" adds rows, writes a set with "&").
const setSep = "+"

// splitSet cuts s at each "+" that ends a FILE:LINE (follows ":DIGITS"), so
// a path holding a "+" (/usr/include/c++/12/vector:100) stays one element.
// An element that starts with "+" is an empty one before it.
func splitSet(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '+' || !endsWithLine(strings.TrimRight(s[start:i], " ")) {
			continue
		}
		out = append(out, s[start:i])
		start = i + 1
	}
	return append(out, s[start:])
}

// endsWithLine says whether s ends in ":DIGITS" after something.
func endsWithLine(s string) bool {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return false
	}
	for _, c := range s[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// setElems reads the FILE:LINE elements of a set's text s (or of one
// line's), stopping at the first that is not one: bad is it ("" for an
// empty element), and ok false.
func setElems(s string) (elems []spec, bad string, ok bool) {
	for _, part := range splitSet(s) {
		part = strings.TrimSpace(part)
		if part == "" || strings.HasPrefix(part, "+") {
			return elems, "", false
		}
		sp, err := parseSpec(part)
		if err != nil || sp.kind != pointLine {
			return elems, part, false
		}
		elems = append(elems, sp)
	}
	return elems, "", true
}

// parseFixed reads --fixed-line's FILE:LINE or FILE:LINE+FILE:LINE...
// (distinct lines; a set not with --context): the elements, or an error
// of one line.
func parseFixed(s string, context bool) ([]spec, error) {
	elems, bad, ok := setElems(s)
	seen := map[string]bool{} // elems are those before a bad one: a line twice among them comes first
	for _, sp := range elems {
		if seen[sp.text] {
			return nil, errf("--fixed-line %q: %s twice", s, sp.text)
		}
		seen[sp.text] = true
	}
	switch {
	case !ok && bad == "":
		return nil, errf("--fixed-line %q: empty element (want FILE:LINE or FILE:LINE%sFILE:LINE...)", s, setSep)
	case !ok && len(splitSet(s)) == 1:
		return nil, errf("--fixed-line %q: want FILE:LINE", s)
	case !ok:
		return nil, errf("--fixed-line %q: element %q: want FILE:LINE", s, bad)
	}
	if len(elems) > 1 && context {
		return nil, errf("--fixed-line %q: a line set is not with --context", s)
	}
	return elems, nil
}

// setName joins a set's elements by setSep (the set's key: its text as
// given).
func setName(elems []spec) string {
	names := make([]string, len(elems))
	for i, e := range elems {
		names[i] = e.text
	}
	return strings.Join(names, setSep)
}

// baseName is a line's name with its file's directory dropped.
func baseName(line string) string {
	if j := strings.LastIndexByte(line, '/'); j >= 0 {
		return line[j+1:]
	}
	return line
}

// fixedSetName is the fixed set's name in the profiles: each element's
// line by its file's base name (or the element as given while its line has
// not run), joined by setSep in the order given. Coz's viewer takes a
// selected line's name as an opaque key but shows only its last path
// parts: with the directories in it, it would show the set as its last
// line.
func (p *Profiler) fixedSetName() string {
	names := make([]string, len(p.fixedSet))
	for i, e := range p.fixedSet {
		names[i] = baseName(e.text)
		if id := p.setLines[i]; id != 0 {
			names[i] = baseName(p.lineName(id))
		}
	}
	return strings.Join(names, setSep)
}

// validSetName says whether a selected line's name is a set's: two or more
// FILE:LINE elements (base names may repeat).
func validSetName(s string) bool {
	elems, _, ok := setElems(s)
	return ok && len(elems) > 1
}

// isSetName says whether a selected line's name is a set.
func isSetName(s string) bool { return len(splitSet(s)) > 1 }

// bindSet makes line id a member of the fixed set if an element not yet
// bound names it: each element is the first line seen that matches it,
// as a single --fixed-line is. The set becomes the selected line once one
// of its lines has run (a single fixed line's experiments wait for it too).
func (p *Profiler) bindSet(id int32) {
	k := p.lines[id].key
	for i, e := range p.fixedSet {
		if p.setLines[i] != 0 || k.line != e.line || !fileMatches(k.file, e.name) {
			continue
		}
		p.setLines[i] = id
		p.lines[id].set = p.setID
		if p.fixedID == 0 {
			p.fixedID = p.setID
			if p.exp != nil && p.exp.line == 0 {
				p.exp.line = p.setID
			}
		}
		return
	}
}

// setCost is the baseline cost of a set (--exact): the cost of each
// element's line, the first line (by id, the order lines were seen) that
// matches it, as bindSet binds them in the experiment's run, named as
// fixedSetName names the set there; no entry if none of them ran.
func (p *Profiler) setCost(elems []spec) []LineCost {
	var sum int64
	names := make([]string, len(elems))
	for i, e := range elems {
		names[i] = baseName(e.text)
		for id := int32(1); id < int32(len(p.lines)); id++ {
			if k := p.lines[id].key; !k.set && k.line == e.line && fileMatches(k.file, e.name) {
				sum += p.lines[id].cost
				names[i] = baseName(p.lineName(id))
				break
			}
		}
	}
	if sum == 0 {
		return nil
	}
	return []LineCost{{Line: strings.Join(names, setSep), CostNs: sum}}
}

// nameSet gives every experiment of the fixed set the set's final name: an
// element whose line first ran after an experiment ended renamed the set.
func (p *Profiler) nameSet() {
	if p.setID == 0 {
		return
	}
	name := p.fixedSetName()
	for i := range p.done {
		if p.done[i].key.set {
			p.done[i].Line = name
		}
	}
}

// shortName fits a line's name in the summary's 40 columns: its end.
func shortName(name string) string {
	if len(name) > 40 {
		name = "…" + name[len(name)-39:]
	}
	return name
}
