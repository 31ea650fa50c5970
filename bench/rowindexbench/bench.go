package rowindex

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/store"
)

// External is another engine the benchmark compares with (DuckDB in
// rowindex/internal/duckbench), answering the same lookups over the same
// local files.
type External interface {
	Name() string
	// Lookup returns the number of rows whose user_id equals key.
	Lookup(ctx context.Context, key int64) (int, error)
	Close() error
}

// ExternalFactory opens an External over local Parquet paths.
type ExternalFactory func(ctx context.Context, paths []string) (External, error)

// BenchConfig configures Bench. Zero fields take defaults.
type BenchConfig struct {
	// Dir holds the lake (Dir/lake, generated once and reused while the
	// lake config is unchanged) and the index (Dir/index, rebuilt).
	Dir string
	// Lake is the generated data (default lakegen.DefaultConfig(), sorted
	// by user).
	Lake lakegen.Config
	// Kind is the kind of the row index the lookups use (default sorted:
	// its fragments leave row numbers implied over files sorted by the key,
	// see diskEntry). The other kind is built too, for its size.
	Kind Kind
	// Lookups per local-disk scenario (default 200); LatencyLookups per
	// injected-latency scenario (default 50); ExternalLookups per external
	// engine (default 20).
	Lookups, LatencyLookups, ExternalLookups int
	// Latencies are the injected per-request latencies (store.NewFaulty) of
	// the remote scenarios (default 2 ms and 20 ms).
	Latencies []time.Duration
	// External engines to compare on local disk.
	External []ExternalFactory
	// Progress, if set, receives progress lines.
	Progress io.Writer
}

// BenchResult is one system on one storage.
type BenchResult struct {
	System   string        `json:"system"`
	Storage  string        `json:"storage"`
	Lookups  int           `json:"lookups"`
	P50      time.Duration `json:"p50"`
	P99      time.Duration `json:"p99"`
	Requests float64       `json:"requestsPerLookup"`
	Bytes    float64       `json:"bytesPerLookup"`
	Rows     float64       `json:"rowsPerLookup"`
}

// BenchReport is what Bench measured.
type BenchReport struct {
	// Sorted reports the lake's layout: bucketed and sorted by user
	// (lakegen.Config.Sorted) or in arrival order; Prepared, bucketed and
	// sorted by the prepared writer (key-aligned pages).
	Sorted   bool `json:"sorted"`
	Prepared bool `json:"prepared,omitempty"`
	// Kind is the row index kind the lookups used; Sizes gives the index
	// size of each kind.
	Kind          Kind          `json:"kind"`
	Sizes         []IndexSize   `json:"sizes"`
	Files         int           `json:"files"`
	Rows          int64         `json:"rows"`
	DataBytes     int64         `json:"dataBytes"`
	IndexBytes    int64         `json:"indexBytes"`
	Entries       int64         `json:"entries"`
	Build         BuildStats    `json:"build"`
	BuildTime     time.Duration `json:"buildTime"`
	CoveredBytes  int64         `json:"coveredIndexBytes"`
	CoveredResult BenchResult   `json:"covered"`
	Results       []BenchResult `json:"results"`
	// Versus compares the warm local row index with each External engine
	// on the same keys (the first ExternalLookups), in the same run.
	Versus []Versus `json:"versus"`
}

// Versus is the warm local row index against another engine, p50 over the
// same keys.
type Versus struct {
	System  string        `json:"system"`
	Lookups int           `json:"lookups"`
	Ours    time.Duration `json:"oursP50"`
	Theirs  time.Duration `json:"theirsP50"`
	Speedup float64       `json:"speedup"`
}

// IndexSize is the size of one row index of the benchmark.
type IndexSize struct {
	Kind    Kind  `json:"kind"`
	Entries int64 `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

func (c *BenchConfig) defaults() {
	if c.Lake.TargetBytes == 0 {
		c.Lake = lakegen.DefaultConfig()
		c.Lake.Sorted = true
	}
	if c.Kind == "" {
		c.Kind = KindSorted
	}
	if c.Lookups == 0 {
		c.Lookups = 200
	}
	if c.LatencyLookups == 0 {
		c.LatencyLookups = 50
	}
	if c.ExternalLookups == 0 {
		c.ExternalLookups = 20
	}
	if c.Latencies == nil {
		c.Latencies = []time.Duration{2 * time.Millisecond, 20 * time.Millisecond}
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Bench generates (or reuses) a lake, builds a row index on user_id and
// compares lookups by our row index (warm), a well-behaved standard
// parquet-go reader (row-group statistics → bloom filter → page index →
// pages, nothing cached) and the External engines, on local disk and
// through injected per-request latency. Every system must return the same
// rows for every key, or Bench fails.
func Bench(ctx context.Context, cfg BenchConfig) (*BenchReport, error) {
	cfg.defaults()
	lakeDir := filepath.Join(cfg.Dir, "lake")
	files, err := lakegen.Ensure(ctx, lakeDir, cfg.Lake, cfg.Progress)
	if err != nil {
		return nil, err
	}
	local, err := store.Open(ctx, "file://"+lakeDir)
	if err != nil {
		return nil, err
	}
	idxDir := filepath.Join(cfg.Dir, "index")
	if err := os.RemoveAll(idxDir); err != nil {
		return nil, err
	}
	idx, err := store.Open(ctx, "file://"+idxDir)
	if err != nil {
		return nil, err
	}
	var uris []string
	rep := &BenchReport{Sorted: cfg.Lake.Sorted || cfg.Lake.Prepared, Prepared: cfg.Lake.Prepared, Kind: cfg.Kind, Files: len(files)}
	for _, f := range files {
		uris = append(uris, f.Key)
		rep.Rows += f.Rows
	}
	fmt.Fprintf(cfg.Progress, "building the row index over %d files...\n", len(files))
	start := time.Now()
	man, bs, err := Create(ctx, idx, Definition{Name: "by_user", Key: "user_id", Kind: cfg.Kind}, StoreResolver{local}, uris)
	if err != nil {
		return nil, err
	}
	rep.BuildTime, rep.Build = time.Since(start), bs
	rep.DataBytes, rep.IndexBytes, rep.Entries = man.DataBytes(), man.IndexBytes(), man.Entries()
	rep.Sizes = append(rep.Sizes, IndexSize{cfg.Kind, man.Entries(), man.IndexBytes()})
	other := KindHash
	if cfg.Kind == KindHash {
		other = KindSorted
	}
	fmt.Fprintf(cfg.Progress, "building the %s row index, for its size...\n", other)
	otherMan, _, err := Create(ctx, idx, Definition{Name: "by_user_" + string(other), Key: "user_id", Kind: other}, StoreResolver{local}, uris)
	if err != nil {
		return nil, err
	}
	rep.Sizes = append(rep.Sizes, IndexSize{other, otherMan.Entries(), otherMan.IndexBytes()})
	covMan, _, err := Create(ctx, idx, Definition{Name: "by_user_covered", Key: "user_id", Kind: cfg.Kind, Cover: []string{"duration_ms"},
		Aggregates: []Aggregate{{Op: "count"}, {Op: "sum", Column: "duration_ms"}}}, StoreResolver{local}, uris)
	if err != nil {
		return nil, err
	}
	rep.CoveredBytes = covMan.IndexBytes()

	keys := benchKeys(cfg.Lake, max(cfg.Lookups, cfg.LatencyLookups, cfg.ExternalLookups))
	// Reference counts: the standard reader on local disk.
	want := map[int64]int{}
	check := func(system string, key int64, n int) error {
		if w, ok := want[key]; ok && w != n {
			return fmt.Errorf("rowindex bench: %s returned %d rows for user %d, the standard reader %d", system, n, key, w)
		}
		want[key] = n
		return nil
	}

	var localWarm []time.Duration // per key, in key order
	storages := []time.Duration{0}
	storages = append(storages, cfg.Latencies...)
	for _, lat := range storages {
		name := "local"
		n := cfg.Lookups
		var base store.Store = local
		if lat > 0 {
			name = fmt.Sprintf("latency %v", lat)
			n = cfg.LatencyLookups
			base = store.NewFaulty(local, store.Faults{Latency: lat})
		}
		cs := store.NewCounting(base)
		fmt.Fprintf(cfg.Progress, "%s: standard reader...\n", name)
		sr := &standardReader{st: cs, keyCol: "user_id"}
		for _, f := range man.Files {
			sr.files = append(sr.files, object{st: cs, key: f.URI, uri: f.URI})
			sr.sizes = append(sr.sizes, f.Size)
		}
		res := BenchResult{System: "parquet-go standard reader", Storage: name}
		var lats []time.Duration
		for _, k := range keys[:n] {
			before := cs.Snapshot()
			t0 := time.Now()
			rows, err := sr.lookup(ctx, k)
			if err != nil {
				return nil, err
			}
			lats = append(lats, time.Since(t0))
			d := cs.Snapshot().Sub(before)
			res.Requests += float64(d.Total.Requests)
			res.Bytes += float64(d.Read.Bytes)
			res.Rows += float64(len(rows))
			if err := check(res.System, k, len(rows)); err != nil {
				return nil, err
			}
		}
		rep.Results = append(rep.Results, finish(res, lats))

		fmt.Fprintf(cfg.Progress, "%s: row index...\n", name)
		// The break-even gap of the storage: local disk, or object storage
		// (≈50 MB/s per stream) behind the injected latency.
		gap := int64(LocalCoalesceGap)
		if lat > 0 {
			gap = CoalesceGapFor(lat, 50e6)
		}
		ri, err := Open(ctx, idx, "by_user", Options{Resolver: StoreResolver{cs}, CoalesceGap: gap})
		if err != nil {
			return nil, err
		}
		// Cold: an empty cache before every lookup.
		cold := BenchResult{System: "row index (cold)", Storage: name}
		lats = lats[:0]
		for _, k := range keys[:min(n, 50)] {
			ri.DropCache()
			t0 := time.Now()
			r, err := ri.Lookup(ctx, Query{Key: k})
			if err != nil {
				return nil, err
			}
			lats = append(lats, time.Since(t0))
			cold.Requests += float64(r.Plan.Requests())
			cold.Bytes += float64(r.Plan.BytesRead())
			cold.Rows += float64(len(r.Rows))
			if err := check(cold.System, k, len(r.Rows)); err != nil {
				return nil, err
			}
		}
		rep.Results = append(rep.Results, finish(cold, lats))
		// Warm: Warm, then one pass to cache dictionary pages, then timed.
		if _, err := ri.Warm(ctx); err != nil {
			return nil, err
		}
		for _, k := range keys[:n] {
			if _, err := ri.Lookup(ctx, Query{Key: k}); err != nil {
				return nil, err
			}
		}
		warm := BenchResult{System: "row index (warm)", Storage: name}
		lats = lats[:0]
		for _, k := range keys[:n] {
			t0 := time.Now()
			r, err := ri.Lookup(ctx, Query{Key: k})
			if err != nil {
				return nil, err
			}
			lats = append(lats, time.Since(t0))
			warm.Requests += float64(r.Plan.Requests())
			warm.Bytes += float64(r.Plan.BytesRead())
			warm.Rows += float64(len(r.Rows))
			if err := check(warm.System, k, len(r.Rows)); err != nil {
				return nil, err
			}
		}
		rep.Results = append(rep.Results, finish(warm, lats))
		if lat == 0 {
			localWarm = slices.Clone(lats)
		}
	}

	// Covered lookups (aggregates and a cover column): zero data reads.
	cri, err := Open(ctx, idx, "by_user_covered", Options{Resolver: StoreResolver{local}})
	if err != nil {
		return nil, err
	}
	if _, err := cri.Warm(ctx); err != nil {
		return nil, err
	}
	cov := BenchResult{System: "row index (covered, warm)", Storage: "local"}
	var lats []time.Duration
	for _, k := range keys[:cfg.Lookups] {
		t0 := time.Now()
		r, err := cri.Lookup(ctx, Query{Key: k, Columns: []string{"duration_ms"}})
		if err != nil {
			return nil, err
		}
		lats = append(lats, time.Since(t0))
		cov.Requests += float64(r.Plan.Requests())
		cov.Bytes += float64(r.Plan.BytesRead())
		cov.Rows += float64(len(r.Rows))
		if err := check(cov.System, k, len(r.Rows)); err != nil {
			return nil, err
		}
	}
	rep.CoveredResult = finish(cov, lats)

	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(lakeDir, filepath.FromSlash(f.Key)))
	}
	for _, open := range cfg.External {
		e, err := open(ctx, paths)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(cfg.Progress, "local: %s...\n", e.Name())
		res := BenchResult{System: e.Name(), Storage: "local"}
		lats = lats[:0]
		for _, k := range keys[:cfg.ExternalLookups] {
			t0 := time.Now()
			n, err := e.Lookup(ctx, k)
			if err != nil {
				e.Close()
				return nil, err
			}
			lats = append(lats, time.Since(t0))
			res.Rows += float64(n)
			if err := check(res.System, k, n); err != nil {
				e.Close()
				return nil, err
			}
		}
		e.Close()
		res.Requests, res.Bytes = -1, -1 // not observable
		res = finish(res, lats)
		rep.Results = append(rep.Results, res)
		if m := min(len(lats), len(localWarm)); m > 0 {
			ours := finish(BenchResult{}, localWarm[:m]).P50
			theirs := finish(BenchResult{}, lats[:m]).P50
			rep.Versus = append(rep.Versus, Versus{System: res.System, Lookups: m, Ours: ours, Theirs: theirs,
				Speedup: float64(theirs) / float64(max(ours, 1))})
		}
	}
	return rep, nil
}

// benchKeys draws lookup keys: even positions by activity (Zipf: hot
// users), odd positions uniformly over the user space (cold users, some
// with no plays at all).
func benchKeys(c lakegen.Config, n int) []int64 {
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

// Layout names the lake's layout.
func (r *BenchReport) Layout() string {
	switch {
	case r.Prepared:
		return "prepared: bucketed, sorted, key-aligned pages"
	case r.Sorted:
		return "bucketed and sorted by user"
	}
	return "arrival order"
}

func finish(r BenchResult, lats []time.Duration) BenchResult {
	r.Lookups = len(lats)
	if len(lats) == 0 {
		return r
	}
	s := slices.Clone(lats)
	slices.Sort(s)
	r.P50 = s[len(s)/2]
	r.P99 = s[min(len(s)-1, len(s)*99/100)]
	n := float64(len(lats))
	if r.Requests >= 0 {
		r.Requests /= n
		r.Bytes /= n
	}
	r.Rows /= n
	return r
}

// Format writes the report as the tables of docs/rowindex.md.
func (r *BenchReport) Format(w io.Writer) {
	fmt.Fprintf(w, "Lake (%s): %d files, %d rows, %.1f MB. Row index (%s): %d entries, %.2f MB = %.3f%% of data (%.2f bytes/entry, %.2f rows/entry), built in %v (%d requests, %.1f MB read).\n",
		r.Layout(), r.Files, r.Rows, float64(r.DataBytes)/1e6, r.Kind, r.Entries, float64(r.IndexBytes)/1e6,
		100*float64(r.IndexBytes)/float64(r.DataBytes), float64(r.IndexBytes)/float64(max(r.Entries, 1)),
		float64(r.Rows)/float64(max(r.Entries, 1)), r.BuildTime.Round(time.Millisecond), r.Build.Requests, float64(r.Build.BytesRead)/1e6)
	for _, sz := range r.Sizes {
		fmt.Fprintf(w, "Index size, %s kind: %d entries, %.2f MB = %.3f%% of data (%.2f bytes/entry).\n", sz.Kind, sz.Entries,
			float64(sz.Bytes)/1e6, 100*float64(sz.Bytes)/float64(max(r.DataBytes, 1)), float64(sz.Bytes)/float64(max(sz.Entries, 1)))
	}
	fmt.Fprintf(w, "Covered index (cover duration_ms, count, sum): %.2f MB = %.2f%% of data.\n\n",
		float64(r.CoveredBytes)/1e6, 100*float64(r.CoveredBytes)/float64(r.DataBytes))
	fmt.Fprintln(w, "| system | storage | lookups | p50 | p99 | requests/lookup | bytes/lookup | rows/lookup |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, x := range append(slices.Clone(r.Results), r.CoveredResult) {
		req, by := "n/a", "n/a"
		if x.Requests >= 0 {
			req, by = fmt.Sprintf("%.1f", x.Requests), fmt.Sprintf("%.0f", x.Bytes)
		}
		fmt.Fprintf(w, "| %s | %s | %d | %v | %v | %s | %s | %.1f |\n", x.System, x.Storage, x.Lookups,
			x.P50.Round(time.Microsecond), x.P99.Round(time.Microsecond), req, by, x.Rows)
	}
	for _, v := range r.Versus {
		fmt.Fprintf(w, "\nSame %d keys, local disk, p50: row index (warm) %v, %s %v: %.0f× faster.\n", v.Lookups,
			v.Ours.Round(time.Microsecond), v.System, v.Theirs.Round(time.Microsecond), v.Speedup)
	}
}
