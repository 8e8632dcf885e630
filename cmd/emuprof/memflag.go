package main

import (
	"fmt"
	"strconv"

	"emuprof/defaults"
	"emuprof/mm"
)

// minMemory is the smallest --max-memory: enough for a small program.
const minMemory = 1 << 20

// maxMemory reads the --max-memory value.
func maxMemory(s string) (uint64, error) {
	n, err := parseSize(s)
	if err != nil || n < minMemory || n > mm.TaskSize {
		return 0, fmt.Errorf("--max-memory %q: want a size from 1M to 128T (bytes, or a number with K, M, G or T)", s)
	}
	return n, nil
}

// memoryLimit reads the --memory-limit value: "" is the default, 3/4 of
// the host's memory (none where it is unknown), "0" no limit.
func memoryLimit(s string) (uint64, error) {
	if s == "" {
		return defaults.MemoryLimit(hostMemory()), nil
	}
	if s == "0" {
		return 0, nil
	}
	n, err := parseSize(s)
	if err != nil || n < minMemory {
		return 0, fmt.Errorf("--memory-limit %q: want 0 or a size of at least 1M (bytes, or a number with K, M, G or T)", s)
	}
	return n, nil
}

// parseSize reads a size in bytes, or with a binary suffix K, M, G or T.
func parseSize(s string) (uint64, error) {
	shift := 0
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			shift = 10
		case 'm', 'M':
			shift = 20
		case 'g', 'G':
			shift = 30
		case 't', 'T':
			shift = 40
		}
		if shift > 0 {
			s = s[:n-1]
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	if n > ^uint64(0)>>shift {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return n << shift, nil
}
