package syscalls

// The numbers of the calls the runtime (package guest) tells apart when it
// parks, restarts or records them; the table names every number.
const (
	NrRtSigreturn    = 15
	NrPause          = 34
	NrNanosleep      = 35
	NrRtSigtimedwait = 128
	NrRtSigsuspend   = 130
	NrFutex          = 202
	NrKill           = 62
	NrClockNanosleep = 230
)
