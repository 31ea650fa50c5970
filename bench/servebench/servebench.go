// Package servebench is `ariadne bench serve`: a bounded load generator
// against `ariadne serve` on loopback. It generates a listening-history
// lake (package lakegen: Zipf user activity), indexes it (a bloom file index
// and a hash row index on user_id covering ts and duration_ms, with a count
// aggregate), starts the HTTP server over it on a real socket with an
// injected latency per storage request, and sends lookups of keys drawn as
// the rows are (a user is asked for as often as it appears in the lake) from
// N concurrent clients: first cold (no warm-up), then after the server's
// warm-up for a fixed time. It reports, per phase, throughput, latency
// percentiles, errors, rows, and the storage requests and bytes behind
// them.
package servebench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/infer"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/server"
	"github.com/ariadne-go/ariadne/store"
)

// Config configures a run. Zero fields take the defaults.
type Config struct {
	// Dir holds the generated lake (Dir/lake) and the index (Dir/store);
	// both are reused by a later run with the same lake settings.
	Dir string
	// SizeMB is the approximate lake size (default 64).
	SizeMB int
	// Users is the number of distinct users (default 20,000).
	Users int
	// Concurrency is the number of concurrent clients (default 16).
	Concurrency int
	// Duration is the warm phase's length (default 20s).
	Duration time.Duration
	// ColdRequests is the number of lookups of the cold phase (default
	// 2 × Concurrency).
	ColdRequests int
	// Limit is the page size asked: the first page of each key (default
	// 1000).
	Limit int
	// Covered asks for cover columns only (ts, duration_ms: no data file is
	// read); otherwise every column, read from the data files.
	Covered bool
	// Latency is injected before every storage request of the server.
	Latency time.Duration
	// Seed draws the keys.
	Seed uint64
	// Draw is how keys are drawn: "zipf" (default), as the lake's rows
	// hold them, so heavy users dominate and most lookups return a full
	// page; or "light", users drawn uniformly, most of whom have a few
	// rows (the light-key lookups).
	Draw string
	// Progress receives progress lines (nil: none).
	Progress io.Writer
	// Sample, when set, samples the warm phase every Sample (a soak):
	// throughput, p50/p99, errors and RSS per interval, and their drift.
	Sample time.Duration
	// Baseline also answers the warm phase's key stream with DuckDB over
	// the same files, for as long, from as many clients (generated lakes
	// only).
	Baseline bool
	// CPUProfile, when set, is a file to write a CPU profile of the warm
	// phase to (go tool pprof).
	CPUProfile string

	// URL, when set, is a running `ariadne serve` (http://host:port) to load
	// instead of a generated lake: lookups go to Index on Column for the
	// Keys given, the storage work is read from its /metrics, and the
	// phases are "first" (ColdRequests lookups) and "steady" (Duration);
	// Token is its bearer token, if it asks for one.
	URL, Index, Column, Token string
	Keys                      []string
}

func (c *Config) defaults() {
	c.SizeMB = max(c.SizeMB, 0)
	if c.SizeMB == 0 {
		c.SizeMB = 64
	}
	if c.Users <= 0 {
		c.Users = 20_000
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	if c.Duration <= 0 {
		c.Duration = 20 * time.Second
	}
	if c.ColdRequests <= 0 {
		c.ColdRequests = 2 * c.Concurrency
	}
	if c.Limit <= 0 {
		c.Limit = 1000
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Draw == "" {
		c.Draw = DrawZipf
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Report is a run's result.
type Report struct {
	Lake        LakeInfo `json:"lake"`
	Concurrency int      `json:"concurrency"`
	Limit       int      `json:"limit"`
	Covered     bool     `json:"covered"`
	Draw        string   `json:"draw,omitempty"`
	LatencyMS   float64  `json:"injected_latency_ms"`
	// WarmUp is the server's warm-up: its time and storage work.
	WarmUp WarmUp `json:"warm_up"`
	// Phases are cold (before any warm-up) and warm.
	Phases []Phase `json:"phases"`
	// Soak sums up the warm phase's samples (Config.Sample).
	Soak *Soak `json:"soak,omitempty"`
	// DuckDB is the baseline (Config.Baseline).
	DuckDB *Baseline `json:"duckdb,omitempty"`
	// CPUs is runtime.NumCPU; LoadAverage the 1, 5 and 15 minute load
	// averages of /proc/loadavg at the end (empty where there is none).
	CPUs        int       `json:"cpus"`
	LoadAverage []float64 `json:"load_average"`
}

// LakeInfo describes the generated lake.
type LakeInfo struct {
	Files int   `json:"files"`
	Rows  int64 `json:"rows"`
	Bytes int64 `json:"bytes"`
	Users int   `json:"users"`
}

// WarmUp is what the server's warm-up cost.
type WarmUp struct {
	Seconds    float64 `json:"seconds"`
	Requests   int64   `json:"requests"`
	BytesRead  int64   `json:"bytes_read"`
	CacheBytes int64   `json:"cache_bytes"`
}

// Phase is one phase of the load.
type Phase struct {
	Name     string  `json:"name"`
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	Seconds  float64 `json:"seconds"`
	QPS      float64 `json:"qps"`
	P50MS    float64 `json:"p50_ms"`
	P90MS    float64 `json:"p90_ms"`
	P99MS    float64 `json:"p99_ms"`
	MaxMS    float64 `json:"max_ms"`
	// Rows returned, and response bytes.
	Rows          int64 `json:"rows"`
	ResponseBytes int64 `json:"response_bytes"`
	// Storage work of the server during the phase: index store (row index
	// manifests and fragments) and data files, and per lookup.
	IndexRequests    int64   `json:"index_requests"`
	IndexBytes       int64   `json:"index_bytes"`
	DataRequests     int64   `json:"data_requests"`
	DataBytes        int64   `json:"data_bytes"`
	RequestsPerQuery float64 `json:"storage_requests_per_lookup"`
	// CPUSeconds is the process's CPU time (user + system) during the
	// phase, server and clients together, and CPUMSPerLookup its share per
	// lookup: on an otherwise idle machine, NumCPU × 1000 / CPUMSPerLookup
	// bounds the lookups per second.
	CPUSeconds     float64 `json:"cpu_seconds"`
	CPUMSPerLookup float64 `json:"cpu_ms_per_lookup"`
	// Samples are the phase's soak samples (Config.Sample), oldest first.
	Samples []Sample `json:"samples,omitempty"`
	// RSSBytes is the process's resident memory at the end of the phase
	// (server and clients share the process).
	RSSBytes int64 `json:"rss_bytes"`
}

// Sample is one interval of a soak: the lookups that ended in it.
type Sample struct {
	AtSeconds float64 `json:"at_seconds"`
	Requests  int     `json:"requests"`
	Errors    int     `json:"errors"`
	QPS       float64 `json:"qps"`
	P50MS     float64 `json:"p50_ms"`
	P99MS     float64 `json:"p99_ms"`
	RSSBytes  int64   `json:"rss_bytes"`
}

// Soak sums up the warm phase's samples: how memory and the tail latency
// moved over the run.
type Soak struct {
	Samples int `json:"samples"`
	// RSSFirstBytes and RSSLastBytes are the RSS of the first and last
	// samples, RSSMaxBytes the largest; RSSGrowthBytes last minus first.
	RSSFirstBytes  int64 `json:"rss_first_bytes"`
	RSSLastBytes   int64 `json:"rss_last_bytes"`
	RSSMaxBytes    int64 `json:"rss_max_bytes"`
	RSSGrowthBytes int64 `json:"rss_growth_bytes"`
	// CacheBudgetBytes is the row index's cache budget (metadata and
	// fragments, plus decoded pages): the memory RSS is held against.
	CacheBudgetBytes int64 `json:"cache_budget_bytes"`
	// MemoryLimitBytes is the Go heap's soft limit the server set (the
	// budget plus MemorySlack).
	MemoryLimitBytes int64 `json:"memory_limit_bytes"`
	// P99FirstMS and P99LastMS are the p99 of the first and last samples;
	// P99Drift is last / first.
	P99FirstMS float64 `json:"p99_first_ms"`
	P99LastMS  float64 `json:"p99_last_ms"`
	P99Drift   float64 `json:"p99_drift"`
	Errors     int     `json:"errors"`
}

func soakOf(ph Phase, budget int64) *Soak {
	ss := ph.Samples
	if len(ss) == 0 {
		return nil
	}
	first, last := ss[0], ss[len(ss)-1]
	k := &Soak{Samples: len(ss), RSSFirstBytes: first.RSSBytes, RSSLastBytes: last.RSSBytes, RSSGrowthBytes: last.RSSBytes - first.RSSBytes,
		CacheBudgetBytes: budget, MemoryLimitBytes: debug.SetMemoryLimit(-1), P99FirstMS: first.P99MS, P99LastMS: last.P99MS, Errors: ph.Errors}
	for _, x := range ss {
		k.RSSMaxBytes = max(k.RSSMaxBytes, x.RSSBytes)
	}
	if first.P99MS > 0 {
		k.P99Drift = last.P99MS / first.P99MS
	}
	return k
}

// Baseline is DuckDB answering the same key stream over the same files
// (see duckBaseline), and how the server compares: ratios above 1 favour
// the server for throughput, below 1 for latency.
type Baseline struct {
	Phase Phase `json:"phase"`
	// QPSRatio is the server's warm lookups/s over DuckDB's; P50Ratio and
	// P99Ratio the server's latency over DuckDB's; CPURatio the server's
	// CPU per lookup over DuckDB's.
	QPSRatio float64 `json:"qps_ratio"`
	P50Ratio float64 `json:"p50_ratio"`
	P99Ratio float64 `json:"p99_ratio"`
	CPURatio float64 `json:"cpu_ratio"`
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Run generates (or reuses) the lake and index, serves them, and measures;
// with Config.URL it loads that server instead (see RunURL).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	if cfg.URL != "" {
		return RunURL(ctx, cfg)
	}
	if cfg.Draw != DrawZipf && cfg.Draw != DrawLight {
		return nil, fmt.Errorf("servebench: key draw %q: want %s or %s", cfg.Draw, DrawZipf, DrawLight)
	}
	lake, storeURL, err := prepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rep := &Report{Lake: lake, Concurrency: cfg.Concurrency, Limit: cfg.Limit, Covered: cfg.Covered, Draw: cfg.Draw,
		LatencyMS: float64(cfg.Latency.Microseconds()) / 1000, CPUs: runtime.NumCPU()}
	var wrap func(store.Store) store.Store
	if cfg.Latency > 0 {
		wrap = func(s store.Store) store.Store { return store.NewFaulty(s, store.Faults{Latency: cfg.Latency}) }
	}
	st, err := ariadne.Open(ctx, storeURL, ariadne.WithStoreWrap(wrap))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	srv := server.New(st, server.Config{MaxRows: cfg.Limit, PollInterval: -1, RequestTimeout: time.Minute, MemorySlack: MemorySlack,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	url := "http://" + ln.Addr().String() + "/v1/indexes/" + indexName + "/lookup"

	lc := lakeConfig(cfg)
	keys := newKeys(lc, cfg.Seed, cfg.Draw)
	cols := []string{"ts", "duration_ms"}
	if !cfg.Covered {
		cols = nil
	}
	cl := &client{url: url, column: "user_id", cols: cols, limit: cfg.Limit, http: &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: cfg.Concurrency * 2, MaxConnsPerHost: cfg.Concurrency * 2}}}

	fmt.Fprintf(cfg.Progress, "cold: %d lookups from %d clients\n", cfg.ColdRequests, cfg.Concurrency)
	local := func() (storage, error) { return storageOf(st.Stats()), nil }
	cold, err := phase(ctx, "cold", cl.lookup, keys.next, local, cfg.Concurrency, cfg.ColdRequests, 0, 0)
	if err != nil {
		return nil, err
	}
	rep.Phases = append(rep.Phases, cold)

	fmt.Fprintf(cfg.Progress, "warm-up\n")
	before := st.Stats()
	start := time.Now()
	if err := srv.Warm(ctx); err != nil {
		return nil, err
	}
	after := st.Stats()
	rep.WarmUp = WarmUp{Seconds: time.Since(start).Seconds(), Requests: after.Index.Total.Requests + after.Data.Total.Requests -
		before.Index.Total.Requests - before.Data.Total.Requests, BytesRead: after.Index.Read.Bytes + after.Data.Read.Bytes -
		before.Index.Read.Bytes - before.Data.Read.Bytes, CacheBytes: st.CacheBytes()}

	fmt.Fprintf(cfg.Progress, "warm: %s from %d clients\n", cfg.Duration, cfg.Concurrency)
	stopProfile, err := startCPUProfile(cfg.CPUProfile)
	if err != nil {
		return nil, err
	}
	warmKeys := newKeys(lc, cfg.Seed+1, cfg.Draw)
	warm, err := phase(ctx, "warm", cl.lookup, warmKeys.next, local, cfg.Concurrency, 0, cfg.Duration, cfg.Sample)
	stopProfile()
	if err != nil {
		return nil, err
	}
	rep.Phases = append(rep.Phases, warm)
	rep.Soak = soakOf(warm, st.CacheBudget())
	if cfg.Baseline {
		// The same key stream (the same seed), the same page, as many
		// clients, as long.
		fmt.Fprintf(cfg.Progress, "duckdb baseline: %s from %d clients\n", cfg.Duration, cfg.Concurrency)
		db, err := newDuckBaseline(ctx, filepath.Join(cfg.Dir, "lake"), cols, cfg.Limit, cfg.Concurrency)
		if err != nil {
			return nil, err
		}
		none := func() (storage, error) { return storage{}, nil }
		dk := newKeys(lc, cfg.Seed+1, cfg.Draw)
		ph, err := phase(ctx, "duckdb", db.lookup, dk.next, none, cfg.Concurrency, 0, cfg.Duration, 0)
		db.Close()
		if err != nil {
			return nil, err
		}
		ph.ResponseBytes = 0 // values as text, not an answer's bytes
		rep.DuckDB = &Baseline{Phase: ph, QPSRatio: ratio(warm.QPS, ph.QPS), P50Ratio: ratio(warm.P50MS, ph.P50MS),
			P99Ratio: ratio(warm.P99MS, ph.P99MS), CPURatio: ratio(warm.CPUMSPerLookup, ph.CPUMSPerLookup)}
	}
	rep.LoadAverage = loadAverage()
	return rep, nil
}

const indexName = "plays"

// MemorySlack is the server's Config.MemorySlack in the benchmark (the
// default of `ariadne serve`): RSS is held against the cache budget plus
// this, plus the load generator's own memory.
const MemorySlack = 256 << 20

// startCPUProfile starts a CPU profile written to path ("": none); the
// function returned stops it.
func startCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func lakeConfig(cfg Config) lakegen.Config {
	return lakegen.Config{Seed: 7, TargetBytes: int64(cfg.SizeMB) << 20, Days: 4, FilesPerDay: 4, Users: cfg.Users, Tracks: 50_000, Sorted: true}
}

// prepare generates the lake and indexes it, unless Dir holds both from an
// earlier run with the same settings.
func prepare(ctx context.Context, cfg Config) (LakeInfo, string, error) {
	lc := lakeConfig(cfg)
	lakeDir, storeDir := filepath.Join(cfg.Dir, "lake"), filepath.Join(cfg.Dir, "store")
	marker := filepath.Join(cfg.Dir, "servebench.json")
	stamp, _ := json.Marshal(map[string]any{"version": lakegen.Version, "size_mb": cfg.SizeMB, "users": cfg.Users})
	storeURL := "file://" + storeDir
	var info LakeInfo
	if b, err := os.ReadFile(marker); err == nil {
		var m struct {
			Stamp json.RawMessage `json:"stamp"`
			Lake  LakeInfo        `json:"lake"`
		}
		if json.Unmarshal(b, &m) == nil && bytes.Equal(m.Stamp, stamp) {
			fmt.Fprintf(cfg.Progress, "reusing the lake and index in %s\n", cfg.Dir)
			return m.Lake, storeURL, nil
		}
	}
	os.RemoveAll(lakeDir)
	os.RemoveAll(storeDir)
	os.Remove(marker)
	lst, err := store.Open(ctx, "file://"+lakeDir)
	if err != nil {
		return info, "", err
	}
	defer lst.Close()
	start := time.Now()
	files, err := lakegen.Generate(ctx, lst, lc)
	if err != nil {
		return info, "", err
	}
	uris := make([]string, len(files))
	for i, f := range files {
		uris[i] = "file://" + filepath.ToSlash(filepath.Join(lakeDir, f.Key))
		info.Files++
		info.Rows += f.Rows
		info.Bytes += f.Size
	}
	info.Users = cfg.Users
	fmt.Fprintf(cfg.Progress, "lake: %d files, %d rows, %.1f MB in %s\n", info.Files, info.Rows, float64(info.Bytes)/1e6, time.Since(start).Round(time.Millisecond))

	root, err := store.Open(ctx, storeURL)
	if err != nil {
		return info, "", err
	}
	defer root.Close()
	res := store.NewResolver(store.ResolverOptions{})
	defer res.Close()
	cat := index.NewCatalog(root, index.Options{Resolver: res})
	sch, err := infer.FromFile(ctx, res, uris[0], "parquet", nil)
	if err != nil {
		return info, "", err
	}
	ix, err := cat.Open(ctx, indexName, index.OpenOptions{Schema: sch, Format: "parquet"})
	if err != nil {
		return info, "", err
	}
	if err := ix.AddBloomIndex(ctx, "user_id", index.DefaultBloomFPR); err != nil {
		return info, "", err
	}
	if _, err := ix.AddFiles(ctx, uris...); err != nil {
		return info, "", err
	}
	start = time.Now()
	if _, err := fileindex.New(ix, fileindex.Options{}).Update(ctx, fileindex.UpdateOptions{}); err != nil {
		return info, "", err
	}
	fmt.Fprintf(cfg.Progress, "file index: %s\n", time.Since(start).Round(time.Millisecond))
	st, err := ariadne.Open(ctx, storeURL)
	if err != nil {
		return info, "", err
	}
	defer st.Close()
	fx, err := st.Index(ctx, indexName)
	if err != nil {
		return info, "", err
	}
	start = time.Now()
	if _, _, err := fx.AddRowIndex(ctx, ariadne.RowIndexDefinition{Key: "user_id", Kind: rowindex.KindHash, Cover: []string{"ts", "duration_ms"},
		Aggregates: []rowindex.Aggregate{{Op: "count"}}}); err != nil {
		return info, "", err
	}
	fmt.Fprintf(cfg.Progress, "row index: %s\n", time.Since(start).Round(time.Millisecond))
	b, _ := json.Marshal(map[string]any{"stamp": json.RawMessage(stamp), "lake": info})
	return info, storeURL, os.WriteFile(marker, b, 0o644)
}

// The key draws (Config.Draw).
const (
	DrawZipf  = "zipf"
	DrawLight = "light"
)

// keys draws users as the lake's rows hold them (the generator's Zipf
// distribution of activity over the same users), or uniformly (light).
type keys struct {
	mu sync.Mutex
	z  *rand.Zipf
	u  *rand.Rand // uniform draw, when set
	n  uint64
}

func newKeys(lc lakegen.Config, seed uint64, draw string) *keys {
	if draw == DrawLight {
		return &keys{u: rand.New(rand.NewPCG(seed, 99)), n: uint64(lc.Users)}
	}
	d := lakegen.DefaultConfig()
	s, v := lc.ZipfS, lc.ZipfV
	if s == 0 {
		s = d.ZipfS
	}
	if v == 0 {
		v = d.ZipfV
	}
	return &keys{z: rand.NewZipf(rand.New(rand.NewPCG(seed, 99)), s, v, uint64(lc.Users-1))}
}

func (k *keys) next() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.u != nil {
		return strconv.FormatInt(lakegen.UserID(k.u.Uint64N(k.n)), 10)
	}
	return strconv.FormatInt(lakegen.UserID(k.z.Uint64()), 10)
}

type client struct {
	url, column, token string
	cols               []string
	limit              int
	http               *http.Client

	once sync.Once
	head []byte // the request body without its key
}

// respPool holds the buffers answers are read into.
var respPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// lookup asks for the first page of key's rows; it returns the rows and
// response bytes.
func (c *client) lookup(ctx context.Context, key string) (int, int64, error) {
	// The request's fixed parts are encoded once; the key is spliced in.
	c.once.Do(func() {
		fixed := map[string]any{"column": c.column, "limit": c.limit}
		if c.cols != nil {
			fixed["columns"] = c.cols
		}
		head, _ := json.Marshal(fixed)
		// {"column":..,"columns":..,"limit":..} → the same, "key" first.
		c.head = append([]byte(`{"key":`), head[1:]...)
	})
	kq, _ := json.Marshal(key)
	b := make([]byte, 0, len(c.head)+len(kq)+1)
	b = append(append(b, c.head[:7]...), kq...)
	b = append(append(b, ','), c.head[7:]...)
	req, err := http.NewRequestWithContext(ctx, "POST", c.url, bytes.NewReader(b))
	if err != nil {
		return 0, 0, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	// Count rows without decoding them: the client shares the machine.
	// The answer is read into a pooled buffer (answers are ≈100 KB).
	bp := respPool.Get().(*bytes.Buffer)
	defer respPool.Put(bp)
	bp.Reset()
	_, err = bp.ReadFrom(resp.Body)
	data := bp.Bytes()
	if err != nil {
		return 0, int64(len(data)), err
	}
	if resp.StatusCode != 200 {
		return 0, int64(len(data)), fmt.Errorf("status %d: %s", resp.StatusCode, data)
	}
	n, err := countRows(data)
	return n, int64(len(data)), err
}

// countRows counts the objects of the answer's "rows" array without
// decoding them (decoding a 1,000-row page with encoding/json cost the
// client as much CPU as the server's lookup): the server writes the array
// first, so it scans from there to its end. Strings, most of an answer's
// bytes (file URIs, timestamps, names), are jumped over with
// bytes.IndexByte to their closing quote; only the bytes between them are
// looked at one by one.
func countRows(b []byte) (int, error) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"rows":[`))
	if !ok {
		return 0, fmt.Errorf("answer does not start with the rows: %.40q", b)
	}
	n, depth := 0, 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '"':
			// The closing quote: the next one not escaped (preceded by an
			// even number of backslashes).
			for {
				q := bytes.IndexByte(rest[i+1:], '"')
				if q < 0 {
					return 0, fmt.Errorf("answer ends inside its rows")
				}
				i += 1 + q
				bs := 0
				for k := i - 1; k >= 0 && rest[k] == '\\'; k-- {
					bs++
				}
				if bs%2 == 0 {
					break
				}
			}
		case '{', '[':
			if depth == 0 {
				n++
			}
			depth++
		case '}', ']':
			if depth == 0 {
				return n, nil // the end of the rows array
			}
			depth--
		}
	}
	return 0, fmt.Errorf("answer ends inside its rows")
}

// storage is the server's storage work so far.
type storage struct{ indexReq, indexBytes, dataReq, dataBytes int64 }

func storageOf(s ariadne.StorageStats) storage {
	return storage{s.Index.Total.Requests, s.Index.Read.Bytes, s.Data.Total.Requests, s.Data.Read.Bytes}
}

// lookupFunc answers one key: its rows and response bytes.
type lookupFunc func(ctx context.Context, key string) (int, int64, error)

// phase runs n lookups (or, with n 0, lookups for d) from conc clients.
//
// A phase of fixed length (n 0) with sample > 0 also reports a sample
// every sample interval (a soak: throughput, p99, errors and RSS over time).
func phase(ctx context.Context, name string, look lookupFunc, next func() string, stats func() (storage, error), conc, n int, d, sample time.Duration) (Phase, error) {
	before, err := stats()
	if err != nil {
		return Phase{}, err
	}
	var (
		mu      sync.Mutex
		lat     []time.Duration
		rows    int64
		bytesIn int64
		errs    int
		firstEr error
		issued  atomic.Int64
	)
	deadline := time.Now().Add(d)
	start := time.Now()
	cpu0 := cpuTime()
	var samples []Sample
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	if n == 0 && sample > 0 {
		go func() {
			defer close(sampled)
			t := time.NewTicker(sample)
			defer t.Stop()
			from, fromErrs, last := 0, 0, start
			for {
				select {
				case <-stopSampling:
					return
				case now := <-t.C:
					mu.Lock()
					win := slices.Clone(lat[from:])
					e := errs - fromErrs
					from, fromErrs = len(lat), errs
					mu.Unlock()
					slices.Sort(win)
					samples = append(samples, Sample{AtSeconds: now.Sub(start).Seconds(), Requests: len(win), Errors: e,
						QPS: float64(len(win)) / now.Sub(last).Seconds(), P50MS: pctOf(win, 0.5), P99MS: pctOf(win, 0.99), RSSBytes: rss()})
					last = now
				}
			}
		}()
	} else {
		close(sampled)
	}
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for ctx.Err() == nil {
				if n > 0 && issued.Add(1) > int64(n) {
					return
				}
				if n == 0 && time.Now().After(deadline) {
					return
				}
				k := next()
				t0 := time.Now()
				r, b, err := look(ctx, k)
				el := time.Since(t0)
				mu.Lock()
				lat = append(lat, el)
				rows += int64(r)
				bytesIn += b
				if err != nil {
					errs++
					if firstEr == nil {
						firstEr = err
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stopSampling)
	<-sampled
	if err := ctx.Err(); err != nil {
		return Phase{}, err
	}
	if errs == len(lat) && firstEr != nil {
		return Phase{}, fmt.Errorf("%s: every lookup failed: %w", name, firstEr)
	}
	el := time.Since(start)
	cpu := (cpuTime() - cpu0).Seconds()
	after, err := stats()
	if err != nil {
		return Phase{}, err
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return pctOf(lat, p) }
	ph := Phase{Name: name, Requests: len(lat), Errors: errs, Seconds: el.Seconds(), QPS: float64(len(lat)) / el.Seconds(),
		P50MS: pct(0.50), P90MS: pct(0.90), P99MS: pct(0.99), MaxMS: pct(1), Rows: rows, ResponseBytes: bytesIn,
		IndexRequests: after.indexReq - before.indexReq, IndexBytes: after.indexBytes - before.indexBytes,
		DataRequests: after.dataReq - before.dataReq, DataBytes: after.dataBytes - before.dataBytes,
		RSSBytes: rss(), CPUSeconds: cpu, Samples: samples}
	if len(lat) > 0 {
		ph.RequestsPerQuery = float64(ph.IndexRequests+ph.DataRequests) / float64(len(lat))
		ph.CPUMSPerLookup = cpu * 1000 / float64(len(lat))
	}
	return ph, nil
}

// pctOf returns the p-quantile of sorted latencies, in milliseconds.
func pctOf(lat []time.Duration, p float64) float64 {
	if len(lat) == 0 {
		return 0
	}
	i := min(len(lat)-1, int(p*float64(len(lat))))
	return float64(lat[i].Microseconds()) / 1000
}

// cpuTime returns the process's CPU time so far (user + system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rss reads the process's resident set size (Linux; 0 elsewhere).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

// Format prints the report as text.
func (r *Report) Format(w io.Writer) {
	fmt.Fprintf(w, "lake: %d files, %d rows, %.1f MB, %d users (Zipf activity)\n", r.Lake.Files, r.Lake.Rows, float64(r.Lake.Bytes)/1e6, r.Lake.Users)
	what := "all columns (data files read)"
	if r.Covered {
		what = "cover columns ts, duration_ms (no data file read)"
	}
	drawn := "drawn as rows are"
	if r.Draw == DrawLight {
		drawn = "drawn uniformly (light keys)"
	}
	fmt.Fprintf(w, "lookups: first page (limit %d) of keys %s, %s; %d clients; %.0f ms injected per storage request\n",
		r.Limit, drawn, what, r.Concurrency, r.LatencyMS)
	fmt.Fprintf(w, "warm-up: %.2f s, %d requests, %.1f MB read, %.1f MB cached\n", r.WarmUp.Seconds, r.WarmUp.Requests,
		float64(r.WarmUp.BytesRead)/1e6, float64(r.WarmUp.CacheBytes)/1e6)
	fmt.Fprintf(w, "%-5s %8s %6s %8s %8s %8s %8s %8s %8s %10s %10s %10s %8s %8s\n", "PHASE", "LOOKUPS", "ERRORS", "QPS", "P50 MS", "P90 MS",
		"P99 MS", "MAX MS", "ROWS/Q", "IDX REQ/Q", "DATA REQ/Q", "DATA MB", "RSS MB", "CPU MS/Q")
	for _, p := range r.Phases {
		q := float64(max(p.Requests, 1))
		fmt.Fprintf(w, "%-5s %8d %6d %8.1f %8.2f %8.2f %8.2f %8.2f %8.1f %10.2f %10.2f %10.2f %8.1f %8.2f\n", p.Name, p.Requests, p.Errors, p.QPS,
			p.P50MS, p.P90MS, p.P99MS, p.MaxMS, float64(p.Rows)/q, float64(p.IndexRequests)/q, float64(p.DataRequests)/q,
			float64(p.DataBytes)/1e6, float64(p.RSSBytes)/1e6, p.CPUMSPerLookup)
	}
	if b := r.DuckDB; b != nil {
		p := b.Phase
		fmt.Fprintf(w, "duckdb baseline (read_parquet WHERE user_id = ? LIMIT %d over the same files, no injected latency): %d lookups, %d errors, %.1f/s, p50 %.2f ms, p99 %.2f ms, %.1f rows/lookup, %.2f CPU ms/lookup\n",
			r.Limit, p.Requests, p.Errors, p.QPS, p.P50MS, p.P99MS, float64(p.Rows)/float64(max(p.Requests, 1)), p.CPUMSPerLookup)
		fmt.Fprintf(w, "server vs duckdb: throughput ×%.2f, p50 ×%.2f, p99 ×%.2f, CPU per lookup ×%.2f\n", b.QPSRatio, b.P50Ratio, b.P99Ratio, b.CPURatio)
	}
	if k := r.Soak; k != nil {
		fmt.Fprintf(w, "soak: %d samples; RSS %.1f → %.1f MB (max %.1f, growth %+.1f MB; cache budget %.1f MB, heap limit %.1f MB); p99 %.2f → %.2f ms (drift ×%.2f); %d errors\n",
			k.Samples, float64(k.RSSFirstBytes)/1e6, float64(k.RSSLastBytes)/1e6, float64(k.RSSMaxBytes)/1e6, float64(k.RSSGrowthBytes)/1e6,
			float64(k.CacheBudgetBytes)/1e6, float64(k.MemoryLimitBytes)/1e6, k.P99FirstMS, k.P99LastMS, k.P99Drift, k.Errors)
		for _, x := range r.Phases[len(r.Phases)-1].Samples {
			fmt.Fprintf(w, "  at %6.0f s: %7d lookups %8.1f/s p50 %8.2f ms p99 %8.2f ms %d errors RSS %.1f MB\n", x.AtSeconds, x.Requests, x.QPS, x.P50MS, x.P99MS, x.Errors, float64(x.RSSBytes)/1e6)
		}
	}
	load := make([]string, len(r.LoadAverage))
	for i, l := range r.LoadAverage {
		load[i] = strconv.FormatFloat(l, 'f', 2, 64)
	}
	fmt.Fprintf(w, "%d CPUs, load average %s\n", r.CPUs, strings.Join(load, " "))
}

// loadAverage reads the 1, 5 and 15 minute load averages (none where
// /proc/loadavg is missing).
func loadAverage() []float64 {
	out := []float64{}
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return out
	}
	for i, f := range strings.Fields(string(b)) {
		if i == 3 {
			break
		}
		if v, err := strconv.ParseFloat(f, 64); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// RunURL loads a running server (Config.URL) with lookups of Config.Keys,
// drawn uniformly, on Config.Index and Config.Column: a "first" phase of
// ColdRequests lookups, then a "steady" one of Duration. The storage work
// is the difference of its /metrics counters (ariadne_storage_*_total).
func RunURL(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	if cfg.Index == "" || cfg.Column == "" || len(cfg.Keys) == 0 {
		return nil, fmt.Errorf("servebench: a server URL needs an index, a key column and keys")
	}
	base := strings.TrimSuffix(cfg.URL, "/")
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Concurrency * 2, MaxConnsPerHost: cfg.Concurrency * 2}}
	cols := []string(nil)
	cl := &client{url: base + "/v1/indexes/" + cfg.Index + "/lookup", column: cfg.Column, token: cfg.Token, cols: cols, limit: cfg.Limit, http: hc}
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(cfg.Seed, 7))
	next := func() string {
		mu.Lock()
		defer mu.Unlock()
		return cfg.Keys[rng.IntN(len(cfg.Keys))]
	}
	stats := func() (storage, error) { return scrape(ctx, hc, base+"/metrics", cfg.Token) }
	rep := &Report{Concurrency: cfg.Concurrency, Limit: cfg.Limit, CPUs: runtime.NumCPU()}
	for _, p := range []struct {
		name string
		n    int
		d    time.Duration
	}{{"first", cfg.ColdRequests, 0}, {"steady", 0, cfg.Duration}} {
		fmt.Fprintf(cfg.Progress, "%s\n", p.name)
		ph, err := phase(ctx, p.name, cl.lookup, next, stats, cfg.Concurrency, p.n, p.d, cfg.Sample)
		if err != nil {
			return nil, err
		}
		ph.RSSBytes = 0 // the server is another process
		rep.Phases = append(rep.Phases, ph)
	}
	rep.LoadAverage = loadAverage()
	return rep, nil
}

// scrape reads the storage counters from a server's /metrics.
func scrape(ctx context.Context, hc *http.Client, url, token string) (storage, error) {
	var s storage
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return s, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return s, fmt.Errorf("%s: status %d", url, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, "{")
		if !ok || (name != "ariadne_storage_requests_total" && name != "ariadne_storage_bytes_total") {
			continue
		}
		labels, val, _ := strings.Cut(rest, "} ")
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			continue
		}
		index := strings.Contains(labels, `store="index"`)
		switch {
		case name == "ariadne_storage_requests_total" && index:
			s.indexReq += int64(v)
		case name == "ariadne_storage_requests_total":
			s.dataReq += int64(v)
		case strings.Contains(labels, `op="read"`) && index:
			s.indexBytes += int64(v)
		case strings.Contains(labels, `op="read"`):
			s.dataBytes += int64(v)
		}
	}
	return s, sc.Err()
}
