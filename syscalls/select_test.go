package syscalls

import "testing"

// TestSelect: a pipe is writable, readable once written; an empty pipe
// with a timeout asks to wait and keeps the sets; a bad descriptor is
// EBADF.
func TestSelect(t *testing.T) {
	h := newHarness(t, Config{})
	fds := h.alloc(8)
	h.must(nrPipe2, fds, 0)
	r, w := h.u64(fds)&0xffffffff, h.u64(fds)>>32
	set := func(fd ...uint64) []byte {
		b := make([]byte, 128)
		for _, f := range fd {
			b[f/8] |= 1 << (f % 8)
		}
		return b
	}
	rs, ws := h.alloc(128), h.alloc(128)
	h.poke(rs, set(r))
	h.poke(ws, set(w))
	tv := h.alloc(16)
	h.poke(tv, make([]byte, 16))
	if n := h.must(23, w+1, rs, ws, 0, tv); n != 1 || string(h.peek(ws, 128)) != string(set(w)) || string(h.peek(rs, 128)) != string(set()) {
		t.Errorf("empty pipe: %d ready", n)
	}
	h.poke(rs, set(r))
	ts := h.alloc(16)
	h.poke(ts, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}) // 1 s
	out := h.call(270, r+1, rs, 0, 0, ts, 0)
	if out.Ret != 0 || out.Wait == nil || string(h.peek(rs, 128)) != string(set(r)) {
		t.Errorf("waiting: %+v, set kept %v", out, string(h.peek(rs, 128)) == string(set(r)))
	}
	h.must(nrWrite, w, h.str("x"), 1)
	if n := h.must(270, r+1, rs, 0, 0, ts, 0); n != 1 || string(h.peek(rs, 128)) != string(set(r)) {
		t.Errorf("after a write: %d ready", n)
	}
	h.poke(rs, set(40))
	h.errno(eBADF, 23, 41, rs, 0, 0, 0)
}
