package prepared

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/store"
)

// TestExternalSortIsIdentical: with a budget so small that the rows are
// sorted in many spilled runs, Write and PrepareFiles produce the same
// files byte for byte as sorting in memory, and leave no run behind.
func TestExternalSortIsIdentical(t *testing.T) {
	ctx := context.Background()
	evs := genEvents(11, 30_000)
	write := func(mem int64, tmp string) ([]byte, int) {
		st := fileStore(t)
		schema, rows := eventRows(t, evs)
		spills := 0
		_, err := Write(ctx, st, "f.parquet", schema, rows, Options{Key: "user", Sort: []string{"ts"}, PageBytes: 2048,
			RowGroupRows: 7000, MemoryBytes: mem, TempDir: tmp, Progress: func(p Progress) {
				if p.Phase == "spill" {
					spills = p.Done
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		_, b := openFile(t, st, "f.parquet")
		return b, spills
	}
	tmp := t.TempDir()
	mem, spills := write(0, tmp)
	if spills != 0 {
		t.Fatalf("%d runs spilled under the default budget", spills)
	}
	ext, spills := write(2<<20, tmp)
	if spills < 5 {
		t.Fatalf("only %d runs spilled: the test does not exercise the merge", spills)
	}
	if !bytes.Equal(mem, ext) {
		a, _ := parquet.Read[event](bytes.NewReader(mem), int64(len(mem)))
		b, _ := parquet.Read[event](bytes.NewReader(ext), int64(len(ext)))
		for i := range min(len(a), len(b)) {
			if a[i].String() != b[i].String() {
				t.Fatalf("row %d: in memory %v, external %v", i, a[i], b[i])
			}
		}
		t.Fatalf("the files differ (%d and %d bytes, %d and %d rows)", len(mem), len(ext), len(a), len(b))
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("runs left behind: %v", ents)
	}
}

// TestRunRoundTrip: a spilled run reads back exactly the rows written,
// values and levels (nulls, lists, byte arrays).
func TestRunRoundTrip(t *testing.T) {
	evs := genEvents(11, 3000)
	schema, rr := eventRows(t, evs)
	var rows []parquet.Row
	if _, err := readAll(context.Background(), rr, func(r parquet.Row) error { rows = append(rows, r); return nil }); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "r.parquet")
	if _, err := writeRun(context.Background(), name, schema, rows); err != nil {
		t.Fatal(err)
	}
	rs, err := openRun(name)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		r, err := rs.next()
		if err != nil {
			t.Fatal(i, err)
		}
		if !r.Equal(rows[i]) {
			t.Fatalf("row %d: %v want %v", i, r, rows[i])
		}
	}
	if _, err := rs.next(); err != io.EOF {
		t.Fatalf("after the last row: %v", err)
	}
	if err := rs.close(); err != nil {
		t.Fatal(err)
	}
}

// TestRunsRemovedOnError: when writing fails after runs were spilled (here
// the output exists and Overwrite is not set), the error is returned and
// the runs are gone.
func TestRunsRemovedOnError(t *testing.T) {
	ctx := context.Background()
	src := fileStore(t)
	sw, err := src.NewWriter(ctx, "in/a.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := parquet.Write(sw, genEvents(12, 20_000)); err != nil {
		t.Fatal(err)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	res := storeResolver{src}
	srcs, err := Sources(ctx, res, []string{"in"})
	if err != nil {
		t.Fatal(err)
	}
	// The second bucket's file fails to commit, after the runs were spilled.
	dst := store.NewFaulty(fileStore(t), store.Faults{Errors: []store.FaultRule{{
		Op: store.OpWrite, Key: func(k string) bool { return k == FileName(1) }, Err: store.ErrPrecondition}}})
	tmp := t.TempDir()
	spills := 0
	_, err = PrepareFiles(ctx, res, srcs, dst, Options{Key: "user", Sort: []string{"ts"}, Buckets: 2, MemoryBytes: 2 << 20, TempDir: tmp,
		Progress: func(p Progress) {
			if p.Phase == "spill" {
				spills = p.Done
			}
		}})
	if !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("error %v, want store.ErrPrecondition", err)
	}
	if spills < 2 {
		t.Fatalf("%d runs spilled: the test checks nothing", spills)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("runs left behind: %v", ents)
	}
	if k := keys(t, dst); len(k) != 0 {
		t.Errorf("output left: %v", k)
	}
}
