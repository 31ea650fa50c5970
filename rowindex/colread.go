package rowindex

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// readColumn decodes rows [first, first+n) of one column chunk through r
// with parquet-go's page reader (every codec, data page v1/v2, dictionary and
// plain encodings, optional and repeated columns), and returns each row's
// values (one per leaf value, with its levels). aligned says the chunk's page
// locations start at row boundaries, so reading stops at the end of the page
// holding the last row instead of looking at the next page.
func readColumn(cc parquet.ColumnChunk, r io.ReaderAt, first, n int64, aligned bool) ([][]parquet.Value, error) {
	fcc, ok := cc.(*parquet.FileColumnChunk)
	if !ok {
		return nil, fmt.Errorf("rowindex: column chunk %T is not a file column chunk", cc)
	}
	pages := fcc.PagesFrom(r)
	defer pages.Close()
	if err := pages.SeekToRow(first); err != nil {
		return nil, err
	}
	// Values go to one backing slice; rows are cut from it at the end
	// (one allocation instead of one per row).
	var vals []parquet.Value
	var arena valueArena
	starts := make([]int, 0, n+1)
	buf := make([]parquet.Value, 512)
	finish := func() [][]parquet.Value {
		rows := make([][]parquet.Value, len(starts))
		for i, s := range starts {
			e := len(vals)
			if i+1 < len(starts) {
				e = starts[i+1]
			}
			rows[i] = vals[s:e:e]
		}
		return rows
	}
	for {
		if int64(len(starts)) >= n && aligned {
			return finish(), nil
		}
		page, err := pages.ReadPage()
		if err == io.EOF {
			if int64(len(starts)) < n {
				return nil, fmt.Errorf("rowindex: column %v: %d rows found, %d expected", fcc.Node(), len(starts), n)
			}
			return finish(), nil
		}
		if err != nil {
			return nil, err
		}
		if vals == nil {
			vals = make([]parquet.Value, 0, min(n, page.NumValues()))
		}
		done := false
		vr := page.Values()
		for !done {
			k, err := vr.ReadValues(buf)
			for _, v := range buf[:k] {
				if v.RepetitionLevel() == 0 {
					if int64(len(starts)) == n {
						done = true
						break
					}
					starts = append(starts, len(vals))
				}
				if len(starts) == 0 {
					continue // tail of a row that started before first
				}
				vals = append(vals, arena.keep(v))
			}
			if err == io.EOF || k == 0 && err == nil {
				break
			}
			if err != nil {
				parquet.Release(page)
				return nil, err
			}
		}
		parquet.Release(page)
		if done {
			return finish(), nil
		}
	}
}

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
	b := v.ByteArray()
	if len(b) > cap(a.block)-len(a.block) {
		a.block = make([]byte, 0, max(min(2*cap(a.block), arenaBlock), 512, len(b)))
	}
	at := len(a.block)
	a.block = append(a.block, b...)
	kept := a.block[at:len(a.block):len(a.block)]
	var out parquet.Value
	if k == parquet.FixedLenByteArray {
		out = parquet.FixedLenByteArrayValue(kept)
	} else {
		out = parquet.ByteArrayValue(kept)
	}
	return out.Level(v.RepetitionLevel(), v.DefinitionLevel(), v.Column())
}

// assembleRows zips per-column rows (all of the same length) into Parquet
// rows, leaf columns in increasing column index, cut from one backing
// array.
func assembleRows(cols [][][]parquet.Value, n int) []parquet.Row {
	total := 0
	for _, c := range cols {
		for i := range n {
			total += len(c[i])
		}
	}
	backing := make([]parquet.Value, 0, total)
	out := make([]parquet.Row, n)
	for i := range n {
		start := len(backing)
		for _, c := range cols {
			backing = append(backing, c[i]...)
		}
		out[i] = backing[start:len(backing):len(backing)]
	}
	return out
}

// isOutside reports whether err came from a read outside the prefetched
// ranges (so a retry with fall-through can succeed).
func isOutside(err error, r *pageReader) bool {
	return errors.Is(err, errOutsideSpans) || r.outside.Load()
}
