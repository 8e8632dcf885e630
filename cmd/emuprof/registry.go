package main

import (
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
}
