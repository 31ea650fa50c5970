package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne/fileindex"
)

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
			if cfg.Dir == "" {
				d, err := os.MkdirTemp("", "ariadne-bench-")
				if err != nil {
					return err
				}
				cfg.Dir = d
				fmt.Fprintf(g.env.Stderr, "bench data in %s\n", d)
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
