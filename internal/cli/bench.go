package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/bench/fileindexbench"
	"github.com/ariadne-go/ariadne/bench/rowindexbench"
	"github.com/ariadne-go/ariadne/bench/servebench"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/rowindex"
)

// benchDir returns the benchmark's data folder: dir, or a new temporary
// folder (announced on stderr, so a later run can reuse its lake).
func (g *globals) benchDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	d, err := os.MkdirTemp("", "ariadne-bench-")
	if err != nil {
		return "", err
	}
	if g.jsonOut {
		g.notice("bench", "data in "+d)
	} else {
		fmt.Fprintf(g.env.Stderr, "bench data in %s\n", d)
	}
	return d, nil
}

func newBenchCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Reproducible benchmarks on generated data"}
	cmd.AddCommand(newBenchRowIndexCmd(g))
	cmd.AddCommand(newBenchFileIndexCmd(g))
	cmd.AddCommand(newBenchServeCmd(g))
	return cmd
}

// newBenchRowIndexCmd is `ariadne bench rowindex`: the row index against
// DuckDB per key class (package bench/rowindexbench), on a generated lake
// or, with --dir, on the user's own Parquet files.
func newBenchRowIndexCmd(g *globals) *cobra.Command {
	var work, dir, key, layout, kind string
	var sizeMB, lookups, frameMin int
	var overview bool
	var cc rowindexbench.ClassConfig
	rc := &cobra.Command{
		Use:   "rowindex [--layout L] [--size-mb N] [--work DIR] | --dir PATH --key COL",
		Short: "Row index lookups vs DuckDB per key class, on a generated lake or on existing Parquet files",
		Long: `Builds a row index and looks keys up through it (warm) and through DuckDB's
read_parquet(...) WHERE key = ? on the same files, in the same run, per key class: absent keys, keys of
1-100, 101-1k, 1k-10k, 10k-100k and >100k rows, drawn two ways (the key of a random row, so hot keys count
as often as traffic asks for them, and uniformly over distinct keys), the top key, and the top key with
--limit. Reports p50/p90/p99 of both, their ratio (row index / DuckDB), and the row index's requests and
bytes per lookup. Every system must return the scanned row count for every key, or the run fails.

Generated lakes (--layout): sorted (bucketed and sorted by user), prepared (the same, key-aligned pages),
arrival (arrival order), skewed (arrival order, a top user with ~19 % of the rows, 12k-row row groups,
16 KiB pages), arrow (arrival order written by arrow-go with default properties: one row group and 1 MiB
pages per file, dictionaries, no page index, no compression), framed (the sorted lake, kept in
WORK/source, through prepare --frames --frame-raw-blocks; DuckDB is also timed on the source files),
cogrouped (the same source through prepare --frames --blob served=ts,track_uri,duration_ms,context
--blob-codec zstd-dict: a stored row per key and file; DuckDB on those files returns the key's stored rows,
as it cannot decode the blob, and is timed on the source files too). The
lake is generated once into WORK/lake and reused; --overview adds the standard parquet-go reader and the row index cold, on local disk
and behind 2 ms and 20 ms of injected latency.

--dir PATH --key COL measures the *.parquet files under PATH instead (the index is built in a temporary
folder and removed).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			k := rowindex.Kind(kind)
			if kind != "" && k != rowindex.KindHash && k != rowindex.KindSorted {
				return aerr.Invalid("--kind wants sorted or hash, got %q", kind)
			}
			var rep *rowindexbench.Report
			var err error
			if err := cc.Check(); err != nil {
				return err
			}
			if dir != "" || key != "" {
				if dir == "" || key == "" {
					return aerr.Invalid("--dir PATH and --key COL go together (the generated lake's work folder is --work)")
				}
				rep, err = rowindexbench.RunDir(cmd.Context(), rowindexbench.DirConfig{Path: dir, Key: key, Kind: k, Classes: cc, Progress: g.messages("bench")})
			} else {
				if _, err := rowindexbench.LakeConfig(layout, sizeMB); err != nil {
					return err
				}
				cfg := rowindexbench.Config{Layout: layout, SizeMB: sizeMB, Kind: k, Classes: cc, Overview: overview,
					Lookups: lookups, Progress: g.messages("bench")}
				if cmd.Flags().Changed("frame-min-bytes") {
					if layout != rowindexbench.LayoutFramed || frameMin < 0 {
						return aerr.Invalid("--frame-min-bytes wants --layout framed and N ≥ 0")
					}
					cfg.FrameMinBytes = &frameMin
				}
				if cfg.Dir, err = g.benchDir(work); err != nil {
					return err
				}
				rep, err = rowindexbench.Run(cmd.Context(), cfg)
			}
			if err != nil {
				return err
			}
			return g.emit(rep, func(w io.Writer) { rep.Format(w) })
		},
	}
	f := rc.Flags()
	f.StringVar(&work, "work", "", "folder for the generated lake (reused between runs) and the index (default: a new temporary folder)")
	f.IntVar(&sizeMB, "size-mb", rowindexbench.DefaultSizeMB, "approximate size of the generated lake in MB (the documented runs use 1024)")
	f.StringVar(&layout, "layout", rowindexbench.LayoutSorted, "generated lake layout: "+strings.Join(rowindexbench.Layouts, ", "))
	f.IntVar(&frameMin, "frame-min-bytes", prepared.DefaultMinFrameBytes, "with --layout framed: prepare's --frame-min-bytes (0: a frame per key); a changed value prepares WORK/lake again")
	f.StringVar(&dir, "dir", "", "measure the existing *.parquet files under this local folder (with --key)")
	f.StringVar(&key, "key", "", "key column of --dir's files")
	f.StringVar(&kind, "kind", "", "row index kind the lookups use: sorted (default) or hash")
	f.IntVar(&cc.KeysPerClass, "keys", 20, "keys drawn per class and sampling")
	f.StringSliceVar(&cc.Only, "classes", nil, `measure only these classes (absent, 1-100, 101-1k, 1k-10k, 10k-100k, >100k, all, "top key")`)
	f.IntVar(&cc.TopRepeats, "top-repeats", 5, "lookups of the top key, with and without --limit")
	f.IntVar(&cc.Limit, "limit", 100, "row limit of the limited top-key lookups")
	f.Int64Var(&cc.ResidentBytes, "resident-bytes", 0, "budget of the row index's resident fragment groups (0: sized to the index, at most 256 MiB; negative: none)")
	f.Int64Var(&cc.ShapeBytes, "shape-bytes", 0, "budget of the page shapes the warm row index learns by reading once every data page it may read in parts (config rowIndexShapeBytes; 0: the default, 128 MiB, pages read only of files on local stores; negative: none)")
	f.DurationVar(&cc.Timeout, "timeout", 0, "cut each lookup of either system after this long (0: never); cut lookups count at the timeout")
	f.DurationVar(&cc.Budget, "budget", 0, "stop drawing keys of a class once both systems spent this long on it (0: no budget)")
	f.BoolVar(&overview, "overview", false, "generated lakes: add the standard reader and the cold row index, on local disk and behind injected latency")
	f.IntVar(&lookups, "lookups", 0, "--overview: lookups per local-disk scenario (default 200)")
	return rc
}

// newBenchFileIndexCmd is `ariadne bench fileindex`: the file index's
// benchmark (package bench/fileindexbench) on a generated listening history.
func newBenchFileIndexCmd(g *globals) *cobra.Command {
	var dir string
	var sizeMB int
	var arrival, rowIndex bool
	var warm int
	var phases, cpuProfile string
	var keys []int
	c := &cobra.Command{
		Use:   "fileindex [--dir DIR] [--size-mb N] [--arrival] [--queries N] [--phases LIST] [--keys LIST]",
		Short: "File index update, locate and join (vs DuckDB over all files) on a generated listening history of ≥ 1 GB",
		Long: `Generates (or reuses, in DIR/lake) a listening-history lake of 300 Parquet files, indexes it
(user_id regular, track_uri bloom 1%, ts range), and measures: update MB/s against a bare scan of the same
columns with the same reader, peak Go heap and RSS; warm and cold locate latency for 1, 100 and 1,000 users;
inner joins of 1, 100 and 1,000 users through the index against DuckDB joining them with read_parquet over
every file (same row count checked). --phases update,locate,join selects parts (without update, the index a
former run left in DIR is reused), --keys 1,1000 the key counts, --cpuprofile PREFIX writes CPU profiles of
the update and of each key count's first join. --json prints the report.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := fileindexbench.Config{Dir: dir, WarmQueries: warm, Progress: g.messages("bench"), Lake: fileindexbench.DefaultLake(),
				KeyCounts: keys, CPUProfile: cpuProfile, RowIndex: rowIndex}
			if phases != "" {
				cfg.Phases = strings.Split(phases, ",")
			}
			if sizeMB > 0 {
				cfg.Lake.TargetBytes = int64(sizeMB) * 1e6
			}
			cfg.Lake.Sorted = !arrival
			var err error
			if cfg.Dir, err = g.benchDir(dir); err != nil {
				return err
			}
			rep, err := fileindexbench.Run(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			return g.emit(rep, func(w io.Writer) { rep.Format(w) })
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "folder for the generated lake (reused between runs) and the index")
	c.Flags().IntVar(&sizeMB, "size-mb", 0, "approximate lake size in MB of 10^6 bytes (default 1250)")
	c.Flags().BoolVar(&arrival, "arrival", false, "write the lake in arrival (time) order instead of bucketed by user")
	c.Flags().IntVar(&warm, "queries", 0, "warm locates per key count (default 50)")
	c.Flags().StringVar(&phases, "phases", "", "comma-separated parts to run: update, locate, join (default all)")
	c.Flags().IntSliceVar(&keys, "keys", nil, "key counts of the locates and joins (default 1,100,1000)")
	c.Flags().StringVar(&cpuProfile, "cpuprofile", "", "path prefix of CPU profiles of the update and of our joins")
	c.Flags().BoolVar(&rowIndex, "row-index", false, "build a hash row index on user_id (reused from a former run) and let the joins read through it")
	return c
}

// newBenchServeCmd is `ariadne bench serve`: a load generator against the
// HTTP server on loopback (package bench/servebench).
func newBenchServeCmd(g *globals) *cobra.Command {
	var cfg servebench.Config
	var dir, keysFile, tokenEnv string
	c := &cobra.Command{
		Use:   "serve [--dir DIR] [--size-mb N] [--concurrency N] [--duration D] [--latency D] [--covered] | --url URL --index NAME --column COL --keys FILE",
		Short: "Lookups per second and latency of `ariadne serve` on loopback, cold and warm, on a generated lake",
		Long: `Generates (or reuses, in DIR) a listening-history lake with Zipf user activity, indexes it (bloom file
index and a hash row index on user_id covering ts and duration_ms), serves it with the HTTP server on a
loopback socket with --latency injected before every storage request, and sends lookups for the first page
(--limit rows) of users drawn as the rows are, from --concurrency clients: first --cold lookups before any
warm-up, then, after the server's warm-up, for --duration. Reports per phase lookups/s, p50/p90/p99 and
max latency, errors, rows, and the server's storage requests and bytes. --json prints the report.

--url loads a running ` + "`ariadne serve`" + ` instead: lookups of the keys in --keys (one per line, drawn
uniformly) on --index and --column, a "first" phase of --cold lookups and a "steady" one of --duration; the
storage work is read from its /metrics (--token-env names the variable holding its bearer token).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if cfg.URL != "" {
				if keysFile == "" || cfg.Index == "" || cfg.Column == "" {
					return usagef("bench serve: --url needs --index, --column and --keys")
				}
				b, err := os.ReadFile(keysFile)
				if err != nil {
					return err
				}
				for _, k := range strings.Split(string(b), "\n") {
					if k = strings.TrimSpace(k); k != "" {
						cfg.Keys = append(cfg.Keys, k)
					}
				}
				if tokenEnv != "" {
					cfg.Token, _ = g.env.LookupEnv(tokenEnv)
				}
			} else if cfg.Dir, err = g.benchDir(dir); err != nil {
				return err
			}
			cfg.Progress = g.messages("bench")
			rep, err := servebench.Run(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			return g.emit(rep, func(w io.Writer) { rep.Format(w) })
		},
	}
	f := c.Flags()
	f.StringVar(&dir, "dir", "", "folder for the generated lake and index (reused between runs)")
	f.IntVar(&cfg.SizeMB, "size-mb", 64, "approximate lake size in MiB")
	f.IntVar(&cfg.Users, "users", 20000, "distinct users in the lake")
	f.IntVar(&cfg.Concurrency, "concurrency", 16, "concurrent clients")
	f.DurationVar(&cfg.Duration, "duration", 20*time.Second, "length of the warm phase")
	f.IntVar(&cfg.ColdRequests, "cold", 0, "lookups of the cold phase (default 2 × concurrency)")
	f.IntVar(&cfg.Limit, "limit", 1000, "rows asked per lookup (the first page)")
	f.BoolVar(&cfg.Covered, "covered", false, "ask for cover columns only (no data file read)")
	f.DurationVar(&cfg.Latency, "latency", 0, "latency injected before every storage request of the server (e.g. 20ms)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the key draw")
	f.StringVar(&cfg.Draw, "draw", "zipf", "how keys are drawn: zipf (as the rows are: heavy users dominate) or light (users uniformly: most have a few rows)")
	f.DurationVar(&cfg.Sample, "sample", 0, "soak: sample throughput, p50/p99, errors and RSS every this long during the warm phase (e.g. 30s with --duration 10m)")
	f.BoolVar(&cfg.Baseline, "baseline", true, "also answer the warm phase's keys with DuckDB over the same files, for as long (generated lakes)")
	f.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the warm phase to this file")
	f.StringVar(&cfg.URL, "url", "", "load this running server (http://host:port) instead of a generated lake")
	f.StringVar(&cfg.Index, "index", "", "--url: the index to look keys up in")
	f.StringVar(&cfg.Column, "column", "", "--url: the key column (or row index name)")
	f.StringVar(&keysFile, "keys", "", "--url: file of keys, one per line")
	f.StringVar(&tokenEnv, "token-env", "", "--url: environment variable holding the server's bearer token")
	return c
}
