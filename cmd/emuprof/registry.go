package main

import (
	"emuprof/analyses/callgrind"
	"emuprof/analyses/causal"
	"emuprof/analyses/parallel"
	"emuprof/analyses/paths"
	"emuprof/analyses/platform"
	"emuprof/analyses/trms"
)

// registry lists the analyses: one line each. Each gets `emuprof NAME` (an
// alias of `emuprof profile --analyses NAME`) and a place in --analyses.
var registry = []platform.Plugin{
	trms.Plugin,
	paths.Plugin,
	parallel.Plugin,
	causal.Plugin,
	callgrind.Plugin,
}

// optIn lists the analyses that `emuprof profile` without --analyses runs
// only when one of the named flags of theirs is given: they cannot run
// without one (causal needs a progress point). Every other analysis runs
// by default.
var optIn = map[string][]string{
	"causal": {"progress", "latency", "end-to-end"},
}
