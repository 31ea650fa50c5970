package fileindex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// updDataDir is the spec's test data (testdata/ariadne/data).
const updDataDir = "../testdata/ariadne/data"

// updT1S is the schema (Id int, Version int, Value double) of the spec's tests.
const updT1S = `{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},{"name":"Version","type":"integer","nullable":true,"metadata":{}},{"name":"Value","type":"double","nullable":true,"metadata":{}}]}`

// updEnv is one test's storage root with its catalog.
type updEnv struct {
	t    testing.TB
	dir  string
	root store.Store
	cat  *index.Catalog
	cfg  config.Config
}

func newUpdEnv(t *testing.T) *updEnv { return newUpdEnvTB(t) }

// newUpdEnvTB is newUpdEnv for tests and benchmarks.
func newUpdEnvTB(t testing.TB) *updEnv {
	t.Helper()
	dir := t.TempDir()
	root, err := store.Open(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	cfg := config.Defaults()
	cfg.LockRetryInterval = time.Second
	return &updEnv{t: t, dir: dir, root: root, cfg: cfg, cat: index.NewCatalog(root, index.Options{Config: cfg})}
}

// open creates index name with schema js, format and read options.
func (e *updEnv) open(name, js, format string, ro map[string]string) *index.Index {
	e.t.Helper()
	st, err := schema.Parse(js)
	if err != nil {
		e.t.Fatal(err)
	}
	ix, err := e.cat.Open(context.Background(), name, index.OpenOptions{Schema: st, Format: format, ReadOptions: ro})
	if err != nil {
		e.t.Fatal(err)
	}
	return ix
}

// fi returns the file index of ix with e's config.
func (e *updEnv) fi(ix *index.Index) *FileIndex {
	cfg := e.cfg
	return New(ix, Options{Config: &cfg})
}

// updDataURI is the canonical URI of a test data file.
func updDataURI(t *testing.T, name string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(updDataDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return "file://" + abs
}

// updFileURI is the canonical URI of a local path.
func updFileURI(t testing.TB, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return "file://" + abs
}

func updAddFiles(t *testing.T, ix *index.Index, uris ...string) {
	t.Helper()
	if _, err := ix.AddFiles(context.Background(), uris...); err != nil {
		t.Fatal(err)
	}
}

func updMust(t *testing.T, fi *FileIndex) UpdateResult {
	t.Helper()
	res, err := fi.Update(context.Background(), UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	return res
}

// updTableRows reads a Delta table under the index root: its schema and rows
// keyed by filename (the main table has one row per file).
func updTableRows(t *testing.T, root store.Store, key string) (*schema.Struct, [][]any) {
	t.Helper()
	ctx := context.Background()
	tb, err := delta.Open(ctx, store.Sub(root, key))
	if err != nil {
		t.Fatalf("open %s: %v", key, err)
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	for r, err := range snap.Scan(ctx, delta.ScanOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	return snap.Schema(), rows
}

// updTableVersion is the latest version of the Delta table at key, -1 if none.
func updTableVersion(t *testing.T, root store.Store, key string) int64 {
	t.Helper()
	ctx := context.Background()
	tb, err := delta.Open(ctx, store.Sub(root, key))
	if errors.Is(err, delta.ErrNotATable) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return snap.Version()
}

// updMainTable renders the main table as filename → column → canonical text
// (arrays sorted), so tests compare contents independent of array order.
func updMainTable(t *testing.T, ix *index.Index) map[string]map[string]string {
	t.Helper()
	sch, rows := updTableRows(t, ix.Root(), ix.Paths().Main)
	out := map[string]map[string]string{}
	for _, r := range rows {
		fn := r[0].(string)
		if _, dup := out[fn]; dup {
			t.Fatalf("main table has two rows for %s", fn)
		}
		m := map[string]string{}
		for i, f := range sch.Fields {
			m[f.Name] = updCanon(r[i])
		}
		out[fn] = m
	}
	return out
}

// updCanon renders a cell with its top-level array sorted (value sets are
// unordered, §3.2) and nested values (structs) in field order.
func updCanon(v any) string {
	if x, ok := v.([]any); ok {
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = updCanonValue(e)
		}
		sort.Strings(parts)
		return "[" + strings.Join(parts, ",") + "]"
	}
	return updCanonValue(v)
}

// updCanonValue renders a value in order.
func updCanonValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = updCanonValue(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case []byte:
		return fmt.Sprintf("bytes(%d)", len(x))
	case time.Time:
		return x.UTC().Format("2006-01-02T15:04:05Z")
	}
	return fmt.Sprint(v)
}

// updRangeCanon renders a struct<min,max> cell without sorting.
func updRangeCanon(v any) string {
	x, ok := v.([]any)
	if !ok {
		return updCanon(v)
	}
	return fmt.Sprintf("{%v,%v}", x[0], x[1])
}

// updWriteFile writes a test data file and returns its URI.
func updWriteFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return updFileURI(t, p)
}

// updCSVIDs writes a CSV (Id, Version, Category, Value) with Ids 1..n (§8.20).
func updCSVIDs(t *testing.T, dir, name string, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("Id,Version,Category,Value\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d,%d,cat%d,%d.5\n", i, i%3, i%5, i)
	}
	return updWriteFile(t, dir, name, b.String())
}

// updSortedKeys returns the keys of m sorted.
func updSortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// updFileSize is the size of a local file given by URI.
func updFileSize(t *testing.T, uri string) int64 {
	t.Helper()
	st, err := os.Stat(strings.TrimPrefix(uri, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func updItoa(n int64) string { return fmt.Sprint(n) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fieldIndex is the position of column name in sch, -1 if absent.
func fieldIndex(sch *schema.Struct, name string) int {
	return slices.IndexFunc(sch.Fields, func(f schema.Field) bool { return f.Name == name })
}

// marshalType renders a Spark type as schema JSON.
func marshalType(t schema.Type) string { return schema.MarshalType(t) }
