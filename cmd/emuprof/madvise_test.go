package main

import (
	"strings"
	"testing"
)

// MADV_DONTNEED leaves what Linux leaves (testdata/src/madvise.c, run by a
// worker thread): zeros in private anonymous pages (ordinary,
// MAP_NORESERVE partly touched, PROT_NONE while dropped; the length
// rounded up to a page), shared and private file pages unchanged or read
// again, EINVAL for locked pages and an unaligned start, ENOMEM past a
// mapping, and a dropped code page runs what is written there again and
// faults on the zeros elsewhere (not its old translation). Byte for byte
// against the native run, in four builds.
func TestMadviseGuest(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			prog := guestBin(t, v, "madvise")
			dir := t.TempDir()
			native := run(t, nil, dir, prog)
			if !strings.Contains(native.stdout, "dropped code: SIGSEGV") || native.code != 0 {
				t.Fatalf("native run: %q (status %d)", native.stdout, native.code)
			}
			sameRun(t, "madvise", native, run(t, nil, dir, emuprofBin, append(emuArgs(), prog)...), true)
		})
	}
}
