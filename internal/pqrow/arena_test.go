package pqrow

import (
	"bytes"
	"fmt"
	"testing"
)

// TestStringArena checks that the arena's strings keep their values while
// the arena fills and moves to new chunks, and that the source bytes may
// change after conversion (page buffers are reused by the reader).
func TestStringArena(t *testing.T) {
	a := &stringArena{}
	var want, got []string
	src := make([]byte, 0, 4<<10)
	for i := range 3000 {
		n := (i * 37) % 1500 // empty, short, and longer than arenaMax
		s := bytes.Repeat([]byte(fmt.Sprintf("%04d", i)), n/4+1)[:n]
		src = append(src[:0], s...)
		got = append(got, a.string(src))
		want = append(want, string(s))
		for j := range src {
			src[j] = 'x' // the reader reuses its buffer
		}
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("string %d: %q, want %q", i, got[i], want[i])
		}
	}
	if a.b.Cap() != arenaChunk {
		t.Fatalf("chunk capacity %d after %d strings, want %d", a.b.Cap(), len(want), arenaChunk)
	}
}
