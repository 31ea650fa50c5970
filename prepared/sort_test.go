package prepared

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
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
