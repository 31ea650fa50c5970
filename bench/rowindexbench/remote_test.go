package rowindexbench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/internal/s3test"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// BenchmarkRemoteLookup measures warm lookups on an arrow-go lake (one
// uncompressed 1 MiB page per column chunk, no page index) served by the
// S3 protocol server on loopback behind 10 ms of injected latency per
// request: the requests and bytes a lookup costs on object storage with the
// coalescing gap the row index picks for a remote store (DefaultCoalesceGap)
// and with the local disk's (LocalCoalesceGap), for a heavy, a medium and a
// light key. A heavy key's thousands of sub-page ranges must coalesce into
// few requests on a remote store.
//
//	go test ./bench/rowindexbench -run '^$' -bench RemoteLookup -benchtime 5x
func BenchmarkRemoteLookup(b *testing.B) {
	ctx := context.Background()
	srv := s3test.Start(b)
	data, err := store.Open(ctx, srv.URL("lake", ""))
	if err != nil {
		b.Fatal(err)
	}
	defer data.Close()
	cfg, err := LakeConfig(LayoutArrow, 16)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Users, cfg.ZipfV, cfg.Days, cfg.FilesPerDay = 50_000, 1, 4, 4 // a top user with ≈14 % of the rows
	files, err := lakegen.Generate(ctx, data, cfg)
	if err != nil {
		b.Fatal(err)
	}
	var uris []string
	for _, f := range files {
		uris = append(uris, f.Key)
	}
	idx, err := store.Open(ctx, "mem://")
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: indexName, Key: keyColumn}, rowindex.StoreResolver{Store: data}, uris); err != nil {
		b.Fatal(err)
	}
	remote := store.NewFaulty(data, store.Faults{Latency: 10 * time.Millisecond})
	keys := []struct {
		name string
		user uint64
	}{{"top", 0}, {"rank30", 30}, {"rank3000", 3000}}
	for _, gap := range []int64{0, rowindex.LocalCoalesceGap} {
		ri, err := rowindex.Open(ctx, idx, indexName, rowindex.Options{Resolver: rowindex.StoreResolver{Store: remote}, CoalesceGap: gap})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ri.Warm(ctx); err != nil {
			b.Fatal(err)
		}
		for _, k := range keys {
			b.Run(fmt.Sprintf("gap=%d/key=%s", gap, k.name), func(b *testing.B) {
				var reqs, bytes, rows, scanFiles int64
				for b.Loop() {
					res, err := ri.Lookup(ctx, rowindex.Query{Key: lakegen.UserID(k.user)})
					if err != nil {
						b.Fatal(err)
					}
					reqs += res.Plan.Data.Requests
					bytes += res.Plan.Data.BytesRead
					rows += int64(len(res.Rows))
					scanFiles += int64(res.Plan.ScanFiles)
				}
				n := float64(b.N)
				b.ReportMetric(float64(rows)/n, "rows/op")
				b.ReportMetric(float64(reqs)/n, "requests/op")
				b.ReportMetric(float64(bytes)/n, "databytes/op")
				b.ReportMetric(float64(scanFiles)/n, "scanfiles/op")
			})
		}
	}
}
