package main

import (
	"testing"

	"emuprof/defaults"
	"emuprof/mm"
)

// --max-memory's default is written as a size for the help text and as
// bytes in mm (the limit of a process no flag configured): the two agree.
func TestDefaultMaxMemoryIsMMLimit(t *testing.T) {
	n, err := maxMemory(defaults.MaxMemory)
	if err != nil {
		t.Fatal(err)
	}
	if n != mm.DefaultLimit {
		t.Errorf("--max-memory default %s is %d bytes, mm.DefaultLimit %d", defaults.MaxMemory, n, uint64(mm.DefaultLimit))
	}
}
