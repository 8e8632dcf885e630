package main

import (
	"slices"
	"strings"

	"emuprof/analyses/callgrind"
	"emuprof/analyses/platform"
)

// registerCallgrind adds --callgrind to a profiling command that does not
// run the callgrind analysis by itself (emuprof trms, paths, ...): the
// flag adds it to the analyses of the run (emuprof profile runs it by
// default).
func (f *profileFlags) registerCallgrind(plugins []platform.Plugin) {
	for _, p := range plugins {
		if p.Name == callgrind.Plugin.Name {
			if len(plugins) == 1 {
				return // emuprof callgrind
			}
			break
		}
	}
	f.fs.BoolVar(&f.callgrind, "callgrind", false, "also write "+callgrind.FilePrefix+"<pid> (instructions per function, line, address and call edge, for KCachegrind and callgrind_annotate)")
	if _, ok := f.factories[callgrind.Plugin.Name]; !ok {
		f.factories[callgrind.Plugin.Name] = callgrind.Plugin.Flags(nil)
	}
}

// withCallgrind is list with the callgrind analysis when --callgrind was
// given.
func (f *profileFlags) withCallgrind(list string) string {
	if !f.callgrind || slices.Contains(strings.Split(list, ","), callgrind.Plugin.Name) {
		return list
	}
	return list + "," + callgrind.Plugin.Name
}
