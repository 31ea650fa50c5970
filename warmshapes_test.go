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
// of the pages of pyarrow-written files (SNAPPY, 1 MiB pages) once for the
// index's two row indexes (the second takes the first's), and when the row
// indexes take new files, each refreshed version's warm-up (as serve's
// WithWarmOnRefresh) takes the shapes already learnt and reads only the new
// files' pages, once: beyond what they read without shapes, the first
// warm-up reads at most the indexed files and the update at most the new
// files, and a warm-up after it knows every file's pages without reading
// one.
func TestWarmShapesOnRefresh(t *testing.T) {
	ctx := context.Background()
	// update runs the scenario on a lake of its own and returns what the
	// first warm-up read and what updating the row indexes with two new
	// files read, the indexed and new files' bytes, and the warm-ups' stats
	// before and after the update.
	update := func(shapeBytes int64) (warmRead, read, oldBytes, newBytes int64, first, again ariadne.WarmStats) {
		lake, err := playsfixture.PlaysWrittenBy(ctx, t.TempDir(), 2, lakegen.WriterPyArrow)
		if err != nil {
			t.Fatal(err)
		}
		defer lake.Close()
		for i, f := range lake.Files {
			fi, err := os.Stat(strings.TrimPrefix(f, "file://"))
			if err != nil {
				t.Fatal(err)
			}
			if i < 2 {
				oldBytes += fi.Size()
			} else {
				newBytes += fi.Size()
			}
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
		warmRead = st.Stats().Data.Read.Bytes
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
		return warmRead, read, oldBytes, newBytes, first, again
	}
	plainWarm, plain, _, _, _, _ := update(-1)
	warmRead, read, oldBytes, newBytes, first, again := update(64 << 20)
	t.Logf("warm-up read %d bytes without shapes, %d with; the update %d and %d (indexed files %d bytes, new %d, %d row indexes)",
		plainWarm, warmRead, plain, read, oldBytes, newBytes, first.RowIndexes)
	if first.RowIndexes != 2 || first.ShapePages == 0 || again.ShapePages <= first.ShapePages {
		t.Fatalf("%d row indexes, shapes of %d pages after the first warm-up, %d after the update", first.RowIndexes, first.ShapePages, again.ShapePages)
	}
	if d := warmRead - plainWarm; d <= 0 || d > oldBytes {
		t.Fatalf("the warm-up read %d bytes for shapes; the indexed files are %d bytes", d, oldBytes)
	}
	if d := read - plain; d <= 0 || d > newBytes {
		t.Fatalf("the refreshed versions' warm-ups read %d bytes for shapes; the new files are %d bytes", d, newBytes)
	}
}
