package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// indexFolder is the store view of an index's folder, where row indexes live.
func indexFolder(ix *index.Index) store.Store { return store.Sub(ix.Root(), ix.Paths().Dir) }

// trackedURIs lists the index's tracked data files.
func trackedURIs(ctx context.Context, ix *index.Index) ([]string, error) {
	files, err := ix.Files(ctx)
	if err != nil {
		return nil, err
	}
	uris := make([]string, len(files))
	for i, f := range files {
		uris[i] = f.Name
	}
	return uris, nil
}

func newAddRowIndexCmd(g *globals) *cobra.Command {
	var key, kind, name string
	var cover, aggs []string
	var bf rowIndexBuildFlags
	cmd := &cobra.Command{
		Use:   "add-row-index NAME --key COL [--cover COL,...] [--aggregate count|sum:COL|min:COL|max:COL|count-by:COL]... [--kind hash|sorted] [--name ROWINDEX] [--memory SIZE]",
		Short: "Build a row index (key → file, row group, rows) over the index's Parquet files",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if key == "" {
				return usagef("add-row-index: --key is required")
			}
			def := rowindex.Definition{Name: name, Key: key, Kind: rowindex.Kind(kind), Cover: splitList(strings.Join(cover, ","))}
			if def.Name == "" {
				def.Name = key
			}
			for _, a := range aggs {
				ag, err := rowindex.ParseAggregate(a)
				if err != nil {
					return usagef("add-row-index: --aggregate %q: %v", a, err)
				}
				def.Aggregates = append(def.Aggregates, ag)
			}
			opts, err := bf.options(newProgressPrinter(g.env.Stderr), true)
			if err != nil {
				return err
			}
			return g.withIndex(ctx, args[0], func(ix *index.Index) error {
				if f := ix.Format(); f != "parquet" {
					return aerr.Invalid("row indexes serve Parquet data files; index %s holds %s files", ix.Name(), f)
				}
				uris, err := trackedURIs(ctx, ix)
				if err != nil {
					return err
				}
				_, st, err := rowindex.Create(ctx, indexFolder(ix), def, ix.Catalog().Resolver(), uris, opts...)
				if err != nil {
					return err
				}
				return g.emit(map[string]any{"name": ix.Name(), "row_index": def, "build": buildJSON(st)}, func(w io.Writer) {
					fmt.Fprintf(w, "row index %s on %s (%s): %d files, %d rows, %d entries, %d bytes of index for %d bytes of data (%.2f%%), %s\n",
						def.Name, def.Key, orDefault(kind, "hash"), st.Files, st.Rows, st.Entries, st.IndexBytes, st.DataBytes,
						100*float64(st.IndexBytes)/float64(max(st.DataBytes, 1)), st.Elapsed.Round(time.Millisecond))
				})
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&key, "key", "", "key column (top-level primitive)")
	f.StringArrayVar(&cover, "cover", nil, "columns copied into the index entries (comma-separated, repeatable)")
	f.StringArrayVar(&aggs, "aggregate", nil, "per-key aggregate computed at build time (repeatable)")
	f.StringVar(&kind, "kind", "hash", "hash (equality, O(1)) or sorted (ranges)")
	f.StringVar(&name, "name", "", "row index name (default: the key column)")
	bf.register(f)
	return cmd
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func buildJSON(st rowindex.BuildStats) map[string]any {
	return map[string]any{"files": st.Files, "removed": st.Removed, "rows": st.Rows, "entries": st.Entries, "fragments": st.Fragments,
		"index_bytes": st.IndexBytes, "data_bytes": st.DataBytes, "requests": st.Requests, "bytes_read": st.BytesRead,
		"seconds": st.Elapsed.Seconds()}
}

// openRowIndex opens the row index serving key column col (or named so).
func (g *globals) openRowIndex(ctx context.Context, ix *index.Index, col string) (*rowindex.RowIndex, error) {
	folder := indexFolder(ix)
	defs, err := rowindex.List(ctx, folder)
	if err != nil {
		return nil, err
	}
	name := ""
	for _, d := range defs {
		if d.Name == col || (name == "" && d.Key == col) {
			name = d.Name
		}
	}
	if name == "" {
		return nil, fmt.Errorf("index %s has no row index on %q: %w", ix.Name(), col, rowindex.ErrNotFound)
	}
	cfg, err := g.config()
	if err != nil {
		return nil, err
	}
	return rowindex.Open(ctx, folder, name, rowindex.Options{Resolver: ix.Catalog().Resolver(),
		CacheBytes: cfg.RowIndexCacheBytes, PageCacheBytes: cfg.RowIndexPageCacheBytes})
}

func newLookupCmd(g *globals) *cobra.Command {
	var key, cursor string
	var columns []string
	var limit int
	var explain bool
	cmd := &cobra.Command{
		Use:   "lookup NAME --key COL=VALUE|LOW..HIGH [--columns COLS] [--limit N] [--cursor C] [--explain]",
		Short: "Return the rows of a key (or key range) straight from the Parquet files, by the row index",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			q, err := rowindex.ParseKeyFlag(key)
			if err != nil {
				return usagef("lookup: --key: %v", err)
			}
			req := ariadne.LookupRequest{Column: q.KeyColumn, Columns: splitList(strings.Join(columns, ",")), Limit: limit, Cursor: cursor}
			switch {
			case q.Range:
				req.Range = true
				if q.LowText != "" {
					req.Low = q.LowText
				}
				if q.HighText != "" {
					req.High = q.HighText
				}
			case q.KeyText != "":
				req.Key = q.KeyText
			}
			return g.withFaceIndex(ctx, args[0], func(ix *ariadne.Index) error {
				res, err := ix.Lookup(ctx, req)
				if err != nil {
					return err
				}
				return g.printLookup(res, explain)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&key, "key", "", "COL=VALUE, or COL=LOW..HIGH on a sorted row index (either bound may be empty)")
	f.StringArrayVar(&columns, "columns", nil, "columns to return (comma-separated; default all)")
	f.IntVar(&limit, "limit", 0, "at most N rows (0: all)")
	f.StringVar(&cursor, "cursor", "", "continue after the previous page (the cursor it printed)")
	f.BoolVar(&explain, "explain", false, "print the plan and its cost: entries, files, ranges, requests, bytes, cache hits")
	_ = cmd.MarkFlagRequired("key")
	return cmd
}

func planJSON(p rowindex.Plan) map[string]any {
	return map[string]any{
		"kind": p.Kind, "entries": p.Entries, "files": p.Files, "row_ranges": p.RowRanges, "byte_ranges": p.ByteRanges,
		"rows": p.Rows, "covered": p.Covered, "requests": p.Requests(), "bytes_read": p.BytesRead(),
		"bytes_returned": p.BytesReturned, "index_requests": p.Index.Requests, "data_requests": p.Data.Requests,
		"cache_hits": p.Index.CacheHits + p.Data.CacheHits, "misses": p.Index.Misses + p.Data.Misses,
		"pages_decoded": p.Data.Pages, "page_cache_hits": p.Data.PageHits, "page_cache_hit_ratio": pageHitRatio(p),
		"elapsed_ms": float64(p.Elapsed.Microseconds()) / 1000,
	}
}

// pageHitRatio is the share of the data pages a lookup needed that the page
// cache served (0 when it needed none).
func pageHitRatio(p rowindex.Plan) float64 {
	if n := p.Data.Pages + p.Data.PageHits; n > 0 {
		return float64(p.Data.PageHits) / float64(n)
	}
	return 0
}

func (g *globals) printLookup(res *ariadne.LookupResult, explain bool) error {
	records := make([]map[string]any, len(res.Rows))
	for i := range res.Rows {
		records[i] = res.Rows[i].Values
	}
	out := map[string]any{"columns": res.Columns, "rows": records, "cursor": res.Cursor}
	if len(res.Aggregates) > 0 {
		out["aggregates"] = res.Aggregates
	}
	if explain {
		out["plan"] = planJSON(res.Plan)
	}
	return g.emit(out, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(res.Columns, "\t"))
		for _, rec := range records {
			cells := make([]string, len(res.Columns))
			for i, c := range res.Columns {
				cells[i] = fmt.Sprint(valueText(rec[c]))
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		tw.Flush()
		for _, a := range res.Aggregates {
			fmt.Fprintf(w, "aggregates of %v: %v\n", a.Key, a.Values)
		}
		if res.Cursor != "" {
			fmt.Fprintf(w, "more rows: --cursor %s\n", res.Cursor)
		}
		if explain {
			p := res.Plan
			fmt.Fprintf(w, "plan: %s index, %d entries, %d files, %d row ranges → %d byte ranges, covered=%v\n",
				p.Kind, p.Entries, p.Files, p.RowRanges, p.ByteRanges, p.Covered)
			fmt.Fprintf(w, "cost: %d requests (index %d, data %d), %d bytes read, %d bytes returned, %d cache hits, %s\n",
				p.Requests(), p.Index.Requests, p.Data.Requests, p.BytesRead(), p.BytesReturned,
				p.Index.CacheHits+p.Data.CacheHits, p.Elapsed.Round(time.Microsecond))
			fmt.Fprintf(w, "pages: %d decoded, %d from the page cache (hit ratio %.2f)\n", p.Data.Pages, p.Data.PageHits, pageHitRatio(p))
		}
	})
}

func valueText(v any) any {
	if t, ok := v.(time.Time); ok {
		return t.UTC().Format(time.RFC3339Nano)
	}
	return v
}

func newWarmCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "warm NAME",
		Short: "Load the row indexes' caches (manifests, fragments, data file footers) ahead of traffic",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return g.withIndex(ctx, args[0], func(ix *index.Index) error {
				folder := indexFolder(ix)
				defs, err := rowindex.List(ctx, folder)
				if err != nil {
					return err
				}
				costs := map[string]any{}
				for _, d := range defs {
					ri, err := rowindex.Open(ctx, folder, d.Name, rowindex.Options{Resolver: ix.Catalog().Resolver()})
					if err != nil {
						return err
					}
					c, err := ri.Warm(ctx)
					if err != nil {
						return err
					}
					costs[d.Name] = map[string]any{"requests": c.Requests, "bytes_read": c.BytesRead}
				}
				return g.emit(map[string]any{"name": ix.Name(), "warmed": costs}, func(w io.Writer) {
					for n, c := range costs {
						fmt.Fprintf(w, "warmed row index %s: %v\n", n, c)
					}
				})
			})
		},
	}
}

// updateRowIndexes runs after the file index's update: every row index
// forgets the data files the index no longer tracks, and those of vanished
// (the update's skipped files: their rows cannot be served), and appends
// fragments for tracked files it does not list yet.
func updateRowIndexes(ctx context.Context, ix *index.Index, vanished []string, opts ...rowindex.BuildOption) (map[string]rowindex.BuildStats, error) {
	if ix.Format() != "parquet" {
		return nil, nil
	}
	tracked, err := trackedURIs(ctx, ix)
	if err != nil {
		return nil, err
	}
	gone := make(map[string]bool, len(vanished))
	for _, u := range vanished {
		gone[u] = true
	}
	uris := tracked[:0]
	for _, u := range tracked {
		if !gone[u] {
			uris = append(uris, u)
		}
	}
	return rowindex.UpdateAll(ctx, indexFolder(ix), ix.Catalog().Resolver(), uris, opts...)
}

// removeFromRowIndexes runs after the file index's delete-files: every row
// index forgets the deleted data files. It returns the files removed per
// row index.
func removeFromRowIndexes(ctx context.Context, ix *index.Index, uris []string) (map[string]int, error) {
	return rowindex.RemoveAll(ctx, indexFolder(ix), uris)
}
