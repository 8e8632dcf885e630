package trms

import (
	"math/rand/v2"
	"testing"

	"emuprof/trace"
)

// memBatch is a batch of loads and stores of one thread at random: a stack
// frame region and a heap array, sizes 1 to 8 bytes, 2/3 loads.
func memBatch(n int) []trace.Event {
	rng := rand.New(rand.NewPCG(1, 2))
	evs := make([]trace.Event, n)
	for i := range evs {
		var addr uint64
		if rng.IntN(2) == 0 {
			addr = 0x7ffffffde000 + uint64(rng.IntN(512))*8 // stack
		} else {
			addr = 0x5555_5555_0000 + uint64(rng.IntN(64*1024))*4 // 256 KiB // heap
		}
		kind := trace.KindRead
		if rng.IntN(3) == 0 {
			kind = trace.KindWrite
		}
		evs[i] = trace.Event{Kind: kind, Tid: 1, Addr: addr, Size: uint32(1 << rng.IntN(4))}
	}
	return evs
}

func benchReadWrite(b *testing.B, bits int) {
	p, err := New(Config{CounterBits: bits}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"main", "a", "b", "c", "d"} {
		p.Call(1, p.DefineRoutine(name))
	}
	batch := memBatch(4096)
	p.Events(batch) // warm the shadow memory up
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(batch) {
		n := min(len(batch), b.N-i)
		p.Events(batch[:n])
		// Returns and calls now and then, so reads find older activations.
		p.Return(1)
		p.Call(1, 4)
	}
}

// BenchmarkReadWrite measures the hot path: one op is one Read or Write
// event (32-bit timestamps, aprof's default).
func BenchmarkReadWrite(b *testing.B) { benchReadWrite(b, 32) }

// BenchmarkReadWrite64 is the same with 64-bit timestamps.
func BenchmarkReadWrite64(b *testing.B) { benchReadWrite(b, 64) }

// BenchmarkReadWriteLoop is the access pattern of a loop over an array:
// load a[i], load and store locals (one op is one event).
func BenchmarkReadWriteLoop(b *testing.B) {
	p, err := New(Config{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"main", "a", "b", "c", "d"} {
		p.Call(1, p.DefineRoutine(name))
	}
	var batch []trace.Event
	for i := range 1024 {
		batch = append(batch,
			trace.Event{Kind: trace.KindRead, Tid: 1, Addr: 0x5555_5555_0000 + uint64(i)*4, Size: 4},
			trace.Event{Kind: trace.KindRead, Tid: 1, Addr: 0x7ffffffde000, Size: 8},
			trace.Event{Kind: trace.KindWrite, Tid: 1, Addr: 0x7ffffffde008, Size: 8},
			trace.Event{Kind: trace.KindRead, Tid: 1, Addr: 0x7ffffffde010, Size: 4})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(batch) {
		p.Events(batch[:min(len(batch), b.N-i)])
		p.Return(1)
		p.Call(1, 4)
	}
}

// BenchmarkEventStream measures whole batches of blocks, calls, returns and
// accesses through call tracking.
func BenchmarkEventStream(b *testing.B) {
	s := newStream()
	s.block(1, 0x1000, 0x8000, 3, 10, trace.EndOther)
	p, err := newStaged(Config{}, s)
	if err != nil {
		b.Fatal(err)
	}
	loop := &stream{s.Trace}
	n := len(s.Events)
	loop.block(1, 0x100a, 0x8000, 3, 5, trace.EndCall)
	loop.block(1, 0x2000, 0x7ff8, 4, 10, trace.EndOther)
	for i := range 8 {
		loop.mem(trace.KindRead, 1, 0x9000+uint64(i)*4, 4)
		loop.mem(trace.KindWrite, 1, 0x7ff0-uint64(i)*8, 8)
	}
	loop.block(1, 0x200a, 0x7ff8, 2, 1, trace.EndRet)
	loop.block(1, 0x100f, 0x8000, 2, 2, trace.EndJump)
	p.Events(s.Events[:n])
	body := s.Events[n:]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(body) {
		p.Events(body)
	}
}
