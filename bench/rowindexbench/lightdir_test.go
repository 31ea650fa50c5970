package rowindexbench

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/bench/duckdb"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// BenchmarkLightKeyDir profiles warm lookups of light keys (1–1,000 rows)
// on existing files: ARIADNE_BENCH_LAKE is the folder of *.parquet files,
// ARIADNE_BENCH_INDEX the folder of a row index named "bench" on
// ARIADNE_BENCH_KEY (default user_id; built there if missing). Keys are
// drawn by rows (ARIADNE_BENCH_SAMPLING=rows, the default) or distinct,
// data reads coalesced across ARIADNE_BENCH_GAP bytes (default: the
// store's, rowindex.Options.CoalesceGap), a page cache of
// ARIADNE_BENCH_PAGECACHE bytes (Options.PageCacheBytes; negative: none),
// a metadata cache of ARIADNE_BENCH_CACHE bytes (Options.CacheBytes;
// default: sized to the index, rowindex.AutoCacheBytes), resident groups
// within ARIADNE_BENCH_RESIDENT bytes (Options.ResidentBytes; default
// rowindex.AutoResidentBytes; negative: none),
// from the class of at most ARIADNE_BENCH_MAXROWS rows (default 100) and
// at least ARIADNE_BENCH_MINROWS (default 1).
// ARIADNE_BENCH_STREAM=1 reads each lookup's rows through rowindex.Iter,
// none kept, as `ariadne bench rowindex` does (for hot keys, whose rows
// collected into one Result would time the heap's growth): with
// ARIADNE_BENCH_MINROWS=1000000 and -benchtime 3x it profiles the top key.
// ARIADNE_BENCH_DUCKDB=1 runs DuckDB's lookup of the same key after each
// lookup, untimed, as `ariadne bench rowindex` does: a lookup then starts
// with DuckDB's threads, caches and garbage just behind it, and the
// p50-ms / p90-ms metrics are the lookups' wall times in that setting (the
// CPU metric then counts DuckDB's too), duckdb-p50-ms / duckdb-p90-ms
// DuckDB's. Two diagnostics take DuckDB's
// place to say which of its effects slows the lookup after it:
// ARIADNE_BENCH_IDLE=D sleeps D between lookups (the runtime's threads
// park, caches stay warm), ARIADNE_BENCH_THRASH=MB writes MB megabytes of
// memory between lookups (caches cold, threads awake); both report p50-ms
// and p90-ms as DuckDB does.
// ARIADNE_BENCH_LIMIT=N is every lookup's row limit (Query.Limit): with
// ARIADNE_BENCH_MINROWS set to the top key's rows it profiles `--limit N`
// on the top key.
// ARIADNE_BENCH_COLUMNS=a,b returns only those columns (default all): what
// each column costs.
// ARIADNE_BENCH_SHAPES=B has Warm learn page shapes within B bytes
// (Options.ShapeBytes).
// ARIADNE_BENCH_PRIME=N looks up N other keys of the class first, untimed:
// the handle of a server that has served for a while (pages' shapes learnt
// for sub-page reads, caches filled).
// ARIADNE_BENCH_SOURCE, if set, is
// the folder of files the lake was prepared from, whose key column counts
// the rows that draw the keys: co-grouped files (`--layout cogrouped`)
// store a row per key block, not the key's rows:
//
//	ARIADNE_BENCH_LAKE=/tmp/rispeed/prepared256/lake ARIADNE_BENCH_INDEX=/tmp/rispeed/prepared256/index \
//	  go test ./bench/rowindexbench -run '^$' -bench LightKeyDir -cpuprofile cpu.out
func BenchmarkLightKeyDir(b *testing.B) {
	lake, idxDir := os.Getenv("ARIADNE_BENCH_LAKE"), os.Getenv("ARIADNE_BENCH_INDEX")
	if lake == "" || idxDir == "" {
		b.Skip("ARIADNE_BENCH_LAKE or ARIADNE_BENCH_INDEX not set")
	}
	keyCol := os.Getenv("ARIADNE_BENCH_KEY")
	if keyCol == "" {
		keyCol = keyColumn
	}
	sampling := os.Getenv("ARIADNE_BENCH_SAMPLING")
	if sampling == "" {
		sampling = SamplingRows
	}
	maxRows, minRows := envInt(b, "ARIADNE_BENCH_MAXROWS", 100), envInt(b, "ARIADNE_BENCH_MINROWS", 1)
	stream := os.Getenv("ARIADNE_BENCH_STREAM") == "1"
	limit := int(envInt(b, "ARIADNE_BENCH_LIMIT", 0)) // Query.Limit (0: none)
	var columns []string                              // ARIADNE_BENCH_COLUMNS: the columns returned (default all)
	if s := os.Getenv("ARIADNE_BENCH_COLUMNS"); s != "" {
		columns = strings.Split(s, ",")
	}
	ctx := context.Background()
	_, statErr := os.Stat(idxDir)
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
	if statErr != nil {
		if _, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: indexName, Key: keyCol, Kind: rowindex.KindSorted}, res, uris); err != nil {
			b.Fatal(err)
		}
	}
	h, err := lightKeyCounts(ctx, data, uris, keyCol, os.Getenv("ARIADNE_BENCH_SOURCE"))
	if err != nil {
		b.Fatal(err)
	}
	h.exact = nil
	opts := rowindex.Options{Resolver: res}
	opts.CoalesceGap = envInt(b, "ARIADNE_BENCH_GAP", 0)
	opts.CacheBytes = envInt(b, "ARIADNE_BENCH_CACHE", 0)
	opts.PageCacheBytes = envInt(b, "ARIADNE_BENCH_PAGECACHE", 0)
	opts.ResidentBytes = envInt(b, "ARIADNE_BENCH_RESIDENT", 0)
	opts.ShapeBytes = envInt(b, "ARIADNE_BENCH_SHAPES", 0)
	ri, err := rowindex.Open(ctx, idx, indexName, opts)
	if err != nil {
		b.Fatal(err)
	}
	warmStart := time.Now()
	if _, err := ri.Warm(ctx); err != nil {
		b.Fatal(err)
	}
	held, _ := ri.CacheStats()
	shapePages, shapeBytes := ri.LearntShapes()
	resident, groups, residentBytes := ri.ResidentGroups()
	b.Logf("warm %v, caches hold %.1f MB, shapes of %d pages %.1f MB, %d of %d groups resident in %.1f MB",
		time.Since(warmStart).Round(time.Millisecond), float64(held)/1e6, shapePages, float64(shapeBytes)/1e6,
		resident, groups, float64(residentBytes)/1e6)
	lo, hi := h.span(Class{Min: minRows, Max: maxRows})
	keys := h.sample(rand.New(rand.NewPCG(1, 11)), lo, hi, 2000, sampling)
	if len(keys) == 0 {
		b.Fatal("no key in the class")
	}
	if s := os.Getenv("ARIADNE_BENCH_PRIME"); s != "" {
		// A handle that has served for a while: other keys of the class
		// looked up first (their pages' shapes learnt, caches filled).
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for _, k := range h.sample(rand.New(rand.NewPCG(2, 22)), lo, hi, n, sampling) {
			if _, err := ri.Lookup(ctx, rowindex.Query{Key: h.queryValue(k)}); err != nil {
				b.Fatal(err)
			}
		}
		held, _ := ri.CacheStats()
		b.Logf("primed with %d other keys in %v, caches hold %.1f MB", n, time.Since(start).Round(time.Millisecond), float64(held)/1e6)
	}
	rows, bytes, reqs, pages := 0, int64(0), int64(0), int64(0)
	if p := os.Getenv("ARIADNE_BENCH_CPUPROFILE"); p != "" {
		// The lookups alone (the key scan above is not profiled).
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	var duck *duckdb.Engine
	if os.Getenv("ARIADNE_BENCH_DUCKDB") == "1" {
		paths := make([]string, len(uris))
		for i, u := range uris {
			paths[i] = filepath.Join(lake, filepath.FromSlash(u))
		}
		if duck, err = duckdb.Open(ctx, paths, keyCol); err != nil {
			b.Fatal(err)
		}
		defer duck.Close()
	}
	var idle time.Duration
	if s := os.Getenv("ARIADNE_BENCH_IDLE"); s != "" {
		if idle, err = time.ParseDuration(s); err != nil {
			b.Fatal(err)
		}
	}
	var thrash []byte
	if s := os.Getenv("ARIADNE_BENCH_THRASH"); s != "" {
		mb, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		thrash = make([]byte, mb<<20)
	}
	between := duck != nil || idle > 0 || thrash != nil
	var walls, duckWalls []time.Duration
	inflated0 := ri.DecompressedBytes()
	runtime.GC()
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		q := rowindex.Query{Key: h.queryValue(keys[i%len(keys)]), Columns: columns, Limit: limit}
		var n int
		var plan rowindex.Plan
		if stream {
			s, err := streamRows(ctx, ri, q)
			if err != nil {
				b.Fatal(err)
			}
			n, plan = int(s.rows), s.plan
		} else {
			r, err := ri.Lookup(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			n, plan = len(r.Rows), r.Plan
		}
		if between {
			walls = append(walls, time.Since(t0))
			b.StopTimer()
			switch {
			case duck != nil:
				t1 := time.Now()
				if _, err := duck.Count(ctx, h.queryValue(keys[i%len(keys)]), 0); err != nil {
					b.Fatal(err)
				}
				duckWalls = append(duckWalls, time.Since(t1))
			case idle > 0:
				time.Sleep(idle)
			default:
				for j := range thrash {
					thrash[j] += byte(j)
				}
			}
			b.StartTimer()
		}
		rows += n
		bytes += plan.Data.BytesRead
		reqs += plan.Data.Requests
		pages += plan.Data.Pages
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(ri.DecompressedBytes()-inflated0)/float64(b.N), "inflated/op")
	b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
	b.ReportMetric(float64(bytes)/float64(b.N), "databytes/op")
	b.ReportMetric(float64(reqs)/float64(b.N), "datareqs/op")
	b.ReportMetric(float64(pages)/float64(b.N), "pages/op")
	if len(walls) > 0 {
		l := latencyOf(walls, 0)
		b.ReportMetric(l.P50MS, "p50-ms")
		b.ReportMetric(l.P90MS, "p90-ms")
	}
	if len(duckWalls) > 0 {
		l := latencyOf(duckWalls, 0)
		b.ReportMetric(l.P50MS, "duckdb-p50-ms")
		b.ReportMetric(l.P90MS, "duckdb-p90-ms")
	}
}

// lightKeyCounts counts the rows per key of the files uris in data, or, if
// source is set, of the files under that folder.
func lightKeyCounts(ctx context.Context, data store.Store, uris []string, keyCol, source string) (*histogram, error) {
	if source == "" {
		return scanKeys(ctx, data, uris, keyCol)
	}
	su, err := parquetFiles(source)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, "file://"+source)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return scanKeys(ctx, st, su, keyCol)
}

// envInt is the integer in the environment variable name, def if it is
// unset; b fails if it is not an integer.
func envInt(b *testing.B, name string, def int64) int64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return v
}
