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

// BenchmarkWriteFramedBlob writes one lakegen file (the frame benchmark's
// data: ≈1.5 MB, ≈40k rows, light users) with WriteFramed as a blob per
// row and as co-grouped blobs with a dictionary, so the two writes' costs
// compare on the same rows (docs/prepared.md, "Co-grouped blobs with a
// dictionary": the co-grouped write was 4× the others).
func BenchmarkWriteFramedBlob(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	st, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
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
	fields := []string{"ts", "track_uri", "duration_ms", "context"}
	for _, c := range []struct {
		name  string
		codec string
	}{{"row", ""}, {"zstd-dict", prepared.BlobCodecZstdDict}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, _, err := prepared.WriteFramed(ctx, st, "out.parquet", src.Schema(), parquet.NewReader(src),
					prepared.Options{Key: "user_id", Sort: []string{"ts"}, PageBytes: 64 << 10, RowGroupRows: 256 << 10, Overwrite: true,
						Blob: &prepared.BlobOptions{Column: "served", Fields: fields, Codec: c.codec}},
					prepared.DefaultFrameOptions()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
