package prepared_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/prepared"
)

// BenchmarkWriteFramedBlob writes one file of the frame benchmark's data
// (lakegen, 30 MB in 20 files, 60k users: the first file, ≈1.5 MB) with
// WriteFramed as a blob per row and as co-grouped blobs with a dictionary
// at the default block level (better) and at levels 1 and 2, reporting CPU
// time and file bytes per write (docs/prepared.md, "Co-grouped blobs with
// a dictionary": why the co-grouped write costs ≈3× the CPU).
func BenchmarkWriteFramedBlob(b *testing.B) {
	ctx := context.Background()
	st, raw, src := frameBenchFile(b)
	fields := []string{"ts", "track_uri", "duration_ms", "context"}
	for _, c := range []struct {
		name  string
		codec string
		level int
	}{{"row", "", 0}, {"zstd-dict", prepared.BlobCodecZstdDict, 0}, {"zstd-dict-level1", prepared.BlobCodecZstdDict, 1}, {"zstd-dict-level2", prepared.BlobCodecZstdDict, 2}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			fo := prepared.DefaultFrameOptions()
			fo.Level = c.level
			cpu0 := cpuTime()
			var size int64
			for b.Loop() {
				fs, _, err := prepared.WriteFramed(ctx, st, "out.parquet", src.Schema(), parquet.NewReader(src),
					prepared.Options{Key: "user_id", Sort: []string{"ts"}, PageBytes: 64 << 10, RowGroupRows: 256 << 10, Overwrite: true,
						Blob: &prepared.BlobOptions{Column: "served", Fields: fields, Codec: c.codec}}, fo)
				if err != nil {
					b.Fatal(err)
				}
				size = fs.Bytes
			}
			b.ReportMetric(float64(size), "file-bytes")
			// CPU time (user + system) is what load does not move much.
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
