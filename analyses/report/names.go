package report

import "github.com/ianlancetaylor/demangle"

// Demangle returns a C++ or Rust symbol name as c++filt shows it, or name
// itself when it is not a mangled one: every view names routines so.
func Demangle(name string) string { return demangle.Filter(name) }
