package prepared_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// TestCoGroupNested: co-grouping as nested Parquet (Options.CoGroup). The
// files hold one row per key and file (several for the heavy key), the key
// and every other column a LIST; parquet-go reads them and each stored
// row expands to the key's rows; DuckDB's UNNEST of the lists gives exactly
// the source rows (EXCEPT ALL both ways); and a row index lookup of every
// key — limits, cursors and projections included — returns exactly the
// rows of a full scan of the unprepared sources, in the source's schema.
func TestCoGroupNested(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	// Sources without a list column (blockRow), and one with (refused).
	scan, srcCols := writeBlockSources(t, data)
	res := rowindex.StoreResolver{Store: data}
	srcs, err := prepared.Sources(ctx, res, []string{"src"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := store.Open(ctx, "file://"+filepath.Join(dir, "refused"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prepared.PrepareFiles(ctx, res, srcs, out, prepared.Options{Key: "user", CoGroup: true}); !errors.Is(err, aerr.ErrInvalidArgument) || !strings.Contains(err.Error(), "tags") {
		t.Fatalf("a list column co-grouped: %v", err)
	}
	if _, err := prepared.PrepareFiles(ctx, res, srcs, out, prepared.Options{Key: "user", CoGroup: true, Frames: &prepared.FrameOptions{}}); !errors.Is(err, aerr.ErrInvalidArgument) {
		t.Fatalf("co-group with frames: %v", err)
	}
	out.Close()
	if _, _, err := prepared.WriteFramed(ctx, data, "framed-nested.parquet", openStored(t, data, "blk/part-0.parquet").Schema(), parquet.NewReader(openStored(t, data, "blk/part-0.parquet")),
		prepared.Options{Key: "user", CoGroup: true}, prepared.FrameOptions{}); !errors.Is(err, aerr.ErrInvalidArgument) {
		t.Fatalf("WriteFramed with CoGroup: %v", err)
	}

	var srcPaths []string
	for _, uri := range []string{"blk/part-0.parquet", "blk/part-1.parquet"} {
		srcPaths = append(srcPaths, duck.String(filepath.Join(dir, uri)))
	}
	st := prepareTo(t, data, "blk", filepath.Join(dir, "nest"), prepared.Options{Key: "user", Sort: []string{"ts"}, Buckets: 2,
		PageBytes: 8192, RowGroupRows: 100, CoGroup: true})
	if cg := st.Choices.CoGroup; cg == nil || cg.Layout != prepared.CoGroupLayout {
		t.Fatalf("choices: co-group %+v", cg)
	}
	if st.Rows != 8000 {
		t.Fatalf("stats: %d rows, 8000 written", st.Rows)
	}
	var uris, paths []string
	stored := 0
	got := map[int64][]string{}
	for _, fs := range st.Files {
		uri := "nest/" + fs.Key
		uris = append(uris, uri)
		paths = append(paths, duck.String(filepath.Join(dir, uri)))
		f := openStored(t, data, uri)
		var cols []string
		for _, path := range f.Schema().Columns() {
			cols = append(cols, strings.Join(path, "."))
		}
		want := []string{"user"}
		for _, c := range srcCols[1:] {
			want = append(want, c+".list.element")
		}
		if !slices.Equal(cols, want) {
			t.Fatalf("%s: columns %v, want %v", uri, cols, want)
		}
		mk, ok, err := prepared.MarkerOf(f)
		if !ok || err != nil || mk.CoGroup == nil || mk.Codec != "ZSTD" || mk.Pages != "packed" {
			t.Fatalf("%s: marker %+v %v %v", uri, mk, ok, err)
		}
		g, ok, err := prepared.CoGroupOf(f)
		if !ok || err != nil {
			t.Fatalf("%s: co-group %v %v", uri, ok, err)
		}
		for _, rg := range f.Metadata().RowGroups {
			for _, cc := range rg.Columns {
				if c := cc.MetaData.Codec.String(); c != "ZSTD" {
					t.Fatalf("%s: chunk %v %s", uri, cc.MetaData.PathInSchema, c)
				}
			}
		}
		// Row groups are cut after 100 source rows (not stored rows), at
		// a key's end: before its last key, a row group holds < 100.
		for i, rg := range f.RowGroups() {
			var n, before, key int64 = 0, 0, -1
			rr := parquet.NewRowGroupReader(rg)
			buf := make([]parquet.Row, 1)
			for {
				k, err := rr.ReadRows(buf)
				if k == 1 {
					x, xerr := g.Expand(nil, buf[0])
					if xerr != nil {
						t.Fatal(xerr)
					}
					if k := buf[0][0].Int64(); k != key {
						before, key = n, k
					}
					n += int64(len(x))
				}
				if err != nil {
					break
				}
			}
			if last := i == len(f.RowGroups())-1; !last && (n < 100 || before >= 100) || n == 0 {
				t.Fatalf("%s: row group %d of %d holds %d source rows (%d before its last key), cut after 100", uri, i, len(f.RowGroups()), n, before)
			}
		}
		seen := map[int64]bool{}
		for r := range readAllRows(t, f) {
			stored++
			k := r[0].Int64()
			if seen[k] && k != 7 {
				t.Fatalf("%s: key %d stored twice", uri, k)
			}
			seen[k] = true
			rows, err := g.Expand(nil, r)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range rows {
				if x[0].Int64() != k || len(x) != len(srcCols) {
					t.Fatalf("%s: row %v in the stored row of key %d", uri, x, k)
				}
				got[k] = append(got[k], fmt.Sprint(x))
			}
			// Lists of different lengths are a typed error.
			if _, err := g.Expand(nil, r[:len(r)-1]); len(rows) > 0 && !errors.Is(err, prepared.ErrBadCoGroup) {
				t.Fatalf("a stored row with a short list expanded: %v", err)
			}
		}
	}
	if stored >= 1000 || len(got) != len(scan) {
		t.Fatalf("%d stored rows for %d keys (scan %d)", stored, len(got), len(scan))
	}
	for k, want := range scan {
		g := slices.Sorted(slices.Values(got[k]))
		if !slices.Equal(g, slices.Sorted(slices.Values(want))) {
			t.Fatalf("key %d: expanded %v\nscan %v", k, g, want)
		}
	}

	// DuckDB: the lists unnest to exactly the source rows.
	db, err := duck.Open(ctx, duck.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var sel []string
	for _, c := range srcCols {
		q := duck.Ident(c)
		if c == "user" {
			sel = append(sel, q)
		} else {
			sel = append(sel, "unnest("+q+") AS "+q)
		}
	}
	nested := `SELECT ` + strings.Join(sel, ", ") + ` FROM read_parquet([` + strings.Join(paths, ",") + `])`
	flat := `SELECT * FROM read_parquet([` + strings.Join(srcPaths, ",") + `])`
	_, dr, err := db.QueryAll(ctx, `SELECT (SELECT count(*) FROM (`+nested+`)), (SELECT count(*) FROM ((`+nested+`) EXCEPT ALL (`+flat+`))), (SELECT count(*) FROM ((`+flat+`) EXCEPT ALL (`+nested+`))), (SELECT count(*) FROM read_parquet([`+strings.Join(paths, ",")+`]))`)
	if err != nil {
		t.Fatal(err)
	}
	if g := fmt.Sprint(dr[0]); g != fmt.Sprintf("[8000 0 0 %d]", stored) {
		t.Fatalf("DuckDB: unnested rows, extra, missing, stored rows = %s", g)
	}

	// The row index.
	idx, err := store.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if _, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: "u", Key: "user"}, res, uris); err != nil {
		t.Fatal(err)
	}
	ri, err := rowindex.Open(ctx, idx, "u", rowindex.Options{Resolver: res, CoalesceGap: -1, PageCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = rowindex.Create(ctx, idx, rowindex.Definition{Name: "c", Key: "user", Aggregates: []rowindex.Aggregate{{Op: "count"}}}, res, uris)
	if err == nil || !strings.Contains(err.Error(), "co-grouped") {
		t.Fatalf("aggregate build over nested co-grouped files: %v", err)
	}
	for k, want := range scan {
		slices.Sort(want)
		r, err := ri.Lookup(ctx, rowindex.Query{Key: k})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, row := range r.Rows {
			got = append(got, fmt.Sprint(row.Values))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("key %d: lookup %d rows %v\nscan %d rows %v", k, len(got), got, len(want), want)
		}
		if !slices.Equal(r.Columns, srcCols) || r.Plan.Rows != len(want) {
			t.Fatalf("key %d: columns %v (source %v), %d rows planned", k, r.Columns, srcCols, r.Plan.Rows)
		}
		if rec, err := r.Record(0); err != nil || len(rec) != len(srcCols) {
			t.Fatalf("key %d: record %v %v", k, rec, err)
		}
		paged := pagedRows(t, ri, k, len(want))
		slices.Sort(paged)
		if !slices.Equal(paged, want) {
			t.Fatalf("key %d: paged %d rows %v\nscan %d rows %v", k, len(paged), paged, len(want), want)
		}
		for _, cols := range [][]string{{"score", "user", "name"}, {"user"}, {"day"}} {
			r, err = ri.Lookup(ctx, rowindex.Query{Key: k, Columns: cols})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Rows) != len(want) || !slices.Equal(r.Columns, cols) && len(cols) == 1 {
				t.Fatalf("key %d: projection %v: %d rows (%d), columns %v", k, cols, len(r.Rows), len(want), r.Columns)
			}
			for _, row := range r.Rows {
				if len(row.Values) != len(cols) || cols[0] == "user" && row.Values[0].Int64() != k {
					t.Fatalf("key %d: projected %v row %v", k, cols, row.Values)
				}
			}
		}
	}
}

// writeBlockSources writes writeBlobSources' two files without their list
// column (blockRow) under blk/ of data, and returns their rows by key
// (fmt.Sprint of each row) and their column names.
func writeBlockSources(t *testing.T, data store.Store) (map[int64][]string, []string) {
	t.Helper()
	ctx := context.Background()
	for _, uri := range writeBlobSources(t, data) {
		f := openStored(t, data, uri)
		rows, err := parquet.Read[blockRow](f, f.Size())
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := parquet.Write(&buf, rows); err != nil {
			t.Fatal(err)
		}
		if err := store.WriteAll(ctx, data, strings.Replace(uri, "src/", "blk/", 1), buf.Bytes(), nil); err != nil {
			t.Fatal(err)
		}
	}
	scan := map[int64][]string{}
	var cols []string
	for _, uri := range []string{"blk/part-0.parquet", "blk/part-1.parquet"} {
		f := openStored(t, data, uri)
		if cols == nil {
			for _, c := range f.Root().Columns() {
				cols = append(cols, c.Name())
			}
		}
		for r := range readAllRows(t, f) {
			scan[r[0].Int64()] = append(scan[r[0].Int64()], fmt.Sprint(r))
		}
	}
	return scan, cols
}

// pagedRows looks key k up in pages of 2 rows, following the cursor, and
// returns every row's values (fmt.Sprint), sorted; n is the key's rows.
func pagedRows(t *testing.T, ri *rowindex.RowIndex, k int64, n int) []string {
	t.Helper()
	var paged []string
	for cur, pages := "", 0; ; pages++ {
		r, err := ri.Lookup(context.Background(), rowindex.Query{Key: k, Limit: 2, Cursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Rows) > 2 || pages > n {
			t.Fatalf("key %d: page %d of %d rows", k, pages, len(r.Rows))
		}
		for _, row := range r.Rows {
			paged = append(paged, fmt.Sprint(row.Values))
		}
		if cur = r.Cursor; cur == "" {
			break
		}
	}
	slices.Sort(paged)
	return paged
}
