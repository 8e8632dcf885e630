//go:build !linux

package trms

// mapRegion returns nil: elsewhere the pool takes chunks from the Go heap.
func mapRegion(n int) []byte { return nil }

func unmapRegion(b []byte) {}
