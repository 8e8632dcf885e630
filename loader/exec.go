package loader

import "os"

// CheckExec says whether the file at path may be executed, as execve
// checks before reading it: a regular file (EACCES otherwise) with an
// execute permission bit for the caller (root: any execute bit). The error
// is one line naming the file: "prog: permission denied (not executable)".
func CheckExec(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fileError(path, err)
	}
	if fi.IsDir() {
		return badInput(path, "is a directory")
	}
	if !fi.Mode().IsRegular() {
		return badInput(path, "not a regular file")
	}
	if !executable(fi) {
		return badInput(path, "permission denied (not executable)")
	}
	return nil
}
