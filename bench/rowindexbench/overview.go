package rowindexbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ariadne-go/ariadne/bench/duckdb"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// overview measures the system table of a generated lake: a well-behaved
// standard parquet-go reader, the row index cold and warm, on local disk
// and behind injected per-request latency, and covered lookups (cover
// duration_ms, count and sum: zero data reads).
func overview(ctx context.Context, cfg Config, lk lakeRun, h *histogram, rep *Report) error {
	keys := overviewKeys(cfg.Lake, max(cfg.Lookups, cfg.LatencyLookups))
	check := func(system string, key int64, n int) error {
		if w := h.exact[key]; int64(n) != w {
			return fmt.Errorf("rowindexbench: %s returned %d rows for user %d, the scan counted %d", system, n, key, w)
		}
		return nil
	}
	storages := append([]time.Duration{0}, cfg.Latencies...)
	for _, lat := range storages {
		name := "local"
		n := cfg.Lookups
		var base store.Store = lk.data
		if lat > 0 {
			name = fmt.Sprintf("latency %v", lat)
			n = cfg.LatencyLookups
			base = store.NewFaulty(lk.data, store.Faults{Latency: lat})
		}
		cs := store.NewCounting(base)
		fmt.Fprintf(cfg.Progress, "%s: standard reader...\n", name)
		sr := &standardReader{st: cs, keyCol: lk.keyCol}
		for _, u := range lk.uris {
			attrs, err := lk.data.Stat(ctx, u)
			if err != nil {
				return err
			}
			sr.files, sr.sizes = append(sr.files, u), append(sr.sizes, attrs.Size)
		}
		var t tally
		for _, k := range keys[:n] {
			before := cs.Snapshot()
			t0 := time.Now()
			rows, err := sr.lookup(ctx, k)
			if err != nil {
				return err
			}
			d := cs.Snapshot().Sub(before)
			t.add(time.Since(t0), d.Total.Requests, d.Read.Bytes, len(rows))
			if err := check("the standard reader", k, len(rows)); err != nil {
				return err
			}
		}
		rep.Overview = append(rep.Overview, t.result("parquet-go standard reader", name))

		fmt.Fprintf(cfg.Progress, "%s: row index...\n", name)
		// The break-even gap of the storage: local disk, or object storage
		// (≈50 MB/s per stream) behind the injected latency.
		gap := int64(rowindex.LocalCoalesceGap)
		if lat > 0 {
			gap = rowindex.CoalesceGapFor(lat, 50e6)
		}
		ri, err := rowindex.Open(ctx, lk.idx, indexName, rowindex.Options{Resolver: rowindex.StoreResolver{Store: cs}, CoalesceGap: gap})
		if err != nil {
			return err
		}
		lookup := func(t *tally, k int64) error {
			t0 := time.Now()
			r, err := ri.Lookup(ctx, rowindex.Query{Key: k})
			if err != nil {
				return err
			}
			t.add(time.Since(t0), r.Plan.Requests(), r.Plan.BytesRead(), len(r.Rows))
			return check("the row index", k, len(r.Rows))
		}
		// Cold: an empty cache before every lookup.
		var cold tally
		for _, k := range keys[:min(n, 50)] {
			ri.DropCache()
			if err := lookup(&cold, k); err != nil {
				return err
			}
		}
		rep.Overview = append(rep.Overview, cold.result("row index (cold)", name))
		// Warm: Warm, then one pass to cache dictionary pages, then timed.
		if _, err := ri.Warm(ctx); err != nil {
			return err
		}
		var warm tally
		for _, k := range keys[:n] {
			if err := lookup(&tally{}, k); err != nil {
				return err
			}
		}
		for _, k := range keys[:n] {
			if err := lookup(&warm, k); err != nil {
				return err
			}
		}
		rep.Overview = append(rep.Overview, warm.result("row index (warm)", name))
	}

	fmt.Fprintln(cfg.Progress, "local: DuckDB...")
	eng, err := duckdb.Open(ctx, lk.paths(), lk.keyCol)
	if err != nil {
		return err
	}
	defer eng.Close()
	var duck tally
	for _, k := range keys[:min(cfg.Lookups, overviewDuckDBLookups)] {
		t0 := time.Now()
		n, err := eng.Count(ctx, k, 0)
		if err != nil {
			return err
		}
		duck.add(time.Since(t0), 0, 0, n)
		if err := check("DuckDB", k, n); err != nil {
			return err
		}
	}
	d := duck.result(SystemDuckDB, "local")
	d.RequestsPerLookup, d.BytesPerLookup = nil, nil // not observable
	rep.Overview = append(rep.Overview, d)

	fmt.Fprintln(cfg.Progress, "local: covered row index...")
	covMan, _, err := rowindex.Create(ctx, lk.idx, rowindex.Definition{Name: indexName + "_covered", Key: lk.keyCol, Kind: lk.kind,
		Cover: []string{"duration_ms"}, Aggregates: []rowindex.Aggregate{{Op: "count"}, {Op: "sum", Column: "duration_ms"}}},
		rowindex.StoreResolver{Store: lk.data}, lk.uris)
	if err != nil {
		return err
	}
	rep.Index.CoveredBytes = covMan.IndexBytes()
	cri, err := rowindex.Open(ctx, lk.idx, indexName+"_covered", rowindex.Options{Resolver: rowindex.StoreResolver{Store: lk.data}})
	if err != nil {
		return err
	}
	if _, err := cri.Warm(ctx); err != nil {
		return err
	}
	var cov tally
	for _, k := range keys[:cfg.Lookups] {
		t0 := time.Now()
		r, err := cri.Lookup(ctx, rowindex.Query{Key: k, Columns: []string{"duration_ms"}})
		if err != nil {
			return err
		}
		cov.add(time.Since(t0), r.Plan.Requests(), r.Plan.BytesRead(), len(r.Rows))
		if err := check("the covered row index", k, len(r.Rows)); err != nil {
			return err
		}
	}
	c := cov.result("row index (covered, warm)", "local")
	rep.Covered = &c
	return nil
}

// overviewDuckDBLookups is the number of overview keys DuckDB looks up (a
// scan of every file each: the per class results compare it in depth).
const overviewDuckDBLookups = 20

// SystemDuckDB names DuckDB in the overview.
const SystemDuckDB = "DuckDB scan"

// tally sums lookups of one system on one storage.
type tally struct {
	lats            []time.Duration
	requests, bytes int64
	rows            int
}

func (t *tally) add(d time.Duration, requests, bytes int64, rows int) {
	t.lats = append(t.lats, d)
	t.requests += requests
	t.bytes += bytes
	t.rows += rows
}

func (t *tally) result(system, storage string) SystemResult {
	s := slices.Clone(t.lats)
	slices.Sort(s)
	n := float64(max(len(s), 1))
	r := SystemResult{System: system, Storage: storage, Lookups: len(s), P50MS: ms(percentile(s, .5)), P99MS: ms(percentile(s, .99)),
		RowsPerLookup: float64(t.rows) / n}
	req, by := float64(t.requests)/n, float64(t.bytes)/n
	r.RequestsPerLookup, r.BytesPerLookup = &req, &by
	return r
}

// overviewKeys draws the overview's lookup keys: even positions by
// activity (the lake's Zipf law: hot users), odd positions uniformly over
// the user space (cold users, some with no plays at all).
func overviewKeys(c lakegen.Config, n int) []int64 {
	rng := rand.New(rand.NewPCG(c.Seed+99, 7))
	users := max(c.Users, 2)
	zipf := rand.NewZipf(rng, max(c.ZipfS, 1.01), max(c.ZipfV, 1), uint64(users-1))
	keys := make([]int64, n)
	for i := range keys {
		if i%2 == 0 {
			keys[i] = lakegen.UserID(zipf.Uint64())
		} else {
			keys[i] = lakegen.UserID(uint64(rng.IntN(users)))
		}
	}
	return keys
}
