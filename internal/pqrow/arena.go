package pqrow

import (
	"unsafe"

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
type stringArena struct {
	buf []byte
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
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, min(arenaChunk, max(arenaFirst, 2*cap(a.buf))))
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return unsafe.String(&a.buf[start], len(b))
}

// conv returns the converter of a string leaf n reading into the arena, or
// conv (the plain converter) when n is not a byte array column.
func (a *stringArena) conv(n *pnode, conv leafConv) leafConv {
	if pt, _ := n.el.Type.Get(); pt != format.ByteArray && pt != format.FixedLenByteArray {
		return conv
	}
	return func(v parquet.Value) (any, error) { return a.string(v.ByteArray()), nil }
}
