package fileindex

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
	"github.com/parquet-go/parquet-go"
)

// pqJoinRow is a row of the late-materialization test files.
type pqJoinRow struct {
	ID   *int64    `parquet:"id,optional"`
	Name *string   `parquet:"name,optional"`
	V    int32     `parquet:"v"`
	Tags []string  `parquet:"tags,list"`
	TS   time.Time `parquet:"ts,timestamp(microsecond)"`
}

const pqJoinSchema = `{"type":"struct","fields":[` +
	`{"name":"id","type":"long","nullable":true,"metadata":{}},` +
	`{"name":"name","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"v","type":"integer","nullable":true,"metadata":{}},` +
	`{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},` +
	`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}}]}`

// pqJoinLake writes the test files into dir: four by parquet-go with small
// pages, row groups of 100 rows, page indexes and a bloom filter on id (two
// sorted by id, two not), and two by DuckDB (row groups of 64 rows, no
// page index). It returns their URIs and paths.
func pqJoinLake(t *testing.T, dir string, seed uint64) (uris, paths []string) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 11))
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	gen := func(n int) []pqJoinRow {
		rows := make([]pqJoinRow, n)
		for i := range rows {
			r := &rows[i]
			if rng.IntN(10) > 0 {
				id := int64(rng.IntN(60)) - 5 // some negative ids
				r.ID = &id
			}
			if rng.IntN(10) > 0 {
				s := fmt.Sprintf("n%02d", rng.IntN(40))
				r.Name = &s
			}
			r.V = rng.Int32N(1000)
			for range rng.IntN(3) {
				r.Tags = append(r.Tags, fmt.Sprintf("t%d", rng.IntN(5)))
			}
			r.TS = base.Add(time.Duration(rng.IntN(1_000_000)) * time.Second)
		}
		return rows
	}
	for f := range 4 {
		rows := gen(300)
		if f < 2 {
			slices.SortStableFunc(rows, func(a, b pqJoinRow) int {
				switch {
				case a.ID == nil && b.ID == nil:
					return 0
				case a.ID == nil:
					return 1
				case b.ID == nil:
					return -1
				}
				return int(*a.ID - *b.ID)
			})
		}
		p := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", f))
		out, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := parquet.NewGenericWriter[pqJoinRow](out, parquet.PageBufferSize(128), parquet.MaxRowsPerRowGroup(100),
			parquet.BloomFilters(parquet.SplitBlockFilter(10, "id")))
		// Small writes: parquet-go cuts pages between writes.
		for len(rows) > 0 {
			n := min(len(rows), 8)
			if _, err := w.Write(rows[:n]); err != nil {
				t.Fatal(err)
			}
			rows = rows[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	// DuckDB's writer.
	st, err := schema.Parse(pqJoinSchema)
	if err != nil {
		t.Fatal(err)
	}
	db, err := duck.Open(ctx, duck.Options{TempDirectory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for f := 4; f < 6; f++ {
		var rows [][]any
		for _, r := range gen(300) {
			var id, name any
			if r.ID != nil {
				id = *r.ID
			}
			if r.Name != nil {
				name = *r.Name
			}
			tags := []any{}
			for _, s := range r.Tags {
				tags = append(tags, s)
			}
			rows = append(rows, []any{id, name, r.V, tags, r.TS})
		}
		tbl := fmt.Sprintf("t%d", f)
		if _, err := db.Load(ctx, tbl, duckKeys{RowsSource(st, rows)}); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", f))
		if err := db.Exec(ctx, fmt.Sprintf("COPY %s TO %s (FORMAT parquet, ROW_GROUP_SIZE 64)", tbl, duck.String(p))); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, p := range paths {
		uris = append(uris, "file://"+filepath.ToSlash(p))
	}
	return uris, paths
}

// pageIndexes counts the files whose id column chunks all have an offset
// index.
func pageIndexes(t *testing.T, paths []string) int {
	t.Helper()
	n := 0
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		info, _ := f.Stat()
		pf, err := parquet.OpenFile(f, info.Size())
		if err != nil {
			t.Fatal(err)
		}
		all := len(pf.RowGroups()) > 1
		for _, g := range pf.RowGroups() {
			if _, err := g.ColumnChunks()[0].OffsetIndex(); err != nil {
				all = false
			}
		}
		if all {
			n++
		}
		f.Close()
	}
	return n
}

// oracleJoin runs the join's own final SQL with DuckDB's Parquet reader
// over every file as the index side.
func oracleJoin(t *testing.T, fi *FileIndex, keys KeySource, on []string, how JoinType, opts JoinOptions, paths []string) []string {
	t.Helper()
	ctx := context.Background()
	m := fi.ix.Metadata()
	src, err := fi.ix.StoredSchema()
	if err != nil {
		t.Fatal(err)
	}
	cols, err := joinColumns(m, src, on, keys.Schema(), opts.Select)
	if err != nil {
		t.Fatal(err)
	}
	db, err := duck.Open(ctx, duck.Options{TempDirectory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Load(ctx, "q", duckKeys{keys}); err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = duck.String(p)
	}
	if err := db.Exec(ctx, "CREATE VIEW idx_all AS SELECT * FROM read_parquet(["+strings.Join(quoted, ",")+"])"); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(ctx, joinSQL(m, on, how, opts.IndexOnLeft, keys.Schema().Names(), cols))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for {
		b, err := rows.Next(ctx)
		if err != nil {
			break
		}
		for _, r := range b {
			out = append(out, fmt.Sprint(r))
		}
	}
	slices.Sort(out)
	return out
}

// lateEligible says whether a join may drop index rows of other keys
// (planPrefilter's join-type condition).
func lateEligible(how JoinType, indexLeft bool) bool {
	if indexLeft {
		return how == Inner || how == Right || how == Semi
	}
	return how == Inner || how == Left || how == Semi || how == Anti
}

// TestJoinLateMaterialization checks, on real Parquet files with several
// row groups and pages (with and without page indexes), that every join
// type returns the same rows through every path — late materialization,
// filtering every row in Go, loading every row — and, where the index side
// may be filtered, the same rows as DuckDB's reader over every file; with
// null keys, several join columns, integer keys of another width, string
// keys, a selection and temporal deduplication.
func TestJoinLateMaterialization(t *testing.T) {
	ctx := context.Background()
	uris, paths := pqJoinLake(t, t.TempDir(), 1)
	if n := pageIndexes(t, paths); n != 4 {
		t.Fatalf("%d files with page indexes, want the 4 parquet-go ones (DuckDB's without)", n)
	}
	regular := newTestIndex(t, "pqjoin", pqJoinSchema, "parquet", nil, func(ix *index.Index) error {
		if err := ix.AddIndex(ctx, "id"); err != nil {
			return err
		}
		return ix.AddIndex(ctx, "name")
	})
	temporal := newTestIndex(t, "pqtemporal", pqJoinSchema, "parquet", nil, func(ix *index.Index) error {
		if err := ix.AddIndex(ctx, "id"); err != nil {
			return err
		}
		return ix.AddTemporalIndex(ctx, "name", "ts")
	})
	for _, ti := range []*testIndex{regular, temporal} {
		if _, err := ti.ix.AddFiles(ctx, uris...); err != nil {
			t.Fatal(err)
		}
		if _, err := ti.fi.Update(ctx, UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	long, integer, str := []schema.Type{schema.Long, schema.String}, []schema.Type{schema.Integer}, []schema.Type{schema.String}
	cases := []struct {
		name string
		ti   *testIndex
		keys func() KeySource
		on   []string
		sel  []string
		// late: the path when the join type allows filtering
		late bool
	}{
		{"one id", regular, func() KeySource { return keys("id", long, []any{int64(7)}) }, []string{"id"}, nil, true},
		{"ids with null, duplicate and absent", regular, func() KeySource {
			return keys("id", long, []any{int64(3)}, []any{nil}, []any{int64(3)}, []any{int64(-5)}, []any{int64(54)}, []any{int64(999)})
		}, []string{"id"}, nil, true},
		{"integer keys on a long column", regular, func() KeySource {
			return keys("id", integer, []any{int32(1)}, []any{int32(20)}, []any{nil})
		}, []string{"id"}, nil, true},
		{"string keys", regular, func() KeySource {
			return keys("name", str, []any{"n05"}, []any{"n39"}, []any{nil}, []any{"zzz"})
		}, []string{"name"}, nil, true},
		{"two join columns", regular, func() KeySource {
			return keys("id,name", long, []any{int64(10), "n07"}, []any{int64(11), "n08"}, []any{int64(12), nil}, []any{nil, "n09"})
		}, []string{"id", "name"}, nil, true},
		{"selection", regular, func() KeySource { return keys("id", long, []any{int64(2)}, []any{int64(40)}) },
			[]string{"id"}, []string{"v", "id"}, true},
		{"string keys on a long column", regular, func() KeySource { return keys("id", str, []any{"7"}, []any{"8"}) },
			[]string{"id"}, nil, false},
		{"temporal", temporal, func() KeySource { return keys("name", str, []any{"n01"}, []any{"n02"}, []any{nil}) },
			[]string{"name"}, nil, true},
		{"temporal and another column", temporal, func() KeySource {
			return keys("id,name", long, []any{int64(4), "n03"}, []any{int64(5), "n04"})
		}, []string{"id", "name"}, nil, true},
	}
	directSeen := map[bool]bool{}
	defer func() {
		if !t.Failed() && (!directSeen[true] || !directSeen[false]) {
			t.Errorf("direct answers seen: %v, want both", directSeen)
		}
	}()
	for _, tc := range cases {
		for _, how := range []JoinType{Inner, Left, Right, Full, Semi, Anti} {
			for _, indexLeft := range []bool{false, true} {
				if how == Full && tc.name == "string keys on a long column" {
					continue // DuckDB cannot coalesce VARCHAR and BIGINT, on any path
				}
				t.Run(fmt.Sprintf("%s/%s/indexLeft=%v", tc.name, how, indexLeft), func(t *testing.T) {
					run := func(force JoinPath, loc ...RowLocator) ([]string, []string, JoinStats) {
						opts := JoinOptions{Select: tc.sel, IndexOnLeft: indexLeft, force: force}
						if len(loc) > 0 {
							opts.Rows = loc[0]
						}
						r, err := tc.ti.fi.Join(ctx, tc.keys(), tc.on, how, opts)
						if err != nil {
							t.Fatal(err)
						}
						cols, rows := drain(t, r)
						// A direct answer's statistics (and a fallback
						// from a stale row index) are final once its rows
						// are read.
						return cols, rows, r.Stats()
					}
					cols, got, st := run("")
					fcols, full, fst := run(PathFull)
					_, filtered, _ := run(PathFiltered)
					lcols, lated, lst := run(PathLate)
					scols, scanned, sst := run(PathScan)
					if !slices.Equal(cols, fcols) || !slices.Equal(got, full) || !slices.Equal(got, filtered) ||
						!slices.Equal(cols, lcols) || !slices.Equal(got, lated) || !slices.Equal(cols, scols) || !slices.Equal(got, scanned) {
						t.Fatalf("paths differ:\n%s %v: %v\nfull %v: %v\nfiltered: %v\nlate %v: %v\nscan %v: %v", st.Path, cols, got, fcols, full, filtered, lcols, lated, scols, scanned)
					}
					eligible := tc.late && lateEligible(how, indexLeft)
					// Through a row index (the oracle's positions), and
					// through a stale one (positions holding other keys):
					// the same answer.
					rcols, rowed, rst := run(PathRowIndex, &oracleLocator{})
					_, stale, sst2 := run("", &oracleLocator{shift: true})
					if !slices.Equal(cols, rcols) || !slices.Equal(got, rowed) || !slices.Equal(got, stale) {
						t.Fatalf("row index paths differ:\n%s %v: %v\nrowindex %s %v: %v\nstale %s: %v", st.Path, cols, got, rst.Path, rcols, rowed, sst2.Path, stale)
					}
					if eligible && st.FilesLocated > 0 {
						if rst.Path != PathRowIndex || rst.RowsScanned != 0 || rst.Plan != "oracle" {
							t.Fatalf("row index: %+v", rst)
						}
						// A plain inner join of one-column keys is answered
						// by the rows read (join_direct.go): the same rows
						// and schema as through DuckDB, checked above.
						direct := how == Inner && len(tc.on) == 1 && tc.ti == regular && len(tc.keys().Schema().Fields) == 1 &&
							schema.Equal(tc.keys().Schema().Fields[0].Type, fieldType(t, tc.ti, tc.on[0]))
						if rst.Direct != direct {
							t.Fatalf("row index answered directly: %v, want %v (%+v)", rst.Direct, direct, rst)
						}
						directSeen[direct] = true
						if direct {
							schemaOf := func(force JoinPath, loc RowLocator) *schema.Struct {
								r, err := tc.ti.fi.Join(ctx, tc.keys(), tc.on, how, JoinOptions{Select: tc.sel, IndexOnLeft: indexLeft, force: force, Rows: loc})
								if err != nil {
									t.Fatal(err)
								}
								defer r.Close()
								return r.Schema()
							}
							if a, b := schemaOf(PathRowIndex, &oracleLocator{}), schemaOf(PathLate, nil); !schema.Equal(a, b) {
								t.Fatalf("direct answer's schema %s, DuckDB's %s", schema.MarshalType(a), schema.MarshalType(b))
							}
						}
						if sst2.Path == PathRowIndex || !strings.Contains(sst2.Plan, "row index stale") {
							t.Fatalf("stale row index: %+v", sst2)
						}
					} else if rst.Path == PathRowIndex {
						t.Fatalf("row index path for an ineligible join: %+v", rst)
					}
					switch {
					case fst.Path != PathFull:
						t.Fatalf("forced full: %s", fst.Path)
					case !eligible && (st.Path != PathFull || sst.Path != PathFull):
						t.Fatalf("path %s, forced scan %s, want full", st.Path, sst.Path)
					case eligible && (st.Path != PathLate && st.Path != PathScan || lst.Path != PathLate || sst.Path != PathScan):
						t.Fatalf("path %s (%s), forced late %s, forced scan %s (%s)", st.Path, st.Plan, lst.Path, sst.Path, sst.Plan)
					}
					if eligible && sst.Path == PathScan {
						oracle := oracleJoin(t, tc.ti.fi, tc.keys(), tc.on, how, JoinOptions{Select: tc.sel, IndexOnLeft: indexLeft}, paths)
						if !slices.Equal(scanned, oracle) {
							t.Fatalf("scan path differs from DuckDB over every file:\n%v\n%v", scanned, oracle)
						}
					}
					st = lst
					if st.Path == PathLate {
						oracle := oracleJoin(t, tc.ti.fi, tc.keys(), tc.on, how, JoinOptions{Select: tc.sel, IndexOnLeft: indexLeft}, paths)
						if !slices.Equal(got, oracle) {
							t.Fatalf("late path differs from DuckDB over every file:\n%v\n%v", got, oracle)
						}
						if st.RowsLoaded > fst.RowsLoaded || st.Requests == 0 || st.Bytes == 0 || st.RowGroups == 0 {
							t.Errorf("late stats %+v, full %+v", st, fst)
						}
					}
				})
			}
		}
	}
}

// TestJoinLateSkips checks that a one-key join over sorted files skips row
// groups and pages and reads fewer bytes than loading every row.
func TestJoinLateSkips(t *testing.T) {
	ctx := context.Background()
	uris, _ := pqJoinLake(t, t.TempDir(), 2)
	ti := newTestIndex(t, "pqskip", pqJoinSchema, "parquet", nil, func(ix *index.Index) error { return ix.AddIndex(ctx, "id") })
	if _, err := ti.ix.AddFiles(ctx, uris[:2]...); err != nil { // the sorted files
		t.Fatal(err)
	}
	if _, err := ti.fi.Update(ctx, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	run := func(force JoinPath) JoinStats {
		r, err := ti.fi.Join(ctx, keys("id", []schema.Type{schema.Long}, []any{int64(20)}), []string{"id"}, Inner, JoinOptions{force: force})
		if err != nil {
			t.Fatal(err)
		}
		st := r.Stats()
		if _, rows := drain(t, r); len(rows) == 0 {
			t.Fatal("no rows")
		}
		return st
	}
	late, full := run(""), run(PathFull)
	if late.Path != PathLate || late.RowGroupsSkipped == 0 || late.PagesSkipped == 0 || late.RowsScanned >= full.RowsScanned {
		t.Errorf("late %+v, full %+v", late, full)
	}
	if late.Bytes >= full.Bytes {
		t.Errorf("late path read %d bytes, full %d", late.Bytes, full.Bytes)
	}
	if late.RowsLoaded >= full.RowsLoaded {
		t.Errorf("rows loaded: late %d, full %d", late.RowsLoaded, full.RowsLoaded)
	}
}

// TestJoinLateErrors checks that the late path reports a located file that
// is gone or not Parquet as the relation does: a *datafile.FileError
// naming it, of the right kind.
func TestJoinLateErrors(t *testing.T) {
	ctx := context.Background()
	uris, paths := pqJoinLake(t, t.TempDir(), 3)
	ti := newTestIndex(t, "pqerr", pqJoinSchema, "parquet", nil, func(ix *index.Index) error { return ix.AddIndex(ctx, "id") })
	if _, err := ti.ix.AddFiles(ctx, uris[:2]...); err != nil {
		t.Fatal(err)
	}
	if _, err := ti.fi.Update(ctx, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	join := func() error {
		r, err := ti.fi.Join(ctx, keys("id", []schema.Type{schema.Long}, []any{int64(1)}, []any{int64(30)}), []string{"id"}, Inner, JoinOptions{})
		if err == nil {
			r.Close()
		}
		return err
	}
	if err := os.WriteFile(paths[1], []byte("not parquet at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	var fe *datafile.FileError
	if err := join(); !errors.As(err, &fe) || fe.URI != uris[1] || !errors.Is(err, datafile.ErrCorruptFile) {
		t.Errorf("corrupt file: %v", err)
	}
	if err := os.Remove(paths[1]); err != nil {
		t.Fatal(err)
	}
	if err := join(); !errors.As(err, &fe) || fe.URI != uris[1] || !errors.Is(err, store.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// fieldType is the stored type of column c of ti's index.
func fieldType(t *testing.T, ti *testIndex, c string) schema.Type {
	t.Helper()
	src, err := ti.fi.ix.StoredSchema()
	if err != nil {
		t.Fatal(err)
	}
	f, ok := src.Field(c)
	if !ok {
		t.Fatalf("no column %s", c)
	}
	return f.Type
}
