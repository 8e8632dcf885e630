package emu

/*
#cgo linux LDFLAGS: -ldl -rdynamic
#include <stdlib.h>
int emu_unicorn_open(const char *const *names, int n, char *msg, size_t len);
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// unicornNames are the names libunicorn is opened by, in turn: Debian's
// soname, and Homebrew's library on macOS, which the loader does not look
// for in Homebrew's prefix on its own.
func unicornNames() []string {
	if runtime.GOOS == "darwin" {
		var names []string
		for _, dir := range []string{"", "/opt/homebrew/lib/", "/usr/local/lib/"} {
			names = append(names, dir+"libunicorn.2.dylib", dir+"libunicorn.dylib")
		}
		return names
	}
	return []string{"libunicorn.so.2"}
}

// loadUnicorn opens libunicorn once for the process (unicornload.c): it
// is one library, loaded when the first engine is made.
var loadUnicorn = sync.OnceValue(func() error { return openUnicorn(unicornNames()) })

// openUnicorn opens libunicorn by the first of names that the loader finds.
func openUnicorn(names []string) error {
	cs := make([]*C.char, len(names))
	for i, n := range names {
		cs[i] = C.CString(n)
		defer C.free(unsafe.Pointer(cs[i]))
	}
	var msg [512]C.char
	if C.emu_unicorn_open(&cs[0], C.int(len(cs)), &msg[0], C.size_t(len(msg))) == 0 {
		return fmt.Errorf("cannot load libunicorn, the Unicorn 2 library (Debian: apt-get install libunicorn2; macOS: brew install unicorn): %s", C.GoString(&msg[0]))
	}
	return nil
}
