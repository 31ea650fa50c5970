package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/store"
)

func newPrepareCmd(g *globals) *cobra.Command {
	var out, key string
	var sortCols []string
	var opts prepared.Options
	var memoryMB int64
	var overwrite bool
	cmd := &cobra.Command{
		Use:   "prepare SRC... --out DEST --key COL [--sort COL,...] [--buckets N] [--page-bytes N] [--row-group-rows N]",
		Short: "Rewrite Parquet files as prepared Parquet: sorted by key, bucketed, with key-aligned pages",
		Long: `prepare reads the Parquet files SRC (files or folders, local paths or URIs; a folder's
partition folders such as date=2024-06-01/ are kept) and writes them under DEST as prepared Parquet:
per partition one file per hash bucket of the key (Spark's bucketBy: part-NNNNN.parquet), each sorted
by (key, sort columns), with data pages that never split a key (one page per key with --page-bytes 0),
a page index, a bloom filter on the key and an ariadne.prepared marker. Every engine reads the files
as ordinary Parquet; the row index reads one small page per column for a key. See docs/prepared.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if out == "" || key == "" {
				return usagef("prepare: --out DEST and --key COL are required")
			}
			opts.Key, opts.Sort, opts.Overwrite = key, sortCols, overwrite
			opts.MemoryBytes = memoryMB << 20
			dstURL, err := folderURL(out)
			if err != nil {
				return err
			}
			dst, err := store.Open(ctx, dstURL)
			if err != nil {
				return err
			}
			defer dst.Close()
			res := store.NewResolver(store.ResolverOptions{})
			defer res.Close()
			srcs, err := prepared.Sources(ctx, res, args)
			if err != nil {
				return err
			}
			pp := newProgressPrinter(g.env.Stderr)
			opts.Progress = func(p prepared.Progress) {
				pp.report(fileindex.Progress{Phase: p.Phase, Done: p.Done, Total: p.Total, Bytes: p.Bytes})
			}
			st, err := prepared.PrepareFiles(ctx, res, srcs, dst, opts)
			if err != nil {
				return err
			}
			return g.emit(prepareJSON(dst.URL(), st), func(w io.Writer) {
				fmt.Fprintf(w, "prepared %d source file(s) (%.1f MB) into %d file(s) (%.1f MB) under %s\n",
					st.Sources, float64(st.SourceBytes)/1e6, len(st.Files), float64(st.Bytes)/1e6, dst.URL())
				fmt.Fprintf(w, "%d rows, %d keys, %d data pages (%.2f per key and column, at most %d), page index %.1f KB\n",
					st.Rows, st.Keys, st.Pages, st.PagesPerKey(), st.MaxPagesPerKey, float64(st.PageIndexBytes)/1e3)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "output folder (local path or URI: file://, s3://, gs://, azblob://, mem://)")
	f.StringVar(&key, "key", "", "key column (top-level primitive)")
	f.StringSliceVar(&sortCols, "sort", nil, "further sort columns within a key (comma-separated)")
	f.IntVar(&opts.Buckets, "buckets", 1, "hash buckets per partition (Spark's bucketBy: pmod(murmur3(key), N))")
	f.IntVar(&opts.PageBytes, "page-bytes", 0, "target page size in uncompressed bytes; whole keys are packed up to it (0: one page per key)")
	f.Int64Var(&opts.RowGroupRows, "row-group-rows", prepared.DefaultRowGroupRows, "rows per row group (cut at key boundaries)")
	f.Int64Var(&memoryMB, "memory-mb", prepared.DefaultMemoryBytes>>20, "sort budget in MiB (one partition's rows are sorted in memory)")
	f.BoolVar(&overwrite, "overwrite", false, "replace existing output files (default: refuse)")
	return cmd
}

// folderURL turns a local path into a file:// URL; URLs are kept.
func folderURL(s string) (string, error) {
	if strings.Contains(s, "://") {
		return s, nil
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return "", err
	}
	return "file://" + filepath.ToSlash(abs), nil
}

// prepareJSON renders the stats for --json.
func prepareJSON(dest string, st prepared.Stats) map[string]any {
	files := make([]map[string]any, 0, len(st.Files))
	for _, f := range st.Files {
		files = append(files, map[string]any{
			"key": f.Key, "bucket": f.Bucket, "rows": f.Rows, "bytes": f.Bytes, "row_groups": f.RowGroups,
			"keys": f.Keys, "pages": f.Pages, "pages_per_column": f.PagesPerColumn,
			"max_pages_per_key": f.MaxPagesPerKey, "page_index_bytes": f.PageIndexBytes,
		})
	}
	return map[string]any{
		"out": dest, "sources": st.Sources, "source_bytes": st.SourceBytes, "rows": st.Rows, "bytes": st.Bytes,
		"keys": st.Keys, "pages": st.Pages, "pages_per_key": st.PagesPerKey(), "max_pages_per_key": st.MaxPagesPerKey,
		"page_index_bytes": st.PageIndexBytes, "files": files,
	}
}
