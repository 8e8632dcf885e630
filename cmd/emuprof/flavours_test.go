package main

// Call tracking must not depend on how a program was linked: a program's
// own routines get the same calls and input sizes whether it is static,
// static-pie or dynamic (lazily bound through a stripped ld.so).

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"emuprof/analyses/trms"
)

// ownProfile is what a routine's tuples say, in a comparable form.
type ownProfile struct {
	tuples      string // "N×calls" per tuple, sorted
	calls, self uint64 // totals over the tuples
}

func (p ownProfile) String() string {
	return fmt.Sprintf("calls %d, self cost %d, tuples %s", p.calls, p.self, p.tuples)
}

// ownRoutines returns the profile of every routine of the executable itself
// (its object is the program's path), minus the startup code the linker
// adds, which differs by design between flavours (static-pie relocates
// itself, a dynamic _start is entered from ld.so).
func ownRoutines(r *trms.Report, exe string) map[string]ownProfile {
	names := map[uint32]string{}
	for _, rr := range r.Routines {
		switch rr.Name {
		case "_start", "_init", "_fini", "frame_dummy", "register_tm_clones", "deregister_tm_clones", "__do_global_dtors_aux":
			continue
		}
		if rr.Object == exe {
			names[rr.ID] = rr.Name
		}
	}
	tuples := map[string][]string{}
	out := map[string]ownProfile{}
	for _, p := range r.RoutinePoints() {
		if name, ok := names[p.ID]; ok {
			tuples[name] = append(tuples[name], fmt.Sprintf("%d×%d", p.N, p.Calls))
			o := out[name]
			o.calls += p.Calls
			o.self += p.SelfSum
			out[name] = o
		}
	}
	for name, ts := range tuples {
		slices.Sort(ts)
		o := out[name]
		o.tuples = strings.Join(ts, " ")
		out[name] = o
	}
	return out
}

// The dynamic build's executable holds only the program's own routines (libc
// is elsewhere). In the static and static-pie builds, where libc is part of
// the executable, each of them must have the same calls, the same self cost
// (the same code ran: PLT stubs and the lazy-binding resolver belong to no
// routine) and, but for main, the same input sizes. main's input includes
// what libc reads on its behalf, which differs by linking (GOT loads,
// libc.a's and libc.so's own startup state): only its calls and self cost
// are compared.
func TestTRMSFlavoursAgree(t *testing.T) {
	inputs := filepath.Join(filepath.Dir(guestDir), "inputs")
	guests := map[string][]string{
		"count_zero": nil,
		"tolower":    nil,
		"readbuf":    {filepath.Join(inputs, "data.bin")},
		"condvar_pc": {"100"},
	}
	for _, g := range []string{"count_zero", "tolower", "readbuf", "condvar_pc"} {
		t.Run(g, func(t *testing.T) {
			bin := sameLengthPath(t, "glibc-dynamic", g)
			rep := runTrms(t, nil, bin, guests[g]...).rms
			checkObjects(t, rep, bin)
			dyn := ownRoutines(rep, bin)
			if m, ok := dyn["main"]; !ok || m.calls != 1 {
				t.Fatalf("dynamic: main has no profile of its own: %v", dyn)
			}
			for _, v := range []string{"glibc-static", "glibc-static-pie"} {
				bin := sameLengthPath(t, v, g)
				own := ownRoutines(runTrms(t, nil, bin, guests[g]...).rms, bin)
				for name, want := range dyn {
					got := own[name]
					if name == "main" {
						got.tuples, want.tuples = "", ""
					}
					if g == "condvar_pc" {
						// How often a thread loops around its condition
						// wait depends on the interleaving, which follows
						// libc's instruction counts: not comparable.
						got.self, want.self = 0, 0
					}
					if got != want {
						t.Errorf("%s: %s differs from the dynamic build's\n %-16s %.300s\n glibc-dynamic    %.300s", v, name, v, got, want)
					}
				}
			}
		})
	}
}

// sameLengthPath copies a guest to a path of the same length for every
// flavour: the program path is on the initial stack, so its length moves
// every stack buffer, and with it which aligned words SSE string functions
// read (a real difference in input size, but not one of linking).
func sameLengthPath(t *testing.T, variant, name string) string {
	t.Helper()
	src := guestBin(t, variant, name)
	dir := filepath.Join(t.TempDir(), fmt.Sprintf("%08x", len(variant)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, name)
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// checkObjects checks that every routine of a dynamically linked program's
// report names its object as aprof does (the path of the executable or
// library), so that merge tells same-named routines of different objects
// apart.
func checkObjects(t *testing.T, r *trms.Report, exe string) {
	t.Helper()
	objects := map[string]string{}
	for _, rr := range r.Routines {
		objects[rr.Name] = rr.Object
		if rr.Object == "" || rr.Object == "NONE" {
			t.Errorf("routine %s: object %q", rr.Name, rr.Object)
		}
	}
	if o := objects["main"]; o != exe {
		t.Errorf("main's object %q, want %q", o, exe)
	}
	if o := objects["__libc_start_main"]; filepath.Base(o) != "libc.so.6" || !filepath.IsAbs(o) {
		t.Errorf("__libc_start_main's object %q, want the path of libc.so.6", o)
	}
}
