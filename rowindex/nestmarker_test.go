package rowindex

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/store"
)

// TestBadCoGroupMarkerNotCovered: a file whose nested co-grouping marker
// (or blob marker, which may describe co-grouped blocks) does not decode is
// indexed as a file of stored rows (FileEntry.Blocks),
// so a lookup of the key alone reads it and reports the bad marker, as
// every other lookup does, instead of answering from the index's entries
// a row per stored row.
func TestBadCoGroupMarkerNotCovered(t *testing.T) {
	for _, marker := range []string{prepared.CoGroupKey, prepared.BlobKey} {
		t.Run(marker, func(t *testing.T) { testBadMarkerNotCovered(t, marker) })
	}
}

func testBadMarkerNotCovered(t *testing.T, marker string) {
	ctx := context.Background()
	dir := t.TempDir()
	lake, err := store.Open(ctx, "file://"+filepath.Join(dir, "lake"))
	if err != nil {
		t.Fatal(err)
	}
	type rec struct {
		K int64 `parquet:"k"`
		V int64 `parquet:"v"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[rec](&buf, parquet.KeyValueMetadata(marker, "{not json"))
	if _, err := w.Write([]rec{{1, 10}, {2, 20}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.WriteAll(ctx, lake, "a.parquet", buf.Bytes(), nil); err != nil {
		t.Fatal(err)
	}
	idx, man, _ := buildIn(t, filepath.Join(dir, "ix"), Definition{Name: "r", Key: "k", Kind: KindHash}, lake, []string{"a.parquet"})
	if !man.Files[0].Blocks {
		t.Errorf("a file with a bad marker is indexed without Blocks")
	}
	ri, err := Open(ctx, idx, "r", Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ri.Lookup(ctx, Query{Key: int64(1), Columns: []string{"k"}})
	if err == nil {
		t.Fatalf("a lookup of the key alone on a file with a bad marker: %d rows, no error", len(res.Rows))
	}
}
