package prepared_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/store"
)

// frameBenchFile generates the frame benchmark's data (lakegen, 30 MB in 20
// files, 60k users) in a store of its own and returns the store, the first
// file's bytes (≈1.5 MB) and that file opened.
func frameBenchFile(b *testing.B) (store.Store, []byte, *parquet.File) {
	ctx := context.Background()
	st, err := store.Open(ctx, "file://"+b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	files, err := lakegen.Generate(ctx, st, lakegen.Config{Seed: 1, TargetBytes: 30 << 20, Days: 5, FilesPerDay: 4,
		Users: 60_000, Sorted: true, RowGroupRows: 256 << 10, PageBytes: 64 << 10})
	if err != nil {
		b.Fatal(err)
	}
	raw, err := store.ReadAll(ctx, st, files[0].Key)
	if err != nil {
		b.Fatal(err)
	}
	src, err := parquet.OpenFile(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		b.Fatal(err)
	}
	return st, raw, src
}

// BenchmarkWriteCoGroup writes one file of the frame benchmark's data with
// Write, key-aligned 64 KiB pages, as columns and co-grouped as nested lists
// (Options.CoGroup), reporting CPU time and file bytes per write
// (docs/prepared.md, "Co-grouped as nested Parquet").
func BenchmarkWriteCoGroup(b *testing.B) {
	ctx := context.Background()
	st, raw, src := frameBenchFile(b)
	for _, c := range []struct {
		name    string
		coGroup bool
	}{{"columns", false}, {"nested", true}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			cpu0 := cpuTime()
			var size int64
			for b.Loop() {
				fs, err := prepared.Write(ctx, st, "out.parquet", src.Schema(), parquet.NewReader(src),
					prepared.Options{Key: "user_id", Sort: []string{"ts"}, PageBytes: 64 << 10, RowGroupRows: 256 << 10, Overwrite: true, CoGroup: c.coGroup})
				if err != nil {
					b.Fatal(err)
				}
				size = fs.Bytes
			}
			b.ReportMetric(float64(size), "file-bytes")
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}
