package syscalls

// Linux x86-64 ABI constants used by the handlers. They are defined here,
// not taken from the host's syscall package, because the host may be macOS.

// Open flags (asm-generic/fcntl.h, x86-64 values).
const (
	oAccMode   = 0o3
	oRDONLY    = 0o0
	oWRONLY    = 0o1
	oRDWR      = 0o2
	oCREAT     = 0o100
	oEXCL      = 0o200
	oNOCTTY    = 0o400
	oTRUNC     = 0o1000
	oAPPEND    = 0o2000
	oNONBLOCK  = 0o4000
	oDSYNC     = 0o10000
	oASYNC     = 0o20000
	oDIRECT    = 0o40000
	oLARGEFILE = 0o100000
	oDIRECTORY = 0o200000
	oNOFOLLOW  = 0o400000
	oNOATIME   = 0o1000000
	oCLOEXEC   = 0o2000000
	oSYNC      = 0o4010000
	oPATH      = 0o10000000
	oTMPFILE   = 0o20000000

	// oSetFLMask are the status flags F_SETFL may change.
	oSetFLMask = oAPPEND | oNONBLOCK | oASYNC | oDIRECT | oNOATIME
)

// *at() conventions.
const (
	atFDCWD           = -100
	atSymlinkNoFollow = 0x100
	atRemoveDir       = 0x200
	atEAccess         = 0x200
	atSymlinkFollow   = 0x400
	atNoAutomount     = 0x800
	atEmptyPath       = 0x1000
	atStatxSyncMask   = 0x6000
)

// File types and mode bits (st_mode).
const (
	sIFMT   = 0o170000
	sIFSOCK = 0o140000
	sIFLNK  = 0o120000
	sIFREG  = 0o100000
	sIFBLK  = 0o060000
	sIFDIR  = 0o040000
	sIFCHR  = 0o020000
	sIFIFO  = 0o010000
	sISUID  = 0o4000
	sISGID  = 0o2000
	sISVTX  = 0o1000
)

// Directory entry types (d_type).
const (
	dtUnknown = 0
	dtFIFO    = 1
	dtChr     = 2
	dtDir     = 4
	dtBlk     = 6
	dtReg     = 8
	dtLnk     = 10
	dtSock    = 12
)

// lseek whence values.
const (
	seekSet  = 0
	seekCur  = 1
	seekEnd  = 2
	seekData = 3
	seekHole = 4
)

// fcntl commands and flags.
const (
	fDupFD         = 0
	fGetFD         = 1
	fSetFD         = 2
	fGetFL         = 3
	fSetFL         = 4
	fGetLK         = 5
	fSetLK         = 6
	fSetLKW        = 7
	fSetOwn        = 8
	fGetOwn        = 9
	fOFDGetLK      = 36
	fOFDSetLK      = 37
	fOFDSetLKW     = 38
	fSetLease      = 1024
	fGetLease      = 1025
	fDupFDCloexec  = 1030
	fSetPipeSize   = 1031
	fGetPipeSize   = 1032
	fAddSeals      = 1033
	fGetSeals      = 1034
	fdCloexec      = 1
	fUnlck         = 2
	flockStructLen = 32
)

// ioctl requests.
const (
	tcGets     = 0x5401
	tcSets     = 0x5402
	tcSetsW    = 0x5403
	tcSetsF    = 0x5404
	tcFlsh     = 0x540b
	tiocGPGRP  = 0x540f
	tiocSPGRP  = 0x5410
	tiocGWinSz = 0x5413
	tiocSWinSz = 0x5414
	fionRead   = 0x541b
	fionBIO    = 0x5421
	fioASYNC   = 0x5452
	fionClex   = 0x5450
	fioClex    = 0x5451
)

// mmap, mprotect, mremap, madvise.
const (
	protRead      = 0x1
	protWrite     = 0x2
	protExec      = 0x4
	protGrowsDown = 0x01000000
	protGrowsUp   = 0x02000000

	mapShared         = 0x01
	mapPrivate        = 0x02
	mapSharedValidate = 0x03
	mapTypeMask       = 0x0f
	mapFixed          = 0x10
	mapAnonymous      = 0x20
	map32Bit          = 0x40
	mapGrowsDown      = 0x100
	mapDenyWrite      = 0x800
	mapExecutable     = 0x1000
	mapLocked         = 0x2000
	mapNoReserve      = 0x4000
	mapPopulate       = 0x8000
	mapNonBlock       = 0x10000
	mapStack          = 0x20000
	mapHugeTLB        = 0x40000
	mapSync           = 0x80000
	mapFixedNoReplace = 0x100000
	mapUninitialized  = 0x4000000
	mapHugeMask       = 0x3f << 26

	// legacyMapMask is the flags MAP_SHARED_VALIDATE takes for a file
	// whose mmap knows no more (LEGACY_MAP_MASK: no MAP_SYNC without DAX).
	legacyMapMask = mapShared | mapPrivate | mapFixed | mapAnonymous | mapDenyWrite | mapExecutable |
		mapUninitialized | mapGrowsDown | mapLocked | mapNoReserve | mapPopulate | mapNonBlock |
		mapStack | mapHugeTLB | map32Bit | mapHugeMask

	mremapMayMove   = 1
	mremapFixed     = 2
	mremapDontUnmap = 4

	madvDontNeed = 4
)

// poll events.
const (
	pollIn   = 0x001
	pollPri  = 0x002
	pollOut  = 0x004
	pollErr  = 0x008
	pollHup  = 0x010
	pollNval = 0x020
	pollRdNm = 0x040
	pollWrNm = 0x100
)

// Clocks.
const (
	clockRealtime         = 0
	clockMonotonic        = 1
	clockProcessCPUTimeID = 2
	clockThreadCPUTimeID  = 3
	clockMonotonicRaw     = 4
	clockRealtimeCoarse   = 5
	clockMonotonicCoarse  = 6
	clockBoottime         = 7
	clockRealtimeAlarm    = 8
	clockBoottimeAlarm    = 9
	clockTAI              = 11

	timerAbsTime = 1
)

// Signals.
const (
	sigHup    = 1
	sigInt    = 2
	sigQuit   = 3
	sigIll    = 4
	sigTrap   = 5
	sigAbrt   = 6
	sigBus    = 7
	sigFpe    = 8
	sigKill   = 9
	sigUsr1   = 10
	sigSegv   = 11
	sigUsr2   = 12
	sigPipe   = 13
	sigAlrm   = 14
	sigTerm   = 15
	sigStkflt = 16
	sigChld   = 17
	sigCont   = 18
	sigStop   = 19
	sigTstp   = 20
	sigTtin   = 21
	sigTtou   = 22
	sigUrg    = 23
	sigXcpu   = 24
	sigXfsz   = 25
	sigVtalrm = 26
	sigProf   = 27
	sigWinch  = 28
	sigIO     = 29
	sigPwr    = 30
	sigSys    = 31
	nSig      = 64

	sigBlock   = 0
	sigUnblock = 1
	sigSetMask = 2

	sigDfl = 0
	sigIgn = 1

	ssOnStack   = 1
	ssDisable   = 2
	minSigStkSz = 2048
)

// Resource limits.
const (
	rlimitCPU        = 0
	rlimitFSize      = 1
	rlimitData       = 2
	rlimitStack      = 3
	rlimitCore       = 4
	rlimitRSS        = 5
	rlimitNProc      = 6
	rlimitNoFile     = 7
	rlimitMemLock    = 8
	rlimitAS         = 9
	rlimitLocks      = 10
	rlimitSigPending = 11
	rlimitMsgQueue   = 12
	rlimitNice       = 13
	rlimitRTPrio     = 14
	rlimitRTTime     = 15
	rlimNLimits      = 16
	rlimInfinity     = ^uint64(0)
)

// arch_prctl codes.
const (
	archSetGS     = 0x1001
	archSetFS     = 0x1002
	archGetFS     = 0x1003
	archGetGS     = 0x1004
	archGetCPUID  = 0x1011
	archSetCPUID  = 0x1012
	archCETStatus = 0x3001
)

// prctl options.
const (
	prSetPDeathSig = 1
	prGetPDeathSig = 2
	prGetDumpable  = 3
	prSetDumpable  = 4
	prSetName      = 15
	prGetName      = 16
	prSetVMA       = 0x53564d41
)

// Miscellaneous.
const (
	iovMax            = 1024
	maxRWCount        = 0x7ffff000
	pathMax           = 4096
	pipeBufSize       = 65536
	pipeAtomic        = 4096
	utimeNow          = (1 << 30) - 1
	utimeOmit         = (1 << 30) - 2
	renameNoRepl      = 1
	renameExch        = 2
	renameWhite       = 4
	grndNonBlock      = 1
	grndRandom        = 2
	grndInsecure      = 4
	fOK               = 0
	xOK               = 1
	wOK               = 2
	rOK               = 4
	closeRangeUnshare = 2
	closeRangeCloexec = 4
	rusageSelf        = 0
	rusageChildren    = -1
	rusageThread      = 1
	clkTck            = 100
)
