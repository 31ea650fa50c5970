package rowindex

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/store"
)

// indexLake generates a lake of cfg in a new folder and creates the row
// index "u" on user_id over it in the folder's index/: the folder, the
// lake's store, the index's store and the files' keys.
func indexLake(t *testing.T, cfg lakegen.Config) (dir string, data, idx store.Store, uris []string) {
	t.Helper()
	ctx := context.Background()
	dir = t.TempDir()
	data, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := lakegen.Generate(ctx, data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		uris = append(uris, f.Key)
	}
	if idx, err = store.Open(ctx, "file://"+filepath.Join(dir, "index")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Create(ctx, idx, Definition{Name: "u", Key: "user_id"}, StoreResolver{data}, uris); err != nil {
		t.Fatal(err)
	}
	return dir, data, idx, uris
}

// scanRow is a row found by a full scan.
type scanRow struct {
	key  []byte
	file string
	row  int64
	vals parquet.Row
}

// fullScan reads every row of every file with parquet-go's row reader and
// returns those whose key column lies in [lo, hi], in (key, file order, row)
// order: the reference a lookup must match.
func fullScan(t *testing.T, root string, uris []string, keyCol string, lo, hi []byte) []scanRow {
	t.Helper()
	var out []scanRow
	for _, uri := range uris {
		fh, err := os.Open(filepath.Join(root, uri))
		if err != nil {
			t.Fatal(err)
		}
		info, _ := fh.Stat()
		f, err := parquet.OpenFile(fh, info.Size())
		if err != nil {
			fh.Close()
			t.Fatalf("%s: %v", uri, err)
		}
		kc := f.Root().Column(keyCol).Index()
		var rowNo int64
		for _, g := range f.RowGroups() {
			rr := g.Rows()
			buf := make([]parquet.Row, 256)
			for {
				n, err := rr.ReadRows(buf)
				for _, r := range buf[:n] {
					var kv parquet.Value
					for _, v := range r {
						if v.Column() == kc {
							kv = v
						}
					}
					if !kv.IsNull() {
						k := appendKeyValue(nil, kv)
						if bytes.Compare(k, lo) >= 0 && bytes.Compare(k, hi) <= 0 {
							out = append(out, scanRow{key: k, file: uri, row: rowNo, vals: r.Clone()})
						}
					}
					rowNo++
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			rr.Close()
		}
		fh.Close()
	}
	// Stable sort by key keeps (file order, row) within a key.
	sortScan(out)
	return out
}

func sortScan(rs []scanRow) {
	slices.SortStableFunc(rs, func(a, b scanRow) int { return bytes.Compare(a.key, b.key) })
}

// checkRows compares lookup rows with the scan's.
func checkRows(t *testing.T, what string, got []Row, want []scanRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, full scan has %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.File != w.file || g.Row != w.row {
			t.Fatalf("%s: row %d is %s#%d, full scan has %s#%d", what, i, g.File, g.Row, w.file, w.row)
		}
		if !rowsEqual(g.Values, w.vals) {
			t.Fatalf("%s: row %d (%s#%d) values differ:\n got  %v\n want %v", what, i, g.File, g.Row, g.Values, w.vals)
		}
	}
}

// rowsEqual is parquet.Row.Equal, except that NaN equals NaN.
func rowsEqual(a, b parquet.Row) bool {
	if a.Equal(b) {
		return true
	}
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Kind() != y.Kind() || x.Column() != y.Column() || x.RepetitionLevel() != y.RepetitionLevel() ||
			x.DefinitionLevel() != y.DefinitionLevel() || x.String() != y.String() {
			return false
		}
	}
	return true
}

// testHash is the bucket hash Create gives a row index of kind.
func testHash(kind Kind) BucketHash {
	if kind == KindHash {
		return BucketFNV1aMix
	}
	return BucketFNV1a
}

// writeRows writes rows as the Parquet object name of st with parquet-go's
// writer and opts.
func writeRows[T any](t testing.TB, ctx context.Context, st store.Store, name string, rows []T, opts ...parquet.WriterOption) {
	t.Helper()
	w, err := st.NewWriter(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	pw := parquet.NewGenericWriter[T](w, opts...)
	if _, err := pw.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeTestIndex writes entries es as the fragments of row index name of
// the given kind to a memory store and commits its first manifest.
func writeTestIndex(t *testing.T, name string, kind Kind, es []entry) (store.Store, *Manifest) {
	t.Helper()
	ctx := context.Background()
	st, _ := store.Open(ctx, "mem://")
	man := &Manifest{Version: 1, Definition: Definition{Name: name, Key: "k", Kind: kind}, BucketHash: testHash(kind)}
	frs, _, err := writeFragments(ctx, st, man.Name, kind, es)
	if err != nil {
		t.Fatal(err)
	}
	man.Fragments = frs
	if err := commitManifest(ctx, st, man); err != nil {
		t.Fatal(err)
	}
	return st, man
}

// readParquet reads the Parquet file at path: its bytes and the file over
// them.
func readParquet(t *testing.T, path string) ([]byte, *parquet.File) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return b, f
}

// shapePageSize is the stored size of the page whose shape pk names: a data
// page's, or its chunk's dictionary page's.
func shapePageSize(fm *fileMeta, pk pageKey) int {
	if pk.page == dictShapePage {
		dr := fm.dictRange(pk.rg, pk.col)
		return int(dr.end - dr.off)
	}
	return int(fm.offsetIndex(pk.rg, pk.col)[pk.page].CompressedPageSize)
}
