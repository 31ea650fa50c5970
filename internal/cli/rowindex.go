package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/internal/jsonappend"
	"github.com/ariadne-go/ariadne/rowindex"
)

func newAddRowIndexCmd(g *globals) *cobra.Command {
	var key, kind, name, engine, spark string
	var cover, aggs []string
	var bf rowIndexBuildFlags
	cmd := &cobra.Command{
		Use:   "add-row-index NAME --key COL [--cover COL,...] [--aggregate count|sum:COL|min:COL|max:COL|count-by:COL]... [--kind hash|sorted] [--name ROWINDEX] [--memory SIZE] [--engine duckdb|spark --spark sc://HOST:PORT]",
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
			opts, err := bf.options(g.progress(), true)
			if err != nil {
				return err
			}
			eng, err := g.updateEngine(ctx, "add-row-index", engine, spark)
			if err != nil {
				return err
			}
			if eng != nil {
				defer eng.Close()
				opts = append(opts, rowindex.WithEngine(eng, 0))
			}
			return g.withFaceIndex(ctx, args[0], func(ix *ariadne.Index) error {
				_, st, err := ix.AddRowIndex(ctx, def, opts...)
				if err != nil {
					return err
				}
				out := map[string]any{"name": ix.Name(), "row_index": def, "build": buildJSON(st)}
				if eng != nil {
					out["engine"] = map[string]any{"name": eng.Name(), "files_read": st.EngineFilesRead, "bytes_read": st.EngineBytesRead}
				}
				return g.emit(out, func(w io.Writer) {
					fmt.Fprintf(w, "row index %s on %s (%s): %d files, %d rows, %d entries, %d bytes of index for %d bytes of data (%.2f%%), %s\n",
						def.Name, def.Key, orDefault(kind, "hash"), st.Files, st.Rows, st.Entries, st.IndexBytes, st.DataBytes,
						100*float64(st.IndexBytes)/float64(max(st.DataBytes, 1)), st.Elapsed.Round(time.Millisecond))
					if eng != nil {
						fmt.Fprintf(w, "key runs computed by Spark (%s): it read %d files, %d bytes\n", eng.Remote(), st.EngineFilesRead, st.EngineBytesRead)
					}
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
	f.StringVar(&engine, "engine", "", "where the key column is read: duckdb (here, default) or spark (Spark computes the key runs; no --cover/--aggregate)")
	f.StringVar(&spark, "spark", "", "Spark Connect URL for --engine spark (sc://host:port)")
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
		"seconds": st.Elapsed.Seconds(), "skipped": skippedJSON(st.Skipped)}
}

// skippedJSON lists the files a row index build left out.
func skippedJSON(s []rowindex.SkippedFile) []map[string]string {
	out := []map[string]string{}
	for _, f := range s {
		out = append(out, map[string]string{"file": f.URI, "reason": f.Reason})
	}
	return out
}

func newLookupCmd(g *globals) *cobra.Command {
	var key, exactKey, cursor, rowIndexName, sqlText string
	var columns []string
	var limit int
	var explain bool
	var sqlTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "lookup NAME (--key COL=VALUE|LOW..HIGH | --value COL=VALUE) [--row-index ROWINDEX] [--columns COLS] [--limit N] [--cursor C] [--explain] [--sql QUERY [--timeout D]]",
		Short: "Return the rows of a key (or key range) straight from the Parquet files, by the row index",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if (key == "") == (exactKey == "") {
				return usagef("lookup: give either --key COL=VALUE|LOW..HIGH or --value COL=VALUE")
			}
			var q rowindex.Query
			var err error
			if exactKey != "" {
				// Exactly one value, as typed: ".." is not a range here.
				col, v, ok := strings.Cut(exactKey, "=")
				if !ok || col == "" {
					return usagef("lookup: --value %q: want COL=VALUE", exactKey)
				}
				q = rowindex.Query{KeyColumn: col, KeyText: v}
			} else if q, err = rowindex.ParseKeyFlag(key); err != nil {
				return usagef("lookup: --key: %v", err)
			}
			req := ariadne.LookupRequest{Column: q.KeyColumn, RowIndex: rowIndexName, Columns: splitList(strings.Join(columns, ",")), Limit: limit, Cursor: cursor}
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
			if sqlText != "" {
				if cursor != "" {
					return usagef("lookup: --sql answers in one page: no --cursor")
				}
				sreq := ariadne.LookupSQLRequest{Column: req.Column, RowIndex: req.RowIndex, Key: req.Key, Low: req.Low, High: req.High,
					Range: req.Range, Columns: req.Columns, SQL: sqlText, Limit: limit, Timeout: sqlTimeout}
				return g.withFaceIndex(ctx, args[0], func(ix *ariadne.Index) error {
					res, err := ix.LookupSQL(ctx, sreq)
					if err != nil {
						return err
					}
					return g.printSQL(res, explain)
				})
			}
			return g.withFaceIndex(ctx, args[0], func(ix *ariadne.Index) error {
				rows, err := ix.LookupRows(ctx, req)
				if err != nil {
					return err
				}
				defer rows.Close()
				return g.printLookup(args[0], rows, explain)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&key, "key", "", "COL=VALUE, or COL=LOW..HIGH on a sorted row index (either bound may be empty)")
	f.StringVar(&exactKey, "value", "", "COL=VALUE: one key exactly as typed (\"..\" is not a range); COL ends at the first '='")
	f.StringArrayVar(&columns, "columns", nil, "columns to return (comma-separated; default all)")
	f.IntVar(&limit, "limit", 0, "at most N rows (0: all)")
	f.StringVar(&cursor, "cursor", "", "continue after the previous page (the cursor it printed)")
	f.StringVar(&rowIndexName, "row-index", "", "the row index to use, by name, when several are on the key column (default: one that can answer: a sorted one for a range, one covering --columns)")
	f.BoolVar(&explain, "explain", false, "print the plan and its cost: entries, files, ranges, requests, bytes, cache hits")
	f.StringVar(&sqlText, "sql", "", "one read-only DuckDB query (SELECT/WITH/FROM) over the table \"rows\" holding the key's rows (--columns: its columns; --limit: result rows, default 1000)")
	f.DurationVar(&sqlTimeout, "timeout", 0, "with --sql: the query's time bound (default 10s)")

	return cmd
}

// printSQL prints a --sql answer: aligned text, or with --json
// {"columns", "rows" (objects by column name, values as lookup's),
// "truncated", "input_rows", "row_index", "version", "plan"?}.
func (g *globals) printSQL(res *ariadne.SQLResult, explain bool) error {
	if g.jsonOut {
		rows := make([]map[string]any, len(res.Rows))
		for i := range res.Rows {
			rows[i] = res.Record(i)
		}
		out := map[string]any{"columns": nonNil(res.Columns), "rows": rows, "truncated": res.Truncated,
			"input_rows": res.InputRows, "row_index": res.RowIndex, "version": res.Version}
		if explain {
			out["plan"] = planJSON(res.Plan)
		}
		return g.emit(out, nil)
	}
	w := bufio.NewWriter(g.env.Stdout)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(res.Columns, "\t"))
	for _, r := range res.Rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = fmt.Sprint(valueText(v))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	if res.Truncated {
		fmt.Fprintf(w, "truncated: more than %d result rows (raise --limit)\n", len(res.Rows))
	}
	if explain {
		p := res.Plan
		fmt.Fprintf(w, "sql over %d rows of row index %s (version %d), covered=%v; %d requests (index %d, data %d), %d bytes read\n",
			res.InputRows, res.RowIndex, res.Version, p.Covered, p.Requests(), p.Index.Requests, p.Data.Requests, p.BytesRead())
	}
	return w.Flush()
}

func planJSON(p rowindex.Plan) map[string]any {
	return map[string]any{
		"kind": p.Kind, "entries": p.Entries, "files": p.Files, "row_ranges": p.RowRanges, "byte_ranges": p.ByteRanges,
		"rows": p.Rows, "covered": p.Covered, "requests": p.Requests(), "bytes_read": p.BytesRead(),
		"bytes_returned": p.BytesReturned, "index_requests": p.Index.Requests, "data_requests": p.Data.Requests,
		"cache_hits": p.Index.CacheHits + p.Data.CacheHits, "misses": p.Index.Misses + p.Data.Misses,
		"pages_decoded": p.Data.Pages, "frames_decoded": p.Data.Frames, "page_cache_hits": p.Data.PageHits, "page_cache_hit_ratio": pageHitRatio(p),
		"elapsed_ms":       float64(p.Elapsed.Microseconds()) / 1000,
		"index_path_bytes": p.IndexPathBytes, "index_path_ranges": p.IndexPathRanges,
		"scan_bytes": p.ScanBytes, "scan_ranges": p.ScanRanges, "scan_files": p.ScanFiles,
		"shape_records": p.ShapeRecords, "shape_files_ignored": p.ShapeFilesIgnored, "shape_file_ignored_reason": p.ShapeFileIgnoredReason, "dict_entries": p.DictEntries,
		"unshaped_pages": p.UnshapedPages,
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

// lookupPageRows is how many rows `lookup` prints at a time: the rows of a
// key pass through memory a page at a time, however many it has.
const lookupPageRows = 1000

// unshapedNote is how many pages a lookup of text output reads whole for
// want of their shapes before it notes on stderr how to save them (a
// handful is a lake of small pages, or a key's first touch of a few).
const unshapedNote = 32

// printLookup streams a lookup's rows to stdout a page at a time: aligned
// text (the header once the columns are known), or with --json one object
// whose "rows" are written as they come and whose columns, cursor,
// aggregates and plan follow them. Text output without --explain notes on
// stderr when the lookup read many pages whole for want of their shapes.
func (g *globals) printLookup(table string, rows *ariadne.LookupRows, explain bool) error {
	w := bufio.NewWriter(g.env.Stdout)
	if g.jsonOut {
		if err := g.streamLookupJSON(w, rows, explain); err != nil {
			return err
		}
		return w.Flush()
	}
	var tw *tabwriter.Writer
	var cols []string
	n := 0
	for rows.Next() {
		if tw == nil {
			cols = rows.Columns()
			tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, strings.Join(cols, "\t"))
		}
		rec := rows.Row().Values
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = fmt.Sprint(valueText(rec[c]))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
		if n++; n%lookupPageRows == 0 {
			tw.Flush()
		}
	}
	if err := rows.Err(); err != nil {
		w.Flush()
		return err
	}
	if tw == nil {
		fmt.Fprintln(w, strings.Join(rows.Columns(), "\t"))
	} else {
		tw.Flush()
	}
	for _, a := range rows.Aggregates() {
		fmt.Fprintf(w, "aggregates of %v: %s\n", valueText(a.Key), aggregatesText(a.Values))
	}
	if c := rows.Cursor(); c != "" {
		fmt.Fprintf(w, "more rows: --cursor %s\n", c)
	}
	if p := rows.Plan(); !explain && p.UnshapedPages >= unshapedNote {
		// After the rows: stdout first.
		if err := w.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(g.env.Stderr, "note: %d pages were read whole for want of their shapes (the lookup read %d bytes); `%s` saves them once, and lookups then read such pages in parts\n",
			p.UnshapedPages, p.BytesRead(), g.saveShapesCommand(table))
	}
	if explain {
		p := rows.Plan()
		fmt.Fprintf(w, "plan: row index %s (%s, version %d), %d entries, %d files, %d row ranges → %d byte ranges, covered=%v\n",
			rows.RowIndex(), p.Kind, rows.Version(), p.Entries, p.Files, p.RowRanges, p.ByteRanges, p.Covered)
		fmt.Fprintf(w, "cost: %d requests (index %d, data %d), %d bytes read, %d bytes returned, %d cache hits, %s\n",
			p.Requests(), p.Index.Requests, p.Data.Requests, p.BytesRead(), p.BytesReturned,
			p.Index.CacheHits+p.Data.CacheHits, p.Elapsed.Round(time.Microsecond))
		fmt.Fprintf(w, "pages: %d decoded (%d of them ZSTD frames of framed files), %d from the page cache (hit ratio %.2f)\n", p.Data.Pages, p.Data.Frames, p.Data.PageHits, pageHitRatio(p))
		fmt.Fprintf(w, "planner: index path %d bytes in %d ranges, projected scan of the same files %d bytes in %d ranges; scan taken for %d of %d files\n",
			p.IndexPathBytes, p.IndexPathRanges, p.ScanBytes, p.ScanRanges, p.ScanFiles, p.Files)
		if p.ShapeRecords > 0 || p.ShapeFilesIgnored > 0 || p.DictEntries > 0 {
			fmt.Fprintf(w, "shapes: %d page shapes read from shape files, %d shape files passed over (damaged or stale: their pages read whole); %d dictionary entries read in parts\n",
				p.ShapeRecords, p.ShapeFilesIgnored, p.DictEntries)
			if p.ShapeFileIgnoredReason != "" {
				fmt.Fprintf(w, "shapes: first passed over: %s\n", p.ShapeFileIgnoredReason)
			}
		}
		if p.UnshapedPages > 0 {
			fmt.Fprintf(w, "shapes: %d page reads whole for want of the pages' shapes; save shape files with `%s` (a serving process learns them when it warms: over local files by default, over an object store with rowIndexShapeBytes set), and such pages may be read in parts\n", p.UnshapedPages, g.saveShapesCommand(table))
		}
	}
	return w.Flush()
}

// streamLookupJSON writes {"rows": [...], "columns", "cursor",
// "aggregates"?, "plan"?}: rows first, as they are read, since the other
// fields are final only at the end.
func (g *globals) streamLookupJSON(w *bufio.Writer, rows *ariadne.LookupRows, explain bool) error {
	// The first row before any output: a lookup that fails at once (a
	// range on a hash row index, a bad cursor) prints only its error.
	more := rows.Next()
	if err := rows.Err(); !more && err != nil {
		return err
	}
	w.WriteString("{\n  \"rows\": [")
	var line []byte
	var enc rowEncoder
	n := 0
	for ; more; more = rows.Next() {
		if n > 0 {
			w.WriteByte(',')
		}
		w.WriteString("\n    ")
		var err error
		if line, err = enc.appendRow(line[:0], rows); err != nil {
			return err
		}
		w.Write(line)
		n++
	}
	if n > 0 {
		w.WriteString("\n  ")
	}
	w.WriteString("],\n")
	if err := rows.Err(); err != nil {
		// Rows are out: the document ends with them and the error, still
		// one JSON object (printError must not add another).
		b, _ := json.Marshal(map[string]string{"error": err.Error(), "kind": errorKind(err)})
		w.WriteString("  ")
		w.Write(b[1:]) // the fields and the closing brace
		w.WriteByte('\n')
		if ferr := w.Flush(); ferr != nil {
			return ferr
		}
		return reportedError{err}
	}
	tail := map[string]any{"columns": nonNil(rows.Columns()), "cursor": rows.Cursor(), "row_index": rows.RowIndex(), "version": rows.Version()}
	if a := rows.Aggregates(); len(a) > 0 {
		tail["aggregates"] = a
	}
	if explain {
		tail["plan"] = planJSON(rows.Plan())
	}
	b, err := json.MarshalIndent(tail, "", "  ")
	if err != nil {
		return err
	}
	// Splice the tail's fields into the open object.
	w.Write(bytes.TrimPrefix(b, []byte("{\n")))
	w.WriteByte('\n')
	return nil
}

// rowEncoder writes a lookup's rows as encoding/json writes the face's
// Row with SetEscapeHTML(false) — {"key", "file", "row_group", "row",
// "values": {columns in name order}} — from the row's fields, without a
// map and reflection per row (a hot key's millions of rows spent most of
// their time there).
type rowEncoder struct {
	names []string // the columns of the last row
	order []int    // their positions in name order
}

func (e *rowEncoder) appendRow(b []byte, rows *ariadne.LookupRows) ([]byte, error) {
	src := rows.Source()
	b = append(b, `{"key":`...)
	b, err := jsonappend.Value(b, src.Key, false)
	if err != nil {
		return b, err
	}
	b = append(b, `,"file":`...)
	b = jsonappend.String(b, src.File, false)
	b = append(b, `,"row_group":`...)
	b = strconv.AppendInt(b, int64(src.RowGroup), 10)
	b = append(b, `,"row":`...)
	b = strconv.AppendInt(b, src.Row, 10)
	b = append(b, `,"values":{`...)
	names, vals := rows.Fields()
	if !slices.Equal(names, e.names) || e.order == nil {
		e.names = slices.Clone(names)
		e.order = make([]int, len(names))
		for j := range e.order {
			e.order[j] = j
		}
		slices.SortStableFunc(e.order, func(x, y int) int { return strings.Compare(names[x], names[y]) })
	}
	for k, j := range e.order {
		if k > 0 {
			b = append(b, ',')
		}
		b = jsonappend.String(b, names[j], false)
		b = append(b, ':')
		var v any
		if j < len(vals) {
			v = vals[j]
		}
		if b, err = jsonappend.Value(b, v, false); err != nil {
			return b, err
		}
	}
	return append(b, '}', '}'), nil
}

// aggregatesText renders a key's aggregates for people: name=value in
// name order, a count-by's counts as (value=count, ...).
func aggregatesText(vals map[string]any) string {
	parts := make([]string, 0, len(vals))
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		v := vals[name]
		if m, ok := v.(map[string]int64); ok {
			counts := make([]string, 0, len(m))
			for _, k := range slices.Sorted(maps.Keys(m)) {
				counts = append(counts, fmt.Sprintf("%s=%d", k, m[k]))
			}
			parts = append(parts, fmt.Sprintf("%s=(%s)", name, strings.Join(counts, ", ")))
			continue
		}
		if m, ok := v.(map[string]any); ok {
			counts := make([]string, 0, len(m))
			for _, k := range slices.Sorted(maps.Keys(m)) {
				counts = append(counts, fmt.Sprintf("%s=%v", k, valueText(m[k])))
			}
			parts = append(parts, fmt.Sprintf("%s=(%s)", name, strings.Join(counts, ", ")))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%v", name, valueText(v)))
	}
	return strings.Join(parts, ", ")
}

func valueText(v any) any {
	switch t := v.(type) {
	case nil:
		return "null" // fmt would print Go's <nil>
	case time.Time:
		return t.UTC().Format(time.RFC3339Nano)
	}
	return v
}

// saveShapesBudget is the shape budget `warm --save-shapes` learns within
// when the configuration sets none (rowIndexShapeBytes).
const saveShapesBudget = 1 << 30

func newWarmCmd(g *globals) *cobra.Command {
	var saveShapes bool
	cmd := &cobra.Command{
		Use:   "warm NAME",
		Short: "Load the row indexes' caches (manifests, fragments, data file footers) ahead of traffic",
		Long: `Load the row indexes' caches (manifests, fragments, data file footers) ahead of traffic.

With --save-shapes, learn the shapes of every data page lookups may read in
parts (within rowIndexShapeBytes if it is a positive budget, else 1 GiB, over
any store) and save them as shape files beside each row index: a fresh
process (this CLI, a new server) then
reads a light key's values in parts from its first lookup instead of whole
pages. Saving again writes only the data files without a shape file.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg, err := g.config()
			if err != nil {
				return err
			}
			if saveShapes && cfg.RowIndexShapeBytes <= 0 {
				cfg.RowIndexShapeBytes = saveShapesBudget
			}
			fs, err := g.faceStoreWith(ctx, cfg)
			if err != nil {
				return err
			}
			defer fs.Close()
			ix, err := fs.Index(ctx, args[0])
			if err != nil {
				return err
			}
			st, err := ix.Warm(ctx, ariadne.WithWarmProgress(g.progress().warm))
			if err != nil {
				return err
			}
			var saved ariadne.SavedShapes
			if saveShapes {
				if saved, err = ix.SaveShapes(ctx); err != nil {
					return err
				}
			}
			costs := map[string]any{}
			for n, c := range st.ByRowIndex {
				one := map[string]any{"requests": c.Requests, "bytes_read": c.BytesRead,
					"groups": c.Groups, "resident_groups": c.ResidentGroups, "resident_bytes": c.ResidentBytes,
					"shape_pages": c.ShapePages, "shape_bytes": c.ShapeBytes}
				if saveShapes {
					one["saved_shapes"] = saved.ByRowIndex[n]
				}
				costs[n] = one
			}
			return g.emit(map[string]any{"name": ix.Name(), "warmed": costs}, func(w io.Writer) {
				if len(st.ByRowIndex) == 0 {
					// Only row indexes have caches to load: say so rather
					// than print nothing.
					fmt.Fprintf(w, "index %s has no row index: nothing to warm (add one with add-row-index)\n", ix.Name())
				}
				for _, n := range slices.Sorted(maps.Keys(st.ByRowIndex)) {
					c := st.ByRowIndex[n]
					fmt.Fprintf(w, "warmed row index %s: %d request(s), %d bytes read; %d of %d fragment groups resident (%d bytes)",
						n, c.Requests, c.BytesRead, c.ResidentGroups, c.Groups, c.ResidentBytes)
					if c.ShapePages > 0 {
						fmt.Fprintf(w, "; shapes of %d data pages learnt (%d bytes)", c.ShapePages, c.ShapeBytes)
					}
					fmt.Fprintln(w)
					if s, ok := saved.ByRowIndex[n]; ok {
						fmt.Fprintf(w, "saved shapes of row index %s: %d shape file(s) written (%d pages, %d bytes), %d saved before, %d pages without a known shape\n",
							n, s.Files, s.Pages, s.Bytes, s.Existing, s.Missing)
					}
				}
			})
		},
	}
	cmd.Flags().BoolVar(&saveShapes, "save-shapes", false, "learn every data page's shape and save the shapes beside the row index, for fresh processes' first lookups")
	return cmd
}
