//go:build !linux

package syscalls

import "io/fs"

// hostIDs reports that this host's file identities are not used: inode
// numbers are derived from paths instead (see pathIno).
func hostIDs(fs.FileInfo) (hostStatIDs, bool) { return hostStatIDs{}, false }
