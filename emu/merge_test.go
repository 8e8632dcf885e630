package emu

import (
	"slices"
	"testing"

	"emuprof/trace"
)

// mergeCode reads and writes around 0x20000 in two blocks (a jmp between
// them), the second ending in a syscall.
var mergeCode = []byte{
	0xbe, 0x00, 0x00, 0x02, 0x00, // mov esi, 0x20000
	0x48, 0x8b, 0x06, //             mov rax, [rsi]      read 0..8
	0x48, 0x8b, 0x1e, //             mov rbx, [rsi]      read 0..8 again
	0x48, 0x89, 0x46, 0x10, //       mov [rsi+16], rax   write 16..24
	0x48, 0x89, 0x5e, 0x18, //       mov [rsi+24], rbx   write 24..32
	0x48, 0x8b, 0x4e, 0x18, //       mov rcx, [rsi+24]   read 24..32 (written)
	0x48, 0x89, 0x0e, //             mov [rsi], rcx      write 0..8 (only read so far)
	0x8b, 0x56, 0x04, //             mov edx, [rsi+4]    read 4..8
	0xeb, 0x00, //                   jmp next
	0x48, 0x8b, 0x06, //             next: mov rax, [rsi] read 0..8 (written)
	0x0f, 0x05, //                   syscall
}

// access is a memory event reduced to what merging keeps.
type access struct {
	kind trace.Kind
	addr uint64
	size uint32
}

func accesses(evs []trace.Event) (out []access) {
	for _, ev := range evs {
		switch ev.Kind {
		case trace.KindRead, trace.KindWrite, trace.KindBlock:
			a := access{kind: ev.Kind}
			if ev.Kind != trace.KindBlock {
				a.addr, a.size = ev.Addr-0x20000, ev.Size
			}
			out = append(out, a)
		}
	}
	return out
}

// MergeMemory drops an access that repeats one since the last other event
// (a read of bytes read or written, a write of bytes written) and extends
// the previous access by one of the same kind next to it; a write of bytes
// only read, and anything after another event, stays. With FoldMemory the
// run of both blocks is one stretch.
func TestMergeMemory(t *testing.T) {
	const r, w, b = trace.KindRead, trace.KindWrite, trace.KindBlock
	all := func(*trace.BlockInfo) bool { return true }
	sameLine := func(uint64) int { return 1 }
	opts := Options{Blocks: true, Memory: true, StackPointer: true, Symbols: foldSyms{sameLine}}
	for _, c := range []struct {
		name          string
		merge, folded bool
		want          []access
	}{
		{"plain", false, false, []access{{b, 0, 0}, {r, 0, 8}, {r, 0, 8}, {w, 16, 8}, {w, 24, 8}, {r, 24, 8}, {w, 0, 8}, {r, 4, 4}, {b, 0, 0}, {r, 0, 8}}},
		{"merged", true, false, []access{{b, 0, 0}, {r, 0, 8}, {w, 16, 16}, {w, 0, 8}, {b, 0, 0}, {r, 0, 8}}},
		{"merged and folded", true, true, []access{{b, 0, 0}, {r, 0, 8}, {w, 16, 16}, {w, 0, 8}}},
	} {
		o := opts
		o.MergeMemory = c.merge
		if c.folded {
			o.Fold, o.FoldMemory = all, true
		}
		evs, _ := foldRun(t, o, mergeCode, 0)
		if got := accesses(evs); !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
	}
}
