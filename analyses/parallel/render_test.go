package parallel

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// lockScript is H5 of the oracles: three threads, a lock, a sleep.
func lockScript(name string) *script {
	s := newScript().start(1, 0, 0, name).start(2, 1, 0, "B").start(3, 1, 0, "C")
	s.call(2, "pthread_mutex_lock").blockOn(2, futex, lockL)
	s.call(3, "pthread_mutex_lock").blockOn(3, futex, lockL)
	s.in(1, "cs", 2).call(1, "unlock").wake(2, 1, 2, futex, lockL).ret(1).in(1, "after", 4)
	s.ret(2).in(2, "cs", 2).call(2, "unlock").wake(3, 2, 4, futex, lockL).ret(2).in(2, "after", 2).exit(2)
	s.ret(3).in(3, "cs", 2).exit(3)
	s.blockOn(1, sleep, 0).wake(1, 0, 9, sleep, 0).exit(1)
	return s
}

// The section of report.html drawn during the run from the result in
// memory (RenderLive) is the one `emuprof report` draws from the files
// (RenderHTML), byte for byte: with another process's JSON file beside it,
// for a partial run, and for a routine whose name is not UTF-8 (its JSON
// reads back with U+FFFD, so RenderLive reads the file). Where it can, it
// does not read its own file: with that file gone it draws the same.
func TestRenderLiveIsRenderHTML(t *testing.T) {
	for _, tc := range []struct {
		name, root, partial string
		fromMemory          bool
	}{{"plain", "A", "", true}, {"partial", "A", "deadlock", true}, {"not UTF-8", "A\xff\xfe", "", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// Another image's file (follow), written first, from another result.
			other := lockScript("other")
			cfg := cores(3)
			cfg.App = "child_7"
			oa, op := other.pipeline(t, cfg)
			op.Events(other.events())
			op.Finish()
			files, err := oa.Write(dir)
			if err != nil {
				t.Fatal(err)
			}
			s := lockScript(tc.root)
			cfg.App = "prog"
			cfg.Command = "prog -x"
			a, p := s.pipeline(t, cfg)
			p.Events(s.events())
			p.Finish()
			if tc.partial != "" {
				a.MarkPartial(tc.partial)
			}
			ours, err := a.Write(dir)
			if err != nil {
				t.Fatal(err)
			}
			files = append(ours, files...)
			want, err := RenderHTML(files)
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.RenderLive(files)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("RenderLive\n%+v\nRenderHTML\n%+v", got, want)
			}
			if len(want.Partial) != map[bool]int{true: 1}[tc.partial != ""] {
				t.Errorf("partial marks %q", want.Partial)
			}
			json := filepath.Join(dir, "prog_parallel.json")
			if err := os.Remove(json); err != nil {
				t.Fatal(err)
			}
			again, err := a.RenderLive(files)
			if tc.fromMemory && (err != nil || !reflect.DeepEqual(again, want)) {
				t.Errorf("without its file, RenderLive: %v", err)
			}
			if !tc.fromMemory && err == nil {
				t.Errorf("RenderLive drew a result that does not read back as it is from memory")
			}
		})
	}
}
