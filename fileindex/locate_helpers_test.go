package fileindex

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/bloom"
	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// Test fixtures of the query side. Until the build side's update lands
// everywhere, these tests write main tables directly with the §4.2 layout
// (as an index built by the Spark library would hold them): testIndexer
// computes, per data file read with the stored schema and read options,
// exactly the cells §3.2–§3.9 define.

const testData = "../testdata/ariadne/data"

// T1S is the schema of table1 (§8.0).
const schemaT1S = `{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},{"name":"Version","type":"integer","nullable":true,"metadata":{}},{"name":"Value","type":"double","nullable":true,"metadata":{}}]}`

// schemaTemporal is the schema of temporal_part0/1.
const schemaTemporal = `{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},{"name":"Value","type":"double","nullable":true,"metadata":{}},{"name":"UpdatedAt","type":"timestamp","nullable":true,"metadata":{}}]}`

// dataURI is the file URI of a test data file, as the FileList records it.
func dataURI(t testing.TB, name string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(testData, name))
	if err != nil {
		t.Fatal(err)
	}
	return "file://" + abs
}

type testIndex struct {
	cat  *index.Catalog
	ix   *index.Index
	fi   *FileIndex
	dir  string
	root *store.Counting
}

// newTestCatalog returns a catalog over a fresh folder, with its root
// wrapped in a request counter.
func newTestCatalog(t testing.TB) (*index.Catalog, *store.Counting, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	root := store.NewCounting(st)
	t.Cleanup(func() { root.Close() })
	cfg := config.Defaults()
	cfg.LockRetryInterval = time.Second
	cfg.LockMaxWait = time.Minute
	return index.NewCatalog(root, index.Options{Config: cfg}), root, dir
}

// newTestIndex creates an index and registers its definitions with setup.
func newTestIndex(t testing.TB, name, schemaJSON, format string, readOpts map[string]string, setup func(ix *index.Index) error) *testIndex {
	t.Helper()
	ctx := context.Background()
	cat, root, dir := newTestCatalog(t)
	st, err := schema.Parse(schemaJSON)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := cat.Open(ctx, name, index.OpenOptions{Schema: st, Format: format, ReadOptions: readOpts})
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		if err := setup(ix); err != nil {
			t.Fatal(err)
		}
	}
	return &testIndex{cat: cat, ix: ix, fi: New(ix, Options{}), dir: dir, root: root}
}

// testIndexer builds main-table rows in the §4.2 layout.
type testIndexer struct {
	m        *metadata.Metadata
	src      *schema.Struct
	large    int64 // L: value sets of at least this size go to large tables
	mainType *schema.Struct
}

func newTestIndexer(t testing.TB, ti *testIndex, large int64) *testIndexer {
	t.Helper()
	if err := ti.ix.RefreshMetadata(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := ti.ix.Metadata()
	src, err := ti.ix.StoredSchema()
	if err != nil {
		t.Fatal(err)
	}
	x := &testIndexer{m: m, src: src, large: large}
	fields := []schema.Field{{Name: FilenameColumn, Type: schema.String, Nullable: true}}
	for _, c := range metadata.StorageColumns(m) {
		fields = append(fields, schema.Field{Name: c, Type: &schema.Array{Element: x.storedElem(t, c), ContainsNull: true}, Nullable: true})
	}
	for _, b := range m.BloomIndexes {
		fields = append(fields, schema.Field{Name: BloomColumn(b.Column), Type: schema.Binary, Nullable: true})
	}
	for _, r := range m.RangeIndexes {
		f, _ := src.Field(r.Column)
		fields = append(fields, schema.Field{Name: RangeColumn(r.Column), Type: &schema.Struct{Fields: []schema.Field{
			{Name: RangeMinField, Type: f.Type, Nullable: true}, {Name: RangeMaxField, Type: f.Type, Nullable: true}}}, Nullable: true})
	}
	for _, c := range m.AutoBloomIndexes {
		fields = append(fields, schema.Field{Name: AutoBloomColumn(c), Type: schema.Binary, Nullable: true})
	}
	fields = append(fields, schema.Field{Name: FileSizeColumn, Type: schema.Long, Nullable: true})
	x.mainType = &schema.Struct{Fields: fields}
	return x
}

// storedElem is the element type of a storage column's array.
func (x *testIndexer) storedElem(t testing.TB, c string) schema.Type {
	for _, tp := range x.m.TemporalIndexes {
		if tp.Column == c {
			vf, _ := x.src.Field(c)
			tf, ok := x.src.Resolve(tp.TimestampColumn)
			if !ok {
				t.Fatalf("timestamp column %s", tp.TimestampColumn)
			}
			return &schema.Struct{Fields: []schema.Field{
				{Name: TemporalValueField, Type: vf.Type, Nullable: true}, {Name: TemporalMaxTSField, Type: tf.Type, Nullable: true}}}
		}
	}
	for _, e := range x.m.ExplodedFieldIndexes {
		if e.AsColumn == c {
			af, _ := x.src.Field(e.ArrayColumn)
			el := af.Type.(*schema.Array).Element.(*schema.Struct)
			f, ok := el.Resolve(e.FieldPath)
			if !ok {
				t.Fatalf("field %s", e.FieldPath)
			}
			return f.Type
		}
	}
	f, ok := x.src.Field(c)
	if !ok {
		t.Fatalf("column %s", c)
	}
	return f.Type
}

// fileRows reads one data file with the stored schema and options.
func (x *testIndexer) fileRows(t testing.TB, ti *testIndex, uri string) [][]any {
	t.Helper()
	ctx := context.Background()
	opts := map[string]string{}
	for k, v := range x.m.ReadOptions.All() {
		opts[k] = v
	}
	r, err := datafile.Open(ctx, ti.cat.Resolver(), uri, datafile.Spec{Format: x.m.Format, Schema: x.src, Options: opts}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rows [][]any
	for {
		b, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, b...)
	}
}

// extract returns the values of a storage column contributed by one row
// (several for an exploded alias, one (value, ts) struct for temporal).
func (x *testIndexer) extract(c string, row []any) []any {
	get := func(path string) any {
		parts := strings.Split(path, ".")
		i := slices.Index(x.src.Names(), parts[0])
		v := row[i]
		t := x.src.Fields[i].Type
		for _, p := range parts[1:] {
			st, ok := t.(*schema.Struct)
			s, ok2 := v.([]any)
			if !ok || !ok2 {
				return nil
			}
			j := slices.Index(st.Names(), p)
			v, t = s[j], st.Fields[j].Type
		}
		return v
	}
	for _, tp := range x.m.TemporalIndexes {
		if tp.Column == c {
			return []any{[]any{get(c), get(tp.TimestampColumn)}}
		}
	}
	for _, e := range x.m.ExplodedFieldIndexes {
		if e.AsColumn == c {
			arr, _ := get(e.ArrayColumn).([]any)
			af, _ := x.src.Field(e.ArrayColumn)
			el := af.Type.(*schema.Array).Element.(*schema.Struct)
			var out []any
			for _, elem := range arr {
				s, _ := elem.([]any)
				if s == nil {
					continue
				}
				cur, ct := any(s), schema.Type(el)
				for _, p := range strings.Split(e.FieldPath, ".") {
					st := ct.(*schema.Struct)
					j := slices.Index(st.Names(), p)
					cur, ct = cur.([]any)[j], st.Fields[j].Type
					if cur == nil {
						break
					}
				}
				if cur != nil {
					out = append(out, cur)
				}
			}
			return out
		}
	}
	return []any{get(c)}
}

// largeRow is one row of a large-index table.
type largeRow struct {
	column string
	row    []any
}

// build computes the main row of one file and its large rows.
func (x *testIndexer) build(t testing.TB, uri string, size int64, rows [][]any) ([]any, []largeRow) {
	t.Helper()
	out := []any{uri}
	var larges []largeRow
	full := map[string][]any{}
	for _, c := range metadata.StorageColumns(x.m) {
		elem := x.storedElem(t, c)
		var set []any
		seen := map[string]bool{}
		temporal := false
		for _, tp := range x.m.TemporalIndexes {
			temporal = temporal || tp.Column == c
		}
		maxTS := map[string]int{}
		for _, r := range rows {
			for _, v := range x.extract(c, r) {
				if temporal {
					s := v.([]any)
					k, _ := valueKey(s[0], elem.(*schema.Struct).Fields[0].Type)
					if s[0] == nil {
						k = nullKey
					}
					if i, ok := maxTS[k]; ok {
						cur := set[i].([]any)
						if cur[1] == nil || s[1] != nil && s[1].(time.Time).After(cur[1].(time.Time)) {
							set[i] = s
						}
						continue
					}
					maxTS[k] = len(set)
					set = append(set, s)
					continue
				}
				if v == nil {
					continue
				}
				k, _ := valueKey(v, elem)
				if !seen[k] {
					seen[k] = true
					set = append(set, v)
				}
			}
		}
		if set == nil {
			set = []any{}
		}
		full[c] = set
		if int64(len(set)) >= x.large {
			out = append(out, nil)
			for _, v := range set {
				larges = append(larges, largeRow{c, []any{uri, v}})
			}
		} else {
			out = append(out, set)
		}
	}
	var st bloom.Stringifier
	for _, b := range x.m.BloomIndexes {
		f, _ := x.src.Field(b.Column)
		i := slices.Index(x.src.Names(), b.Column)
		seen := map[string]bool{}
		for _, r := range rows {
			if r[i] != nil {
				seen[st.String(r[i], f.Type)] = true
			}
		}
		if len(seen) == 0 {
			out = append(out, nil)
			continue
		}
		bf, err := bloom.New(int64(len(seen)), b.FPR)
		if err != nil {
			t.Fatal(err)
		}
		for s := range seen {
			bf.AddString(s)
		}
		out = append(out, bf.Marshal())
	}
	for _, rg := range x.m.RangeIndexes {
		i := slices.Index(x.src.Names(), rg.Column)
		var lo, hi any
		for _, r := range rows {
			v := r[i]
			if v == nil {
				continue
			}
			if lo == nil {
				lo, hi = v, v
			}
			if c, _ := compareValues(v, lo); c < 0 {
				lo = v
			}
			if c, _ := compareValues(v, hi); c > 0 {
				hi = v
			}
		}
		out = append(out, []any{lo, hi})
	}
	for _, c := range x.m.AutoBloomIndexes {
		set := full[c]
		if len(set) == 0 {
			out = append(out, nil)
			continue
		}
		bf, err := bloom.New(int64(len(set)), config.Defaults().AutoBloomFPR)
		if err != nil {
			t.Fatal(err)
		}
		elem := x.storedElem(t, c)
		for _, v := range set {
			bf.AddString(st.String(v, elem))
		}
		out = append(out, bf.Marshal())
	}
	return append(out, size), larges
}

// index reads the files and upserts their main rows (and appends their
// large rows), as an update would.
func (x *testIndexer) index(t testing.TB, ti *testIndex, uris ...string) {
	t.Helper()
	var mainRows [][]any
	large := map[string][][]any{}
	for _, uri := range uris {
		info, err := os.Stat(strings.TrimPrefix(uri, "file://"))
		if err != nil {
			t.Fatal(err)
		}
		row, larges := x.build(t, uri, info.Size(), x.fileRows(t, ti, uri))
		mainRows = append(mainRows, row)
		for _, l := range larges {
			large[l.column] = append(large[l.column], l.row)
		}
	}
	x.write(t, ti, mainRows, large)
}

// write upserts main rows and appends large rows.
func (x *testIndexer) write(t testing.TB, ti *testIndex, mainRows [][]any, large map[string][][]any) {
	t.Helper()
	writeMain(t, ti, x.mainType, mainRows)
	for c, rows := range large {
		elem := x.storedElem(t, c)
		st := &schema.Struct{Fields: []schema.Field{{Name: FilenameColumn, Type: schema.String, Nullable: true}, {Name: c, Type: elem, Nullable: true}}}
		writeTable(t, ti, ti.ix.Paths().LargeIndex(c), st, rows, false)
	}
}

// writeMain upserts rows of schema st into the main table (creating it).
func writeMain(t testing.TB, ti *testIndex, st *schema.Struct, rows [][]any) {
	t.Helper()
	writeTable(t, ti, ti.ix.Paths().Main, st, rows, true)
}

func writeTable(t testing.TB, ti *testIndex, key string, st *schema.Struct, rows [][]any, upsert bool) {
	t.Helper()
	ctx := context.Background()
	s := store.Sub(ti.root, key)
	tbl, err := delta.Open(ctx, s)
	if errors.Is(err, delta.ErrNotATable) {
		tbl, err = delta.Create(ctx, s, st, delta.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	if upsert {
		_, err = tbl.Upsert(ctx, []string{FilenameColumn}, delta.Rows(rows), delta.WriteOptions{Schema: st, MergeSchema: true})
	} else {
		_, err = tbl.Append(ctx, delta.Rows(rows), delta.WriteOptions{Schema: st, MergeSchema: true})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// base returns the last path segment of each URI.
func bases(uris []string) []string {
	out := make([]string, len(uris))
	for i, u := range uris {
		out[i] = filepath.Base(u)
	}
	return out
}
