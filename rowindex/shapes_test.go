package rowindex

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/internal/s3test"
	"github.com/ariadne-go/ariadne/store"
)

// TestWarmShapes: Warm with Options.ShapeBytes reads the file's SNAPPY
// pages once and learns their shapes (and decodes the dictionary), so a
// fresh handle's first light lookups cut their values from blocks, not
// whole pages: a fraction of the bytes a handle without learnt shapes
// decompresses and reads for the same keys, with the same rows as a full
// scan. A budget of a few shapes keeps at most that many bytes, and
// lookups stay right; DropCache forgets them.
func TestWarmShapes(t *testing.T) {
	ctx := context.Background()
	dir, _, data, idx := snappyLake(t)
	open := func(shapeBytes int64) *RowIndex {
		ri, err := Open(ctx, idx, "k", Options{Resolver: StoreResolver{data}, PageCacheBytes: -1, ShapeBytes: shapeBytes})
		if err != nil {
			t.Fatal(err)
		}
		return ri
	}
	type pass struct {
		read, inflated, cuts     int64
		firstRead, firstInflated int64 // of the first lookup
		firstUnshaped            int   // its Plan.UnshapedPages
	}
	run := func(name string, ri *RowIndex) pass {
		inflated, cuts := ri.DecompressedBytes(), ri.subCuts.Load()
		var p pass
		for k := int64(0); k < 19997; k += 1601 {
			kb, _ := EncodeKey(k)
			want := fullScan(t, dir, []string{"s.parquet"}, "k", kb, kb)
			res := checkedLookup(t, ri, k, want, fmt.Sprintf("%s key %d", name, k))
			if p.read += res.Plan.Data.BytesRead; p.firstRead == 0 {
				p.firstRead, p.firstInflated = res.Plan.Data.BytesRead, ri.DecompressedBytes()-inflated
				p.firstUnshaped = res.Plan.UnshapedPages
			}
		}
		p.inflated, p.cuts = ri.DecompressedBytes()-inflated, ri.subCuts.Load()-cuts
		t.Logf("%s: %d bytes read, %d decompressed, %d pages cut from blocks; the first lookup read %d, decompressed %d", name, p.read, p.inflated, p.cuts, p.firstRead, p.firstInflated)
		return p
	}

	// Every row of the file: its pages are wanted whole, shapes would not
	// help, and the plan does not count them — but for the pages a batch
	// boundary cuts (each batch reads them for part of their rows).
	sortedIdx, _ := store.Open(ctx, "mem://")
	if _, _, err := Create(ctx, sortedIdx, Definition{Name: "ks", Key: "k", Kind: KindSorted}, StoreResolver{data}, []string{"s.parquet"}); err != nil {
		t.Fatal(err)
	}
	sorted, err := Open(ctx, sortedIdx, "ks", Options{Resolver: StoreResolver{data}, PageCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	all, err := sorted.Lookup(ctx, Query{Low: int64(0), High: int64(19997)})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Rows) != 40000 || all.Plan.Data.Pages == 0 || int64(all.Plan.UnshapedPages)*2 >= all.Plan.Data.Pages {
		t.Fatalf("every row: %d rows, %d pages decoded, %d counted as read whole for want of shapes, want 40000 and fewer than half", len(all.Rows), all.Plan.Data.Pages, all.Plan.UnshapedPages)
	}
	t.Logf("every row: %d pages decoded, %d counted as read whole for want of shapes (batch boundaries)", all.Plan.Data.Pages, all.Plan.UnshapedPages)
	plain := open(-1)
	if _, err := plain.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := plain.LearntShapes(); n != 0 {
		t.Fatalf("Warm with a negative ShapeBytes learnt %d shapes", n)
	}
	without := run("without learnt shapes", plain)

	ri := open(1 << 30)
	var events []WarmProgress
	c, err := ri.Warm(ctx, WithWarmProgress(func(p WarmProgress) { events = append(events, p) }))
	if err != nil {
		t.Fatal(err)
	}
	checkWarmProgress(t, events, c, "fragments", "footers", "resident", "shapes")
	pages, bytes := ri.LearntShapes()
	fi, err := os.Stat(filepath.Join(dir, "s.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("warm: %d requests, %d bytes read; shapes of %d pages in %d bytes", c.Requests, c.BytesRead, pages, bytes)
	// Two data columns of 1 MiB pages; the key column's pages are
	// learnt too.
	if pages < 4 || bytes <= 0 || c.BytesRead < fi.Size()/2 {
		t.Fatalf("Warm learnt %d shapes (%d bytes), reading %d bytes of a %d-byte file", pages, bytes, c.BytesRead, fi.Size())
	}
	dicts := 0
	for col := range 3 {
		if _, ok := ri.cache.get(decodedDictKey{ri.Manifest().Files[0].ID, 0, col}); ok {
			dicts++
		}
	}
	if dicts == 0 {
		t.Fatal("Warm with ShapeBytes decoded no dictionary")
	}
	// A shape Warm learnt is the shape a lookup learns reading the page.
	compared, differ := 0, 0
	ri.shapes.each(func(pk pageKey, sh *pageShape) {
		if v, ok := plain.cache.get(shapeKey(pk)); ok {
			if compared++; !reflect.DeepEqual(v.(*pageShape), sh) {
				differ++
				t.Errorf("page %+v: Warm learnt %+v, a lookup %+v", pk, sh, v)
			}
		}
	})
	if differ > 0 {
		t.FailNow()
	}
	if compared == 0 {
		t.Fatal("no page's shape learnt both by Warm and by lookups")
	}
	with := run("with learnt shapes", ri)
	// Without learnt shapes the first lookup reads and decompresses whole
	// pages (later ones learn them); with them, blocks from the start.
	// The plans say so: the first lookup without them read pages whole
	// for want of their shapes, with them none.
	if without.firstUnshaped == 0 || with.firstUnshaped != 0 {
		t.Fatalf("Plan.UnshapedPages of the first lookup: %d without learnt shapes, %d with", without.firstUnshaped, with.firstUnshaped)
	}
	if with.cuts == 0 || with.firstInflated*3 > without.firstInflated || with.firstRead*3 > without.firstRead || with.inflated >= without.inflated {
		t.Fatalf("with learnt shapes: %d pages cut, the first lookup decompressed %d bytes and read %d, all %d; without: %d, %d, %d",
			with.cuts, with.firstInflated, with.firstRead, with.inflated, without.firstInflated, without.firstRead, without.inflated)
	}

	// A budget of the largest shape: what fits, and lookups still right.
	// (The key column's pages have no shapes here, its values come from
	// the index; the pages left are of unequal shapes.)
	largest := int64(0)
	ri.shapes.each(func(_ pageKey, sh *pageShape) { largest = max(largest, sh.charge()) })
	small := open(largest + shapeEntryBytes)
	if _, err := small.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	if n, b := small.LearntShapes(); n == 0 || n >= pages || b > small.opts.ShapeBytes {
		t.Fatalf("a budget of %d bytes kept %d shapes in %d bytes (%d unbounded)", small.opts.ShapeBytes, n, b, pages)
	}
	run("with a small shape budget", small)

	// A handle of the next version adopts the shapes: its Warm reads no
	// page again (the shapes step reads nothing).
	next := open(1 << 30)
	next.AdoptShapes(ri)
	if n, b := next.LearntShapes(); n != pages || b != bytes {
		t.Fatalf("adopted %d shapes in %d bytes, want %d in %d", n, b, pages, bytes)
	}
	events = nil
	c, err = next.Warm(ctx, WithWarmProgress(func(p WarmProgress) { events = append(events, p) }))
	if err != nil {
		t.Fatal(err)
	}
	checkWarmProgress(t, events, c, "fragments", "footers", "resident", "shapes")
	if before, after := lastOfStep(events, "resident").Bytes, lastOfStep(events, "shapes").Bytes; after != before {
		t.Fatalf("Warm after AdoptShapes read %d bytes learning shapes, want none", after-before)
	}

	// A version without the file keeps none of its shapes.
	if _, _, err := Remove(ctx, idx, "k", []string{"s.parquet"}); err != nil {
		t.Fatal(err)
	}
	if err := next.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n, b := next.LearntShapes(); n != 0 || b != 0 {
		t.Fatalf("after the file's removal %d shapes in %d bytes kept", n, b)
	}

	ri.DropCache()
	if n, _ := ri.LearntShapes(); n != 0 {
		t.Fatalf("DropCache kept %d learnt shapes", n)
	}
}

// lastOfStep returns the last progress event of a step.
func lastOfStep(events []WarmProgress, step string) WarmProgress {
	var last WarmProgress
	for _, e := range events {
		if e.Step == step {
			last = e
		}
	}
	return last
}

// TestSanePages: learning shapes reads only page locations that lie inside
// the file, in order, without overlap; a lying page index (one whose
// offset and size overflow) is left to the lookups.
func TestSanePages(t *testing.T) {
	loc := func(off int64, size int32) format.PageLocation {
		return format.PageLocation{Offset: off, CompressedPageSize: size}
	}
	for _, c := range []struct {
		name string
		locs []format.PageLocation
		want bool
	}{
		{"contiguous", []format.PageLocation{loc(4, 100), loc(104, 50)}, true},
		{"gap", []format.PageLocation{loc(4, 100), loc(200, 50)}, true},
		{"none", nil, false},
		{"overlap", []format.PageLocation{loc(4, 100), loc(50, 50)}, false},
		{"backwards", []format.PageLocation{loc(500, 100), loc(4, 50)}, false},
		{"past the end", []format.PageLocation{loc(4, 100), loc(960, 50)}, false},
		{"overflow", []format.PageLocation{loc(4, 160905), loc(math.MaxInt64-10, 1<<30)}, false},
		{"empty page", []format.PageLocation{loc(4, 0)}, false},
		{"negative", []format.PageLocation{loc(-4, 10)}, false},
	} {
		if got := sanePages(c.locs, 1000); got != c.want {
			t.Errorf("%s: sanePages = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestWarmShapesDamaged: a page damaged in place after indexing (a SNAPPY
// tag overwritten) does not fail Warm, which learns the other pages'
// shapes; the lookups that reach the damaged page fail with
// ErrDataFileChanged, the others return the rows of a full scan made
// before the damage.
func TestWarmShapesDamaged(t *testing.T) {
	ctx := context.Background()
	dir, rows, data, idx := snappyLake(t)
	var keys []int64
	for _, i := range []int{0, 2600, 3000, 3400, 3800, 20000, 39999} {
		keys = append(keys, rows[i].K)
	}
	want := map[int64][]scanRow{}
	for _, k := range keys {
		kb, _ := EncodeKey(k)
		want[k] = fullScan(t, dir, []string{"s.parquet"}, "k", kb, kb)
	}
	// Damage column s's last page: the keys' rows in it fail, the
	// others' do not (each key has a row in the first 19,997 rows).
	path := filepath.Join(dir, "s.parquet")
	_, f := readParquet(t, path)
	locs := f.OffsetIndexes()[1].PageLocations
	if len(locs) < 2 {
		t.Fatalf("column s has %d pages, want several", len(locs))
	}
	damageSnappyBlock(t, path, locs[len(locs)-1].Offset)
	ri, err := Open(ctx, idx, "k", Options{Resolver: StoreResolver{data}, PageCacheBytes: -1, ShapeBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Warm(ctx); err != nil {
		t.Fatalf("Warm over a damaged page: %v", err)
	}
	if n, _ := ri.LearntShapes(); n == 0 {
		t.Fatal("Warm learnt no shape")
	}
	failed := lookupsAfterDamage(t, ri, keys, want)
	if failed == 0 || failed == len(keys) {
		t.Fatalf("%d of %d lookups failed after the damage: want some of each", failed, len(keys))
	}
}

// TestWarmShapesTruncated: a data file truncated after its footer was
// cached fails the shapes step of Warm with ErrDataFileChanged, as it
// fails a lookup.
func TestWarmShapesTruncated(t *testing.T) {
	ctx := context.Background()
	dir, rows, data, idx := snappyLake(t)
	ri, err := Open(ctx, idx, "k", Options{Resolver: StoreResolver{data}, ShapeBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Lookup(ctx, Query{Key: rows[0].K}); err != nil { // the footer cached
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.parquet")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	var last WarmProgress
	if _, err := ri.Warm(ctx, WithWarmProgress(func(p WarmProgress) { last = p })); !errors.Is(err, ErrDataFileChanged) {
		t.Fatalf("Warm over a truncated file: %v, want ErrDataFileChanged", err)
	}
	if last.Step != "shapes" {
		t.Fatalf("Warm failed after step %q, want the shapes step", last.Step)
	}
}

// checkWarmProgress checks a Warm's progress events: the steps in order,
// each counting its units one by one up to its total, the bytes read
// rising to the Warm's cost.
func checkWarmProgress(t *testing.T, events []WarmProgress, c Cost, steps ...string) {
	t.Helper()
	var seen []string
	var bytes int64
	for i, e := range events {
		if len(seen) == 0 || seen[len(seen)-1] != e.Step {
			seen = append(seen, e.Step)
			if e.Done != 1 {
				t.Fatalf("event %d: step %s starts at %d", i, e.Step, e.Done)
			}
		} else if e.Done != events[i-1].Done+1 {
			t.Fatalf("event %d: step %s counts %d after %d", i, e.Step, e.Done, events[i-1].Done)
		}
		if e.Done > e.Total || e.Bytes < bytes || e.Bytes > c.BytesRead {
			t.Fatalf("event %d: %+v (bytes before %d, the Warm read %d)", i, e, bytes, c.BytesRead)
		}
		if i+1 == len(events) || events[i+1].Step != e.Step {
			if e.Done != e.Total {
				t.Fatalf("step %s ends at %d of %d", e.Step, e.Done, e.Total)
			}
		}
		bytes = e.Bytes
	}
	if fmt.Sprint(seen) != fmt.Sprint(steps) {
		t.Fatalf("steps %v, want %v", seen, steps)
	}
}

// TestAdoptShapesAcrossRowIndexes: a row index over the same file takes the
// shapes another learnt (its Warm then reads no page to learn them, and its
// lookups return a full scan's rows), and a row index over another file at
// the same URI (another size and footer) takes none.
func TestAdoptShapesAcrossRowIndexes(t *testing.T) {
	ctx := context.Background()
	dir, rows, data, idx := snappyLake(t)
	if _, _, err := Create(ctx, idx, Definition{Name: "t", Key: "t"}, StoreResolver{data}, []string{"s.parquet"}); err != nil {
		t.Fatal(err)
	}
	open := func(idx store.Store, data store.Store, name string, verifyKeys bool) *RowIndex {
		ri, err := Open(ctx, idx, name, Options{Resolver: StoreResolver{data}, PageCacheBytes: -1, ShapeBytes: 1 << 30, VerifyKeys: verifyKeys})
		if err != nil {
			t.Fatal(err)
		}
		return ri
	}
	// k learns every column's shapes (VerifyKeys: its key column's too,
	// which t reads); t takes its own key's values from the index.
	byK, byT := open(idx, data, "k", true), open(idx, data, "t", false)
	if _, err := byK.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	pages, _ := byK.LearntShapes()
	byT.AdoptShapes(byK)
	if n, _ := byT.LearntShapes(); n != pages || n == 0 {
		t.Fatalf("row index t adopted %d shapes of row index k's %d", n, pages)
	}
	var events []WarmProgress
	c, err := byT.Warm(ctx, WithWarmProgress(func(p WarmProgress) { events = append(events, p) }))
	if err != nil {
		t.Fatal(err)
	}
	checkWarmProgress(t, events, c, "fragments", "footers", "resident", "shapes")
	if before, after := lastOfStep(events, "resident").Bytes, lastOfStep(events, "shapes").Bytes; after != before {
		t.Fatalf("Warm after adopting another row index's shapes read %d bytes learning shapes", after-before)
	}
	for _, i := range []int{0, 2600, 39999} {
		kb, _ := EncodeKey(rows[i].T)
		checkedLookup(t, byT, rows[i].T, fullScan(t, dir, []string{"s.parquet"}, "t", kb, kb), fmt.Sprintf("t=%s", rows[i].T))
	}

	// Another file under the same URI: nothing to adopt.
	other := t.TempDir()
	otherData, err := store.Open(ctx, "file://"+other)
	if err != nil {
		t.Fatal(err)
	}
	writeRows(t, ctx, otherData, "s.parquet", rows[:30000], parquet.Compression(blockSnappyCodec{}), parquet.PageBufferSize(1<<20), parquet.DataPageVersion(1))
	otherIdx, _ := store.Open(ctx, "mem://")
	if _, _, err := Create(ctx, otherIdx, Definition{Name: "k", Key: "k"}, StoreResolver{otherData}, []string{"s.parquet"}); err != nil {
		t.Fatal(err)
	}
	stranger := open(otherIdx, otherData, "k", false)
	stranger.AdoptShapes(byK)
	if n, _ := stranger.LearntShapes(); n != 0 {
		t.Fatalf("a row index over another file at the same URI adopted %d shapes", n)
	}
}

// dictPageBytes is the size of every dictionary page of ri's files (what
// Warm reads to decode them when it knows every page's shape).
func dictPageBytes(t *testing.T, ri *RowIndex) int64 {
	t.Helper()
	var n int64
	for i := range ri.Manifest().Files {
		fm, _, err := ri.dataMeta(context.Background(), new(meter), &ri.Manifest().Files[i])
		if err != nil {
			t.Fatal(err)
		}
		for rg := range fm.f.Metadata().RowGroups {
			for col := range fm.ncol() {
				if dr := fm.dictRange(rg, col); dr.end > dr.off {
					n += dr.end - dr.off
				}
			}
		}
	}
	return n
}

// TestUnshapedPagesCount: a page planned whole for want of its shape counts
// in Plan.UnshapedPages only when its shape would have let it be read in
// parts (at most half its rows wanted); either way the page is looked for in
// shape files (fileWork.noShape).
func TestUnshapedPagesCount(t *testing.T) {
	ctx := context.Background()
	_, _, data, idx := snappyLake(t)
	ri, err := Open(ctx, idx, "k", Options{Resolver: StoreResolver{data}, PageCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	fe := &ri.Manifest().Files[0]
	fm, _, err := ri.dataMeta(ctx, new(meter), fe)
	if err != nil {
		t.Fatal(err)
	}
	col := fm.f.Root().Column("s").Index()
	locs := fm.offsetIndex(0, col)
	if len(locs) < 2 || !ri.subPageReads(fm, 0, col) {
		t.Fatalf("%d pages, sub-page reads %v: the test wants a chunk of several pages read in parts", len(locs), ri.subPageReads(fm, 0, col))
	}
	first, end := locs[0].FirstRowIndex, locs[1].FirstRowIndex
	for _, tc := range []struct {
		name     string
		segs     [][2]int64
		unshaped int
	}{
		{"one row", [][2]int64{{first + 3, first + 4}}, 1},
		{"half the rows", [][2]int64{{first, first + (end-first)/2}}, 1},
		{"two runs, most rows", [][2]int64{{first, first + 10}, {first + 20, end}}, 0},
		{"every row", [][2]int64{{first, end}}, 0},
	} {
		w := &fileWork{fm: fm, fe: fe}
		ri.planPage(w, 0, col, locs, pageSegs{page: 0, segs: tc.segs}, true)
		if w.unshaped != tc.unshaped || len(w.noShape) != 1 || len(w.ranges) != 1 {
			t.Errorf("%s: %d counted, %d pages looked for in shape files, %d ranges; want %d, 1, 1 (the page whole)", tc.name, w.unshaped, len(w.noShape), len(w.ranges), tc.unshaped)
		}
	}
}

// TestWarmShapesDefault: with Options.ShapeBytes 0 a handle's shape budget
// is DefaultShapeBytes, and Warm reads for their shapes the pages of data
// files on a local store, not those on an object store (S3 on loopback),
// where it only loads saved shape files; a negative budget keeps none.
func TestWarmShapesDefault(t *testing.T) {
	ctx := context.Background()
	_, _, local, localIdx := snappyLake(t)
	b, err := store.ReadAll(ctx, local, "s.parquet")
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(b))
	remote, err := store.Open(ctx, s3test.Start(t).URL("lake", ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.WriteAll(ctx, remote, "s.parquet", b, nil); err != nil {
		t.Fatal(err)
	}
	remoteIdx, _ := store.Open(ctx, "mem://")
	if _, _, err := Create(ctx, remoteIdx, Definition{Name: "k", Key: "k"}, StoreResolver{remote}, []string{"s.parquet"}); err != nil {
		t.Fatal(err)
	}
	warm := func(idx, data store.Store, shapeBytes int64) (*RowIndex, Cost, int) {
		t.Helper()
		ri, err := Open(ctx, idx, "k", Options{Resolver: StoreResolver{data}, ShapeBytes: shapeBytes})
		if err != nil {
			t.Fatal(err)
		}
		c, err := ri.Warm(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages, _ := ri.LearntShapes()
		return ri, c, pages
	}
	for _, tc := range []struct {
		name            string
		idx, data       store.Store
		shapeBytes      int64
		budget          int64
		learns, scanned bool
	}{
		{"local, default", localIdx, local, 0, DefaultShapeBytes, true, true},
		{"local, none", localIdx, local, -1, 0, false, false},
		{"object store, default", remoteIdx, remote, 0, DefaultShapeBytes, false, false},
		{"object store, a budget", remoteIdx, remote, 1 << 30, 1 << 30, true, true},
	} {
		ri, c, pages := warm(tc.idx, tc.data, tc.shapeBytes)
		t.Logf("%s: %d shapes, %d bytes read", tc.name, pages, c.BytesRead)
		if ri.ShapeBudget() != tc.budget || (pages > 0) != tc.learns || (c.BytesRead >= size/2) != tc.scanned {
			t.Errorf("%s: budget %d, %d shapes learnt, %d of %d bytes read; want budget %d, shapes %v, the pages read %v",
				tc.name, ri.ShapeBudget(), pages, c.BytesRead, size, tc.budget, tc.learns, tc.scanned)
		}
	}

	// Shape files saved on the object store: a default handle loads them
	// and still reads no page.
	saver, _, learnt := warm(remoteIdx, remote, 1<<30)
	if _, err := saver.SaveShapes(ctx); err != nil {
		t.Fatal(err)
	}
	_, c, pages := warm(remoteIdx, remote, 0)
	t.Logf("object store, default, shape files saved: %d shapes, %d bytes read", pages, c.BytesRead)
	if pages != learnt || c.BytesRead >= size/2 {
		t.Errorf("object store, default, shape files saved: %d shapes (saved %d), %d of %d bytes read", pages, learnt, c.BytesRead, size)
	}
}

// BenchmarkDecodeShape decodes the shapes Warm learns of a file of 1 MiB
// SNAPPY pages split into blocks (pyarrow's defaults), as a fresh process
// decodes the records of shape files: the marks of the SNAPPY runs and of
// the dictionary indexes, and the byte arrays' samples.
func BenchmarkDecodeShape(b *testing.B) {
	ctx := context.Background()
	_, _, data, idx := snappyLake(b)
	ri, err := Open(ctx, idx, "k", Options{Resolver: StoreResolver{data}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ri.Warm(ctx); err != nil {
		b.Fatal(err)
	}
	fm, _, err := ri.dataMeta(ctx, new(meter), &ri.Manifest().Files[0])
	if err != nil {
		b.Fatal(err)
	}
	type record struct {
		b        []byte
		pageSize int
		ci       colInfo
	}
	var recs []record
	bytes := 0
	ri.shapes.each(func(pk pageKey, sh *pageShape) {
		ci, _ := directInfo(fm, pk.rg, pk.col)
		recs = append(recs, record{appendShape(nil, sh), shapePageSize(fm, pk), ci})
		bytes += len(recs[len(recs)-1].b)
	})
	if len(recs) == 0 {
		b.Fatal("Warm learnt no shapes")
	}
	b.SetBytes(int64(bytes))
	b.ReportMetric(float64(len(recs)), "records/op")
	b.ResetTimer()
	for range b.N {
		for _, r := range recs {
			if _, err := decodeShape(r.b, r.pageSize, r.ci); err != nil {
				b.Fatal(err)
			}
		}
	}
}
