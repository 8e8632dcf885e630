//go:build !linux

package syscalls

// HostStdinClosed: a closed standard input is only recognized on Linux
// hosts.
func HostStdinClosed() bool { return false }
