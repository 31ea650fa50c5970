package fileindex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/store"
)

// setTotal records the indexed size as an update would.
func setTotal(t *testing.T, ti *testIndex, total int64) {
	t.Helper()
	err := ti.ix.UpdateMetadata(context.Background(), func(m *metadata.Metadata) (bool, error) {
		m.TotalIndexedFileSize = total
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, uri string) int64 {
	t.Helper()
	info, err := os.Stat(strings.TrimPrefix(uri, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

func noLockLeft(t *testing.T, ti *testIndex) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(ti.dir, ti.ix.Paths().UpdateLock)); !os.IsNotExist(err) {
		t.Fatalf("update lock left behind: %v", err)
	}
}

// TestDeleteFiles follows §8.24.
func TestDeleteFiles(t *testing.T) {
	ctx := context.Background()
	P0, P1 := dataURI(t, p0), dataURI(t, p1)
	setup := func(t *testing.T) *testIndex {
		ti := table1Index(t, func(ix *index.Index) error { return ix.AddIndex(ctx, "Id") })
		if _, err := ti.ix.AddFiles(ctx, P0, P1); err != nil {
			t.Fatal(err)
		}
		setTotal(t, ti, fileSize(t, P0)+fileSize(t, P1))
		return ti
	}
	for _, tc := range []struct {
		name      string
		del       []string
		wantID1   []string
		wantTotal func(t *testing.T) int64
		tracked   []bool // P0, P1
	}{
		{"single file", []string{P0}, []string{p1}, func(t *testing.T) int64 { return fileSize(t, P1) }, []bool{false, true}},
		{"multiple files", []string{P0, P1}, nil, func(*testing.T) int64 { return 0 }, []bool{false, false}},
		{"unknown file is a no-op", []string{"file:///nope.csv"}, []string{p0, p1}, func(t *testing.T) int64 { return fileSize(t, P0) + fileSize(t, P1) }, []bool{true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ti := setup(t)
			if got, _ := ti.fi.Locate(ctx, Query{"Id": {1}}); !slices.Equal(bases(got), []string{p0, p1}) {
				t.Fatalf("before: %v", got)
			}
			if err := ti.fi.DeleteFiles(ctx, tc.del...); err != nil {
				t.Fatal(err)
			}
			got, err := ti.fi.Locate(ctx, Query{"Id": {1}})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(bases(got), tc.wantID1) && !(len(got) == 0 && tc.wantID1 == nil) {
				t.Errorf("Id 1 after delete: %v, want %v", bases(got), tc.wantID1)
			}
			if err := ti.ix.RefreshMetadata(ctx); err != nil {
				t.Fatal(err)
			}
			if got, want := ti.ix.Metadata().TotalIndexedFileSize, tc.wantTotal(t); got != want {
				t.Errorf("total_indexed_file_size = %d, want %d", got, want)
			}
			for i, uri := range []string{P0, P1} {
				if has, _ := ti.ix.HasFile(ctx, uri); has != tc.tracked[i] {
					t.Errorf("HasFile(%s) = %v, want %v", filepath.Base(uri), has, tc.tracked[i])
				}
			}
			noLockLeft(t, ti)
		})
	}
	t.Run("empty index", func(t *testing.T) {
		ti := newTestIndex(t, "e", schemaT1S, "csv", csvHeader, func(ix *index.Index) error { return ix.AddIndex(ctx, "Id") })
		if err := ti.fi.DeleteFiles(ctx, P0); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(ti.dir, ti.ix.Paths().Main)); !os.IsNotExist(err) {
			t.Fatal("delete created the main table")
		}
		noLockLeft(t, ti)
	})
	t.Run("blank name", func(t *testing.T) {
		ti := setup(t)
		if err := ti.fi.DeleteFiles(ctx, " "); !errors.Is(err, aerr.ErrInvalidArgument) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestDeleteFilesCleansLargeTables: §8.24 "should clean up large index
// tables on delete", at L = 10.
func TestDeleteFilesCleansLargeTables(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("Id,Version,Value\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "%d,%d,1.0\n", i, i%3)
	}
	p := filepath.Join(dir, "big.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	uri := "file://" + p
	ti := newTestIndex(t, "l", schemaT1S, "csv", csvHeader, func(ix *index.Index) error { return ix.AddIndex(ctx, "Id") })
	newTestIndexer(t, ti, 10).index(t, ti, uri)
	if _, err := os.Stat(filepath.Join(ti.dir, ti.ix.Paths().LargeIndex("Id"))); err != nil {
		t.Fatalf("no large table: %v", err)
	}
	if got, _ := ti.fi.Locate(ctx, Query{"Id": {1}}); len(got) != 1 {
		t.Fatalf("before: %v", got)
	}
	if err := ti.fi.DeleteFiles(ctx, uri); err != nil {
		t.Fatal(err)
	}
	if got, _ := ti.fi.Locate(ctx, Query{"Id": {1}}); len(got) != 0 {
		t.Fatalf("after: %v", got)
	}
	tbl, err := delta.Open(ctx, store.Sub(ti.root, ti.ix.Paths().LargeIndex("Id")))
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := tbl.Snapshot(ctx)
	for row, err := range snap.Scan(ctx, delta.ScanOptions{}) {
		t.Fatalf("large table still holds %v (%v)", row, err)
	}
}

// TestCompactAndVacuum: §5.11–§5.12 on the main and large tables.
func TestCompactAndVacuum(t *testing.T) {
	ctx := context.Background()
	ti := newTestIndex(t, "cv", schemaT1S, "csv", csvHeader, func(ix *index.Index) error { return ix.AddIndex(ctx, "Id") })
	// Compact works on an index that was never updated.
	setTotal(t, ti, 0)
	if _, err := ti.fi.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	x := newTestIndexer(t, ti, 3) // table1 files hold 3 Ids: large
	x.index(t, ti, dataURI(t, p0))
	x.index(t, ti, dataURI(t, p1))
	err := ti.ix.UpdateMetadata(ctx, func(m *metadata.Metadata) (bool, error) {
		m.BatchesSinceCompact = 7
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ti.fi.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{MainTableName, "large_indexes/Id"} {
		if om := res.Tables[name]; !om.Committed || om.FilesRemoved != 2 || om.FilesAdded != 1 {
			t.Errorf("%s: %+v, want 2 files compacted into 1", name, om)
		}
	}
	ti.ix.RefreshMetadata(ctx)
	if got := ti.ix.Metadata().BatchesSinceCompact; got != 0 {
		t.Errorf("batches_since_compact = %d after compact", got)
	}
	// Vacuum: a short positive retention is refused, the default keeps the
	// freshly removed files, a zero retention deletes them.
	if _, err := ti.fi.Vacuum(ctx, time.Hour); err == nil {
		t.Error("vacuum with 1h retention succeeded")
	}
	vr, err := ti.fi.Vacuum(ctx, DefaultVacuumRetention)
	if err != nil || len(vr.Deleted[MainTableName]) != 0 {
		t.Fatalf("default retention: %v, %v", vr, err)
	}
	vr, err = ti.fi.Vacuum(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{MainTableName, "large_indexes/Id"} {
		if len(vr.Deleted[name]) != 2 {
			t.Errorf("%s: vacuum deleted %v, want the 2 compacted files", name, vr.Deleted[name])
		}
	}
	// Lookups still work, through the large table too.
	got, err := ti.fi.Locate(ctx, Query{"Id": {4}})
	if err != nil || !slices.Equal(bases(got), []string{p1}) {
		t.Fatalf("after vacuum: %v, %v", got, err)
	}
	noLockLeft(t, ti)
}
