package emu

/*
int emu_sse_replaced(void);
*/
import "C"

// sseReplaced reports whether libunicorn's SSE helpers ran as ssefix.c's
// (Unicorn 2.0.1 on x86-64 Linux, after the first of them was called).
func sseReplaced() bool { return C.emu_sse_replaced() != 0 }
