package causal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Record is one line of a profile.coz.
type Record struct {
	Type   string
	Fields map[string]string // values as written (strings unquoted)
}

var (
	speedupRe = regexp.MustCompile(`^(0|1)\.[0-9][0-9]$`)
	intRe     = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)
	cozKeys   = map[string][]string{
		"startup":          {"time"},
		"experiment":       {"selected", "speedup", "duration", "selected_samples"},
		"throughput-point": {"name", "delta"},
		"latency-point":    {"name", "arrivals", "departures", "difference"},
		"runtime":          {"time"},
	}
)

// ParseCozProfile reads a profile.coz strictly: JSON lines or Coz's legacy
// tab form (not mixed), exactly the keys of each record type, integers
// where Coz writes integers, speedups with two decimals in [0, 1],
// selected lines as FILE:LINE (or a set of them), startup first, runtime last, no point record
// before its experiment.
func ParseCozProfile(r io.Reader) ([]Record, error) {
	var recs []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	legacy := -1
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		isJSON := strings.HasPrefix(line, "{")
		if legacy == -1 {
			legacy = map[bool]int{true: 0, false: 1}[isJSON]
		} else if (legacy == 0) != isJSON {
			return nil, fmt.Errorf("line %d: JSON and legacy records mixed", n)
		}
		rec, err := parseRecord(line, isJSON)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		switch {
		case n == 1 && rec.Type != "startup":
			return nil, fmt.Errorf("line 1: %s record, want startup", rec.Type)
		case n > 1 && rec.Type == "startup":
			return nil, fmt.Errorf("line %d: startup again", n)
		case (rec.Type == "throughput-point" || rec.Type == "latency-point") && !inExperiment(recs):
			return nil, fmt.Errorf("line %d: %s before any experiment", n, rec.Type)
		case len(recs) > 0 && recs[len(recs)-1].Type == "runtime":
			return nil, fmt.Errorf("line %d: record after runtime", n)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(recs) == 0 || recs[len(recs)-1].Type != "runtime" {
		return nil, fmt.Errorf("no runtime record at the end")
	}
	return recs, nil
}

func inExperiment(recs []Record) bool {
	for i := len(recs) - 1; i >= 0; i-- {
		switch recs[i].Type {
		case "experiment":
			return true
		case "throughput-point", "latency-point":
		default:
			return false
		}
	}
	return false
}

func parseRecord(line string, isJSON bool) (Record, error) {
	rec := Record{Fields: map[string]string{}}
	raw := map[string]string{}
	if isJSON {
		var m map[string]json.RawMessage
		dec := json.NewDecoder(strings.NewReader(line))
		if err := dec.Decode(&m); err != nil {
			return rec, err
		}
		if dec.More() {
			return rec, fmt.Errorf("trailing data")
		}
		for k, v := range m {
			var s string
			if bytes.HasPrefix(v, []byte(`"`)) {
				if err := json.Unmarshal(v, &s); err != nil {
					return rec, err
				}
				if k != "type" && k != "selected" && k != "name" {
					return rec, fmt.Errorf("%s: a string", k)
				}
			} else {
				if k == "type" || k == "selected" || k == "name" {
					return rec, fmt.Errorf("%s: not a string", k)
				}
				s = string(v)
			}
			raw[k] = s
		}
		rec.Type = raw["type"]
		delete(raw, "type")
	} else {
		parts := strings.Split(line, "\t")
		rec.Type = parts[0]
		for _, f := range parts[1:] {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				return rec, fmt.Errorf("field %q without =", f)
			}
			if k == "selected-samples" {
				k = "selected_samples"
			}
			if _, dup := raw[k]; dup {
				return rec, fmt.Errorf("field %s twice", k)
			}
			raw[k] = v
		}
	}
	keys, ok := cozKeys[rec.Type]
	if !ok {
		return rec, fmt.Errorf("unknown record type %q", rec.Type)
	}
	if len(raw) != len(keys) {
		return rec, fmt.Errorf("%s: fields %v, want %v", rec.Type, raw, keys)
	}
	for _, k := range keys {
		v, ok := raw[k]
		if !ok {
			return rec, fmt.Errorf("%s: no %s", rec.Type, k)
		}
		switch k {
		case "speedup":
			if !speedupRe.MatchString(v) {
				return rec, fmt.Errorf("speedup %q: want a fraction with two decimals", v)
			}
			if f, _ := strconv.ParseFloat(v, 64); f > 1 {
				return rec, fmt.Errorf("speedup %q above 1", v)
			}
		case "selected":
			fl, caller, ctx := strings.Cut(v, " <- ") // --context
			i := strings.LastIndexByte(fl, ':')
			if i <= 0 || !intRe.MatchString(fl[i+1:]) || ctx && caller == "" {
				return rec, fmt.Errorf("selected %q: want FILE:LINE, FILE:LINE <- CALLER or FILE:LINE+FILE:LINE...", v)
			}
			if isSetName(v) {
				if ctx || !validSetName(v) {
					return rec, fmt.Errorf("selected %q: want FILE:LINE, FILE:LINE <- CALLER or FILE:LINE+FILE:LINE...", v)
				}
			}
		case "name":
			if v == "" {
				return rec, fmt.Errorf("empty name")
			}
		default:
			if !intRe.MatchString(v) {
				return rec, fmt.Errorf("%s %q: want a non-negative integer", k, v)
			}
		}
		if !isJSON && strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return rec, fmt.Errorf("%s: raw control character", k)
		}
	}
	rec.Fields = raw
	return rec, nil
}
