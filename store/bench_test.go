package store_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// BenchmarkRangeRead reads random 4 KiB ranges of a 64 MiB file through
// NewReaderAt, the access pattern of Parquet page reads, and reports the
// store requests per read (exactly 1) and the bytes per request.
func BenchmarkRangeRead(b *testing.B) {
	const (
		rangeSize = 4 << 10  // a small Parquet page
		fileSize  = 64 << 20 // 16384 distinct ranges, far beyond the CPU caches
	)
	ctx := context.Background()
	s, err := store.Open(ctx, "file://"+b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, fileSize)
	for i := range data {
		data[i] = byte(i)
	}
	if err := store.WriteAll(ctx, s, "data.parquet", data, nil); err != nil {
		b.Fatal(err)
	}
	c := store.NewCounting(s)
	ra := store.NewReaderAt(ctx, c, "data.parquet", fileSize)
	p := make([]byte, rangeSize)
	rng := rand.New(rand.NewPCG(1, 2))
	b.SetBytes(rangeSize)
	b.ResetTimer()
	for range b.N {
		off := rng.Int64N(fileSize/rangeSize) * rangeSize
		if _, err := ra.ReadAt(p, off); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	st := c.Snapshot()
	b.ReportMetric(float64(st.Total.Requests)/float64(b.N), "requests/op")
	if st.Read.Requests != int64(b.N) || st.Read.Bytes != int64(b.N)*rangeSize {
		b.Fatalf("%d reads made %d requests and %d bytes, want one request of %d bytes each", b.N, st.Read.Requests, st.Read.Bytes, rangeSize)
	}
}
