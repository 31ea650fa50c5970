package pqrow

import (
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// stringArena copies the string values of one selective read (readRowsAt)
// into shared chunks rather than one allocation each: converting a read
// row's strings was a tenth of a one-key row-index join's CPU
// (docs/fileindex.md). The strings are immutable views of chunk bytes that
// are never written again, so they stay valid; a chunk lives as long as any
// of its strings. Chunks double from arenaFirst up to arenaChunk, so a read
// of a few rows holds little. Not safe for concurrent use: one per read.
//
// A chunk is a strings.Builder's buffer: it grows without being zeroed
// first (every byte is written before it is read), which zeroing 32 KiB
// chunks cost ≈4 % of a one-key direct join; a Builder never writes
// again the bytes it has handed out.
type stringArena struct {
	b strings.Builder
}

const (
	arenaFirst = 512
	arenaChunk = 32 << 10
	// arenaMax: longer values get their own allocation (they would waste
	// most of a chunk, and gain nothing from sharing one).
	arenaMax = 1 << 10
)

// string returns b as a string whose bytes live in the arena.
func (a *stringArena) string(b []byte) string {
	if len(b) == 0 || len(b) > arenaMax {
		return string(b)
	}
	if a.b.Cap()-a.b.Len() < len(b) {
		size := min(arenaChunk, max(arenaFirst, 2*a.b.Cap()))
		a.b = strings.Builder{}
		a.b.Grow(size)
	}
	start := a.b.Len()
	a.b.Write(b)
	return a.b.String()[start:]
}

// conv returns the converter of a string leaf n reading into the arena, or
// conv (the plain converter) when n is not a byte array column.
func (a *stringArena) conv(n *pnode, conv leafConv) leafConv {
	if pt, _ := n.el.Type.Get(); pt != format.ByteArray && pt != format.FixedLenByteArray {
		return conv
	}
	return func(v parquet.Value) (any, error) { return a.string(v.ByteArray()), nil }
}
