package rowindex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/store"
)

// TestIterReadsAhead: a hot key read in many batches, two of them being read
// ahead of the caller at a time (readahead.go), returns exactly the full
// scan's rows in order, with the same plan as one batch at a time; a closed
// iterator and a failed one leave no read running, and a file truncated
// while batches are read ahead fails the iteration with FileChangedError
// after rows that are all the full scan's.
func TestIterReadsAhead(t *testing.T) {
	ctx := context.Background()
	const batch = 1_000
	dir, data, idx, uris, top, want := hotKeyLake(t, 4<<20, 8*batch)
	// No page cache: every batch reads its pages, so a truncated file is
	// seen by the batches after it.
	ri, err := Open(ctx, idx, "u", Options{Resolver: StoreResolver{data}, PageCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	ri.batchRows = batch
	ri.poisonFreed = true // a value left pointing into a read buffer reads garbage
	baseline := runtime.NumGoroutine()

	stream := func(ahead bool) ([]Row, Plan) {
		t.Helper()
		it, err := ri.Iter(ctx, Query{Key: top})
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		if !it.readsAhead {
			t.Fatal("a lookup without a limit does not read ahead")
		}
		it.readsAhead = ahead
		var rows []Row
		for it.Next() {
			rows = append(rows, it.Row())
			if ahead && len(it.ahead) > readAheadBatches {
				t.Fatalf("%d batches read ahead", len(it.ahead))
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		if ahead && (it.readCtx == nil || it.readCtx.Err() == nil) {
			t.Fatal("no batch was read ahead, or the read context outlived the iteration")
		}
		return rows, it.Plan()
	}
	one, onePlan := stream(false)
	checkRows(t, "one batch at a time", one, want)
	got, plan := stream(true)
	checkRows(t, "read ahead", got, want)
	if plan.Rows != len(want) || plan.RowRanges != onePlan.RowRanges || plan.ByteRanges != onePlan.ByteRanges ||
		plan.IndexPathBytes != onePlan.IndexPathBytes || plan.BytesReturned != onePlan.BytesReturned || plan.Data.Pages != onePlan.Data.Pages {
		t.Fatalf("read ahead's plan differs from one batch at a time's:\n got  %+v\n want %+v", plan, onePlan)
	}

	// A limit reads no batch ahead (the batches after it may not be
	// needed), and a light key's one batch is read on the caller's
	// goroutine.
	if it, err := ri.Iter(ctx, Query{Key: top, Limit: 10}); err != nil || it.readsAhead {
		t.Fatalf("a limited lookup reads ahead (%v)", err)
	}
	for u := uint64(1_000); ; u++ {
		res, err := ri.Lookup(ctx, Query{Key: lakegen.UserID(u)})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) == 0 {
			continue // not in the lake
		}
		inline := ri.inlineBatches.Load()
		if res, err = ri.Lookup(ctx, Query{Key: lakegen.UserID(u)}); err != nil || len(res.Rows) == 0 || len(res.Rows) > batch {
			t.Fatalf("light key %d: %d rows, %v", u, len(res.Rows), err)
		}
		if ri.inlineBatches.Load() != inline+1 {
			t.Fatalf("a light key's lookup (%d rows) was not read on the caller's goroutine", len(res.Rows))
		}
		break
	}

	// Closed after the first row: the batches being read are cancelled
	// and waited for.
	it, err := ri.Iter(ctx, Query{Key: top})
	if err != nil {
		t.Fatal(err)
	}
	if !it.Next() {
		t.Fatal(it.Err())
	}
	if len(it.ahead) == 0 {
		t.Fatal("no batch read ahead after the first")
	}
	it.Close()
	it.Close()
	waitGoroutines(t, baseline)

	// Files truncated while batches are read ahead.
	it, err = ri.Iter(ctx, Query{Key: top})
	if err != nil {
		t.Fatal(err)
	}
	var before []Row
	if !it.Next() {
		t.Fatal(it.Err())
	}
	before = append(before, it.Row())
	for _, u := range uris {
		if err := os.Truncate(filepath.Join(dir, filepath.FromSlash(u)), 1000); err != nil {
			t.Fatal(err)
		}
	}
	for it.Next() {
		before = append(before, it.Row())
	}
	var fce *FileChangedError
	if err := it.Err(); !errors.As(err, &fce) {
		t.Fatalf("truncated files: %v, want a FileChangedError", err)
	}
	if len(before) >= len(want) {
		t.Fatalf("truncated files: all %d rows returned", len(before))
	}
	checkRows(t, "rows before the truncation was seen", before, want[:len(before)])
	if it.Next() || len(it.ahead) != 0 {
		t.Fatal("a failed iterator goes on, or keeps reads running")
	}
	it.Close()
	waitGoroutines(t, baseline)
}

// waitGoroutines fails t unless the goroutines fall back to n within a
// few seconds.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	for start := time.Now(); runtime.NumGoroutine() > n; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("%d goroutines running, %d before", runtime.NumGoroutine(), n)
		}
	}
}

// TestIterBatchBytes: batches read ahead double from batchMinRows rows
// while their bytes per row allow, and once the first is read go back to
// batchMinRows when the bytes it read per row would put the next over the
// byte budget (batchBytes); either way the rows are the full scan's.
func TestIterBatchBytes(t *testing.T) {
	ctx := context.Background()
	_, data, idx, _, top, want := hotKeyLake(t, 8<<20, 8*batchMinRows)
	for _, tc := range []struct {
		budget  int64
		doubles bool
	}{{0, true}, {64 << 10, false}} {
		ri, err := Open(ctx, idx, "u", Options{Resolver: StoreResolver{data}, PageCacheBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		ri.batchBytes = tc.budget
		it, err := ri.Iter(ctx, Query{Key: top})
		if err != nil {
			t.Fatal(err)
		}
		var rows []Row
		most := 0
		for it.Next() {
			rows = append(rows, it.Row())
			most = max(most, it.lastBatch)
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		it.Close()
		checkRows(t, fmt.Sprint("budget ", tc.budget), rows, want)
		if doubled := most > batchMinRows; doubled != tc.doubles {
			t.Errorf("budget %d: batches of up to %d rows (%d bytes read for %d rows)", tc.budget, most, it.dm.bytes.Load(), len(rows))
		}
	}
}

// hotKeyLake writes and indexes (as "u", on user_id) a skewed lake of about
// size bytes (8 KiB pages) and returns it with its top key and that key's
// rows by a full scan, which must be at least rows.
func hotKeyLake(t *testing.T, size int64, rows int) (dir string, data, idx store.Store, uris []string, top int64, want []scanRow) {
	t.Helper()
	dir, data, idx, uris = indexLake(t, lakegen.Config{
		Seed: 5, TargetBytes: size, Days: 2, FilesPerDay: 2, Users: 50_000, ZipfS: 1.2, ZipfV: 1, Tracks: 500,
		RowGroupRows: 8_000, PageBytes: 8 << 10, Prefix: "lake/",
	})
	top = lakegen.UserID(0)
	kb, _ := EncodeKey(top)
	if want = fullScan(t, dir, uris, "user_id", kb, kb); len(want) < rows {
		t.Fatalf("the top key has %d rows, want at least %d", len(want), rows)
	}
	return dir, data, idx, uris, top, want
}
