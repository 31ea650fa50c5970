package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/internal/lakegen"
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
	fmt.Fprintf(g.env.Stderr, "bench data in %s\n", d)
	return d, nil
}

func newBenchCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Reproducible benchmarks on generated data"}
	var dir string
	var sizeMB int
	var lookups int
	var layout, kind string
	rc := &cobra.Command{
		Use:   "rowindex [--dir DIR] [--size-mb N] [--lookups N] [--layout sorted|prepared|arrival] [--kind sorted|hash]",
		Short: "Row index lookups vs a standard Parquet reader (and DuckDB, in the duckbench test) on a generated listening history",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := rowindex.BenchConfig{Dir: dir, Lookups: lookups, Kind: rowindex.Kind(kind), Progress: g.env.Stderr}
			if kind != "" && cfg.Kind != rowindex.KindHash && cfg.Kind != rowindex.KindSorted {
				return aerr.Invalid("--kind wants sorted or hash, got %q", kind)
			}
			cfg.Lake = lakegen.DefaultConfig()
			if sizeMB > 0 {
				cfg.Lake = benchLake(sizeMB)
			}
			switch layout {
			case "sorted":
				cfg.Lake.Sorted = true
			case "prepared":
				cfg.Lake.Sorted, cfg.Lake.Prepared = false, true
			case "arrival":
				cfg.Lake.Sorted = false
			default:
				return aerr.Invalid("--layout wants sorted, prepared or arrival, got %q", layout)
			}
			var err error
			if cfg.Dir, err = g.benchDir(dir); err != nil {
				return err
			}
			rep, err := rowindex.Bench(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			return g.emit(rep, func(w io.Writer) { rep.Format(w) })
		},
	}
	rc.Flags().StringVar(&dir, "dir", "", "folder for the generated lake (reused between runs) and the index")
	rc.Flags().IntVar(&sizeMB, "size-mb", 0, "approximate lake size in MB (default: the generator's, about 1 GB)")
	rc.Flags().IntVar(&lookups, "lookups", 0, "lookups per local-disk scenario (default 200)")
	rc.Flags().StringVar(&layout, "layout", "sorted", "lake layout: sorted (bucketed and sorted by user), prepared (the same, written by the prepared writer with key-aligned pages) or arrival")
	rc.Flags().StringVar(&kind, "kind", "", "row index kind the lookups use: sorted (default) or hash")
	cmd.AddCommand(rc)
	cmd.AddCommand(newBenchFileIndexCmd(g))
	return cmd
}

// benchLake scales the default benchmark lake to about sizeMB megabytes,
// keeping users and tracks proportional so per-key statistics stay alike.
func benchLake(sizeMB int) lakegen.Config {
	c := lakegen.DefaultConfig()
	scale := float64(sizeMB) * (1 << 20) / float64(c.TargetBytes)
	c.TargetBytes = int64(sizeMB) << 20
	c.Users = max(1000, int(float64(c.Users)*scale))
	c.Tracks = max(1000, int(float64(c.Tracks)*scale))
	c.Sorted = true
	return c
}

// newBenchFileIndexCmd is `ariadne bench fileindex`: the file index's
// issue-3 benchmark (fileindex.Bench) on a generated listening history.
func newBenchFileIndexCmd(g *globals) *cobra.Command {
	var dir string
	var sizeMB int
	var arrival bool
	var warm int
	c := &cobra.Command{
		Use:   "fileindex [--dir DIR] [--size-mb N] [--arrival] [--queries N]",
		Short: "File index update, locate and join (vs DuckDB over all files) on a generated listening history of ≥ 1 GB",
		Long: `Generates (or reuses, in DIR/lake) a listening-history lake of 300 Parquet files, indexes it
(user_id regular, track_uri bloom 1%, ts range), and measures: update MB/s against a bare scan of the same
columns with the same reader, peak Go heap and RSS; warm and cold locate latency for 1, 100 and 1,000 users;
inner joins of 1, 100 and 1,000 users through the index against DuckDB joining them with read_parquet over
every file (same row count checked). --json prints the report.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := fileindex.BenchConfig{Dir: dir, WarmQueries: warm, Progress: g.env.Stderr, Lake: fileindex.BenchDefaultLake()}
			if sizeMB > 0 {
				cfg.Lake.TargetBytes = int64(sizeMB) * 1e6
			}
			cfg.Lake.Sorted = !arrival
			var err error
			if cfg.Dir, err = g.benchDir(dir); err != nil {
				return err
			}
			rep, err := fileindex.Bench(cmd.Context(), cfg)
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
	return c
}
