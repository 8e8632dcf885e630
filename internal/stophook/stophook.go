// Package stophook lets tests stop emuprof at a named moment, the same
// moment on every run: with EMUPROF_TEST_SIGNAL=SIG@PHASE[,SIG@PHASE...]
// (SIG: INT, TERM or HUP), At(PHASE) sends SIG to emuprof itself and
// returns once emuprof's own handler has it. Unset, At does nothing.
package stophook

import (
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Var is the environment variable that names the moments.
const Var = "EMUPROF_TEST_SIGNAL"

var signals = map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP}

// Enabled says whether any moment is named (so callers may skip the work
// of naming theirs).
func Enabled() bool { return os.Getenv(Var) != "" }

// Wants says whether a moment whose name starts with prefix is named (so
// callers may skip the work of watching for such moments).
func Wants(prefix string) bool {
	for _, item := range strings.Split(os.Getenv(Var), ",") {
		if _, at, _ := strings.Cut(item, "@"); strings.HasPrefix(at, prefix) {
			return true
		}
	}
	return false
}

// At sends the signals named for phase, if any, and says whether it did.
func At(phase string) bool {
	v := os.Getenv(Var)
	if v == "" {
		return false
	}
	raised := false
	for _, item := range strings.Split(v, ",") {
		name, at, _ := strings.Cut(item, "@")
		sig, ok := signals[name]
		if !ok || at != phase {
			continue
		}
		c := make(chan os.Signal, 1)
		signal.Notify(c, sig)
		_ = syscall.Kill(os.Getpid(), sig)
		<-c
		// Stop returns after the signal went to every channel that
		// wants it, emuprof's handler's too.
		signal.Stop(c)
		raised = true
	}
	return raised
}
