package delta

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/store"
)

const writeTestTables = "../testdata/delta-rs"

// copyTable copies a shared test table into a writable temp dir and opens
// it through a file:// store.
func copyWritableTable(t *testing.T, name string) (store.Store, *Table) {
	t.Helper()
	src := filepath.Join(writeTestTables, name)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := store.Open(ctx, "file://"+dst)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Open(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	return s, tb
}

// TestDeleteHonoursDeletionVectors: rewriting a file that has a deletion
// vector keeps its deleted rows deleted, and the remove carries the vector.
func TestDeleteHonoursDeletionVectors(t *testing.T) {
	ctx := context.Background()
	s, tb := copyWritableTable(t, "table-with-dv-small")
	res, err := tb.Delete(ctx, func(r []any) bool { return r[0] == int32(5) }, DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsDeleted != 1 || res.RowsCopied != 7 || res.FilesRemoved != 1 || res.FilesAdded != 1 {
		t.Errorf("result %+v", res)
	}
	_, got := tableRows(t, s)
	want := render([][]any{{int32(1)}, {int32(2)}, {int32(3)}, {int32(4)}, {int32(6)}, {int32(7)}, {int32(8)}})
	if !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	actions, err := readCommit(ctx, s, CommitKey(res.Version))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range actions {
		if a.Remove != nil && a.Remove.DeletionVector == nil {
			t.Error("remove of a file with a deletion vector lacks the vector")
		}
		if a.Add != nil && a.Add.DeletionVector != nil {
			t.Error("rewritten file has a deletion vector")
		}
	}
}

// TestWriteColumnMappedTable: appends and deletes on a name-mapped table
// write physical column names and physical partition keys.
func TestWriteColumnMappedTable(t *testing.T) {
	ctx := context.Background()
	s, tb := copyWritableTable(t, "table_with_column_mapping")
	v, err := tb.Append(ctx, Rows([][]any{{"BMS", "New Person"}, {"XYZ", "Other"}}), WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.DeleteKeys(ctx, "Super Name", []any{"Timothy Lamb"}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, got := tableRows(t, s)
	want := render([][]any{{"BMS", "Anthony Johnson"}, {"BMS", "Mr. Daniel Ferguson MD"}, {"BMS", "Nathan Bennett"},
		{"BMS", "Stephanie Mcgrath"}, {"BMS", "New Person"}, {"XYZ", "Other"}})
	if !slices.Equal(got, want) {
		t.Fatalf("rows %v\nwant %v", got, want)
	}
	actions, _ := readCommit(ctx, s, CommitKey(v))
	for _, a := range actions {
		if a.Add == nil {
			continue
		}
		if _, ok := a.Add.PartitionValues["col-173b4db9-b5ad-427f-9e75-516aae37fbbb"]; !ok {
			t.Errorf("partition values not keyed by physical name: %v", a.Add.PartitionValues)
		}
		if !strings.Contains(a.Add.Stats, "col-3877fd94-0973-4941-ac6b-646849a1ff65") {
			t.Errorf("stats not keyed by physical name: %s", a.Add.Stats)
		}
		name, _ := DecodePath(a.Add.Path)
		b, err := store.ReadAll(ctx, s, name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := pqrow.OpenFile(strings.NewReader(string(b)), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Schema()
		if st.Fields[0].Name != "col-3877fd94-0973-4941-ac6b-646849a1ff65" {
			t.Errorf("data file column %q, want the physical name", st.Fields[0].Name)
		}
	}
}
