//go:build !unix

package loader

import "io/fs"

// executable: any execute bit (no owners to compare with).
func executable(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o111 != 0 }
