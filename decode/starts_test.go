package decode

import (
	"fmt"
	"testing"
)

// TestStarts: one offset per instruction Block counts, the last one's
// offset equal to Block's Last, undecodable rests included.
func TestStarts(t *testing.T) {
	for _, code := range [][]byte{
		{0x55, 0x48, 0x89, 0xe5, 0xe8, 0, 0, 0, 0},             // push; mov; call
		{0xd9, 0xc1, 0xd9, 0xf8, 0xdf, 0xe0, 0xd9, 0xf5, 0x66}, // x87, ends in a lone prefix
		{0x90, 0xc5, 0xf8, 0x77},                               // nop; VEX
		{0x90, 0xf3, 0x48, 0x0f, 0xb8},                         // nop; truncated popcnt
		{},
	} {
		info, starts := Block(code), Starts(code, nil)
		if uint32(len(starts)) != info.Insns || len(starts) > 0 && starts[len(starts)-1] != info.Last {
			t.Errorf("% x: starts %v, Block %+v", code, starts, info)
		}
	}
	if got := fmt.Sprint(Starts([]byte{0x55, 0x48, 0x89, 0xe5, 0xe8, 0, 0, 0, 0}, nil)); got != "[0 1 4]" {
		t.Errorf("starts %s, want [0 1 4]", got)
	}
}
