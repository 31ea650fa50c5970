package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// testCatalog returns a catalog on a fresh local folder, with lock timings
// short enough for contention tests.
func testCatalog(t *testing.T) (*Catalog, string) {
	t.Helper()
	dir := t.TempDir()
	root, err := store.Open(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	cfg := config.Defaults()
	cfg.LockRetryInterval = time.Second
	// Contended waits back off exponentially in whole seconds (1, 2, 4, …
	// up to 60 s, spec §2.6); 5 minutes lets the contention tests finish
	// on a loaded machine without letting a real deadlock hang the suite.
	cfg.LockMaxWait = 5 * time.Minute
	return NewCatalog(root, Options{Config: cfg}), dir
}

func mustSchema(t *testing.T, s string) *schema.Struct {
	t.Helper()
	st, err := schema.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// T1S is the schema (Id int, Version int, Value double) of the spec's tests.
const t1s = `{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},{"name":"Version","type":"integer","nullable":true,"metadata":{}},{"name":"Value","type":"double","nullable":true,"metadata":{}}]}`
const idVersion = `{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},{"name":"Version","type":"integer","nullable":true,"metadata":{}}]}`

// addRegularIndex registers a regular index directly in metadata (the
// add*Index API belongs to the file index).
func addRegularIndex(t *testing.T, ix *Index, col string) {
	t.Helper()
	err := ix.updateMetadata(context.Background(), func(m *metadata.Metadata) (bool, error) {
		m.Indexes = append(m.Indexes, col)
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCreateAndReconnect(t *testing.T) {
	ctx := context.Background()
	cat, dir := testCatalog(t)
	csvh := OpenOptions{Schema: mustSchema(t, t1s), Format: "csv", ReadOptions: map[string]string{"header": "true"}}

	// New index without schema or format.
	if _, err := cat.Open(ctx, "noschema", OpenOptions{}); !errors.Is(err, aerr.ErrSchemaNotProvided) {
		t.Fatalf("want SchemaNotProvided, got %v", err)
	}
	if _, err := cat.Open(ctx, "noformat", OpenOptions{Schema: mustSchema(t, t1s)}); !errors.Is(err, aerr.ErrMissingFormat) {
		t.Fatalf("want MissingFormat, got %v", err)
	}
	if ok, _ := cat.Exists(ctx, "noschema"); ok {
		t.Fatal("a failed create persisted something")
	}

	ix, err := cat.Open(ctx, "t1", csvh)
	if err != nil {
		t.Fatal(err)
	}
	m := ix.Metadata()
	if m.Format != "csv" || m.Schema != t1s || *m.MetadataVersion != 10 || *m.StorageFormatVersion != 3 {
		t.Fatalf("new metadata: %+v", m)
	}
	if v, _ := m.ReadOptions.Get("header"); v != "true" {
		t.Fatal("read options not stored")
	}
	st, err := ix.StoredSchema()
	if err != nil || st.Marshal() != t1s {
		t.Fatal(err, st)
	}

	// Same schema and format again: fine, nothing rewritten.
	before := readFile(t, filepath.Join(dir, "indexes/t1/metadata.json"))
	if _, err := cat.Open(ctx, "t1", csvh); err != nil {
		t.Fatal(err)
	}
	if after := readFile(t, filepath.Join(dir, "indexes/t1/metadata.json")); after != before {
		t.Fatal("reconnect with identical options rewrote metadata.json")
	}
	// Different schema → SchemaMismatch; different format → FormatMismatch;
	// schema is checked first.
	if _, err := cat.Open(ctx, "t1", OpenOptions{Schema: mustSchema(t, idVersion), Format: "csv"}); !errors.Is(err, aerr.ErrSchemaMismatch) {
		t.Fatalf("want SchemaMismatch, got %v", err)
	}
	if _, err := cat.Open(ctx, "t1", OpenOptions{Schema: mustSchema(t, t1s), Format: "parquet"}); !errors.Is(err, aerr.ErrFormatMismatch) {
		t.Fatalf("want FormatMismatch, got %v", err)
	}
	if _, err := cat.Open(ctx, "t1", OpenOptions{Schema: mustSchema(t, idVersion), Format: "parquet"}); !errors.Is(err, aerr.ErrSchemaMismatch) {
		t.Fatalf("schema must be checked before format, got %v", err)
	}

	// Schema evolution: allowed while indexed columns survive.
	addRegularIndex(t, ix, "Id")
	evolved, err := cat.Open(ctx, "t1", OpenOptions{Schema: mustSchema(t, idVersion), AllowSchemaMismatch: true})
	if err != nil {
		t.Fatal(err)
	}
	if evolved.Metadata().Schema != idVersion {
		t.Fatal("schema not replaced")
	}
	addRegularIndex(t, evolved, "Version")
	noVersion := `{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}}]}`
	_, err = cat.Open(ctx, "t1", OpenOptions{Schema: mustSchema(t, noVersion), AllowSchemaMismatch: true})
	if !errors.Is(err, aerr.ErrIndexNotFoundInNewSchema) || err.Error() != "Index Version was not found in new schema" {
		t.Fatalf("want IndexNotFoundInNewSchema(Version), got %v", err)
	}
	// Evolution followed by a format mismatch persists nothing.
	before = readFile(t, filepath.Join(dir, "indexes/t1/metadata.json"))
	if _, err := cat.Open(ctx, "t1", OpenOptions{Schema: mustSchema(t, t1s), Format: "json", AllowSchemaMismatch: true}); !errors.Is(err, aerr.ErrFormatMismatch) {
		t.Fatalf("want FormatMismatch, got %v", err)
	}
	if readFile(t, filepath.Join(dir, "indexes/t1/metadata.json")) != before {
		t.Fatal("failed reconnect persisted a change")
	}

	// Read options merge: new keys and changed values win, none removed.
	ix2, err := cat.Open(ctx, "t1", OpenOptions{ReadOptions: map[string]string{"delimiter": ";", "header": "false"}})
	if err != nil {
		t.Fatal(err)
	}
	ro := ix2.Metadata().ReadOptions
	if h, _ := ro.Get("header"); h != "false" || ro.Len() != 2 {
		t.Fatalf("read options merge: %v", ro.Keys())
	}
}

func TestBareOpenNeverWrites(t *testing.T) {
	ctx := context.Background()
	cat, dir := testCatalog(t)
	if _, err := cat.Open(ctx, "plain", OpenOptions{Schema: mustSchema(t, t1s), Format: "csv"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "indexes/plain/metadata.json")
	// A future field, and no version markers (an unversioned index).
	edited := `{"format":"csv","schema":` + fmt.Sprintf("%q", t1s) + `,"future_field":{"enabled":true}}`
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := cat.Get(ctx, "plain")
	if err != nil {
		t.Fatal(err)
	}
	if ix.Format() != "csv" {
		t.Fatal(ix.Format())
	}
	if got := readFile(t, path); got != edited {
		t.Fatalf("bare open rewrote metadata.json:\n%s", got)
	}
}

func TestHostileNames(t *testing.T) {
	ctx := context.Background()
	cat, dir := testCatalog(t)
	for _, name := range []string{"../escape", "a/b", `a\b`, ".hidden", "..", "a\x00b", "", " "} {
		_, err1 := cat.Open(ctx, name, OpenOptions{Schema: mustSchema(t, t1s), Format: "csv"})
		_, err2 := cat.Exists(ctx, name)
		_, err3 := cat.Remove(ctx, name)
		_, err4 := cat.Get(ctx, name)
		for i, err := range []error{err1, err2, err3, err4} {
			if !errors.Is(err, aerr.ErrInvalidArgument) {
				t.Errorf("name %q call %d: want ErrInvalidArgument, got %v", name, i, err)
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("hostile names left files behind: %v", entries)
	}
}

func TestFileList(t *testing.T) {
	ctx := context.Background()
	cat, dir := testCatalog(t)
	ix, err := cat.Open(ctx, "test", OpenOptions{Schema: mustSchema(t, t1s), Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	p0, p1 := "file:///data/table1_part0.csv", "file:///data/table1_part1.csv"

	// An empty add is a no-op that creates nothing.
	if n, err := ix.AddFiles(ctx); err != nil || n != 0 {
		t.Fatal(n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "filelists")); !os.IsNotExist(err) {
		t.Fatal("empty AddFiles created the FileList")
	}
	if _, err := ix.AddFiles(ctx, p0, " "); !errors.Is(err, aerr.ErrInvalidArgument) {
		t.Fatalf("blank name: %v", err)
	}
	if has, _ := ix.HasFile(ctx, p0); has {
		t.Fatal("has before add")
	}
	if n, err := ix.AddFiles(ctx, p0); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	files, _ := ix.Files(ctx)
	first := files[0].AddedAt
	time.Sleep(5 * time.Millisecond)
	// Mixed batch: existing keeps its timestamp, new one is added once.
	if n, err := ix.AddFiles(ctx, p0, p1, p1); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	files, err = ix.Files(ctx)
	if err != nil || len(files) != 2 || files[0].Name != p0 || !files[0].AddedAt.Equal(first) || !files[1].AddedAt.After(first) {
		t.Fatalf("files after mixed add: %+v (%v)", files, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "indexes/test/.filelist.lock")); !os.IsNotExist(err) {
		t.Fatal("lock left behind")
	}
	names, _ := cat.FindIndexes(ctx, p1)
	if !slices.Equal(names, []string{"test"}) {
		t.Fatal(names)
	}
	if err := ix.removeFiles(ctx, []string{p0, "file:///unknown"}); err != nil {
		t.Fatal(err)
	}
	if has, _ := ix.HasFile(ctx, p0); has {
		t.Fatal("p0 still tracked")
	}
	if has, _ := ix.HasFile(ctx, p1); !has {
		t.Fatal("p1 lost")
	}
}

func TestConcurrentAddFiles(t *testing.T) {
	ctx := context.Background()
	cat, _ := testCatalog(t)
	if _, err := cat.Open(ctx, "conc", OpenOptions{Schema: mustSchema(t, t1s), Format: "csv"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each goroutine has its own handle, as separate processes would.
			ix, err := cat.Get(ctx, "conc")
			if err != nil {
				errs <- err
				return
			}
			for i := range 2 {
				if _, err := ix.AddFiles(ctx, fmt.Sprintf("file:///d/%d-%d.csv", g, i), "file:///d/shared.csv"); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ix, _ := cat.Get(ctx, "conc")
	files, err := ix.Files(ctx)
	if err != nil || len(files) != 9 {
		t.Fatalf("want 9 distinct files, got %d (%v)", len(files), err)
	}
}

func TestConcurrentCreate(t *testing.T) {
	ctx := context.Background()
	cat, _ := testCatalog(t)
	var wg sync.WaitGroup
	results := make([]error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := t1s
			if g%2 == 1 {
				s = idVersion
			}
			_, results[g] = cat.Open(ctx, "race", OpenOptions{Schema: mustSchema(t, s), Format: "csv"})
		}()
	}
	wg.Wait()
	ix, err := cat.Get(ctx, "race")
	if err != nil {
		t.Fatal(err)
	}
	winner := ix.Metadata().Schema
	for g, err := range results {
		mine := t1s
		if g%2 == 1 {
			mine = idVersion
		}
		switch {
		case mine == winner && err != nil:
			t.Errorf("goroutine %d with the winning schema failed: %v", g, err)
		case mine != winner && !errors.Is(err, aerr.ErrSchemaMismatch):
			t.Errorf("goroutine %d with the losing schema: want SchemaMismatch, got %v", g, err)
		}
	}
}

func TestCatalog(t *testing.T) {
	ctx := context.Background()
	cat, dir := testCatalog(t)
	for _, n := range []string{"b", "a", "C"} {
		if _, err := cat.Open(ctx, n, OpenOptions{Schema: mustSchema(t, t1s), Format: "csv"}); err != nil {
			t.Fatal(err)
		}
	}
	// A folder without metadata.json is not an index.
	os.MkdirAll(filepath.Join(dir, "indexes/leftover/index"), 0o755)
	os.WriteFile(filepath.Join(dir, "indexes/leftover/index/x"), []byte("x"), 0o644)
	names, err := cat.List(ctx)
	if err != nil || !slices.Equal(names, []string{"C", "a", "b"}) {
		t.Fatalf("List = %v, %v", names, err)
	}
	ix, _ := cat.Get(ctx, "a")
	addRegularIndex(t, ix, "Id")
	ix.AddFiles(ctx, "file:///x.csv", "file:///y.csv")
	s, err := cat.Describe(ctx, "a")
	if err != nil || s.FileCount != 2 || !slices.Equal(s.RegularIndexes, []string{"Id"}) || s.TotalIndexedFileSize != -1 || s.Format != "csv" {
		t.Fatalf("Describe = %+v, %v", s, err)
	}
	all, warns, err := cat.DescribeAll(ctx)
	if err != nil || len(all) != 3 || len(warns) != 0 {
		t.Fatal(all, warns, err)
	}
	if _, err := cat.Describe(ctx, "nope"); !errors.Is(err, aerr.ErrIndexNotFound) {
		t.Fatal(err)
	}
	// Lenient remove of leftovers, strict not-found otherwise.
	if ok, err := cat.Remove(ctx, "leftover"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, err := cat.Remove(ctx, "leftover"); !errors.Is(err, aerr.ErrIndexNotFound) {
		t.Fatal(err)
	}
	if ok, err := cat.Remove(ctx, "a"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "filelists/[ariadne_index] a")); !os.IsNotExist(err) {
		t.Fatal("FileList not removed")
	}
	if ok, _ := cat.Exists(ctx, "a"); ok {
		t.Fatal("still exists")
	}
	// A corrupt metadata.json is a typed error, and Describe of it is
	// skipped with a warning by DescribeAll.
	os.WriteFile(filepath.Join(dir, "indexes/b/metadata.json"), []byte("{not json"), 0o644)
	if _, err := cat.Get(ctx, "b"); !errors.Is(err, aerr.ErrMetadataMissingOrCorrupt) {
		t.Fatal(err)
	}
	all, warns, err = cat.DescribeAll(ctx)
	if err != nil || len(all) != 1 || len(warns) != 1 {
		t.Fatal(all, warns, err)
	}
}

func TestExpandFiles(t *testing.T) {
	ctx := context.Background()
	cat, _ := testCatalog(t)
	ix, _ := cat.Open(ctx, "x", OpenOptions{Schema: mustSchema(t, t1s), Format: "csv"})
	data := t.TempDir()
	for _, f := range []string{"a.csv", "b.csv", "_SUCCESS", ".a.csv.crc", "sub/c.csv", "b.json", "lake.json", "notes.md", "d.csv.gz", "000000_0"} {
		os.MkdirAll(filepath.Dir(filepath.Join(data, f)), 0o755)
		os.WriteFile(filepath.Join(data, f), []byte("Id\n1\n"), 0o644)
	}
	got, err := ix.ExpandFiles(ctx, []string{data, filepath.Join(data, "*.csv"), filepath.Join(data, "b.json")})
	if err != nil {
		t.Fatal(err)
	}
	u := "file://" + filepath.ToSlash(data) + "/"
	// The folder's files of other formats are left out (b.json is kept:
	// it was named).
	want := []string{u + "000000_0", u + "a.csv", u + "b.csv", u + "b.json", u + "d.csv.gz", u + "sub/c.csv"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	_, skipped, err := ix.ExpandFilesSkipped(ctx, []string{data})
	if err != nil || !slices.Equal(skipped, []string{data + "/b.json", data + "/lake.json", data + "/notes.md"}) {
		t.Fatalf("skipped %v, %v", skipped, err)
	}
	if _, err := ix.ExpandFiles(ctx, []string{filepath.Join(data, "missing.csv")}); !errors.Is(err, store.ErrNotExist) {
		t.Fatal(err)
	}

	// A last-segment glob that matches partition folders expands to the
	// files below them; a glob in an earlier segment is refused.
	lake := t.TempDir()
	for _, f := range []string{"date=2024-06-01/p0.parquet", "date=2024-06-01/_SUCCESS", "date=2024-06-02/p0.parquet",
		"date=2024-06-02/p1.parquet", "date=2024-06-03/p0.parquet"} {
		os.MkdirAll(filepath.Dir(filepath.Join(lake, f)), 0o755)
		os.WriteFile(filepath.Join(lake, f), []byte("x"), 0o644)
	}
	pix, err := cat.Open(ctx, "p", OpenOptions{Schema: mustSchema(t, t1s), Format: "parquet"})
	if err != nil {
		t.Fatal(err)
	}
	got, err = pix.ExpandFiles(ctx, []string{filepath.Join(lake, "date=2024-06-0[1-2]")})
	if err != nil {
		t.Fatal(err)
	}
	u = "file://" + filepath.ToSlash(lake) + "/"
	want = []string{u + "date=2024-06-01/p0.parquet", u + "date=2024-06-02/p0.parquet", u + "date=2024-06-02/p1.parquet"}
	if !slices.Equal(got, want) {
		t.Fatalf("folder glob: got %v\nwant %v", got, want)
	}
	if _, err := ix.ExpandFiles(ctx, []string{filepath.Join(lake, "date=*", "*.parquet")}); !errors.Is(err, aerr.ErrInvalidArgument) {
		t.Fatalf("glob in a folder segment: %v", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func parseSchema(s string) (*schema.Struct, error) { return schema.Parse(s) }

// TestOpenRequestCounts pins what a reconnect costs: a bare Get and a
// reconnect with identical options read metadata.json once (stat, read,
// stat) and nothing else; a missing index costs one failed stat.
func TestOpenRequestCounts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	base, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	root := store.NewCounting(base)
	cat := NewCatalog(root, Options{})
	opts := OpenOptions{Schema: mustSchema(t, t1s), Format: "csv"}
	if _, err := cat.Open(ctx, "c", opts); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"get":       func() error { _, err := cat.Get(ctx, "c"); return err },
		"reconnect": func() error { _, err := cat.Open(ctx, "c", opts); return err },
	} {
		root.Reset()
		if err := call(); err != nil {
			t.Fatal(err)
		}
		if got := root.Snapshot().Total.Requests; got != 3 {
			t.Errorf("%s: %d requests, want 3 (%+v)", name, got, root.Snapshot())
		}
	}
	root.Reset()
	if _, err := cat.Get(ctx, "missing"); !errors.Is(err, aerr.ErrIndexNotFound) {
		t.Fatal(err)
	}
	if got := root.Snapshot().Total.Requests; got != 1 {
		t.Errorf("missing index: %d requests, want 1", got)
	}
}
