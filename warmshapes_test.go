package ariadne_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/internal/playsfixture"
)

// TestWarmShapesOnRefresh: with a shape budget a warm-up learns the shapes
// of the pages of pyarrow-written files (SNAPPY, 1 MiB pages), and when the
// row indexes take new files, each refreshed version's warm-up (as serve's
// WithWarmOnRefresh) takes the old version's shapes and reads only the new
// files' pages: the update reads, beyond what it reads without shapes, at
// most the new files once per row index, and a warm-up after it knows every
// file's pages without reading one.
func TestWarmShapesOnRefresh(t *testing.T) {
	ctx := context.Background()
	// update runs the scenario on a lake of its own and returns what
	// updating the row indexes with two new files read, the new files'
	// bytes, and the warm-ups' stats before and after the update.
	update := func(shapeBytes int64) (read, newBytes int64, first, again ariadne.WarmStats) {
		lake, err := playsfixture.PlaysWrittenBy(ctx, t.TempDir(), 2, lakegen.WriterPyArrow)
		if err != nil {
			t.Fatal(err)
		}
		defer lake.Close()
		for _, f := range lake.Files[2:] {
			fi, err := os.Stat(strings.TrimPrefix(f, "file://"))
			if err != nil {
				t.Fatal(err)
			}
			newBytes += fi.Size()
		}
		st, err := ariadne.Open(ctx, lake.StoreURL, ariadne.WithWarmOnRefresh(true), ariadne.WithShapeBytes(shapeBytes))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ix, err := st.Index(ctx, playsfixture.PlaysIndex)
		if err != nil {
			t.Fatal(err)
		}
		if first, err = ix.Warm(ctx); err != nil {
			t.Fatal(err)
		}
		if err := lake.AddFiles(ctx, lake.Files[2:]...); err != nil {
			t.Fatal(err)
		}
		before := st.Stats().Data.Read.Bytes
		if _, err := ix.UpdateRowIndexes(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if err := ix.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		read = st.Stats().Data.Read.Bytes - before
		if again, err = ix.Warm(ctx); err != nil {
			t.Fatal(err)
		}
		if extra := st.Stats().Data.Read.Bytes - before - read; extra != 0 {
			t.Fatalf("shape budget %d: a warm-up after the refresh read %d data bytes", shapeBytes, extra)
		}
		return read, newBytes, first, again
	}
	plain, newBytes, _, _ := update(-1)
	read, _, first, again := update(64 << 20)
	shapeRead := read - plain
	t.Logf("the update read %d bytes without shapes, %d with (new files %d bytes, %d row indexes)", plain, read, newBytes, first.RowIndexes)
	if first.ShapePages == 0 || again.ShapePages <= first.ShapePages {
		t.Fatalf("shapes of %d pages after the first warm-up, %d after the update", first.ShapePages, again.ShapePages)
	}
	if shapeRead <= 0 || shapeRead > int64(first.RowIndexes)*newBytes {
		t.Fatalf("the refreshed versions' warm-ups read %d bytes for shapes; the new files are %d bytes, %d row indexes", shapeRead, newBytes, first.RowIndexes)
	}
}
