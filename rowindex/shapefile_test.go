package rowindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/store"
)

// nullRow is a row of an uncompressed file with a nullable PLAIN column
// (definition levels in its pages), a dictionary column and a fixed-width
// one.
type nullRow struct {
	K int64   `parquet:"k"`
	S *string `parquet:"s,optional,plain"`
	T string  `parquet:"t,dict"`
	V int64   `parquet:"v"`
	D int64   `parquet:"d,dict"`
}

// nullLake writes nullRows in 1 MiB pages, uncompressed as u.parquet and
// with SNAPPY as z.parquet (its ascending v patched), and indexes them by k
// as row index "u".
func nullLake(t *testing.T) (dir string, data, idx store.Store) {
	t.Helper()
	ctx := context.Background()
	dir = t.TempDir()
	data, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]nullRow, 40000)
	for i := range rows {
		rows[i] = nullRow{K: int64(i*7919) % 19997, T: fmt.Sprintf("track-%d", i%3001), V: int64(i) * 1000, D: int64(i%2999) * 1_000_003}
		if i%50 == 7 {
			rows[i].K = 19997 // a hot key: 800 rows
		}
		if i%3 != 0 {
			s := fmt.Sprintf("%d:%016x", i, uint64(i)*0x9e3779b97f4a7c15)
			rows[i].S = &s
		}
	}
	writeRows(t, ctx, data, "u.parquet", rows, parquet.PageBufferSize(1<<20), parquet.DataPageVersion(1))
	writeRows(t, ctx, data, "z.parquet", rows, parquet.Compression(blockSnappyCodec{}), parquet.PageBufferSize(1<<20), parquet.DataPageVersion(1))
	idx, _ = store.Open(ctx, "mem://")
	if _, _, err := Create(ctx, idx, Definition{Name: "u", Key: "k"}, StoreResolver{data}, []string{"u.parquet", "z.parquet"}); err != nil {
		t.Fatal(err)
	}
	return dir, data, idx
}

// warmedShapes opens row index name with a shape budget and warms it:
// every page's shape learnt.
func warmedShapes(t *testing.T, data, idx store.Store, name string) *RowIndex {
	t.Helper()
	ri, err := Open(context.Background(), idx, name, Options{Resolver: StoreResolver{data}, PageCacheBytes: -1, ShapeBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := ri.LearntShapes(); n == 0 {
		t.Fatal("Warm learnt no shape")
	}
	return ri
}

// TestShapeCodec: every shape Warm learns — SNAPPY pages of PLAIN and
// dictionary values with patches, uncompressed pages with nulls, fixed-
// width values — decodes to itself; and a corrupt encoding (each byte
// changed, or cut short) decodes to an error or to a shape that planning
// can use without panicking.
func TestShapeCodec(t *testing.T) {
	_, _, sdata, sidx := snappyLake(t)
	_, udata, uidx := nullLake(t)
	kinds := map[string]int{}
	for _, ri := range []*RowIndex{warmedShapes(t, sdata, sidx, "k"), warmedShapes(t, udata, uidx, "u")} {
		_, ids := ri.snapshot()
		rng := rand.New(rand.NewPCG(1, 2))
		ri.shapes.each(func(pk pageKey, sh *pageShape) {
			fm, _, err := ri.dataMeta(context.Background(), new(meter), ids[pk.id])
			if err != nil {
				t.Fatal(err)
			}
			size := shapePageSize(fm, pk)
			ci, _ := directInfo(fm, pk.rg, pk.col)
			switch {
			case pk.page == dictShapePage:
				kinds["dictionary"]++
			case sh.whole:
				kinds["whole"]++
			case sh.snappy != nil && len(sh.snappy.ppos) > 0:
				kinds["snappy patched"]++
			case sh.snappy != nil:
				kinds["snappy"]++
			case sh.levels != nil:
				kinds["nulls"]++
			case ci.width > 0:
				kinds["fixed width"]++
			default:
				kinds["uncompressed"]++
			}
			b := appendShape(nil, sh)
			got, err := decodeShape(b, size, ci)
			if err != nil {
				t.Fatalf("page %+v: %v", pk, err)
			}
			if !reflect.DeepEqual(got, sh) {
				t.Fatalf("page %+v: decoded %+v, encoded %+v", pk, got, sh)
			}
			// Corrupt copies: a changed byte at 200 places, and cut short.
			for range 200 {
				c := append([]byte(nil), b...)
				c[rng.IntN(len(c))] ^= byte(1 + rng.IntN(255))
				if sh, err := decodeShape(c, size, ci); err == nil {
					exerciseShape(t, sh, ci.width)
				}
			}
			for n := 0; n < len(b); n += 1 + len(b)/50 {
				if _, err := decodeShape(b[:n], size, ci); err == nil {
					t.Fatalf("page %+v: %d of %d bytes decoded", pk, n, len(b))
				}
			}
		})
	}
	t.Logf("shapes by kind: %v", kinds)
	for _, k := range []string{"snappy", "snappy patched", "nulls", "fixed width", "dictionary"} {
		if kinds[k] == 0 {
			t.Errorf("no %s shape: the codec is not covered", k)
		}
	}
}

// exerciseShape plans reads of a decoded shape as planPage does, which
// must not panic.
func exerciseShape(t *testing.T, sh *pageShape, width int) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("planning a validated corrupt shape %+v panicked: %v", sh, r)
		}
	}()
	if sh.whole {
		return
	}
	lc := newLevelCursor(sh.levels)
	for _, rr := range [][2]int{{0, 1}, {0, sh.rows}, {sh.rows / 2, sh.rows/2 + 1}, {sh.rows - 1, sh.rows}} {
		if rr[0] < 0 || rr[1] > sh.rows || rr[0] >= rr[1] {
			continue
		}
		vlo, vhi := lc.defined(rr[0]), lc.defined(rr[1])
		if vlo < 0 || vhi <= vlo {
			continue
		}
		a, e, first, mid, ok := sh.span(vlo, vhi, width)
		if !ok {
			continue
		}
		if sh.snappy != nil {
			sh.snappyBlocks(a, e)
			sh.snappyGroups([][2]int{rr}, width)
			if ba, be, in := sh.snappyOut(a, e); in {
				sh.snappy.run(ba, be)
			}
		} else if mid {
			sh.indexes(make([]byte, max(e-a, 0)), first, mid)
		}
	}
}

// TestShapeFiles: shapes saved by SaveShapes make a fresh handle's first
// light lookups read blocks, not whole pages (a fraction of the bytes of a
// handle without them, rows equal to a full scan); saving again writes
// nothing; Warm reads the shape file instead of the pages; a corrupt
// shape file or one made for other data is ignored, lookups still right;
// Vacuum deletes the shape files of files the row index does not list.
func TestShapeFiles(t *testing.T) {
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
		read, first, firstRequests int64
		plan                       Plan // of the first lookup
	}
	run := func(name string, ri *RowIndex) pass {
		var p pass
		for k := int64(0); k < 19997; k += 1601 {
			kb, _ := EncodeKey(k)
			want := fullScan(t, dir, []string{"s.parquet"}, "k", kb, kb)
			res := checkedLookup(t, ri, k, want, fmt.Sprintf("%s key %d", name, k))
			if p.read += res.Plan.Data.BytesRead; p.first == 0 {
				p.first, p.firstRequests, p.plan = res.Plan.BytesRead(), res.Plan.Requests(), res.Plan
			}
		}
		t.Logf("%s: %d bytes read; the first lookup %d bytes in %d requests", name, p.read, p.first, p.firstRequests)
		return p
	}
	without := run("without shape files", open(0))

	warm := warmedShapes(t, data, idx, "k")
	learnt, _ := warm.LearntShapes()
	res, err := warm.SaveShapes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("saved: %+v", res)
	if res.Files != 1 || res.Pages == 0 || res.Pages > learnt || res.Bytes <= 0 || res.Existing != 0 {
		t.Fatalf("SaveShapes: %+v (%d shapes learnt)", res, learnt)
	}
	if again, err := warm.SaveShapes(ctx); err != nil || again.Files != 0 || again.Existing != 1 {
		t.Fatalf("SaveShapes again: %+v, %v", again, err)
	}

	with := run("with shape files", open(0))
	if with.first*3 > without.first || with.read*2 > without.read {
		t.Fatalf("with shape files the first lookup read %d bytes, all %d; without: %d, %d", with.first, with.read, without.first, without.read)
	}
	if p := with.plan; p.ShapeRecords == 0 || p.ShapeFilesIgnored != 0 || without.plan.ShapeRecords != 0 {
		t.Fatalf("the first lookup's plan: %d shapes from shape files, %d passed over (without: %d)", p.ShapeRecords, p.ShapeFilesIgnored, without.plan.ShapeRecords)
	}

	// Warm reads the shape file, not the pages.
	fresh := open(1 << 30)
	var events []WarmProgress
	if _, err := fresh.Warm(ctx, WithWarmProgress(func(p WarmProgress) { events = append(events, p) })); err != nil {
		t.Fatal(err)
	}
	if n, _ := fresh.LearntShapes(); n < res.Pages {
		t.Fatalf("Warm with a shape file kept %d shapes, the file has %d", n, res.Pages)
	}
	// The shape file, and the dictionaries to decode them.
	if before, after := lastOfStep(events, "resident").Bytes, lastOfStep(events, "shapes").Bytes; after-before > res.Bytes+dictPageBytes(t, fresh) {
		t.Fatalf("Warm read %d bytes learning shapes, the shape file is %d, the dictionaries %d", after-before, res.Bytes, dictPageBytes(t, fresh))
	}

	// Damaged shape files are ignored.
	key := shapeFileKey("k", &warm.Manifest().Files[0])
	saved, err := store.ReadAll(ctx, idx, key)
	if err != nil {
		t.Fatal(err)
	}
	other := append([]byte(nil), saved...)
	copy(other[shapeHeaderBytes+1:], "x.parquet") // another data file's
	for name, tc := range map[string]struct {
		b   []byte
		why string // in the plan's reason
	}{
		"garbage":           {[]byte("not a shape file at all"), "not a shape file"},
		"record checksums":  {flipTail(saved, 200), "record of row group"},
		"another data file": {other, "directory checksum"},
		"cut short":         {saved[:len(saved)/2], "past the file's end"},
	} {
		b := tc.b
		if err := idx.Delete(ctx, key, nil); err != nil {
			t.Fatal(err)
		}
		if err := store.WriteAll(ctx, idx, key, b, nil); err != nil {
			t.Fatal(err)
		}
		if p := run("shape file: "+name, open(0)).plan; p.ShapeFilesIgnored != 1 || !strings.HasPrefix(p.ShapeFileIgnoredReason, path.Base(key)+": ") ||
			!strings.Contains(p.ShapeFileIgnoredReason, tc.why) {
			t.Errorf("shape file %s: the first lookup passed over %d shape files (%q), want 1 (%q)", name, p.ShapeFilesIgnored, p.ShapeFileIgnoredReason, tc.why)
		}
		run("shape file, Warm: "+name, warmedShapes(t, data, idx, "k"))
	}

	// A shape file deleted after a handle listed it: forgotten, rows right.
	if err := idx.Delete(ctx, key, nil); err != nil {
		t.Fatal(err)
	}
	if err := store.WriteAll(ctx, idx, key, saved, nil); err != nil {
		t.Fatal(err)
	}
	gone := open(0)
	gone.shapeFiles(ctx, new(meter)) // listed with the file
	if err := idx.Delete(ctx, key, nil); err != nil {
		t.Fatal(err)
	}
	run("shape file deleted after the listing", gone)
	if _, ok := gone.shapeFiles(ctx, new(meter))[key]; ok {
		t.Fatal("a deleted shape file is still listed")
	}
	if err := store.WriteAll(ctx, idx, key, saved, nil); err != nil {
		t.Fatal(err)
	}

	// Vacuum: the orphan goes, the current file's stays.
	orphan := folderOf("k") + "shapes/0000000000000000-1-00000000.shapes"
	if err := store.WriteAll(ctx, idx, orphan, saved, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	vr, err := Vacuum(ctx, idx, "k", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(vr.Deleted) != 1 || !strings.HasSuffix(vr.Deleted[0], "0000000000000000-1-00000000.shapes") {
		t.Fatalf("Vacuum deleted %v", vr.Deleted)
	}
	if _, err := idx.Stat(ctx, key); err != nil {
		t.Fatalf("Vacuum deleted the current shape file: %v", err)
	}
}

// flipTail returns b with n bytes near its end changed.
func flipTail(b []byte, n int) []byte {
	c := append([]byte(nil), b...)
	for i := max(len(c)-n, 0); i < len(c); i += 7 {
		c[i] ^= 0x5a
	}
	return c
}

// TestDictParts: with the shapes of their dictionary pages saved, a fresh
// handle's light lookups read the entries their rows use, not the
// dictionaries (byte arrays and fixed-width values, uncompressed and
// SNAPPY, with nulls beside): rows equal to a full scan, and a fraction of
// the bytes a handle reads without the shapes. A hot key's chunks (more
// than dictPartsMaxRows selected rows) read their dictionaries whole.
func TestDictParts(t *testing.T) {
	ctx := context.Background()
	dir, data, idx := nullLake(t)
	open := func() *RowIndex {
		ri, err := Open(ctx, idx, "u", Options{Resolver: StoreResolver{data}, PageCacheBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		return ri
	}
	uris := []string{"u.parquet", "z.parquet"}
	run := func(name string, ri *RowIndex) (first, all int64) {
		for k := int64(3); k < 19997; k += 1777 {
			kb, _ := EncodeKey(k)
			want := fullScan(t, dir, uris, "k", kb, kb)
			parts := ri.dictParts.Load()
			res := checkedLookup(t, ri, k, want, fmt.Sprintf("%s key %d", name, k))
			if all += res.Plan.Data.BytesRead; first == 0 {
				first = res.Plan.Data.BytesRead
			}
			if got := int64(res.Plan.DictEntries); got != ri.dictParts.Load()-parts {
				t.Fatalf("%s key %d: the plan says %d dictionary entries read in parts, the handle counted %d", name, k, got, ri.dictParts.Load()-parts)
			}
		}
		t.Logf("%s: the first lookup read %d bytes, all %d; %d dictionary entries read in parts", name, first, all, ri.dictParts.Load())
		return first, all
	}
	plain := open()
	withoutFirst, without := run("without shape files", plain)
	if plain.dictParts.Load() != 0 {
		t.Fatal("a handle without dictionary shapes read entries in parts")
	}
	warm := warmedShapes(t, data, idx, "u")
	if _, err := warm.SaveShapes(ctx); err != nil {
		t.Fatal(err)
	}
	fresh := open()
	withFirst, with := run("with shape files", fresh)
	if fresh.dictParts.Load() == 0 || withFirst*4 > withoutFirst || with >= without {
		t.Fatalf("with shape files: %d entries read in parts, the first lookup read %d bytes, all %d; without: %d, %d",
			fresh.dictParts.Load(), withFirst, with, withoutFirst, without)
	}
	// Reads and decoding spread over goroutines, as a remote store's are:
	// the entries of the chunks are read concurrently.
	spread := open()
	spread.spreadReads = true
	if run("spread", spread); spread.dictParts.Load() == 0 {
		t.Fatal("spread reads read no dictionary entries in parts")
	}
	// A hot key's batches past the first (of more than dictPartsMaxRows
	// rows a chunk) read their dictionaries whole, on a fresh handle too;
	// a second touch of a dictionary reads it whole.
	hot := open()
	kb, _ := EncodeKey(int64(19997))
	checkedLookup(t, hot, int64(19997), fullScan(t, dir, uris, "k", kb, kb), "hot key")
	if n := hot.dictParts.Load(); n > 2*3*dictPartsMaxRows {
		t.Fatalf("a hot key of 1,600 rows read %d dictionary entries in parts", n)
	}
	parts := fresh.dictParts.Load()
	run("again", fresh)
	if n := fresh.dictParts.Load(); n != parts {
		t.Fatalf("lookups of dictionaries read in parts before read %d entries in parts", n-parts)
	}
}

// TestHostileShapes: shapes a lying shape file may hold that pass a
// shallow check, each of which once panicked planning or a dictionary
// read, or allocated gigabytes (found in review): definition levels whose
// RLE value is a whole byte above 1, a SNAPPY literal to cut before its
// run, and a 2 GiB output claimed from a 100-byte stream. Each is refused,
// or used without panicking.
func TestHostileShapes(t *testing.T) {
	plain := colInfo{typ: format.ByteArray, codec: format.Uncompressed}
	fixed := colInfo{typ: format.Int32, width: 4, codec: format.Snappy}
	samples := make([]int32, 9) // ceil(500/64)+1
	for i := range samples {
		samples[i] = int32(i * 10)
	}
	levels := []byte{0xE8, 0x07, 1, 0x14, 200, 0x14, 255, 0xC0, 0x07, 0} // 500×1, 10×200, 10×255, 480×0
	if _, err := decodeShape(appendShape(nil, &pageShape{dataStart: 10, rows: 1000, enc: format.Plain, values: 500, every: 64, samples: samples, levels: levels}), 1000, plain); err == nil {
		t.Error("levels of values above 1 accepted")
	}
	n := 1<<31 - 100
	huge := &pageShape{dataStart: 20 + n - 4, rows: 1, enc: format.Plain, values: 1, snappy: &snappyIndex{n: n, block: n, blocks: []int32{0, 100}}, hlen: 20, bodyLen: n}
	if _, err := decodeShape(appendShape(nil, huge), 200, fixed); err == nil {
		t.Errorf("a %d-byte output of a 100-byte stream accepted", n)
	}
	x := &snappyIndex{n: 12288, block: 12288, blocks: []int32{0, 1000},
		marks: []snappyMark{{in: 10, out: 4096, reach: 4096}, {in: 50, out: 8192, reach: 8192, lit: 5, hdr: 0}}}
	cut := &pageShape{dataStart: 20, rows: 3072, enc: format.Plain, values: 3072, snappy: x, hlen: 20, bodyLen: 12288}
	sh, err := decodeShape(appendShape(nil, cut), 2000, fixed)
	if err != nil {
		t.Fatalf("the literal to cut is the decoder's to refuse, validate refused: %v", err)
	}
	a, e, _, _, _ := sh.span(1025, 1026, 4)
	ri := &RowIndex{}
	if _, _, err := dictPartBytes(ri, sh, make([]byte, 2000), 0, a, e); err == nil {
		t.Error("a literal to cut before its run decoded")
	}
}

// TestShapeFileRounds: behind an object store's latency, a fresh handle's
// first lookup on a file with a shape file waits for the rounds it cannot
// avoid, and no more: the manifest's listing (with the copy of the newest
// manifest beside it), the fragment (with the shape files' listing), the
// data file's footer (with the shape file's directory, and with an
// object store's coalescing gap the whole small shape file), the pages.
// Before stop 33, the manifest was read after the listing, and the shape
// files were listed, their directories and then their records read, each
// in a round of its own after the footer's: 7 rounds.
func TestShapeFileRounds(t *testing.T) {
	ctx := context.Background()
	dir, _, data, idx := snappyLake(t)
	warm := warmedShapes(t, data, idx, "k")
	if _, err := warm.SaveShapes(ctx); err != nil {
		t.Fatal(err)
	}
	tr := store.NewTrace()
	lat := store.Faults{Latency: 40 * time.Millisecond}
	ri, err := Open(ctx, store.NewTraced(store.NewFaulty(idx, lat), "index", tr), "k", Options{
		Resolver:    StoreResolver{store.NewTraced(store.NewFaulty(data, lat), "data", tr)},
		CoalesceGap: DefaultCoalesceGap, PageCacheBytes: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	k := int64(4242)
	kb, _ := EncodeKey(k)
	res := checkedLookup(t, ri, k, fullScan(t, dir, []string{"s.parquet"}, "k", kb, kb), "fresh handle")
	if res.Plan.ShapeRecords == 0 {
		t.Fatalf("the lookup used no shape record: %+v", res.Plan)
	}
	spans, rounds := tr.Spans()
	footerRound := 0
	for i, sp := range spans {
		if sp.Store == "data" && footerRound == 0 {
			footerRound = rounds[i]
		}
	}
	for i, sp := range spans {
		switch {
		case sp.Op == store.OpList && rounds[i] > 2:
			t.Errorf("%s listed in round %d, not beside the manifest's or the fragment's", sp.Key, rounds[i])
		case sp.Op == store.OpRead && strings.Contains(sp.Key, "/shapes/") && (rounds[i] != footerRound || sp.Offset != 0):
			t.Errorf("shape file read @%d in round %d, the footer's is %d", sp.Offset, rounds[i], footerRound)
		}
	}
	for i, sp := range spans {
		if strings.HasSuffix(sp.Key, "/_manifest/latest.json") && rounds[i] != 1 {
			t.Errorf("the manifest's copy read in round %d", rounds[i])
		}
	}
	if n := tr.Rounds(); footerRound != 3 || n > 4 {
		t.Fatalf("%d rounds, the footer's %d (want 4 and 3):\n%s", n, footerRound, tr)
	}
	t.Logf("%d rounds:\n%s", tr.Rounds(), tr)
}

// TestShapeListing: the background listing of shapes/ outlives the lookup
// that started it (a server's request context ends with its response), so
// lookups that end first do not start one each; and a listing in flight
// when the handle is refreshed does not record its stale result.
func TestShapeListing(t *testing.T) {
	ctx := context.Background()
	_, _, data, idx := snappyLake(t)
	warm := warmedShapes(t, data, idx, "k")
	if _, err := warm.SaveShapes(ctx); err != nil {
		t.Fatal(err)
	}
	tr := store.NewTrace()
	slow := store.NewTraced(store.NewFaulty(idx, store.Faults{Latency: 30 * time.Millisecond}), "index", tr)
	listings := func() (n int) { // of shapes/, started (a cancelled one too)
		spans, _ := tr.Spans()
		for _, sp := range spans {
			if sp.Op == store.OpList && strings.HasSuffix(sp.Key, "/shapes/") {
				n++
			}
		}
		return n
	}
	ri, err := Open(ctx, slow, "k", Options{Resolver: StoreResolver{data}})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		c, cancel := context.WithCancel(ctx)
		ri.startShapeListing(c, new(meter))
		cancel() // the lookup is over before the listing
	}
	if got := ri.shapeFiles(ctx, new(meter)); len(got) != 1 || listings() != 1 {
		t.Fatalf("after 5 cancelled starts: %d shape files listed, %d listings", len(got), listings())
	}
	// A Refresh while a listing is in flight: that listing's result (taken
	// before the Refresh) is dropped, and the next lookup lists again.
	ri.shapeList.reset()
	ri.startShapeListing(ctx, new(meter))
	ri.shapeList.mu.Lock()
	ch := ri.shapeList.running
	ri.shapeList.mu.Unlock()
	ri.shapeList.reset()
	<-ch
	ri.shapeList.mu.Lock()
	done, sizes := ri.shapeList.done, ri.shapeList.sizes
	ri.shapeList.mu.Unlock()
	if done || sizes != nil {
		t.Fatal("a listing started before a reset recorded its result")
	}
	if got := ri.shapeFiles(ctx, new(meter)); len(got) != 1 || listings() != 3 {
		t.Fatalf("after the reset: %d shape files listed, %d listings", len(got), listings())
	}
}

// TestShapeReaderInt checks shapeReader.int against encoding/binary: every
// one-byte value and those around it, the extremes, random values of every
// length, and input binary.Varint refuses (truncated, or past 64 bits).
func TestShapeReaderInt(t *testing.T) {
	var b []byte
	var want []int64
	for v := int64(-300); v <= 300; v++ {
		b = binary.AppendVarint(b, v)
		want = append(want, v)
	}
	for _, v := range []int64{math.MinInt64, math.MaxInt64, math.MinInt32, math.MaxInt32} {
		b = binary.AppendVarint(b, v)
		want = append(want, v)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		v := rng.Int64() >> rng.IntN(64)
		if rng.IntN(2) == 0 {
			v = -v
		}
		b = binary.AppendVarint(b, v)
		want = append(want, v)
	}
	r := &shapeReader{b: b}
	for i, w := range want {
		if got := r.int(); got != w || r.err != nil {
			t.Fatalf("value %d: got %d (%v), want %d", i, got, r.err, w)
		}
	}
	if len(r.b) != 0 {
		t.Fatalf("%d bytes left", len(r.b))
	}
	for _, bad := range [][]byte{
		{0x80},
		{},
		bytes.Repeat([]byte{0xff}, 11),
		append(bytes.Repeat([]byte{0xff}, 9), 0x02), // 65 bits
	} {
		if _, n := binary.Varint(bad); n > 0 {
			t.Fatalf("%x: binary.Varint accepts it", bad)
		}
		r = &shapeReader{b: bad}
		if r.int(); !errors.Is(r.err, errShapeCorrupt) {
			t.Fatalf("%x: %v, want errShapeCorrupt", bad, r.err)
		}
	}
}
