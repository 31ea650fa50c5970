package fileindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go"
)

// oracleLocator is a RowLocator that finds each key's rows by reading the
// located files' key column with DuckDB (file_row_number) and their row
// groups with parquet-go: the answer a correct row index gives. With shift,
// it points one row further in each row group (wrapping): the answer of a
// row index whose files were rewritten after it was built.
type oracleLocator struct {
	shift bool
	calls int
}

func (o *oracleLocator) LocateRows(ctx context.Context, col string, keys []any, files []string, _ bool) (LocatedRows, string, error) {
	rows, why, err := o.rows(ctx, col, keys, files)
	return LocatedRows{Rows: rows}, why, err
}

// rows finds the keys' rows with DuckDB.
func (o *oracleLocator) rows(ctx context.Context, col string, keys []any, files []string) (map[string][]RowGroupRows, string, error) {
	o.calls++
	set := map[any]bool{}
	for _, k := range keys {
		set[k] = true
	}
	db, err := duck.Open(ctx, duck.Options{})
	if err != nil {
		return nil, "", err
	}
	defer db.Close()
	out := map[string][]RowGroupRows{}
	for _, uri := range files {
		path, ok := localPath(uri)
		if !ok {
			return nil, "", fmt.Errorf("not local: %s", uri)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, "", err
		}
		info, _ := f.Stat()
		pf, err := parquet.OpenFile(f, info.Size())
		if err != nil {
			f.Close()
			return nil, "", err
		}
		var starts, sizes []int64
		var n int64
		for _, rg := range pf.RowGroups() {
			starts, sizes = append(starts, n), append(sizes, rg.NumRows())
			n += rg.NumRows()
		}
		f.Close()
		rows, err := db.Query(ctx, fmt.Sprintf("SELECT file_row_number, %s FROM read_parquet('%s', file_row_number=true)", duck.Ident(col), path))
		if err != nil {
			return nil, "", err
		}
		for {
			b, err := rows.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rows.Close()
				return nil, "", err
			}
			for _, r := range b {
				if !set[normalizeKey(r[1])] {
					continue
				}
				row := r[0].(int64)
				g := len(starts) - 1
				for starts[g] > row {
					g--
				}
				in := row - starts[g]
				if o.shift {
					in = (in + 1) % sizes[g]
				}
				pos := out[uri]
				if len(pos) > 0 && pos[len(pos)-1].RowGroup == g {
					pos[len(pos)-1].Rows = append(pos[len(pos)-1].Rows, in)
				} else {
					pos = append(pos, RowGroupRows{RowGroup: g, Rows: []int64{in}})
				}
				out[uri] = pos
			}
		}
		rows.Close()
	}
	for _, pos := range out {
		for _, p := range pos {
			slices.Sort(p.Rows)
		}
	}
	return out, "oracle", nil
}

// TestJoinDirectStreams checks that the direct answer is taken whatever
// its size (no cap: it streams), that it comes in batches of at most
// duck.QueryBatchRows rows with the rows and schema of the DuckDB path, a
// key listed twice giving its rows twice, and that its statistics are
// final once the rows are read.
func TestJoinDirectStreams(t *testing.T) {
	ctx := context.Background()
	uris, _ := pqJoinLake(t, t.TempDir(), 2)
	ti := newTestIndex(t, "pqstream", pqJoinSchema, "parquet", nil, func(ix *index.Index) error {
		return ix.AddIndex(ctx, "id")
	})
	if _, err := ti.ix.AddFiles(ctx, uris...); err != nil {
		t.Fatal(err)
	}
	if _, err := ti.fi.Update(ctx, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	long := []schema.Type{schema.Long}
	for _, tc := range []struct {
		name string
		keys func() KeySource
	}{
		{"one key", func() KeySource { return keys("id", long, []any{int64(7)}, []any{int64(8)}) }},
		{"a key twice", func() KeySource { return keys("id", long, []any{int64(7)}, []any{int64(7)}) }},
		{"every key", func() KeySource {
			var rows [][]any
			for k := range 60 {
				rows = append(rows, []any{int64(k - 5)})
			}
			return keys("id", long, rows...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(force JoinPath, loc RowLocator) ([]string, []string, JoinStats, int) {
				r, err := ti.fi.Join(ctx, tc.keys(), []string{"id"}, Inner, JoinOptions{force: force, Rows: loc})
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				var out []string
				most := 0
				for {
					b, err := r.Next(ctx)
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					most = max(most, len(b))
					for _, row := range b {
						out = append(out, fmt.Sprint(row))
					}
				}
				slices.Sort(out)
				return r.Schema().Names(), out, r.Stats(), most
			}
			fcols, full, _, _ := run(PathFull, nil)
			if len(full) < 2 {
				t.Fatalf("%d rows: the lake needs more rows of the keys", len(full))
			}
			cols, got, st, most := run(PathRowIndex, &oracleLocator{})
			if st.Path != PathRowIndex || !st.Direct || st.RowsLoaded != 0 || st.Requests == 0 || st.Bytes == 0 {
				t.Fatalf("stats after the rows: %+v", st)
			}
			if most > duck.QueryBatchRows {
				t.Fatalf("a batch of %d rows (> %d)", most, duck.QueryBatchRows)
			}
			if !slices.Equal(cols, fcols) || !slices.Equal(got, full) {
				t.Fatalf("direct %v %v, DuckDB %v %v", cols, got, fcols, full)
			}
		})
	}
}

// TestJoinDirectTyped checks that the direct answer reads the located
// rows as typed vectors where every result column has a typed form and
// the file has offset indexes (parquet-go's files; DuckDB's have none),
// and as rows otherwise (an array column), with the rows and schema of
// DuckDB's late path either way: long and string keys, a key listed
// twice, nulls, integers, strings and timestamps; and that a stale row
// index read through vectors still falls back to the files as they are.
func TestJoinDirectTyped(t *testing.T) {
	ctx := context.Background()
	uris, _ := pqJoinLake(t, t.TempDir(), 3)
	ti := newTestIndex(t, "pqtyped", pqJoinSchema, "parquet", nil, func(ix *index.Index) error {
		if err := ix.AddIndex(ctx, "id"); err != nil {
			return err
		}
		return ix.AddIndex(ctx, "name")
	})
	if _, err := ti.ix.AddFiles(ctx, uris...); err != nil {
		t.Fatal(err)
	}
	if _, err := ti.fi.Update(ctx, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	long, str := []schema.Type{schema.Long}, []schema.Type{schema.String}
	for _, tc := range []struct {
		name  string
		keys  func() KeySource
		on    string
		sel   []string
		typed bool
	}{
		{"long keys", func() KeySource { return keys("id", long, []any{int64(3)}, []any{int64(-2)}, []any{int64(40)}) },
			"id", []string{"id", "name", "v", "ts"}, true},
		{"a key twice", func() KeySource { return keys("id", long, []any{int64(7)}, []any{int64(7)}, []any{int64(8)}) },
			"id", []string{"v", "id"}, true},
		{"string keys", func() KeySource { return keys("name", str, []any{"n05"}, []any{"n11"}, []any{nil}) },
			"name", []string{"ts", "name", "id"}, true},
		{"an array column", func() KeySource { return keys("id", long, []any{int64(3)}, []any{int64(9)}) },
			"id", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(force JoinPath, loc RowLocator) ([]string, []string, JoinStats) {
				r, err := ti.fi.Join(ctx, tc.keys(), []string{tc.on}, Inner, JoinOptions{Select: tc.sel, force: force, Rows: loc})
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				cols, rows := drain(t, r)
				return cols, rows, r.Stats()
			}
			lcols, late, lst := run(PathLate, nil)
			if lst.Path != PathLate || len(late) < 4 {
				t.Fatalf("late path %s, %d rows: the lake needs more rows of the keys", lst.Path, len(late))
			}
			cols, got, st := run(PathRowIndex, &oracleLocator{})
			if !st.Direct || !slices.Equal(cols, lcols) || !slices.Equal(got, late) {
				t.Fatalf("direct (%v) %v %v\nDuckDB %v %v", st.Direct, cols, got, lcols, late)
			}
			if (st.vectorReads > 0) != tc.typed {
				t.Fatalf("%d row groups read as vectors, want typed %v", st.vectorReads, tc.typed)
			}
			_, stale, sst := run("", &oracleLocator{shift: true})
			if !slices.Equal(stale, late) || sst.Path == PathRowIndex || !strings.Contains(sst.Plan, "row index stale") {
				t.Fatalf("stale row index: %+v\n%v\nwant %v", sst, stale, late)
			}
		})
	}
}

// streamRow is a row of the streaming tests' files.
type streamRow struct {
	ID int64 `parquet:"id"`
	V  int64 `parquet:"v"`
}

const streamSchema = `{"type":"struct","fields":[` +
	`{"name":"id","type":"long","nullable":true,"metadata":{}},` +
	`{"name":"v","type":"long","nullable":true,"metadata":{}}]}`

// writeStreamFile writes rows to path in row groups of group rows.
func writeStreamFile(t *testing.T, path string, rows []streamRow, group int) {
	t.Helper()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[streamRow](out, parquet.MaxRowsPerRowGroup(int64(group)))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// streamLake writes files files of n rows each, row f*n+i holding id
// (f*n+i) % keys and v f*n+i, indexes them on id and returns the index
// and the files' paths and URIs.
func streamLake(t *testing.T, files, n, group, keys int) (*testIndex, []string, []string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	var paths, uris []string
	for f := range files {
		rows := make([]streamRow, n)
		for i := range rows {
			rows[i] = streamRow{ID: int64((f*n + i) % keys), V: int64(f*n + i)}
		}
		p := filepath.Join(dir, fmt.Sprintf("part-%03d.parquet", f))
		writeStreamFile(t, p, rows, group)
		paths, uris = append(paths, p), append(uris, "file://"+filepath.ToSlash(p))
	}
	ti := newTestIndex(t, fmt.Sprintf("stream%d", files), streamSchema, "parquet", nil, func(ix *index.Index) error {
		return ix.AddIndex(ctx, "id")
	})
	if _, err := ti.ix.AddFiles(ctx, uris...); err != nil {
		t.Fatal(err)
	}
	if _, err := ti.fi.Update(ctx, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ti, paths, uris
}

// hookLocator runs after once its locator has answered: a data file can
// change after the row index was checked and before it is read.
type hookLocator struct {
	RowLocator
	after func()
}

func (h hookLocator) LocateRows(ctx context.Context, col string, keys []any, files []string, direct bool) (LocatedRows, string, error) {
	rows, why, err := h.RowLocator.LocateRows(ctx, col, keys, files, direct)
	if err == nil && rows.Rows != nil {
		h.after()
	}
	return rows, why, err
}

// TestJoinDirectStale checks the direct answer's contract on a stale row
// index (join_direct.go): a data file changed after its positions were
// given either makes the join read the files again before any row went
// out, with the rows of the files as they are now, or, once rows went
// out, fails with a *StaleRowIndexError; never wrong or missing rows
// silently.
func TestJoinDirectStale(t *testing.T) {
	ctx := context.Background()
	const files, n = lateReadConcurrency + 4, 400
	long := []schema.Type{schema.Long}
	ks := func() KeySource { return keys("id", long, []any{int64(3)}, []any{int64(17)}, []any{int64(3)}) }
	drainAll := func(r *Result) ([]string, error) {
		defer r.Close()
		var out []string
		for {
			b, err := r.Next(ctx)
			if errors.Is(err, io.EOF) {
				slices.Sort(out)
				return out, nil
			}
			if err != nil {
				return out, err
			}
			for _, row := range b {
				out = append(out, fmt.Sprint(row))
			}
		}
	}
	// rewrite reverses the file's rows: its keys stay (the file index
	// still locates it) but move to other positions.
	rewrite := func(t *testing.T, path string) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := parquet.Read[streamRow](f, func() int64 { info, _ := f.Stat(); return info.Size() }())
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		slices.Reverse(rows)
		writeStreamFile(t, path, rows, 100)
	}
	for _, tc := range []struct {
		name  string
		file  int  // the file that changes
		fails bool // after rows went out
	}{
		{"first file", 0, false},
		{"last file", files - 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ti, paths, _ := streamLake(t, files, n, 100, 37)
			loc := hookLocator{&oracleLocator{}, func() { rewrite(t, paths[tc.file]) }}
			r, err := ti.fi.Join(ctx, ks(), []string{"id"}, Inner, JoinOptions{Rows: loc, force: PathRowIndex})
			if err != nil {
				t.Fatal(err)
			}
			if st := r.Stats(); !st.Direct {
				t.Fatalf("not the direct answer: %+v", st)
			}
			got, err := drainAll(r)
			st := r.Stats()
			// The answer of the files as they are now.
			fr, ferr := ti.fi.Join(ctx, ks(), []string{"id"}, Inner, JoinOptions{force: PathFull})
			if ferr != nil {
				t.Fatal(ferr)
			}
			want, ferr := drainAll(fr)
			if ferr != nil {
				t.Fatal(ferr)
			}
			if len(want) == 0 {
				t.Fatal("no rows: the keys must be in the lake")
			}
			if !tc.fails {
				if err != nil || !slices.Equal(got, want) || st.Direct || !strings.Contains(st.Plan, "row index stale") {
					t.Fatalf("err %v, %d rows (want %d), stats %+v", err, len(got), len(want), st)
				}
				return
			}
			var se *StaleRowIndexError
			if !errors.As(err, &se) || se.File != "file://"+filepath.ToSlash(paths[tc.file]) || se.Rows == 0 || !errors.Is(err, aerr.ErrAriadne) {
				t.Fatalf("err %v (%T), want a StaleRowIndexError on %s", err, err, paths[tc.file])
			}
			// What went out are rows of the answer.
			if len(got) == 0 {
				t.Fatal("no rows before the error: the test needs rows out first")
			}
			for _, row := range got {
				if _, ok := slices.BinarySearch(want, row); !ok {
					t.Fatalf("row %s is not in the answer", row)
				}
			}
		})
	}
	t.Run("up front", func(t *testing.T) {
		// A locator that found the index stale answers nothing: the other
		// paths read, with the same rows.
		ti, _, _ := streamLake(t, 4, n, 100, 37)
		r, err := ti.fi.Join(ctx, ks(), []string{"id"}, Inner, JoinOptions{Rows: staleLocator{}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := drainAll(r)
		if err != nil {
			t.Fatal(err)
		}
		st := r.Stats()
		fr, err := ti.fi.Join(ctx, ks(), []string{"id"}, Inner, JoinOptions{force: PathFull})
		if err != nil {
			t.Fatal(err)
		}
		want, err := drainAll(fr)
		if err != nil {
			t.Fatal(err)
		}
		if st.Path == PathRowIndex || st.Direct || !strings.Contains(st.Plan, "changed since indexed") || !slices.Equal(got, want) {
			t.Fatalf("stats %+v, %d rows, want %d", st, len(got), len(want))
		}
	})
}

// staleLocator is a row locator whose row index no longer matches a
// located file: it answers no rows, only why.
type staleLocator struct{}

func (staleLocator) LocateRows(context.Context, string, []any, []string, bool) (LocatedRows, string, error) {
	return LocatedRows{}, "changed since indexed: x", nil
}

// allRowsLocator gives every row of every file (every row matches the
// keys): files of n rows in row groups of group rows.
type allRowsLocator struct{ n, group int }

func (a allRowsLocator) LocateRows(_ context.Context, _ string, _ []any, files []string, _ bool) (LocatedRows, string, error) {
	out := map[string][]RowGroupRows{}
	for _, f := range files {
		for g := 0; g*a.group < a.n; g++ {
			rows := make([]int64, min(a.group, a.n-g*a.group))
			for i := range rows {
				rows[i] = int64(i)
			}
			out[f] = append(out[f], RowGroupRows{RowGroup: g, Rows: rows})
		}
	}
	return LocatedRows{Rows: out}, "all rows", nil
}

// TestJoinDirectBoundedMemory joins 1,000 keys matching more rows than the
// direct answer could once hold (1 Mi rows) and checks that the answer
// streams: every row arrives, and the live heap while the caller drains
// it stays well under what holding the answer would take.
func TestJoinDirectBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1.1M rows")
	}
	ctx := context.Background()
	const files, n, group, nkeys = 80, 14_000, 3_500, 1000
	total := int64(files * n)
	if total <= 1<<20 {
		t.Fatal("the answer must exceed the old cap")
	}
	ti, _, _ := streamLake(t, files, n, group, nkeys)
	var kr [][]any
	for k := range nkeys {
		kr = append(kr, []any{int64(k)})
	}
	live := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	base := live()
	r, err := ti.fi.Join(ctx, keys("id", []schema.Type{schema.Long}, kr...), []string{"id"}, Inner, JoinOptions{Rows: allRowsLocator{n, group}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rows, sumV, peak int64
	perKey := make([]int64, nkeys)
	for b := 0; ; b++ {
		batch, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range batch {
			rows++
			perKey[row[0].(int64)]++
			sumV += row[1].(int64)
		}
		if b%64 == 0 {
			peak = max(peak, live()-base)
		}
	}
	if st := r.Stats(); !st.Direct || st.Path != PathRowIndex {
		t.Fatalf("not the direct answer: %+v", st)
	}
	if rows != total || sumV != total*(total-1)/2 {
		t.Fatalf("%d rows, sum of v %d; want %d, %d", rows, sumV, total, total*(total-1)/2)
	}
	for k, c := range perKey {
		if c != total/nkeys {
			t.Fatalf("key %d: %d rows, want %d", k, c, total/nkeys)
		}
	}
	// Holding the answer takes at least a row's slice header and two
	// interface values (56 B) per row (≈140 B with the row's backing array
	// and boxed values); streaming holds the files read ahead
	// (lateReadConcurrency of 80) and the one being handed out.
	if held := total * 56; peak > held {
		t.Fatalf("live heap grew by %d B while streaming %d rows; holding them takes ≥ %d B", peak, total, held)
	}
	t.Logf("live heap growth at most %.1f MB for %d rows", float64(peak)/1e6, total)
}
