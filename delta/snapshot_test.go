package delta

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// deltaRSDir holds the delta-rs test tables (shared test data).
const deltaRSDir = "../testdata/delta-rs"

// golden is the expectation written by interop/scripts/delta_golden.py with
// the real delta-rs.
type golden struct {
	Table      string            `json:"table"`
	Version    *int64            `json:"version"`
	Error      *string           `json:"error"`
	Files      []string          `json:"files"`
	NumRows    int64             `json:"num_rows"`
	Schema     string            `json:"schema"`
	Rows       []json.RawMessage `json:"rows"`
	RowsSHA256 string            `json:"rows_sha256"`
}

// deltaRSTables returns every table under deltaRSDir (folders holding a
// _delta_log), keyed by the golden name: the relative path with "/"
// replaced by "__".
func deltaRSTables(t *testing.T) map[string]string {
	t.Helper()
	out := make(map[string]string)
	err := filepath.WalkDir(deltaRSDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "_delta_log" {
			dir := filepath.Dir(p)
			rel, _ := filepath.Rel(deltaRSDir, dir)
			out[strings.ReplaceAll(filepath.ToSlash(rel), "/", "__")] = dir
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 40 {
		t.Fatalf("found only %d delta-rs tables under %s", len(out), deltaRSDir)
	}
	return out
}

func loadGolden(t *testing.T, name string) golden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden", name+".json"))
	if err != nil {
		t.Fatalf("golden file for %s: %v (every delta-rs table needs one)", name, err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("golden %s: %v", name, err)
	}
	return g
}

func openDir(t *testing.T, dir string) *Table {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, "file://"+abs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tbl, err := Open(ctx, st)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return tbl
}

// refusals are the tables we refuse, with the feature named. Every other
// table must read and match its golden file.
var refusals = map[string]string{
	"simple_table_features":                   "minReaderVersion 5",
	"spark-variant-checkpoint":                "variantType-preview",
	"spark-variant-stable-feature-checkpoint": "variantType",
	"spark-shredded-variant-preview-delta":    "variantShredding-preview",
}

// TestDeltaRSSnapshots reads every delta-rs table and compares version,
// active files and row counts with delta-rs.
func TestDeltaRSSnapshots(t *testing.T) {
	ctx := context.Background()
	for name, dir := range deltaRSTables(t) {
		t.Run(name, func(t *testing.T) {
			g := loadGolden(t, name)
			tbl := openDir(t, dir)
			snap, err := tbl.Snapshot(ctx)
			if feat, ok := refusals[name]; ok {
				var ufe *UnsupportedFeatureError
				if !errors.As(err, &ufe) || !errors.Is(err, ErrUnsupportedFeature) || ufe.Feature != feat {
					t.Fatalf("want UnsupportedFeatureError{%q}, got %v", feat, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Snapshot: %v", err)
			}
			if g.Version == nil || snap.Version() != *g.Version {
				t.Errorf("version %d, delta-rs %v", snap.Version(), g.Version)
			}
			var paths []string
			for _, f := range snap.Files() {
				paths = append(paths, f.Path)
			}
			slices.Sort(paths)
			if !slices.Equal(paths, g.Files) && !(len(paths) == 0 && len(g.Files) == 0) {
				t.Errorf("files:\n got %q\nwant %q", paths, g.Files)
			}
			if g.Schema != "" && snap.Metadata().SchemaString != g.Schema {
				t.Errorf("schema:\n got %s\nwant %s", snap.Metadata().SchemaString, g.Schema)
			}
			if g.Error == nil {
				// Without reading data: stats numRecords minus deleted rows.
				var n int64
				known := true
				for _, f := range snap.Files() {
					r, ok := f.NumRecords()
					if !ok {
						known = false
						break
					}
					n += r
					if f.DeletionVector != nil {
						n -= f.DeletionVector.Cardinality
					}
				}
				if known && n != g.NumRows {
					t.Errorf("stats row count %d, delta-rs %d", n, g.NumRows)
				}
			}
		})
	}
}
