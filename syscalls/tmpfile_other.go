//go:build !linux

package syscalls

import "os"

// A host without O_TMPFILE (macOS): the guest gets EOPNOTSUPP.

func hostTmpfile(dir string, excl bool) (*os.File, string, error) { return nil, "", errNoTmpfile }

func linkTmpfile(from, to string) error { return errNoTmpfile }
