package rowindex

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/store"
)

// TestLimitReadsBlocksIncrementally: on co-grouped blob files a stored row
// is a block of up to hundreds of a key's rows, and the index has an entry
// per stored row. A lookup with a limit must read the key's blocks a few at
// a time, counting their rows, and not plan one stored row per row wanted:
// Limit 100 on a heavy key returns the key's first 100 rows in order and
// reads a small part of what the whole key costs. Paging with the cursor
// (limits that cut blocks inside and that straddle files, on a lake mixing
// blob files and a plain prepared file) returns every row exactly once, in
// the order of a lookup without a limit.
func TestLimitReadsBlocksIncrementally(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	data, err := store.Open(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	// Three files of 4,000 rows over 300 users, user 7 a third of them:
	// ≈330 bytes a row, so user 7's rows in a blob file are ≈7 blocks of
	// ≈200 rows (blocks end at ≈64 KiB of values).
	var uris []string
	for fi := range 3 {
		rng := rand.New(rand.NewPCG(uint64(fi), 11))
		rows := make([]frameRow, 4000)
		for i := range rows {
			s := fmt.Sprintf("name-%d", rng.IntN(1000))
			blob := make([]byte, 300)
			for j := range blob {
				blob[j] = byte(rng.IntN(16))
			}
			rows[i] = frameRow{User: int64(rng.IntN(300)), TS: rng.Int64N(1e9), Name: &s, Score: float64(i), Blob: blob, Flag: i%3 == 0}
			if rng.IntN(3) == 0 {
				rows[i].User = 7
			}
		}
		buf := parquet.NewGenericBuffer[frameRow]()
		if _, err := buf.Write(rows); err != nil {
			t.Fatal(err)
		}
		uri := fmt.Sprintf("b%d.parquet", fi)
		opts := prepared.Options{Key: "user", Sort: []string{"ts"}, PageBytes: 8 << 10, RowGroupRows: 4000}
		if fi != 1 {
			// Files 0 and 2 co-grouped; file 1 a plain prepared file.
			opts.Blob = &prepared.BlobOptions{Column: "served", Fields: []string{"ts", "name", "rare", "score", "blob", "flag"}, Codec: prepared.BlobCodecZstdDict}
		}
		if _, _, err := prepared.WriteFramed(ctx, data, uri, buf.Schema(), buf.Rows(), opts, prepared.FrameOptions{}); err != nil {
			t.Fatal(err)
		}
		uris = append(uris, uri)
	}
	idx, err := store.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	res := StoreResolver{Store: data}
	man, _, err := Create(ctx, idx, Definition{Name: "u", Key: "user"}, res, uris)
	if err != nil {
		t.Fatal(err)
	}
	if !man.Files[0].Blocks || man.Files[1].Blocks || !man.Files[2].Blocks {
		t.Fatalf("files' Blocks %v %v %v, want blob files only", man.Files[0].Blocks, man.Files[1].Blocks, man.Files[2].Blocks)
	}
	// Each lookup on a handle of its own, warmed, without a page cache:
	// the plans count the data each lookup reads.
	lookup := func(q Query) *Result {
		t.Helper()
		ri, err := Open(ctx, idx, "u", Options{Resolver: res, CoalesceGap: -1, PageCacheBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ri.Warm(ctx); err != nil {
			t.Fatal(err)
		}
		r, err := ri.Lookup(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	full := lookup(Query{Key: int64(7)})
	if full.Cursor != "" || len(full.Rows) < 3000 {
		t.Fatalf("whole key: %d rows, cursor %q", len(full.Rows), full.Cursor)
	}
	blocks0 := 0 // user 7's stored rows in file 0
	for _, r := range full.Rows {
		if r.File == uris[0] {
			blocks0++
		}
	}
	same := func(label string, got, want []Row) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", label, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.File != w.File || g.RowGroup != w.RowGroup || g.Row != w.Row || !parquet.Row(g.Values).Equal(w.Values) {
				t.Fatalf("%s: row %d is %s rg %d row %d, want %s rg %d row %d", label, i, g.File, g.RowGroup, g.Row, w.File, w.RowGroup, w.Row)
			}
		}
	}

	lim := lookup(Query{Key: int64(7), Limit: 100})
	t.Logf("whole key: %d rows, %d data bytes in %d requests; limit 100: %d bytes in %d requests", len(full.Rows), full.Plan.Data.BytesRead, full.Plan.Data.Requests, lim.Plan.Data.BytesRead, lim.Plan.Data.Requests)
	same("limit 100", lim.Rows, full.Rows[:100])
	if lim.Cursor == "" {
		t.Fatal("limit 100: no cursor, rows are left")
	}
	// The first block holds the page: a small part of the key's bytes and
	// requests (all of them before: 100 stored rows are every block).
	if b, fb := lim.Plan.Data.BytesRead, full.Plan.Data.BytesRead; b*4 > fb {
		t.Fatalf("limit 100 read %d bytes of the data, the whole key %d: the limit reads the blocks it does not need", b, fb)
	}
	if q, fq := lim.Plan.Data.Requests, full.Plan.Data.Requests; q >= fq {
		t.Fatalf("limit 100: %d data requests, the whole key %d", q, fq)
	}

	// The rows of the key's first block: a limit of that many fills the
	// page with the first batch exactly.
	if full.Rows[0].blk == nil {
		t.Fatal("a block's rows carry no position")
	}
	first := int(full.Rows[0].blk.n)
	t.Logf("the key's first block: %d rows", first)
	if ex := lookup(Query{Key: int64(7), Limit: first}); ex.Plan.Data.Requests != lim.Plan.Data.Requests || ex.Cursor == "" {
		t.Fatalf("limit %d (the first block): %d data requests, cursor %q; want %d and a cursor", first, ex.Plan.Data.Requests, ex.Cursor, lim.Plan.Data.Requests)
	}
	// Pages: a limit that cuts blocks inside, one the first block fills
	// exactly, one past a blob file's rows, and one that needs more than a
	// first block.
	for _, limit := range []int{37, 100, first, 450, blocks0 + 5} {
		var got []Row
		cursor := ""
		for page := 0; ; page++ {
			if page > len(full.Rows) {
				t.Fatalf("limit %d: no end after %d pages", limit, page)
			}
			r := lookup(Query{Key: int64(7), Limit: limit, Cursor: cursor})
			if r.Cursor != "" && len(r.Rows) != limit {
				t.Fatalf("limit %d page %d: %d rows and a cursor", limit, page, len(r.Rows))
			}
			got = append(got, r.Rows...)
			if cursor = r.Cursor; cursor == "" {
				break
			}
		}
		same(fmt.Sprintf("limit %d, paged", limit), got, full.Rows)
	}

	// The iterator, read a row at a time, stops at the limit too.
	ri, err := Open(ctx, idx, "u", Options{Resolver: res, CoalesceGap: -1, PageCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	it, err := ri.Iter(ctx, Query{Key: int64(7), Limit: 250})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var got []Row
	for it.Next() {
		got = append(got, it.Row())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	same("iterator, limit 250", got, full.Rows[:250])
	if c, err := decodeCursor(it.Cursor()); err != nil || c == nil || !bytes.Equal(c.Key, appendKeyValue(nil, parquet.Int64Value(7))) {
		t.Fatalf("iterator cursor %q: %v", it.Cursor(), err)
	}
}
