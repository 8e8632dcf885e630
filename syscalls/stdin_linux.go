//go:build linux

package syscalls

import "syscall"

// HostStdinClosed reports whether emuprof's standard input was closed when
// it started (`prog <&-`): the Go runtime then opens /dev/null read-write
// on fd 0, which no shell redirection does. The runner passes it as
// Config.StdinClosed, so that the guest starts with fd 0 closed too.
func HostStdinClosed() bool {
	var st syscall.Stat_t
	if err := syscall.Fstat(0, &st); err != nil {
		return err == syscall.EBADF
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFCHR || st.Rdev != 1<<8|3 { // /dev/null
		return false
	}
	fl, _, errno := syscall.Syscall(syscall.SYS_FCNTL, 0, syscall.F_GETFL, 0)
	return errno == 0 && fl&syscall.O_ACCMODE == syscall.O_RDWR
}
