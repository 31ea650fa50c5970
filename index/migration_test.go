package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/internal/testfixture"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// alpha37Source is the data file URI the fixture's rows record.
const alpha37Source = testfixture.Alpha37Source

// installAlpha37 lays the real alpha-37 index out under a fresh root.
func installAlpha37(t *testing.T) (*Catalog, string) {
	t.Helper()
	cat, dir := testCatalog(t)
	testfixture.InstallAlpha37(t, dir)
	return cat, dir
}

func mainTable(t *testing.T, cat *Catalog, name string) *delta.Snapshot {
	t.Helper()
	p, _ := PathsFor(name)
	tbl, err := delta.Open(context.Background(), store.Sub(cat.Root(), p.Main))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestAlpha37FixtureMigratesIdempotently(t *testing.T) {
	ctx := context.Background()
	cat, dir := installAlpha37(t)
	metaPath := filepath.Join(dir, "indexes/alpha37_fixture/metadata.json")

	ix, err := cat.Get(ctx, "alpha37_fixture")
	if err != nil {
		t.Fatal(err)
	}
	m := ix.Metadata()
	if m.MetadataVersion != nil || m.StorageFormatVersion != nil || m.Format != "json" ||
		len(m.ExplodedFieldIndexes) != 1 || m.ExplodedFieldIndexes[0].AsColumn != "user_id" {
		t.Fatalf("fixture metadata: %+v", m)
	}
	if !metadata.NeedsMigration(m) {
		t.Fatal("fixture should need migration")
	}
	before := mainTable(t, cat, "alpha37_fixture")
	if _, ok := before.Schema().Field("users"); !ok {
		t.Fatal("fixture table lacks legacy users column")
	}
	if _, ok := before.Schema().Field("file_size"); ok {
		t.Fatal("fixture table already has file_size")
	}
	files, err := ix.Files(ctx)
	if err != nil || len(files) != 1 || files[0].Name != alpha37Source {
		t.Fatalf("FileList: %+v, %v", files, err)
	}

	if err := ix.EnsureStorageReady(ctx); err != nil {
		t.Fatal(err)
	}
	m = ix.Metadata()
	if *m.MetadataVersion != 10 || *m.StorageFormatVersion != 3 {
		t.Fatalf("markers after migration: %v %v", *m.MetadataVersion, *m.StorageFormatVersion)
	}
	after := mainTable(t, cat, "alpha37_fixture")
	if _, ok := after.Schema().Field("users"); ok {
		t.Fatal("legacy users column survived")
	}
	f, ok := after.Schema().Field("user_id")
	if !ok || !schema.Equal(f.Type, &schema.Array{Element: schema.Integer, ContainsNull: true}) {
		t.Fatalf("user_id: %+v", f)
	}
	srcInfo, _ := os.Stat(strings.TrimPrefix(alpha37Source, "file://"))
	var rows [][]any
	for row, err := range after.Scan(ctx, delta.ScanOptions{Columns: []string{"filename", "user_id", "file_size"}}) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	if len(rows) != 1 || rows[0][0] != alpha37Source || rows[0][2] != srcInfo.Size() {
		t.Fatalf("rows after migration: %v", rows)
	}
	ids := rows[0][1].([]any)
	got := []int32{}
	for _, v := range ids {
		got = append(got, v.(int32))
	}
	slices.Sort(got)
	if !slices.Equal(got, []int32{100, 101, 200}) {
		t.Fatalf("user_id values: %v", got)
	}

	// A second preflight changes neither metadata.json nor the table history.
	metaBefore := readFile(t, metaPath)
	ix2, _ := cat.Get(ctx, "alpha37_fixture")
	if err := ix2.EnsureStorageReady(ctx); err != nil {
		t.Fatal(err)
	}
	if readFile(t, metaPath) != metaBefore {
		t.Fatal("second preflight rewrote metadata.json")
	}
	if v := mainTable(t, cat, "alpha37_fixture").Version(); v != after.Version() {
		t.Fatalf("second preflight committed: version %d → %d", after.Version(), v)
	}
	if _, err := os.Stat(filepath.Join(dir, "indexes/alpha37_fixture/.update.lock")); !os.IsNotExist(err) {
		t.Fatal("update lock left behind")
	}
}

// writeMetadataFile replaces metadata.json by hand (tests of odd states).
func editMetadata(t *testing.T, dir, name string, edit func(m *metadata.Metadata)) {
	t.Helper()
	path := filepath.Join(dir, "indexes", name, "metadata.json")
	m, err := metadata.Parse([]byte(readFile(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	edit(m)
	data, err := metadata.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFutureVersionsFailBeforeAnything(t *testing.T) {
	ctx := context.Background()
	cat, dir := testCatalog(t)
	cat.Open(ctx, "future", OpenOptions{Schema: mustSchema(t, t1s), Format: "csv"})
	v := 999
	editMetadata(t, dir, "future", func(m *metadata.Metadata) { m.StorageFormatVersion = &v })
	if _, err := cat.Describe(ctx, "future"); !errors.Is(err, aerr.ErrUnsupportedStorageFormatVersion) || !errors.Is(err, aerr.ErrStorageMigration) {
		t.Fatalf("want UnsupportedStorageFormatVersion, got %v", err)
	}
	if _, _, err := cat.DescribeAll(ctx); !errors.Is(err, aerr.ErrUnsupportedStorageFormatVersion) {
		t.Fatalf("DescribeAll must abort, got %v", err)
	}
	three := 3
	editMetadata(t, dir, "future", func(m *metadata.Metadata) { m.StorageFormatVersion = &three; m.MetadataVersion = &v })
	ix, _ := cat.Get(ctx, "future")
	if err := ix.EnsureStorageReady(ctx); !errors.Is(err, aerr.ErrUnsupportedMetadataVersion) {
		t.Fatalf("want UnsupportedMetadataVersion, got %v", err)
	}
	// An older explicit metadata version is normalized by the preflight.
	nine := 9
	editMetadata(t, dir, "future", func(m *metadata.Metadata) { m.MetadataVersion = &nine })
	ix, _ = cat.Get(ctx, "future")
	if err := ix.EnsureStorageReady(ctx); err != nil {
		t.Fatal(err)
	}
	if *ix.Metadata().MetadataVersion != 10 {
		t.Fatal("metadata_version not normalized")
	}
}

// legacyIndex writes an unversioned index whose main table has the given
// schema and rows.
func legacyIndex(t *testing.T, cat *Catalog, dir, name string, m *metadata.Metadata, tableSchema *schema.Struct, rows [][]any) {
	t.Helper()
	ctx := context.Background()
	p, _ := PathsFor(name)
	m.MetadataVersion, m.StorageFormatVersion = nil, nil
	data, err := metadata.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, p.Dir), 0o755)
	os.WriteFile(filepath.Join(dir, p.Metadata), data, 0o644)
	tbl, err := delta.Create(ctx, store.Sub(cat.Root(), p.Main), tableSchema, delta.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Append(ctx, delta.Rows(rows), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestFailedMigrationLeavesIndexUnversioned(t *testing.T) {
	ctx := context.Background()
	cat, dir := testCatalog(t)
	usersSchema := `{"type":"struct","fields":[{"name":"users","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"id","type":"integer","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}}]}`
	m := metadata.NewMetadata("json", usersSchema)
	m.ExplodedFieldIndexes = []metadata.ExplodedFieldIndex{{ArrayColumn: "users", FieldPath: "id", AsColumn: "user_id"}}
	intArray := &schema.Array{Element: schema.Integer, ContainsNull: true}
	src := filepath.Join(t.TempDir(), "src.json")
	os.WriteFile(src, []byte(`{"users":[{"id":1}]}`), 0o644)
	srcURI := "file://" + filepath.ToSlash(src)

	for _, tc := range []struct {
		name   string
		schema *schema.Struct
		rows   [][]any
	}{
		{"both_columns", &schema.Struct{Fields: []schema.Field{
			{Name: "filename", Type: schema.String, Nullable: true},
			{Name: "users", Type: intArray, Nullable: true},
			{Name: "user_id", Type: intArray, Nullable: true},
		}}, [][]any{{srcURI, []any{int32(1)}, []any{int32(1)}}}},
		{"missing_source", &schema.Struct{Fields: []schema.Field{
			{Name: "filename", Type: schema.String, Nullable: true},
			{Name: "users", Type: intArray, Nullable: true},
		}}, [][]any{{"file:///does/not/exist.json", []any{int32(1)}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			legacyIndex(t, cat, dir, tc.name, m.Clone(), tc.schema, tc.rows)
			ix, err := cat.Get(ctx, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			err = ix.EnsureStorageReady(ctx)
			if !errors.Is(err, aerr.ErrStorageMigration) {
				t.Fatalf("want StorageMigration, got %v", err)
			}
			if err := ix.RefreshMetadata(ctx); err != nil {
				t.Fatal(err)
			}
			if ix.Metadata().StorageFormatVersion != nil {
				t.Fatal("a failed migration advanced the storage version")
			}
			if _, err := os.Stat(filepath.Join(dir, "indexes", tc.name, ".update.lock")); !os.IsNotExist(err) {
				t.Fatal("lock left behind")
			}
		})
	}
}

func TestSelfMappedAndRegularArraysAreNotRenamed(t *testing.T) {
	ctx := context.Background()
	cat, dir := testCatalog(t)
	src := filepath.Join(t.TempDir(), "src.json")
	os.WriteFile(src, []byte(`{"users":[{"id":1}]}`), 0o644)
	srcURI := "file://" + filepath.ToSlash(src)
	intArray := &schema.Array{Element: schema.Integer, ContainsNull: true}
	tableSchema := &schema.Struct{Fields: []schema.Field{
		{Name: "filename", Type: schema.String, Nullable: true},
		{Name: "users", Type: intArray, Nullable: true},
	}}
	m := metadata.NewMetadata("json", `{"type":"struct","fields":[]}`)
	m.ExplodedFieldIndexes = []metadata.ExplodedFieldIndex{{ArrayColumn: "users", FieldPath: "id", AsColumn: "users"}}
	legacyIndex(t, cat, dir, "self", m, tableSchema, [][]any{{srcURI, []any{int32(1)}}})
	ix, _ := cat.Get(ctx, "self")
	if err := ix.EnsureStorageReady(ctx); err != nil {
		t.Fatal(err)
	}
	snap := mainTable(t, cat, "self")
	if _, ok := snap.Schema().Field("users"); !ok {
		t.Fatal("self-mapped column renamed")
	}
	if *ix.Metadata().StorageFormatVersion != 3 {
		t.Fatal("marker not advanced")
	}
}
