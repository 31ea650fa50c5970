package rowindex

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/store"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestManifestGolden pins the persisted manifest format: a row index built on
// a parquet-testing file (no page index, so scanned pages are recorded) must
// render byte for byte as testdata/manifest.golden.json, once the fields
// that vary per run (fragment names, commit time, ETag) are normalised. Run
// with -update after an intended format change (and bump FormatVersion if
// old readers cannot read the new form).
func TestManifestGolden(t *testing.T) {
	ctx := context.Background()
	abs, _ := filepath.Abs(parquetTesting)
	data, err := store.Open(ctx, "file://"+abs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(abs, "alltypes_plain.parquet")); err != nil {
		t.Skip(err)
	}
	idx, _ := store.Open(ctx, "mem://")
	def := Definition{Name: "by_id", Key: "id", Kind: KindSorted, Cover: []string{"bool_col"},
		Aggregates: []Aggregate{{Op: "count"}, {Op: "count-by", Column: "bool_col"}}}
	man, _, err := Create(ctx, idx, def, StoreResolver{data}, []string{"alltypes_plain.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	m := man.clone()
	m.Committed = time.Time{}
	for i := range m.Files {
		m.Files[i].ETag = "<etag>"
	}
	for i := range m.Fragments {
		m.Fragments[i].Path = "fragments/<uuid>.parquet"
	}
	got, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "manifest.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(append(got, '\n')) != string(want) {
		t.Fatalf("manifest differs from %s:\n%s", golden, got)
	}
}
