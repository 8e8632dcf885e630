package syscalls

import "strconv"

// Errno is a Linux error number (the x86-64 values, which are the generic
// ones). A failing system call returns -Errno in rax.
type Errno int

// The error numbers the runtime (package guest) returns from the calls it
// performs (Task).
const (
	EPERM   = ePERM
	ENOTTY  = eNOTTY
	ENOENT  = eNOENT
	ESRCH   = eSRCH
	EINTR   = eINTR
	E2BIG   = e2BIG
	ENOEXEC = eNOEXEC
	ECHILD  = eCHILD
	EAGAIN  = eAGAIN
	EACCES  = eACCES
	EFAULT  = eFAULT
	EINVAL  = eINVAL
	ENOSYS  = eNOSYS
	ELOOP   = eLOOP
)

// Linux error numbers.
const (
	ePERM           Errno = 1
	eNOENT          Errno = 2
	eSRCH           Errno = 3
	eINTR           Errno = 4
	eIO             Errno = 5
	eNXIO           Errno = 6
	e2BIG           Errno = 7
	eNOEXEC         Errno = 8
	eBADF           Errno = 9
	eCHILD          Errno = 10
	eAGAIN          Errno = 11
	eNOMEM          Errno = 12
	eACCES          Errno = 13
	eFAULT          Errno = 14
	eNOTBLK         Errno = 15
	eBUSY           Errno = 16
	eEXIST          Errno = 17
	eXDEV           Errno = 18
	eNODEV          Errno = 19
	eNOTDIR         Errno = 20
	eISDIR          Errno = 21
	eINVAL          Errno = 22
	eNFILE          Errno = 23
	eMFILE          Errno = 24
	eNOTTY          Errno = 25
	eTXTBSY         Errno = 26
	eFBIG           Errno = 27
	eNOSPC          Errno = 28
	eSPIPE          Errno = 29
	eROFS           Errno = 30
	eMLINK          Errno = 31
	ePIPE           Errno = 32
	eDOM            Errno = 33
	eRANGE          Errno = 34
	eDEADLK         Errno = 35
	eNAMETOOLONG    Errno = 36
	eNOLCK          Errno = 37
	eNOSYS          Errno = 38
	eNOTEMPTY       Errno = 39
	eLOOP           Errno = 40
	eNOMSG          Errno = 42
	eIDRM           Errno = 43
	eNODATA         Errno = 61
	eTIME           Errno = 62
	ePROTO          Errno = 71
	eBADMSG         Errno = 74
	eOVERFLOW       Errno = 75
	eILSEQ          Errno = 84
	eNOTSOCK        Errno = 88
	eDESTADDRREQ    Errno = 89
	eMSGSIZE        Errno = 90
	ePROTOTYPE      Errno = 91
	eNOPROTOOPT     Errno = 92
	ePROTONOSUPPORT Errno = 93
	eSOCKTNOSUPPORT Errno = 94
	eOPNOTSUPP      Errno = 95
	ePFNOSUPPORT    Errno = 96
	eAFNOSUPPORT    Errno = 97
	eADDRINUSE      Errno = 98
	eADDRNOTAVAIL   Errno = 99
	eNETDOWN        Errno = 100
	eNETUNREACH     Errno = 101
	eNETRESET       Errno = 102
	eCONNABORTED    Errno = 103
	eCONNRESET      Errno = 104
	eNOBUFS         Errno = 105
	eISCONN         Errno = 106
	eNOTCONN        Errno = 107
	eSHUTDOWN       Errno = 108
	eTIMEDOUT       Errno = 110
	eCONNREFUSED    Errno = 111
	eHOSTDOWN       Errno = 112
	eHOSTUNREACH    Errno = 113
	eALREADY        Errno = 114
	eINPROGRESS     Errno = 115
	eSTALE          Errno = 116
	eDQUOT          Errno = 122
	eCANCELED       Errno = 125
	eOWNERDEAD      Errno = 130
	eNOTRECOVERABLE Errno = 131

	// EWOULDBLOCK is EAGAIN on Linux.
	eWOULDBLOCK = eAGAIN
	// ENOTSUP is EOPNOTSUPP on Linux.
	eNOTSUP = eOPNOTSUPP
	// eRESTARTSYS is kernel-internal; it reaches programs only as a
	// socket's pending error after an interrupted recvmmsg (mmsg).
	eRESTARTSYS Errno = 512
)

// errnoNames is an immutable table: Errno -> symbolic name.
var errnoNames = [...]string{
	ePERM: "EPERM", eNOENT: "ENOENT", eSRCH: "ESRCH", eINTR: "EINTR", eIO: "EIO",
	eNXIO: "ENXIO", e2BIG: "E2BIG", eNOEXEC: "ENOEXEC", eBADF: "EBADF", eCHILD: "ECHILD",
	eAGAIN: "EAGAIN", eNOMEM: "ENOMEM", eACCES: "EACCES", eFAULT: "EFAULT",
	eNOTBLK: "ENOTBLK", eBUSY: "EBUSY", eEXIST: "EEXIST", eXDEV: "EXDEV",
	eNODEV: "ENODEV", eNOTDIR: "ENOTDIR", eISDIR: "EISDIR", eINVAL: "EINVAL",
	eNFILE: "ENFILE", eMFILE: "EMFILE", eNOTTY: "ENOTTY", eTXTBSY: "ETXTBSY",
	eFBIG: "EFBIG", eNOSPC: "ENOSPC", eSPIPE: "ESPIPE", eROFS: "EROFS",
	eMLINK: "EMLINK", ePIPE: "EPIPE", eDOM: "EDOM", eRANGE: "ERANGE",
	eDEADLK: "EDEADLK", eNAMETOOLONG: "ENAMETOOLONG", eNOLCK: "ENOLCK",
	eNOSYS: "ENOSYS", eNOTEMPTY: "ENOTEMPTY", eLOOP: "ELOOP", eNOMSG: "ENOMSG",
	eIDRM: "EIDRM", eNODATA: "ENODATA", eTIME: "ETIME", ePROTO: "EPROTO",
	eBADMSG: "EBADMSG", eOVERFLOW: "EOVERFLOW", eILSEQ: "EILSEQ",
	eNOTSOCK: "ENOTSOCK", eDESTADDRREQ: "EDESTADDRREQ", eMSGSIZE: "EMSGSIZE",
	ePROTOTYPE: "EPROTOTYPE", eNOPROTOOPT: "ENOPROTOOPT",
	ePROTONOSUPPORT: "EPROTONOSUPPORT", eSOCKTNOSUPPORT: "ESOCKTNOSUPPORT",
	eOPNOTSUPP: "EOPNOTSUPP", ePFNOSUPPORT: "EPFNOSUPPORT",
	eAFNOSUPPORT: "EAFNOSUPPORT", eADDRINUSE: "EADDRINUSE",
	eADDRNOTAVAIL: "EADDRNOTAVAIL", eNETDOWN: "ENETDOWN", eNETUNREACH: "ENETUNREACH",
	eNETRESET: "ENETRESET", eCONNABORTED: "ECONNABORTED", eCONNRESET: "ECONNRESET",
	eNOBUFS: "ENOBUFS", eISCONN: "EISCONN", eNOTCONN: "ENOTCONN",
	eSHUTDOWN: "ESHUTDOWN", eTIMEDOUT: "ETIMEDOUT", eCONNREFUSED: "ECONNREFUSED",
	eHOSTDOWN: "EHOSTDOWN", eHOSTUNREACH: "EHOSTUNREACH", eALREADY: "EALREADY",
	eINPROGRESS: "EINPROGRESS", eSTALE: "ESTALE", eDQUOT: "EDQUOT",
	eCANCELED: "ECANCELED", eOWNERDEAD: "EOWNERDEAD",
	eNOTRECOVERABLE: "ENOTRECOVERABLE",
}

// Error returns the symbolic name ("ENOENT").
func (e Errno) Error() string {
	if e > 0 && int(e) < len(errnoNames) && errnoNames[e] != "" {
		return errnoNames[e]
	}
	return "errno " + strconv.Itoa(int(e))
}

// Ret returns the value a failing system call leaves in rax: -e.
func (e Errno) Ret() uint64 { return uint64(-int64(e)) }
