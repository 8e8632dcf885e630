package main

import "testing"

// MADV_DONTNEED leaves what Linux leaves (testdata/src/madvise.c, run by a
// worker thread): zeros in private anonymous pages (ordinary,
// MAP_NORESERVE partly touched, PROT_NONE while dropped; the length
// rounded up to a page), shared and private file pages unchanged or read
// again, EINVAL for locked pages and an unaligned start, ENOMEM past a
// mapping, and a dropped code page runs what is written there again and
// faults on the zeros elsewhere (not its old translation). Byte for byte
// against the native run, in four builds.
func TestMadviseGuest(t *testing.T) { sameAsNative(t, "madvise", "dropped code: SIGSEGV") }

// Code that changes after it ran runs anew, whatever changed it: the
// program's stores, W^X, the kernel's read(2) into the page (emuprof ran
// the old translation before ea77769), a file mapped over it.
func TestSelfModifyingCode(t *testing.T) { sameAsNative(t, "smc", "mmap: 40414243") }
