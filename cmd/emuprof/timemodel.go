package main

import (
	"emuprof/analyses/platform"
	"emuprof/guest"
)

// schedConfig is the CPU model the analyses are told about: the
// scheduler's, and under a --time-model, that Block events' sizes are ns.
func schedConfig(cfg guest.Config) platform.SchedConfig {
	s := platform.SchedConfig{CPUs: cfg.CPUs, Quantum: cfg.Quantum, NsPerInsn: cfg.NsPerInsn}
	if cfg.TimeModel != nil {
		s.NsPerInsn = 1
		s.Timed = true
		s.MaxInsnNs = cfg.TimeModel.MaxInsnNs()
	}
	return s.Defaults()
}
