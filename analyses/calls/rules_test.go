package calls

import (
	"testing"

	"emuprof/trace"
)

// TestTailCallThroughConditionalJump: gcc compiles `if (x) return g();`
// as `jne g`, a conditional jump to another routine's entry, which is a
// tail call as an unconditional one is; a conditional jump inside the
// routine (a loop) is not.
func TestTailCallThroughConditionalJump(t *testing.T) {
	_, l := run(t,
		blk(1, 0x1000, 0x8000, 5, call),          // main calls f
		blk(1, 0x2000, 0x7ff8, 4, trace.EndCond), // f: jne 0x2010, its own loop
		blk(1, 0x2010, 0x7ff8, 4, trace.EndCond), // f: jne g, taken: tail call
		blk(1, 0x3000, 0x7ff8, 2, trace.EndCond), // g: jne g's entry, a loop
		blk(1, 0x3000, 0x7ff8, 2, ret),           // g returns to main
		blk(1, 0x1005, 0x8000, 3, oth),
	)
	expectLog(t, l, "1+main 1+f 1-f 1+g 1-g")
}
