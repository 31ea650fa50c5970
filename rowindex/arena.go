package rowindex

import (
	"errors"

	"github.com/parquet-go/parquet-go"
)

// valueArena copies the bytes of byte-array values out of pages that go
// back to parquet-go's pool, into a few large blocks instead of one
// allocation per value (Value.Clone): a hot key returns thousands of rows.
// A block that is full is left to the values already pointing into it.
type valueArena struct{ block []byte }

// arenaBlock caps the size of a fresh block; blocks start small (a light
// key needs a few hundred bytes per column) and double.
const arenaBlock = 64 << 10

func (a *valueArena) keep(v parquet.Value) parquet.Value {
	k := v.Kind()
	if k != parquet.ByteArray && k != parquet.FixedLenByteArray || v.IsNull() {
		return v.Clone() // no bytes to copy: Clone is a plain copy
	}
	kept := a.copy(v.ByteArray())
	var out parquet.Value
	if k == parquet.FixedLenByteArray {
		out = parquet.FixedLenByteArrayValue(kept)
	} else {
		out = parquet.ByteArrayValue(kept)
	}
	return out.Level(v.RepetitionLevel(), v.DefinitionLevel(), v.Column())
}

// copy returns a copy of b in the arena.
func (a *valueArena) copy(b []byte) []byte {
	if len(b) > cap(a.block)-len(a.block) {
		a.block = make([]byte, 0, max(min(2*cap(a.block), arenaBlock), 512, len(b)))
	}
	at := len(a.block)
	a.block = append(a.block, b...)
	return a.block[at:len(a.block):len(a.block)]
}

// isOutside reports whether err came from a read outside the prefetched
// ranges (so a retry with fall-through can succeed).
func isOutside(err error, r *pageReader) bool {
	return errors.Is(err, errOutsideSpans) || r.outside.Load()
}
