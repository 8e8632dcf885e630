package emu

// int emu_early_signal(void);
import "C"

import (
	"os"
	"syscall"
	"testing"
)

// EarlyStop returns the first stop signal (SIGINT, SIGTERM or SIGHUP)
// that came before the caller watched for them, 0 if none (earlystop.c).
// emuprof's main calls it once it watches, and sends itself the signal;
// from then on a stop signal is the caller's alone.
func EarlyStop() syscall.Signal {
	// Set when a signal during the Go runtime's start started emuprof
	// again (earlystop.c read it): the guest's environment must not
	// have it.
	os.Unsetenv("EMUPROF_EARLY_SIGNAL")
	return syscall.Signal(C.emu_early_signal())
}

func init() {
	// A test binary never watches for stops: Ctrl-C must end it, not
	// start it again.
	if testing.Testing() {
		EarlyStop()
	}
}
