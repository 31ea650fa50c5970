package rowindex

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/internal/lakegen"
)

// smallLake is a lake of a few MB for tests and the quick benchmark.
func smallLake(mb int64) lakegen.Config {
	c := lakegen.DefaultConfig()
	c.TargetBytes = mb << 20
	c.Days, c.FilesPerDay, c.Users = 4, 2, 20_000
	c.Sorted = true
	c.RowGroupRows = 32 << 10
	return c
}

// TestBenchHarness runs Bench on a tiny lake: every system must agree on
// every key (Bench checks), and the warm row index must meet its request
// targets.
func TestBenchHarness(t *testing.T) {
	rep, err := Bench(context.Background(), BenchConfig{
		Dir: t.TempDir(), Lake: smallLake(4), Lookups: 20, LatencyLookups: 6,
		Latencies: []time.Duration{time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	rep.Format(&sb)
	t.Log("\n" + sb.String())
	for _, r := range rep.Results {
		if r.System == "row index (warm)" && r.Rows > 0 && r.Requests > float64(rep.Files) {
			t.Errorf("%s on %s: %.1f requests per lookup for %d files", r.System, r.Storage, r.Requests, rep.Files)
		}
	}
	if rep.CoveredResult.Requests != 0 {
		t.Errorf("covered lookups made %.1f requests", rep.CoveredResult.Requests)
	}
}

// BenchmarkLookup compares, on one lake, a warm row index lookup with the
// standard reader. ARIADNE_BENCH_MB sets the lake size (default 32 MB).
//
//	go test ./rowindex -run '^$' -bench Lookup -benchtime 200x
func BenchmarkLookup(b *testing.B) {
	ctx := context.Background()
	mb := int64(32)
	if s := os.Getenv("ARIADNE_BENCH_MB"); s != "" {
		var n int64
		for _, c := range s {
			n = n*10 + int64(c-'0')
		}
		mb = n
	}
	dir := b.TempDir()
	rep, err := Bench(ctx, BenchConfig{Dir: dir, Lake: smallLake(mb), Lookups: 1, LatencyLookups: 1, Latencies: []time.Duration{}})
	if err != nil {
		b.Fatal(err)
	}
	_ = rep
	fx := benchFixture(b, dir)
	keys := benchKeys(smallLake(mb), 1000)
	b.Run("rowindex-warm", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := fx.ri.Lookup(ctx, Query{Key: keys[i%len(keys)]}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("standard-reader", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := fx.sr.lookup(ctx, keys[i%len(keys)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
