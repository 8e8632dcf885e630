package main

import "testing"

// What Linux passes on across fork is passed on: the CPU affinity mask
// (taskset's, through a forking shell and a subshell), and a FIFO that two
// processes open after a fork is one pipe (each got a pipe of its own and
// both waited forever).
func TestForkInherits(t *testing.T) {
	for _, script := range []string{
		`taskset -c 0 sh -c 'nproc; (nproc)'`,
		`mkfifo ff; (seq 3 > ff &); cat ff; rm ff`,
	} {
		t.Run(script, func(t *testing.T) {
			compare(t, nil, t.TempDir(), "sh", "-c", script)
		})
	}
}
