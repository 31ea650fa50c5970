package rowindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/store"
)

// TestSubPageReads covers files written with arrow-go's defaults (one
// uncompressed PLAIN page per column chunk, no page index): lookups must
// equal a full scan, and once a page has been read whole its byte arrays
// are reached by sub-page reads, so a repeated lookup (no page cache)
// reads a fraction of the bytes (the first lookup of the handle reads
// whole pages; later ones read the bytes of the selected values, plus the
// local coalescing gap), with no read outside the planned ranges.
func TestSubPageReads(t *testing.T) {
	ctx := context.Background()
	dir, data, idx, uris := indexLake(t, lakegen.Config{
		Seed: 5, TargetBytes: 2 << 20, Days: 2, FilesPerDay: 2, Users: 2_000, ZipfS: 1.1, ZipfV: 100, Tracks: 500,
		Writer: lakegen.WriterArrow, Prefix: "lake/",
	})
	ri, err := Open(ctx, idx, "u", Options{Resolver: StoreResolver{data}, PageCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []uint64{3, 200, 1500, 0} {
		key := lakegen.UserID(u)
		kb, _ := EncodeKey(key)
		want := fullScan(t, dir, uris, "user_id", kb, kb)
		if len(want) == 0 {
			t.Fatalf("user %d has no rows", u)
		}
		var first Plan
		for pass := range 2 {
			res := checkedLookup(t, ri, key, want, fmt.Sprintf("user %d pass %d", u, pass))
			if p := res.Plan; p.IndexPathBytes <= 0 || p.ScanBytes < p.IndexPathBytes || p.ScanFiles != 0 {
				t.Fatalf("user %d pass %d: planner chose the scan for %d files: index path %d bytes, scan %d", u, pass,
					p.ScanFiles, p.IndexPathBytes, p.ScanBytes)
			}
			if pass == 0 {
				first = res.Plan
				continue
			}
			if u == 3 && res.Plan.Data.BytesRead*3 > first.Data.BytesRead*2 {
				t.Fatalf("user %d (%d rows): the repeated lookup read %d bytes, the first %d", u, len(want),
					res.Plan.Data.BytesRead, first.Data.BytesRead)
			}
		}
	}
}

// nullable is a row of TestDirectPathNulls: optional columns of every type
// the direct path decodes, with nulls.
type nullable struct {
	K int64    `parquet:"k"`
	A *int32   `parquet:"a,optional"`
	B *int64   `parquet:"b,optional"`
	C *float64 `parquet:"c,optional"`
	D *float32 `parquet:"d,optional"`
	S *string  `parquet:"s,optional"`
	T *string  `parquet:"t,optional,dict"`
	F [4]byte  `parquet:"f"`
}

// TestDirectPathNulls: uncompressed and compressed files with nulls,
// dictionaries and many small pages, v1 and v2 data pages: lookups equal a
// full scan (first with whole pages, then with the shapes learnt).
func TestDirectPathNulls(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for fi, opt := range [][]parquet.WriterOption{
		{parquet.Compression(&parquet.Uncompressed), parquet.PageBufferSize(2048)},
		{parquet.Compression(&parquet.Uncompressed), parquet.PageBufferSize(4096), parquet.DataPageVersion(1)},
		{parquet.Compression(&parquet.Snappy), parquet.PageBufferSize(3000)},
	} {
		rows := make([]nullable, 3000)
		for i := range rows {
			r := &rows[i]
			r.K = int64((i * 7919) % 97)
			if i%3 != 0 {
				v := int32(i)
				r.A = &v
			}
			if i%5 != 1 {
				v := int64(i) * 1000
				r.B = &v
			}
			if i%7 != 2 {
				v := float64(i) / 3
				r.C = &v
			}
			if i%2 == 0 {
				v := float32(i)
				r.D = &v
			}
			if i%4 != 3 {
				s := fmt.Sprintf("s-%d-%s", i, string(make([]byte, i%13)))
				r.S = &s
			}
			if i%6 != 0 {
				s := fmt.Sprintf("t%d", i%11)
				r.T = &s
			}
			r.F = [4]byte{byte(i), byte(i >> 8), 1, 2}
		}
		name := fmt.Sprintf("n%d.parquet", fi)
		writeRows(t, ctx, data, name, rows, opt...)
		uris = append(uris, name)
	}
	ri := indexOnK(t, data, uris, Options{PageCacheBytes: -1})
	for pass := range 2 {
		for k := int64(0); k < 97; k += 4 {
			kb, _ := EncodeKey(k)
			want := fullScan(t, dir, uris, "k", kb, kb)
			res, err := ri.Lookup(ctx, Query{Key: k})
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, fmt.Sprintf("pass %d key %d", pass, k), res.Rows, want)
		}
	}
	// Every page of these files is in the direct path's scope (PLAIN,
	// dictionary and DELTA_LENGTH_BYTE_ARRAY pages, with nulls).
	if n := ri.slowChunks.Load(); n != 0 {
		t.Fatalf("%d column chunks fell back to parquet-go's decoder", n)
	}
}

// nullablePlain is nullable with PLAIN strings (parquet-go's default,
// DELTA_LENGTH_BYTE_ARRAY, is not read in parts).
type nullablePlain struct {
	K int64    `parquet:"k"`
	A *int32   `parquet:"a,optional"`
	B *int64   `parquet:"b,optional"`
	C *float64 `parquet:"c,optional"`
	D *float32 `parquet:"d,optional"`
	S *string  `parquet:"s,optional,plain"`
	T *string  `parquet:"t,optional,dict"`
	F [4]byte  `parquet:"f"`
}

// TestSubPageReadsNulls: uncompressed files with nulls, dictionaries and
// large pages (v1 and v2 data pages), read without coalescing so that the
// ranges of the selected values stay apart from the rest of their pages:
// once a lookup has read a page whole and learnt its shape, later lookups
// cut the rows of PLAIN and dictionary pages with nulls from sub-page reads,
// and every lookup equals a full scan.
//
// SNAPPY pages split into independent 64 KiB blocks (as the C++ library
// behind pyarrow and Spark writes them, snappysplit.go) are cut from the
// blocks holding the selected values; v2 pages are read whole, and so are
// these streams compressed across blocks (klauspost's encoder, parquet-go's
// default): indexed as one block, their far copies make every run start at
// the stream's start and cover most of the page. Both give the same rows.
func TestSubPageReadsNulls(t *testing.T) {
	t.Run("uncompressed", func(t *testing.T) {
		testSubPageReadsNulls(t, 997, 0, 4, 4, [][]parquet.WriterOption{
			{parquet.Compression(&parquet.Uncompressed), parquet.PageBufferSize(256 << 10)},
			{parquet.Compression(&parquet.Uncompressed), parquet.PageBufferSize(64 << 10), parquet.DataPageVersion(1)},
		})
	})
	t.Run("snappy blocks", func(t *testing.T) {
		testSubPageReadsNulls(t, 9973, 0, 0, -1, [][]parquet.WriterOption{
			{parquet.Compression(blockSnappyCodec{}), parquet.PageBufferSize(1 << 20), parquet.DataPageVersion(1)},
			{parquet.Compression(blockSnappyCodec{}), parquet.PageBufferSize(256 << 10), parquet.DataPageVersion(1)},
		})
	})
	// v2 pages are read whole; klauspost's streams (one block: its copies
	// reach across) are read whole but for the segments of fixed-width
	// columns, which are patched (addPatches).
	t.Run("snappy whole or patched", func(t *testing.T) {
		testSubPageReadsNulls(t, 997, 0, 0, -1, [][]parquet.WriterOption{
			{parquet.Compression(blockSnappyCodec{}), parquet.PageBufferSize(256 << 10), parquet.DataPageVersion(2)},
			{parquet.Compression(&parquet.Snappy), parquet.PageBufferSize(1 << 20), parquet.DataPageVersion(1)},
		})
	})
}

// blockSnappyCodec is SNAPPY as the C++ library writes it (blockSnappy).
type blockSnappyCodec struct{}

func (blockSnappyCodec) String() string                            { return "SNAPPY" }
func (blockSnappyCodec) CompressionCodec() format.CompressionCodec { return format.Snappy }
func (blockSnappyCodec) Encode(dst, src []byte) ([]byte, error)    { return blockSnappy(dst, src), nil }
func (blockSnappyCodec) Decode(dst, src []byte) ([]byte, error)    { return snappy.Decode(dst, src) }

// testSubPageReadsNulls writes a file per writer options (rows of keys
// spread over the file, 20,000 rows / keys a key; pad × 8 more bytes of
// hex in each string of column s) and checks that
// lookups equal a full scan, and that lookups after the first (which learns
// the pages' shapes) cut pages from sub-page reads, each reading less than
// 1/perLookup of the first lookup's bytes (if perLookup > 0) and all less
// than 1/perPass of the first pass's (if perPass > 0); with perPass 0, that
// no page is cut. (SNAPPY pages of a few 64 KiB blocks are mostly read
// whole: TestSubPageReadsSnappy measures the blocks saved on 1 MiB pages.)
func testSubPageReadsNulls(t *testing.T, keys int64, pad int, perLookup, perPass int64, opts [][]parquet.WriterOption) {
	ctx := context.Background()
	dir := t.TempDir()
	data, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for fi, opt := range opts {
		rows := make([]nullablePlain, 20000)
		for i := range rows {
			r := &rows[i]
			r.K = (int64(i) * 7919) % keys
			if i%3 != 0 {
				v := int32(i)
				r.A = &v
			}
			if i%5 != 1 {
				v := int64(i) * 1000
				r.B = &v
			}
			if i%7 != 2 {
				v := float64(i) / 3
				r.C = &v
			}
			if i%2 == 0 {
				v := float32(i)
				r.D = &v
			}
			if i%4 != 3 {
				s := fmt.Sprintf("s-%d-%s", i, string(make([]byte, i%13)))
				for j := range pad {
					s += fmt.Sprintf("%08x", uint32(i*j)*2654435761)
				}
				r.S = &s
			}
			if i%6 != 0 {
				s := fmt.Sprintf("t%d", i%301)
				r.T = &s
			}
			r.F = [4]byte{byte(i), byte(i >> 8), 1, 2}
		}
		name := fmt.Sprintf("n%d.parquet", fi)
		writeRows(t, ctx, data, name, rows, opt...)
		uris = append(uris, name)
	}
	ri := indexOnK(t, data, uris, Options{PageCacheBytes: -1, CoalesceGap: -1})
	var whole int64     // the first lookup's bytes: whole pages
	var firstPass int64 // the first pass's bytes: read, or decompressed if it decompressed any
	for pass := range 3 {
		before, inflated := ri.subCuts.Load(), ri.DecompressedBytes()
		var read int64
		for k := int64(0); k < keys; k += 37 * keys / 997 { // 27 keys
			kb, _ := EncodeKey(k)
			want := fullScan(t, dir, uris, "k", kb, kb)
			res := checkedLookup(t, ri, k, want, fmt.Sprintf("pass %d key %d", pass, k))
			read += res.Plan.Data.BytesRead
			if whole == 0 {
				whole = res.Plan.Data.BytesRead
			} else if pass > 0 && perLookup > 0 && res.Plan.Data.BytesRead*perLookup > whole {
				t.Fatalf("pass %d key %d: %d bytes read, the first lookup (whole pages) %d", pass, k, res.Plan.Data.BytesRead, whole)
			}
		}
		cuts := ri.subCuts.Load() - before
		t.Logf("pass %d: %d bytes read, %d pages cut from sub-page reads (first lookup %d)", pass, read, cuts, whole)
		cost := read
		if inflated = ri.DecompressedBytes() - inflated; inflated > 0 {
			cost = inflated // compressed pages: decompressing them is the cost
		}
		t.Logf("pass %d: %d bytes decompressed", pass, inflated)
		if pass == 0 {
			firstPass = cost
		} else if perPass != 0 && (cuts == 0 || perPass > 0 && cost*perPass > firstPass) {
			t.Fatalf("pass %d: %d pages cut from sub-page reads, %d bytes read, %d decompressed; the first pass %d", pass, cuts, read, inflated, firstPass)
		}
		if perPass == 0 && cuts != 0 {
			t.Fatalf("pass %d: %d pages cut from sub-page reads, none may be", pass, cuts)
		}
	}
	if n := ri.slowChunks.Load(); n != 0 {
		t.Fatalf("%d column chunks fell back to parquet-go's decoder", n)
	}
}

// snappyRow is a row of TestSubPageReadsSnappy: a key and a PLAIN string
// column whose 1 MiB pages span sixteen 64 KiB blocks.
type snappyRow struct {
	K int64  `parquet:"k"`
	S string `parquet:"s,plain"`
	T string `parquet:"t,dict"`
}

// snappyFile writes s.parquet, 40,000 rows of 1 MiB SNAPPY pages split into
// blocks, into a new folder, and opens a row index on k over it (no page
// cache: every lookup reads its pages or blocks).
func snappyFile(t *testing.T) (dir string, rows []snappyRow, uris []string, ri *RowIndex) {
	t.Helper()
	dir, rows, data, idx := snappyLake(t)
	ri, err := Open(context.Background(), idx, "k", Options{Resolver: StoreResolver{data}, PageCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	return dir, rows, []string{"s.parquet"}, ri
}

// snappyLake writes a file of 1 MiB SNAPPY pages in independent blocks (a
// PLAIN and a dictionary column besides the key k) and indexes it on k in
// memory, returning its folder, rows, the data store and the index store.
func snappyLake(t testing.TB) (dir string, rows []snappyRow, data, idx store.Store) {
	t.Helper()
	ctx := context.Background()
	dir = t.TempDir()
	data, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	rows = make([]snappyRow, 40000)
	for i := range rows {
		rows[i] = snappyRow{K: int64(i*7919) % 19997, S: fmt.Sprintf("%d:%016x:%016x", i, uint64(i)*0x9e3779b97f4a7c15, uint64(i*i)*0xbf58476d1ce4e5b9),
			T: fmt.Sprintf("track-%d", i%3001)}
	}
	writeRows(t, ctx, data, "s.parquet", rows, parquet.Compression(blockSnappyCodec{}), parquet.PageBufferSize(1<<20), parquet.DataPageVersion(1))
	idx, _ = store.Open(ctx, "mem://")
	if _, _, err := Create(ctx, idx, Definition{Name: "k", Key: "k"}, StoreResolver{data}, []string{"s.parquet"}); err != nil {
		t.Fatal(err)
	}
	return dir, rows, data, idx
}

// TestSubPageReadsSnappy: on a file of 1 MiB SNAPPY pages split into
// independent blocks (the C++ library's, pyarrow's and Spark's default
// page size and codec), a light key's lookup after the pages' shapes are
// learnt decompresses the blocks holding its values, not the pages: a
// fraction of the first pass's bytes, with the same rows.
func TestSubPageReadsSnappy(t *testing.T) {
	dir, _, uris, ri := snappyFile(t)
	var first int64 // the first lookup's decompressed bytes: whole pages
	for pass := range 2 {
		inflated, cuts := ri.DecompressedBytes(), ri.subCuts.Load()
		var read int64
		lookups := int64(0)
		for k := int64(0); k < 19997; k += 401 {
			kb, _ := EncodeKey(k)
			want := fullScan(t, dir, uris, "k", kb, kb)
			res := checkedLookup(t, ri, k, want, fmt.Sprintf("pass %d key %d", pass, k))
			if lookups++; first == 0 {
				first = ri.DecompressedBytes() - inflated
			}
			read += res.Plan.Data.BytesRead
		}
		inflated, cuts = ri.DecompressedBytes()-inflated, ri.subCuts.Load()-cuts
		t.Logf("pass %d: %d lookups, %d bytes read, %d decompressed, %d pages cut from blocks; the first lookup decompressed %d", pass, lookups, read, inflated, cuts, first)
		if pass > 0 && (cuts == 0 || inflated/lookups*3 > first) {
			t.Fatalf("pass %d: %d pages cut from blocks, %d bytes decompressed a lookup; the first lookup (whole pages) %d", pass, cuts, inflated/lookups, first)
		}
	}
}

// indexOnK creates a row index "k" on column k of the files uris of data
// (in memory) and opens it with opts (its resolver: data).
func indexOnK(t *testing.T, data store.Store, uris []string, opts Options) *RowIndex {
	t.Helper()
	ctx := context.Background()
	idx, _ := store.Open(ctx, "mem://")
	if _, _, err := Create(ctx, idx, Definition{Name: "k", Key: "k"}, StoreResolver{data}, uris); err != nil {
		t.Fatal(err)
	}
	opts.Resolver = StoreResolver{data}
	ri, err := Open(ctx, idx, "k", opts)
	if err != nil {
		t.Fatal(err)
	}
	return ri
}

// TestSubPageReadsSnappyDamaged: a SNAPPY block of a page whose shape is
// learnt, damaged in place afterwards (a tag byte overwritten), fails the
// lookups that reach it with ErrDataFileChanged — the block read and the
// whole-page fallback both refuse it — and the others still return the
// rows of a full scan made before the damage.
func TestSubPageReadsSnappyDamaged(t *testing.T) {
	ctx := context.Background()
	dir, rows, uris, ri := snappyFile(t)
	var keys []int64 // keys of rows in the first page's second block, and elsewhere
	for _, i := range []int{0, 2600, 3000, 3400, 3800, 20000, 39999} {
		keys = append(keys, rows[i].K)
	}
	want := map[int64][]scanRow{}
	for _, k := range keys {
		kb, _ := EncodeKey(k)
		want[k] = fullScan(t, dir, uris, "k", kb, kb)
	}
	for range 2 { // the second pass learns the pages' shapes
		for _, k := range keys {
			if _, err := ri.Lookup(ctx, Query{Key: k}); err != nil {
				t.Fatal(err)
			}
		}
	}
	cuts := ri.subCuts.Load()
	// Damage the tag starting the second block of column s's first page.
	path := filepath.Join(dir, "s.parquet")
	_, f := readParquet(t, path)
	damageSnappyBlock(t, path, f.Metadata().RowGroups[0].Columns[1].MetaData.DataPageOffset)
	failed := lookupsAfterDamage(t, ri, keys, want)
	t.Logf("%d of %d lookups failed after the damage", failed, len(keys))
	if failed == 0 || failed == len(keys) || ri.subCuts.Load() == cuts {
		t.Fatalf("%d of %d lookups failed after the damage (%d pages cut from blocks since): want some of each, and blocks read", failed, len(keys), ri.subCuts.Load()-cuts)
	}
}

// TestSubPageReadsSnappyOneBlock: on 1 MiB pages of klauspost's SNAPPY
// encoder (parquet-go's default; its copies reach across 64 KiB blocks, so
// a page is indexed as one block and most runs start at its start), a key
// whose ten rows lie a hundred rows apart in a page is cut from one run,
// decoded once: the planner counts the bytes the segments' overlapping
// runs cover, not their sum (which read such pages whole), and the reader
// decodes the runs that overlap as one. Every lookup equals a full scan,
// and once the pages' shapes are learnt the lookups decompress at most
// three quarters of what they do reading the pages whole.
func TestSubPageReadsSnappyOneBlock(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]snappyRow, 60000)
	for i := range rows {
		// Key k's rows: ten rows, a hundred apart (about 4.5 KB of
		// values: each in its own 4 KiB run), in rows [1000(k/100),
		// 1000(k/100)+1000).
		rows[i] = snappyRow{K: int64(i/1000*100 + i%100), S: fmt.Sprintf("%d:%016x:%016x", i, uint64(i)*0x9e3779b97f4a7c15, uint64(i%4093)*0xbf58476d1ce4e5b9),
			T: fmt.Sprintf("track-%d", i%3001)}
	}
	writeRows(t, ctx, data, "o.parquet", rows, parquet.Compression(&parquet.Snappy), parquet.PageBufferSize(1<<20), parquet.DataPageVersion(1))
	uris := []string{"o.parquet"}
	idx, _ := store.Open(ctx, "mem://")
	if _, _, err := Create(ctx, idx, Definition{Name: "k", Key: "k"}, StoreResolver{data}, uris); err != nil {
		t.Fatal(err)
	}
	open := func() *RowIndex {
		// VerifyKeys: the key column's pages are cut too.
		ri, err := Open(ctx, idx, "k", Options{PageCacheBytes: -1, Resolver: StoreResolver{data}, VerifyKeys: true})
		if err != nil {
			t.Fatal(err)
		}
		return ri
	}
	lookup := func(ri *RowIndex, what string, k int64) {
		kb, _ := EncodeKey(k)
		res := checkedLookup(t, ri, k, fullScan(t, dir, uris, "k", kb, kb), fmt.Sprintf("%s key %d", what, k))
		if len(res.Rows) != 10 {
			t.Fatalf("%s key %d: %d rows, want 10", what, k, len(res.Rows))
		}
	}
	var keys []int64
	for k := int64(3); k < 6000; k += 293 {
		keys = append(keys, k)
	}
	var whole int64 // each key's first lookup on a new handle: whole pages
	for _, k := range keys {
		ri := open()
		lookup(ri, "whole pages", k)
		whole += ri.DecompressedBytes()
	}
	ri := open()
	for pass := range 2 {
		inflated, cuts := ri.DecompressedBytes(), ri.subCuts.Load()
		for _, k := range keys {
			lookup(ri, fmt.Sprint("pass ", pass), k)
		}
		inflated, cuts = ri.DecompressedBytes()-inflated, ri.subCuts.Load()-cuts
		t.Logf("pass %d: %d lookups, %d bytes decompressed (whole pages %d), %d pages cut from runs", pass, len(keys), inflated, whole, cuts)
		if pass > 0 && (cuts*2 < int64(len(keys)) || inflated*4 > whole*3) {
			t.Fatalf("pass %d: %d pages cut from runs in %d lookups, %d bytes decompressed; whole pages %d", pass, cuts, len(keys), inflated, whole)
		}
	}
	// The file is what the test is about: pages of one block.
	f, err := os.ReadFile(filepath.Join(dir, "o.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(f), int64(len(f)))
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata().RowGroups[0].Columns[1].MetaData
	h, hl, err := parsePageHeader(f[md.DataPageOffset:])
	if err != nil {
		t.Fatal(err)
	}
	body := f[md.DataPageOffset+int64(hl):][:h.CompressedPageSize]
	if x, ok := snappySplits(body); !ok || len(x.blocks) != 2 || x.n < 512<<10 {
		t.Fatalf("column s's first page: ok %v, %d blocks, %d bytes", ok, len(x.blocks)-1, x.n)
	}
}

// damageSnappyBlock overwrites, in the file at path, the tag that starts
// the second 64 KiB block of the SNAPPY page at offset page with a copy
// reaching far before its block.
func damageSnappyBlock(t *testing.T, path string, page int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, hlen, err := parsePageHeader(b[page:])
	if err != nil {
		t.Fatal(err)
	}
	body := b[page+int64(hlen):][:h.CompressedPageSize]
	x, ok := snappySplits(body)
	if !ok || len(x.blocks) < 3 {
		t.Fatalf("the page at %d does not split into blocks: %v", page, x.blocks)
	}
	body[x.blocks[1]] = 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// lookupsAfterDamage looks up keys: each returns want's rows or fails with
// ErrDataFileChanged; it returns how many failed.
func lookupsAfterDamage(t *testing.T, ri *RowIndex, keys []int64, want map[int64][]scanRow) (failed int) {
	t.Helper()
	for _, k := range keys {
		res, err := ri.Lookup(context.Background(), Query{Key: k})
		switch {
		case errors.Is(err, ErrDataFileChanged):
			failed++
		case err != nil:
			t.Fatalf("key %d: %v, want ErrDataFileChanged", k, err)
		default:
			checkRows(t, fmt.Sprintf("key %d after the damage", k), res.Rows, want[k])
		}
	}
	return failed
}

// checkedLookup looks key up and checks the rows against want (a full
// scan's) and that the lookup read nothing outside its planned ranges;
// name says which lookup failed.
func checkedLookup(t *testing.T, ri *RowIndex, key any, want []scanRow, name string) *Result {
	t.Helper()
	res, err := ri.Lookup(context.Background(), Query{Key: key})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	checkRows(t, name, res.Rows, want)
	if res.Plan.Data.Misses != 0 {
		t.Fatalf("%s: %d reads outside the planned ranges", name, res.Plan.Data.Misses)
	}
	return res
}
