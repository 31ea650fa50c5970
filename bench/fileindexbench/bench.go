package fileindexbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// This file holds the run and its report; measure.go times each part,
// baseline.go holds what the index is compared with (the bare scan and
// DuckDB's join), keys.go draws the keys and report.go prints the tables.

// LakeSchema is lakegen's Listen record as a Spark schema: the stored
// schema of the benchmark's index.
const LakeSchema = `{"type":"struct","fields":[{"name":"user_id","type":"long","nullable":true,"metadata":{}},{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},{"name":"track_uri","type":"string","nullable":true,"metadata":{}},{"name":"duration_ms","type":"integer","nullable":true,"metadata":{}},{"name":"context","type":"string","nullable":true,"metadata":{}}]}`

// DefaultLake is the benchmark lake: 30 days × 10 files = 300 Parquet
// files, bucketed by user and sorted (Spark's bucketBy(10,
// user_id).sortBy(user_id, ts) per day), with a target of 1.25e9 bytes.
// lakegen sizes files by a measured ~40 B per row, and the actual size
// drifts a few percent either way with the layout; the 25 % margin keeps
// the lake above the 1 GB. 1.25e9 / 40 B ≈ 31 M plays of 1 M
// Zipf-skewed users.
func DefaultLake() lakegen.Config {
	c := lakegen.DefaultConfig()
	c.TargetBytes = 1_250_000_000
	c.Days, c.FilesPerDay = 30, 10
	c.Sorted = true
	return c
}

// Config configures Run. Zero fields take defaults.
type Config struct {
	// Dir holds the lake (Dir/lake, generated once and reused while the
	// lake config is unchanged) and the index root (Dir/fileindex, rebuilt
	// by every run).
	Dir string
	// Lake is the generated data (default DefaultLake()).
	Lake lakegen.Config
	// KeyCounts are the numbers of keys per locate query and per join
	// (default 1, 100 and 1,000).
	KeyCounts []int
	// WarmQueries are the timed warm locates per key count (default 50);
	// ColdQueries the cold ones, each on a fresh FileIndex whose view of the
	// table version must be loaded first, from the version's locate
	// snapshot (default 1).
	WarmQueries, ColdQueries int
	// SkipBareScan skips the baseline scan (smoke tests).
	SkipBareScan bool
	// SkipDuckDB skips the DuckDB joins (smoke tests).
	SkipDuckDB bool
	// Phases selects what runs, of "update" (with its bare scans),
	// "locate" and "join"; nil = all. Without "update" the index a former
	// run left in Dir/fileindex is reused (and must exist), so that the
	// join can be measured alone, in a run short enough for a shared
	// machine.
	Phases []string
	// CPUProfile, if set, is a path prefix: the update's CPU profile is
	// written to CPUProfile+".update.pprof" and each join's (ours, not
	// DuckDB's) to CPUProfile+".join-K.pprof".
	CPUProfile string
	// RowIndex builds a hash row index on user_id (or reuses the one a
	// former run built beside the file index) and lets the joins read
	// through it (the face's auto mode: see ariadne.JoinRequest.RowIndex).
	RowIndex bool
	// Progress, if set, receives progress lines.
	Progress io.Writer
}

func (c *Config) defaults() {
	if c.Lake.TargetBytes == 0 {
		c.Lake = DefaultLake()
	}
	if len(c.KeyCounts) == 0 {
		c.KeyCounts = []int{1, 100, 1000}
	}
	if c.WarmQueries <= 0 {
		c.WarmQueries = 50
	}
	if c.ColdQueries <= 0 {
		c.ColdQueries = 1
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if len(c.Phases) == 0 {
		c.Phases = []string{"update", "locate", "join"}
	}
}

// runs reports whether the phase is selected.
func (c *Config) runs(phase string) bool { return slices.Contains(c.Phases, phase) }

// Report is what Run measured. Its JSON is in the command line's one
// vocabulary (docs/cli-json.md): snake_case keys, durations as numbers
// whose key names the unit (update_seconds, p50_ms; see json.go).
type Report struct {
	// The lake.
	Files     int   `json:"files"`
	Rows      int64 `json:"rows"`
	DataBytes int64 `json:"data_bytes"`
	Sorted    bool  `json:"sorted"`
	Users     int   `json:"users"`
	// Indexes describes the definitions (for the table's caption).
	Indexes []string `json:"indexes"`
	// The update and its baseline.
	Update UpdateReport `json:"update"`
	// Locate latencies, warm and cold, per key count.
	Locate []LocateReport `json:"locate"`
	// Joins per key count: ours and DuckDB's.
	Join []JoinReport `json:"join"`
	// RowIndexBuild is the build of the row index on user_id (Config.RowIndex;
	// 0 when a former run's was reused); RowIndexEntries and RowIndexBytes
	// its size.
	RowIndexBuild        time.Duration `json:"-"`
	RowIndexBuildSeconds float64       `json:"row_index_build_seconds,omitempty"`
	RowIndexEntries      int64         `json:"row_index_entries,omitempty"`
	RowIndexBytes        int64         `json:"row_index_bytes,omitempty"`
	// GOMAXPROCS and the Go version of the run.
	Procs     int    `json:"procs"`
	GoVersion string `json:"go_version"`
}

// UpdateReport is the build side: Update against a bare scan of the indexed
// columns with the same reader.
type UpdateReport struct {
	Time      time.Duration `json:"-"` // JSON: update_seconds
	Batches   int           `json:"batches"`
	MBps      float64       `json:"mb_per_second"` // input MB (1e6 bytes) per second
	ScanTime  time.Duration `json:"-"`             // JSON: scan_seconds; 0 when skipped
	ScanMBps  float64       `json:"scan_mb_per_second"`
	Ratio     float64       `json:"update_over_scan"` // Time / ScanTime
	HeapPeak  uint64        `json:"heap_peak_bytes"`  // largest Go HeapInuse sampled every 10 ms
	RSSPeak   int64         `json:"rss_peak_bytes"`   // VmHWM (Go + DuckDB), -1 if unknown
	RSSReset  bool          `json:"rss_peak_reset"`   // VmHWM was reset before the update (else: process-wide)
	IndexSize int64         `json:"index_bytes"`      // bytes under the index root afterwards
	// TypedScanTime is a bare scan of the same columns with the typed page
	// reader the update's Go summaries use (0 when skipped); TypedRatio is
	// Time / TypedScanTime.
	TypedScanTime time.Duration `json:"-"` // JSON: typed_scan_seconds
	TypedRatio    float64       `json:"update_over_typed_scan"`
	// CPU times (user + system of the whole process) of the update and of
	// the row-reader bare scan: on a shared machine they depend on the
	// load much less than wall times.
	CPU     time.Duration `json:"-"` // JSON: cpu_seconds
	ScanCPU time.Duration `json:"-"` // JSON: scan_cpu_seconds
	// What the update reported: its stages, the files summarised from
	// typed pages, whether the locate snapshot came from memory.
	Stages             fileindex.UpdateStages `json:"-"` // JSON: stages, in seconds
	TypedFiles         int                    `json:"typed_files"`
	SnapshotFromMemory bool                   `json:"snapshot_from_memory"`
}

// LocateReport is one key count's locates.
type LocateReport struct {
	Keys     int           `json:"keys"`
	Cold     bool          `json:"cold"`
	Queries  int           `json:"queries"`
	P50      time.Duration `json:"-"`                  // JSON: p50_ms
	P99      time.Duration `json:"-"`                  // JSON: p99_ms
	Requests float64       `json:"requests_per_query"` // index-store requests
	Bytes    float64       `json:"bytes_per_query"`    // index-store bytes read
	Files    float64       `json:"files_per_query"`    // files located
}

// JoinReport is one key count's inner join, ours against DuckDB's.
type JoinReport struct {
	Keys  int   `json:"keys"`
	Rows  int64 `json:"rows"` // result rows (identical for both, or Run fails)
	Runs  int   `json:"runs"` // repetitions of the pair
	Files int   `json:"files_read"`
	Bytes int64 `json:"bytes_read"` // data-file bytes read by our join
	// Stats says how our join read the index side.
	Stats     fileindex.JoinStats `json:"stats"`
	DuckFiles int                 `json:"duckdb_files"` // every lake file
	// Ours and Duck are each side's latencies over the runs: wall time
	// and the process's CPU time (user + system) during the join. Duck is
	// zero when DuckDB's join was skipped. JSON: p50_ms, p90_ms, p99_ms,
	// cpu_p50_ms, ... and the same prefixed duckdb_.
	Ours Latency `json:"-"`
	Duck Latency `json:"-"`
}

// Latency is one side's quantiles of a join repeated Runs times.
type Latency struct {
	Wall, CPU Quantiles
}

// Quantiles are the nearest-rank p50, p90 and p99 of a set of durations:
// with fewer than 100 runs p99 is the slowest run (and p90 the slowest
// with fewer than 10).
type Quantiles struct {
	P50, P90, P99 time.Duration
}

// quantiles returns the nearest-rank quantiles of lats.
func quantiles(lats []time.Duration) Quantiles {
	if len(lats) == 0 {
		return Quantiles{}
	}
	s := slices.Clone(lats)
	slices.Sort(s)
	rank := func(pct int) time.Duration { // ceil(pct/100 · n), 1-based
		return s[max((len(s)*pct+99)/100, 1)-1]
	}
	return Quantiles{P50: rank(50), P90: rank(90), P99: rank(99)}
}

// Run generates (or reuses) a listening-history lake under cfg.Dir,
// creates a file index on it (a regular index on user_id, a 1 % bloom index
// on track_uri, a range index on ts), runs Update, a bare scan of the same
// columns with the same reader, warm and cold Locates of present (drawn with
// the lake's skew) and absent users, and inner Joins of K users against the
// lake, compared with DuckDB joining the same keys against read_parquet over
// every file. The two joins must return the same rows (as a multiset:
// equal row counts and equal sums of per-row hashes), or Run fails.
//
// Run is meant for a machine otherwise idle: it measures wall time.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	if cfg.Dir == "" {
		return nil, errors.New("fileindex bench: Dir is required")
	}
	lakeDir := filepath.Join(cfg.Dir, "lake")
	files, err := lakegen.Ensure(ctx, lakeDir, cfg.Lake, cfg.Progress)
	if err != nil {
		return nil, err
	}
	rep := &Report{Files: len(files), Sorted: cfg.Lake.Sorted, Users: cfg.Lake.Users,
		Procs: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()}
	uris := make([]string, len(files))
	paths := make([]string, len(files))
	for i, f := range files {
		rep.Rows += f.Rows
		rep.DataBytes += f.Size
		paths[i] = filepath.Join(lakeDir, filepath.FromSlash(f.Key))
		uris[i] = "file://" + paths[i]
	}
	fmt.Fprintf(cfg.Progress, "lake: %d files, %.0f MB, %d rows\n", rep.Files, float64(rep.DataBytes)/1e6, rep.Rows)

	src, err := schema.Parse(LakeSchema)
	if err != nil {
		return nil, err
	}
	for _, p := range cfg.Phases {
		if p != "update" && p != "locate" && p != "join" {
			return nil, fmt.Errorf("fileindex bench: unknown phase %q (update, locate, join)", p)
		}
	}
	indexed := []string{"user_id", "track_uri", "ts"}
	fresh := cfg.runs("update")
	if !cfg.SkipBareScan && fresh {
		fmt.Fprintf(cfg.Progress, "bare scan of %s...\n", strings.Join(indexed, ", "))
		cpu0 := cpuTime()
		rep.Update.ScanTime, err = bareScan(ctx, src, indexed, uris)
		if err != nil {
			return nil, err
		}
		rep.Update.ScanCPU = cpuTime() - cpu0
		fmt.Fprintf(cfg.Progress, "typed scan of %s...\n", strings.Join(indexed, ", "))
		if rep.Update.TypedScanTime, err = typedScan(ctx, src, indexed, uris); err != nil {
			return nil, err
		}
	}

	// The index: a fresh root on local disk, counted, with data files read
	// through a counted resolver.
	idxDir := filepath.Join(cfg.Dir, "fileindex")
	if !fresh {
		if _, err := os.Stat(filepath.Join(idxDir, "indexes", "listens")); err != nil {
			return nil, fmt.Errorf("fileindex bench: without the update phase, a former run's index is needed: %w", err)
		}
	} else if err := os.RemoveAll(idxDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(idxDir, 0o755); err != nil {
		return nil, err
	}
	base, err := store.Open(ctx, "file://"+idxDir)
	if err != nil {
		return nil, err
	}
	defer base.Close()
	root := store.NewCounting(base)
	data := &countingWrap{}
	res := store.NewResolver(store.ResolverOptions{Wrap: data.wrap})
	defer res.Close()
	ccfg := config.Defaults()
	cat := index.NewCatalog(root, index.Options{Config: ccfg, Resolver: res})
	rep.Indexes = []string{"user_id regular", "track_uri bloom 1%", "ts range"}
	if !fresh {
		ix, err := cat.Get(ctx, "listens")
		if err != nil {
			return nil, err
		}
		return rep, measureQueries(ctx, cfg, rep, ix, root, data, paths, uris, idxDir)
	}
	ix, err := cat.Open(ctx, "listens", index.OpenOptions{Schema: src, Format: "parquet"})
	if err != nil {
		return nil, err
	}
	if _, err := ix.AddFiles(ctx, uris...); err != nil {
		return nil, err
	}
	// user_id: a regular (exact) index. A bloom index would be smaller (≈1.2 B
	// per value instead of ≈110 B in the view), but it cannot answer more
	// than bloom.MaxUsefulProbes(0.01) = 458 keys (beyond that every file
	// matches), and a 1,000-key join is one of the cases.
	if err := ix.AddIndex(ctx, "user_id"); err != nil {
		return nil, err
	}
	if err := ix.AddBloomIndex(ctx, "track_uri", 0.01); err != nil {
		return nil, err
	}
	if err := ix.AddRangeIndex(ctx, "ts"); err != nil {
		return nil, err
	}

	fmt.Fprintf(cfg.Progress, "update...\n")
	prof := ""
	if cfg.CPUProfile != "" {
		prof = cfg.CPUProfile + ".update.pprof"
	}
	if err := measureUpdate(ctx, fileindex.New(ix, fileindex.Options{}), rep, idxDir, prof); err != nil {
		return nil, err
	}
	return rep, measureQueries(ctx, cfg, rep, ix, root, data, paths, uris, idxDir)
}

// measureQueries runs the locate and join phases.
func measureQueries(ctx context.Context, cfg Config, rep *Report, ix *index.Index, root *store.Counting, data *countingWrap, paths, uris []string, idxDir string) error {
	keyGen := newKeyGen(cfg.Lake)
	fi := fileindex.New(ix, fileindex.Options{})
	if cfg.runs("locate") {
		if err := measureLocates(ctx, cfg, rep, ix, fi, root, keyGen); err != nil {
			return err
		}
	}
	if !cfg.runs("join") {
		return nil
	}
	var loc fileindex.RowLocator
	if cfg.RowIndex {
		var err error
		if loc, err = rowIndexLocator(ctx, cfg, rep, ix, uris, idxDir, ariadne.JoinRowIndexAuto); err != nil {
			return err
		}
	}
	for _, k := range cfg.KeyCounts {
		fmt.Fprintf(cfg.Progress, "join, %d keys...\n", k)
		prof := ""
		if cfg.CPUProfile != "" {
			prof = fmt.Sprintf("%s.join-%d.pprof", cfg.CPUProfile, k)
		}
		j, err := measureJoin(ctx, fi, data, keyGen.present(k), paths, cfg.SkipDuckDB, prof, loc)
		if err != nil {
			return err
		}
		rep.Join = append(rep.Join, j)
	}
	return nil
}

// measureLocates times cold and warm locates per key count.
func measureLocates(ctx context.Context, cfg Config, rep *Report, ix *index.Index, fi *fileindex.FileIndex, root *store.Counting, keyGen *keyGen) error {
	fmt.Fprintf(cfg.Progress, "locate...\n")
	for _, k := range cfg.KeyCounts {
		l, err := coldLocate(ctx, ix, root, keyGen, k, cfg.ColdQueries)
		if err != nil {
			return err
		}
		rep.Locate = append(rep.Locate, l)
	}
	for _, k := range cfg.KeyCounts {
		l, err := warmLocate(ctx, fi, root, keyGen, k, cfg.WarmQueries)
		if err != nil {
			return err
		}
		rep.Locate = append(rep.Locate, l)
	}
	return nil
}

// dirSize sums the sizes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// rowIndexLocator builds the hash row index "user_id" over the lake's
// files unless a former run left it, and returns the face's auto-mode
// row locator over it.
func rowIndexLocator(ctx context.Context, cfg Config, rep *Report, ix *index.Index, uris []string, idxDir, mode string) (fileindex.RowLocator, error) {
	folder := store.Sub(ix.Root(), ix.Paths().Dir)
	res := store.NewResolver(store.ResolverOptions{})
	defer res.Close()
	if _, err := rowindex.Open(ctx, folder, "user_id", rowindex.Options{}); errors.Is(err, rowindex.ErrNotFound) {
		fmt.Fprintf(cfg.Progress, "row index on user_id...\n")
		// The index's own file names (a reused index may name the lake
		// by another path than this run's).
		tracked, err := ix.Files(ctx)
		if err != nil {
			return nil, err
		}
		uris = uris[:0:0]
		for _, f := range tracked {
			uris = append(uris, f.Name)
		}
		t0 := time.Now()
		if _, _, err := rowindex.Create(ctx, folder, rowindex.Definition{Name: "user_id", Key: "user_id", Kind: rowindex.KindHash}, res, uris); err != nil {
			return nil, err
		}
		rep.RowIndexBuild = time.Since(t0)
		rep.RowIndexBuildSeconds = rep.RowIndexBuild.Seconds()
	} else if err != nil {
		return nil, err
	}
	st, err := ariadne.Open(ctx, "file://"+idxDir)
	if err != nil {
		return nil, err
	}
	// The Store lives as long as the process (the bench is one run).
	face, err := st.Index(ctx, "listens")
	if err != nil {
		return nil, err
	}
	info, err := face.DescribeRowIndex(ctx, "user_id")
	if err != nil {
		return nil, err
	}
	rep.RowIndexEntries, rep.RowIndexBytes = info.Entries, info.IndexBytes
	return face.JoinRowLocator(mode)
}
