package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// negativeOK lists the numeric flags whose least value is below 0 (its
// meaning: -1 is "none"). Every other int flag counts something, so it
// takes 0 or more; a float flag takes a finite number, 0 or more. The
// commands and analyses check the narrower ranges of their own flags.
var negativeOK = map[string]int64{"fixed-speedup": -1}

// ranged lists the numeric flags whose range runFlags.validate checks, in
// words of their own.
var ranged = map[string]bool{"cpus": true, "pid": true}

// checkFlagValues refuses, before anything runs, what no flag of fs can
// mean: a negative count, a NaN or infinite number, and a flag where a
// value should be (`--out --` took "--" as the directory).
func checkFlagValues(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || !f.Changed || ranged[f.Name] {
			return
		}
		bad := func(v, format string, args ...any) {
			err = &exitError{Code: 2, Msg: fmt.Sprintf("--%s %s: ", f.Name, v) + fmt.Sprintf(format, args...)}
		}
		v := f.Value.String()
		switch f.Value.Type() {
		case "int", "int8", "int16", "int32", "int64":
			n, perr := strconv.ParseInt(v, 10, 64)
			if least := negativeOK[f.Name]; perr == nil && n < least {
				bad(v, "want %d or more", least)
			}
		case "float32", "float64":
			x, perr := strconv.ParseFloat(v, 64)
			if perr == nil && (math.IsNaN(x) || math.IsInf(x, 0) || x < 0) {
				bad(v, "want a finite number, 0 or more")
			}
		case "string":
			if strings.HasPrefix(v, "--") {
				bad(v, "a flag where the value of --%s should be", f.Name)
			}
		case "stringArray", "stringSlice":
			if sv, ok := f.Value.(pflag.SliceValue); ok {
				for _, s := range sv.GetSlice() {
					if strings.HasPrefix(s, "--") {
						bad(s, "a flag where the value of --%s should be", f.Name)
						return
					}
				}
			}
		}
	})
	return err
}
