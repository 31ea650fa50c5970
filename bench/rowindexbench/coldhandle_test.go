package rowindexbench

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/bench/duckdb"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// BenchmarkColdHandle is a fresh process's first lookup: every op opens a
// new handle (empty caches, no Warm) over the row index "bench" in
// ARIADNE_BENCH_INDEX on the files of ARIADNE_BENCH_LAKE (as
// BenchmarkLightKeyDir, which builds it) and looks up one key of the class
// of ARIADNE_BENCH_MINROWS–ARIADNE_BENCH_MAXROWS rows (default 1–100, drawn
// by rows). ARIADNE_BENCH_SHAPE_FILES=save first saves shape files (a
// handle warmed with a 1 GiB shape budget, SaveShapes: what `ariadne warm
// --save-shapes` does), =delete deletes them (the lookups then read whole
// pages and dictionaries). ARIADNE_BENCH_DUCKDB=1 opens a fresh DuckDB
// after each lookup and reads the same key's rows (its time apart). The
// files stay in the OS page cache: the handle is cold, the disk is not.
// ARIADNE_BENCH_LATENCY=20ms puts that latency before every request of
// both stores (with an object store's coalescing gap) and reports
// the sequential rounds of requests a lookup took (rounds/op), the first
// lookup's requests listed.
//
//	ARIADNE_BENCH_LAKE=/tmp/s31/pa1g ARIADNE_BENCH_INDEX=/tmp/s31/pa1g-idx ARIADNE_BENCH_SHAPE_FILES=save \
//	  ARIADNE_BENCH_DUCKDB=1 go test ./bench/rowindexbench -run '^$' -bench ColdHandle -benchtime 40x
func BenchmarkColdHandle(b *testing.B) {
	lake, idxDir := os.Getenv("ARIADNE_BENCH_LAKE"), os.Getenv("ARIADNE_BENCH_INDEX")
	if lake == "" || idxDir == "" {
		b.Skip("ARIADNE_BENCH_LAKE or ARIADNE_BENCH_INDEX not set")
	}
	if _, err := os.Stat(idxDir); err != nil {
		b.Skipf("no row index in %s (BenchmarkLightKeyDir builds it): %v", idxDir, err)
	}
	ctx := context.Background()
	uris, err := parquetFiles(lake)
	if err != nil {
		b.Fatal(err)
	}
	data, err := store.Open(ctx, "file://"+lake)
	if err != nil {
		b.Fatal(err)
	}
	defer data.Close()
	idx, err := store.Open(ctx, "file://"+idxDir)
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	res := rowindex.StoreResolver{Store: data}
	var trace *store.Trace
	var gap int64
	var lookIdx store.Store = idx
	lookRes := res
	if lat := os.Getenv("ARIADNE_BENCH_LATENCY"); lat != "" {
		d, err := time.ParseDuration(lat)
		if err != nil {
			b.Fatalf("ARIADNE_BENCH_LATENCY: %v", err)
		}
		trace = store.NewTrace()
		lookIdx = store.NewTraced(store.NewFaulty(idx, store.Faults{Latency: d}), "index", trace)
		lookRes = rowindex.StoreResolver{Store: store.NewTraced(store.NewFaulty(data, store.Faults{Latency: d}), "data", trace)}
		gap = rowindex.DefaultCoalesceGap // an object store's (the stores' URLs say file://)
	}
	switch os.Getenv("ARIADNE_BENCH_SHAPE_FILES") {
	case "save":
		ri, err := rowindex.Open(ctx, idx, indexName, rowindex.Options{Resolver: res, ShapeBytes: 1 << 30})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ri.Warm(ctx); err != nil {
			b.Fatal(err)
		}
		saved, err := ri.SaveShapes(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("shape files: %+v", saved)
	case "delete":
		for info, err := range idx.List(ctx, store.ListOptions{Prefix: rowindex.Folder + "/" + indexName + "/shapes/"}) {
			if err != nil {
				b.Fatal(err)
			}
			if err := idx.Delete(ctx, info.Key, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	keyCol := os.Getenv("ARIADNE_BENCH_KEY")
	if keyCol == "" {
		keyCol = keyColumn
	}
	h, err := lightKeyCounts(ctx, data, uris, keyCol, "")
	if err != nil {
		b.Fatal(err)
	}
	lo, hi := h.span(Class{Min: envInt(b, "ARIADNE_BENCH_MINROWS", 1), Max: envInt(b, "ARIADNE_BENCH_MAXROWS", 100)})
	keys := h.sample(rand.New(rand.NewPCG(1, 11)), lo, hi, 2000, SamplingRows)
	if len(keys) == 0 {
		b.Fatal("no key in the class")
	}
	paths := make([]string, len(uris))
	for i, u := range uris {
		paths[i] = filepath.Join(lake, filepath.FromSlash(u))
	}
	withDuck := os.Getenv("ARIADNE_BENCH_DUCKDB") == "1"
	var walls, duckWalls []time.Duration
	var rows, bytes, reqs, roundsSum int64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		key := h.queryValue(keys[i%len(keys)])
		t0 := time.Now()
		if trace != nil {
			trace.Reset()
		}
		ri, err := rowindex.Open(ctx, lookIdx, indexName, rowindex.Options{Resolver: lookRes, CoalesceGap: gap})
		if err != nil {
			b.Fatal(err)
		}
		r, err := ri.Lookup(ctx, rowindex.Query{Key: key})
		if err != nil {
			b.Fatal(err)
		}
		walls = append(walls, time.Since(t0))
		if trace != nil {
			n := trace.Rounds()
			roundsSum += int64(n)
			if i == 0 {
				b.Logf("the first lookup's requests (%d rounds):\n%s", n, trace)
			}
		}
		rows += int64(len(r.Rows))
		bytes += r.Plan.BytesRead()
		reqs += r.Plan.Requests()
		if withDuck {
			b.StopTimer()
			t1 := time.Now()
			e, err := duckdb.Open(ctx, paths, keyCol)
			if err != nil {
				b.Fatal(err)
			}
			n, err := e.Count(ctx, key, 0)
			e.Close()
			if err != nil {
				b.Fatal(err)
			}
			if n != len(r.Rows) {
				b.Fatalf("key %v: %d rows, DuckDB %d", key, len(r.Rows), n)
			}
			duckWalls = append(duckWalls, time.Since(t1))
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
	b.ReportMetric(float64(bytes)/float64(b.N), "bytes/op")
	b.ReportMetric(float64(reqs)/float64(b.N), "reqs/op")
	if trace != nil {
		b.ReportMetric(float64(roundsSum)/float64(b.N), "rounds/op")
	}
	l := latencyOf(walls, 0)
	b.ReportMetric(l.P50MS, "p50-ms")
	b.ReportMetric(l.P90MS, "p90-ms")
	b.ReportMetric(l.P99MS, "p99-ms")
	if len(duckWalls) > 0 {
		d := latencyOf(duckWalls, 0)
		b.ReportMetric(d.P50MS, "duckdb-p50-ms")
		b.ReportMetric(d.P90MS, "duckdb-p90-ms")
		b.ReportMetric(d.P99MS, "duckdb-p99-ms")
	}
}
