package prepared_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// lakeConfig is a small listening-history lake: 2 days × 3 files.
var lakeConfig = lakegen.Config{Seed: 5, TargetBytes: 2 << 20, Days: 2, FilesPerDay: 3, Users: 2000, Prefix: "lake/", RowGroupRows: 10_000}

// prepareLake generates the arrival-order lake and prepares it with
// PrepareFiles into dst (bucketed like the lake's sorted layout).
func prepareLake(t *testing.T, pageBytes int) (dst store.Store, stats prepared.Stats) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	src, err := store.Open(ctx, "file://"+dir+"/src")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	if _, err := lakegen.Generate(ctx, src, lakeConfig); err != nil {
		t.Fatal(err)
	}
	dst, err = store.Open(ctx, "file://"+dir+"/out")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dst.Close() })
	res := rowindex.StoreResolver{Store: src}
	srcs, err := prepared.Sources(ctx, res, []string{"lake"})
	if err != nil {
		t.Fatal(err)
	}
	var last prepared.Progress
	stats, err = prepared.PrepareFiles(ctx, res, srcs, dst, prepared.Options{
		Key: "user_id", Sort: []string{"ts"}, Buckets: lakeConfig.FilesPerDay, PageBytes: pageBytes,
		Progress: func(p prepared.Progress) {
			if p.Phase == "read" {
				last = p
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if last.Done != len(srcs) || last.Total != len(srcs) || last.Rows != stats.Rows {
		t.Errorf("last read progress %+v for %d sources, %d rows", last, len(srcs), stats.Rows)
	}
	return dst, stats
}

func readListens(t *testing.T, st store.Store, key string) []lakegen.Listen {
	t.Helper()
	b, err := store.ReadAll(context.Background(), st, key)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.Read[lakegen.Listen](bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestPrepareFilesIsSparkBucketing: preparing the arrival-order lake with
// as many buckets as files per day gives exactly the files of the lake's
// bucketed and sorted layout (Spark's bucketBy/sortBy), row for row.
func TestPrepareFilesIsSparkBucketing(t *testing.T) {
	ctx := context.Background()
	dst, stats := prepareLake(t, 2048)
	sorted, _ := store.Open(ctx, "mem://")
	cfg := lakeConfig
	cfg.Sorted = true
	files, err := lakegen.Generate(ctx, sorted, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range stats.Files {
		keys = append(keys, f.Key)
	}
	var want []string
	var rows int64
	for _, f := range files {
		want = append(want, strings.TrimPrefix(f.Key, "lake/"))
		rows += f.Rows
	}
	if !slices.Equal(keys, want) || stats.Rows != rows || stats.Sources != len(files) {
		t.Fatalf("prepared files %v (%d rows from %d sources), the bucketed layout %v (%d rows)", keys, stats.Rows, stats.Sources, want, rows)
	}
	for i, f := range files {
		got, exp := readListens(t, dst, want[i]), readListens(t, sorted, f.Key)
		if !slices.EqualFunc(got, exp, func(a, b lakegen.Listen) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
			t.Fatalf("%s: %d rows differ from the bucketed layout's %d", want[i], len(got), len(exp))
		}
		b, _ := store.ReadAll(ctx, dst, want[i])
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if m, ok, err := prepared.MarkerOf(pf); !ok || err != nil || m.Bucket != i%3 || m.Buckets != 3 {
			t.Errorf("%s: marker %+v %v %v", want[i], m, ok, err)
		}
		if stats.Files[i].Bucket != i%3 {
			t.Errorf("%s: bucket %d in the stats", want[i], stats.Files[i].Bucket)
		}
	}
}

// scanRow is one row of a full scan: where it is and its values.
type scanRow struct {
	file   string
	row    int64
	values parquet.Row
}

// TestRowIndexOverPreparedFiles: the row index over prepared files (one page
// per key) returns exactly the rows of a full scan, and a warm lookup reads
// exactly one page per column in each file holding the key.
func TestRowIndexOverPreparedFiles(t *testing.T) {
	ctx := context.Background()
	data, stats := prepareLake(t, prepared.PageBytesPerKey)
	var uris []string
	for _, f := range stats.Files {
		uris = append(uris, f.Key)
	}
	// Full scan, and the byte size of every key's pages per file.
	scan := map[int64][]scanRow{}
	pageBytes := map[int64]int64{} // key → compressed bytes of its pages, all files and columns
	filesOf := map[int64]int{}
	dictChunks := 0
	dictBytes := map[int64]int64{} // key → bytes of the dictionaries of the chunks holding it
	dictsOf := map[int64]int{}
	for _, uri := range uris {
		b, _ := store.ReadAll(ctx, data, uri)
		f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		var base int64
		for rgi, rg := range f.RowGroups() {
			rr := parquet.NewRowGroupReader(rg)
			var keys []int64
			buf := make([]parquet.Row, 512)
			for {
				n, err := rr.ReadRows(buf)
				for _, r := range buf[:n] {
					k := r[0].Int64()
					keys = append(keys, k)
					scan[k] = append(scan[k], scanRow{uri, base + int64(len(keys)-1), r.Clone()})
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			for c, cc := range rg.ColumnChunks() {
				oi, _ := cc.OffsetIndex()
				// Dictionary-encoded chunks (small dictionaries kept by the
				// encodings chosen from the data): a warm lookup has their
				// dictionaries cached and reads only data pages.
				var dict int64
				if md := f.Metadata().RowGroups[rgi].Columns[c].MetaData; md.DictionaryPageOffset > 0 {
					dict = md.DataPageOffset - md.DictionaryPageOffset
					dictChunks++
				}
				for p := range oi.NumPages() {
					k := keys[oi.FirstRowIndex(p)]
					pageBytes[k] += oi.CompressedPageSize(p)
					dictBytes[k] += dict
					if dict > 0 {
						dictsOf[k]++
					}
					if c == 0 {
						filesOf[k]++
					}
				}
			}
			base += rg.NumRows()
		}
	}
	idx, err := store.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	cs := store.NewCounting(data)
	if _, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: "u", Key: "user_id"}, rowindex.StoreResolver{Store: cs}, uris); err != nil {
		t.Fatal(err)
	}
	// Coalesce only adjacent ranges, so each page is its own range; read
	// the key column too (VerifyKeys), so every column's page is read.
	ri, err := rowindex.Open(ctx, idx, "u", rowindex.Options{Resolver: rowindex.StoreResolver{Store: cs}, CoalesceGap: -1, VerifyKeys: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	// Hot users, a few light ones, and an absent one.
	keys := []int64{lakegen.UserID(0), lakegen.UserID(3), lakegen.UserID(40), -1}
	for k, rows := range scan {
		if len(rows) <= 2 && len(keys) < 10 {
			keys = append(keys, k)
		}
	}
	if len(keys) < 8 {
		t.Fatalf("only %d keys to look up", len(keys))
	}
	const columns = 5
	if dictChunks == 0 {
		t.Error("no column chunk is dictionary-encoded: the encodings chosen from the data keep none of the small dictionaries")
	}
	for _, k := range keys {
		res, err := ri.Lookup(ctx, rowindex.Query{Key: k})
		if err != nil {
			t.Fatal(err)
		}
		want := scan[k]
		if len(res.Rows) != len(want) {
			t.Fatalf("key %d: %d rows, the scan finds %d", k, len(res.Rows), len(want))
		}
		for i, r := range res.Rows {
			if r.File != want[i].file || r.Row != want[i].row || !r.Values.Equal(want[i].values) {
				t.Fatalf("key %d row %d: %s:%d %v, the scan has %s:%d %v", k, i, r.File, r.Row, r.Values, want[i].file, want[i].row, want[i].values)
			}
		}
		p := res.Plan
		if p.Index.Requests != 0 || p.Data.Misses != 0 {
			t.Errorf("key %d warm: %d index requests, %d misses", k, p.Index.Requests, p.Data.Misses)
		}
		// One page per column per file: exactly the bytes of the key's
		// pages, plus dictionaries the warm cache may not hold.
		if p.Data.BytesRead < pageBytes[k] || p.Data.BytesRead > pageBytes[k]+dictBytes[k] || p.ByteRanges > filesOf[k]*columns+dictsOf[k] {
			t.Errorf("key %d: read %d bytes in %d ranges; its pages are %d bytes, %d files × %d columns",
				k, p.Data.BytesRead, p.ByteRanges, pageBytes[k], filesOf[k], columns)
		}
	}
}
