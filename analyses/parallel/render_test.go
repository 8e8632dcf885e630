package parallel

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// writeJSON, which encodes the large slices a chunk at a time, writes
// json.MarshalIndent's text and a newline: for a run's result, for one of
// 200 contexts and lines (chunks of 64 and a partial one), with empty and
// nil slices, and with a string that is not UTF-8. The slices are the last
// fields of Result (else writeJSON encodes it whole, correct but slower).
func TestResultJSONInChunks(t *testing.T) {
	big := &Result{Cores: 2, Makespan: 1000, Contexts: []Context{{ID: 0, Routine: "(root)"}}, Locks: []LockStat{}}
	for i := 1; i <= 200; i++ {
		big.Contexts = append(big.Contexts, Context{ID: int32(i), Parent: int32(i / 2), Routine: fmt.Sprintf("f<%d>", i)})
		big.Lines = append(big.Lines, LineStat{Context: int32(i), Func: "f\xff", Line: i, M: Metrics{Work: int64(i)}})
	}
	results := []*Result{big, {}, lockScript("A").run(t, cores(3), 0)}
	for i, r := range results {
		var got bytes.Buffer
		replaced, err := r.writeJSON(&got)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.MarshalIndent(r, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != string(want)+"\n" {
			t.Errorf("result %d: writeJSON differs from json.MarshalIndent", i)
		}
		if replaced != (i == 0) {
			t.Errorf("result %d: replaced %v", i, replaced)
		}
		head := *r
		head.Contexts, head.Lines, head.Locks, head.Threads = nil, nil, nil, nil
		if b, _ := json.Marshal(&head); !bytes.HasSuffix(b, []byte(resultTail)) {
			t.Errorf("result %d: the encoding does not end with %s: %s", i, resultTail, b[max(0, len(b)-80):])
		}
	}
}
