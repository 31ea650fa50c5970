package rowindex

import (
	"testing"
)

// TestCutBlocksLimitFilledByEarlierBatches: a lookup's batches are
// selected by stored rows (batchRows at a time) but a stored row of
// co-grouped blocks is several rows, so the batches before may fill the
// limit exactly while the selection still goes on. The next batch is then
// cut whole, and the page must end after the previous batch's last row
// (its block's rows all out: no Sub) — not with no cursor (the rest of
// the key lost) nor at a row of the batch cut away. A batch without blocks
// (rows without positions) cut mid-way names its pieces' row instead of
// failing.
func TestCutBlocksLimitFilledByEarlierBatches(t *testing.T) {
	key := []byte{tagInt, 0, 0, 0, 0, 0, 0, 0, 7}
	blockRows := func(file int32, rg int32, row int64, n int) []Row {
		bp := &blockPos{pos: cursor{Key: key, File: file, RG: rg, Row: row}, n: int64(n)}
		out := make([]Row, n)
		for i := range out {
			out[i] = Row{blk: bp, bi: int64(i)}
		}
		return out
	}
	decode := func(s string) cursor {
		t.Helper()
		c, err := decodeCursor(s)
		if err != nil {
			t.Fatal(err)
		}
		return *c
	}

	// Two batches of stored rows of 2 rows each under a limit of 4: the
	// first returns 4 rows, the second is cut whole.
	it := &RowIter{q: Query{Limit: 4}}
	first := append(blockRows(1, 0, 0, 2), blockRows(1, 0, 1, 2)...)
	got := it.cutBlocks(first, []*piece{{key: key, file: 1, rg: 0, row: 0, n: 2}})
	if len(got) != 4 || it.done {
		t.Fatalf("first batch: %d rows, done %v", len(got), it.done)
	}
	it.plan.Rows += len(got)
	// The second batch's selection set selectRows' cursor at its own last
	// stored row: rows never returned.
	it.cursorOut = cursor{Key: key, File: 1, RG: 0, Row: 3}.encode()
	got = it.cutBlocks(blockRows(1, 0, 2, 2), []*piece{{key: key, file: 1, rg: 0, row: 2, n: 1}})
	if len(got) != 0 || !it.done {
		t.Fatalf("second batch: %d rows, done %v", len(got), it.done)
	}
	if it.cursorOut == "" {
		t.Fatal("no cursor: the rows past the limit are lost")
	}
	if c, want := decode(it.cursorOut), (cursor{Key: key, File: 1, RG: 0, Row: 1}); c.File != want.File || c.RG != want.RG || c.Row != want.Row || c.Sub != 0 || string(c.Key) != string(key) {
		t.Fatalf("cursor %+v, want %+v (after the first batch's last row)", c, want)
	}

	// A first batch of blocks (3 rows from one stored row), then a batch
	// of a plain file (no positions) that the limit of 4 cuts after one
	// row: the cursor names that row from the batch's pieces.
	it = &RowIter{q: Query{Limit: 4}}
	got = it.cutBlocks(blockRows(1, 0, 0, 3), []*piece{{key: key, file: 1, rg: 0, row: 0, n: 1}})
	it.plan.Rows += len(got)
	plain := make([]Row, 3)
	got = it.cutBlocks(plain, []*piece{{key: key, file: 2, rg: 1, row: 10, n: 3}})
	if len(got) != 1 || it.cursorOut == "" {
		t.Fatalf("plain batch: %d rows, cursor %q", len(got), it.cursorOut)
	}
	if c := decode(it.cursorOut); c.File != 2 || c.RG != 1 || c.Row != 10 || c.Sub != 0 {
		t.Fatalf("cursor %+v, want file 2 rg 1 row 10", c)
	}
}
