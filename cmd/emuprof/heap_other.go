//go:build !linux

package main

// preferHugeHeapPages is Linux's transparent huge pages advice
// (heap_linux.go); elsewhere the heap stays as the runtime maps it.
func preferHugeHeapPages() {}
