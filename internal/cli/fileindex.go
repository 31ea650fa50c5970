package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/infer"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/sparkengine"
	"github.com/ariadne-go/ariadne/store"
)

// withFileIndex opens an existing index's file index and runs fn.
func (g *globals) withFileIndex(ctx context.Context, name string, progress bool, fn func(fi *fileindex.FileIndex) error) error {
	return g.withIndex(ctx, name, func(ix *index.Index) error {
		var opts fileindex.Options
		if progress {
			opts.Progress = g.progress().report
		}
		return fn(fileindex.New(ix, opts))
	})
}

// updateEngine resolves the --engine and --spark of command op (update,
// add-row-index) over the config: nil for the embedded path, else a Spark
// engine (the caller closes it).
func (g *globals) updateEngine(ctx context.Context, op, engine, spark string) (*sparkengine.Engine, error) {
	cfg, err := g.config()
	if err != nil {
		return nil, err
	}
	switch resolved := cmp.Or(engine, cfg.Engine, ariadne.EngineDuckDB); resolved {
	case ariadne.EngineDuckDB:
		if spark != "" {
			return nil, usagef("%s: --spark needs --engine spark", op)
		}
		return nil, nil
	case ariadne.EngineSpark:
		remote := cmp.Or(spark, cfg.SparkRemote)
		if remote == "" {
			return nil, usagef("%s: --engine spark needs --spark sc://host:port (or the config key sparkRemote)", op)
		}
		return sparkengine.New(ctx, remote, sparkengine.Options{})
	default:
		return nil, usagef("%s: --engine %q: want duckdb or spark", op, resolved)
	}
}

func newUpdateCmd(g *globals) *cobra.Command {
	var bf rowIndexBuildFlags
	var retryQuarantined, sparkSummaryTables bool
	var engine, spark string
	cmd := &cobra.Command{
		Use:   "update NAME",
		Short: "Index the tracked files that are not indexed yet (and backfill new index columns)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			opts, err := bf.options(g.progress(), false)
			if err != nil {
				return err
			}
			uopts := fileindex.UpdateOptions{RetryQuarantined: retryQuarantined}
			eng, err := g.updateEngine(ctx, "update", engine, spark)
			if err != nil {
				return err
			}
			if sparkSummaryTables && eng == nil {
				return usagef("update: --spark-summary-tables needs --engine spark")
			}
			if eng != nil {
				defer eng.Close()
				uopts.Summaries = eng
				uopts.SummaryTables = sparkSummaryTables
			}
			return g.withFileIndex(ctx, args[0], true, func(fi *fileindex.FileIndex) error {
				start := time.Now()
				res, err := fi.Update(ctx, uopts)
				if err != nil {
					return err
				}
				vanished := make([]string, len(res.Skipped))
				for i, s := range res.Skipped {
					vanished[i] = s.URI
				}
				quarantined := []map[string]string{}
				for _, q := range res.Quarantined {
					quarantined = append(quarantined, map[string]string{"file": q.File, "reason": q.Reason})
				}
				fx, done, err := g.faceIndex(ctx, args[0])
				if err != nil {
					return err
				}
				defer done()
				if eng != nil {
					opts = append(opts, rowindex.WithEngineWhereSupported(eng, 0))
				}
				rows, err := fx.UpdateRowIndexes(ctx, vanished, opts...)
				if err != nil {
					return err
				}
				elapsed := time.Since(start)
				rowJSON := map[string]any{}
				for n, st := range rows {
					rowJSON[n] = buildJSON(st)
				}
				skipped := []map[string]string{}
				for _, s := range res.Skipped {
					skipped = append(skipped, map[string]string{"file": s.URI, "error": s.Err.Error()})
				}
				out := map[string]any{
					"name": args[0], "new_files": res.NewFiles, "backfilled_files": res.BackfilledFiles,
					"recovered_staging": res.RecoveredStaging, "batches": res.Batches, "consolidations": res.Consolidations,
					"compactions": res.Compactions, "bytes": res.Bytes, "seconds": elapsed.Seconds(),
					"auto_bloom_detected": nonNil(res.AutoBloomDetected), "skipped": skipped, "quarantined": quarantined,
					"row_indexes": rowJSON,
					"typed_files": res.TypedFiles, "engine_files": res.EngineFiles, "spark_files": res.SummarizedBy,
					"snapshot_from_memory": res.SnapshotFromMemory,
					"stages": map[string]float64{
						"read_seconds": res.Stages.ReadWall.Seconds(), "analyze_seconds": res.Stages.Analyze.Seconds(),
						"build_seconds": res.Stages.Build.Seconds(), "stage_seconds": res.Stages.Stage.Seconds(),
						"merge_seconds": res.Stages.Merge.Seconds(), "snapshot_seconds": res.Stages.Snapshot.Seconds(),
					},
				}
				return g.emit(out, func(w io.Writer) {
					fmt.Fprintf(w, "indexed %d new file(s), backfilled %d, in %d batch(es), %.1f MiB read, %s\n",
						res.NewFiles, res.BackfilledFiles, res.Batches, float64(res.Bytes)/(1<<20), elapsed.Round(time.Millisecond))
					if res.NewFiles+res.BackfilledFiles > 0 {
						st := res.Stages
						fmt.Fprintf(w, "stages: read+summarise %s (%d file(s) from typed pages, %d by the engine), analyze %s, build %s, stage %s, merge %s, locate snapshot %s\n",
							st.ReadWall.Round(time.Millisecond), res.TypedFiles, res.EngineFiles, st.Analyze.Round(time.Millisecond),
							st.Build.Round(time.Millisecond), st.Stage.Round(time.Millisecond), st.Merge.Round(time.Millisecond), st.Snapshot.Round(time.Millisecond))
					}
					if res.SummarizedBy > 0 {
						fmt.Fprintf(w, "%d file(s) summarised on Spark\n", res.SummarizedBy)
					}
					if res.RecoveredStaging {
						fmt.Fprintln(w, "recovered the staging table of an interrupted update")
					}
					if len(res.AutoBloomDetected) > 0 {
						fmt.Fprintf(w, "auto-bloom enabled for: %s\n", strings.Join(res.AutoBloomDetected, ", "))
					}
					for _, s := range res.Skipped {
						fmt.Fprintf(w, "skipped %s: %v\n", s.URI, s.Err)
					}
					for _, q := range res.Quarantined {
						fmt.Fprintf(w, "quarantined %s (not indexed; listed by describe; update --retry-quarantined tries it again): %s\n", q.File, q.Reason)
					}
					for n, st := range rows {
						fmt.Fprintf(w, "row index %s: %d new file(s), %d entries, %d file(s) removed\n", n, st.Files, st.Entries, st.Removed)
						for _, s := range st.Skipped {
							fmt.Fprintf(w, "row index %s skipped %s: %s (the other files are indexed; `describe` lists it)\n", n, s.URI, s.Reason)
						}
					}
				})
			})
		},
	}
	bf.register(cmd.Flags())
	cmd.Flags().BoolVar(&retryQuarantined, "retry-quarantined", false, "index the quarantined files again (after fixing the cause)")
	cmd.Flags().StringVar(&engine, "engine", "", "engine that reads the new files and computes their per-file summaries: duckdb or spark (default: config key engine, else duckdb); the index is written here either way")
	cmd.Flags().StringVar(&spark, "spark", "", "Spark Connect URL for --engine spark, sc://host:port (default: config key sparkRemote)")
	cmd.Flags().BoolVar(&sparkSummaryTables, "spark-summary-tables", false, "with --engine spark: Spark writes the per-file summaries as Delta tables in the index's folder (read back here, then deleted) instead of streaming them back; Spark needs write access to the index's folder")
	return cmd
}

// parseKeys turns --key COL=V1,V2 flags into a query. Values are passed as
// strings; the file index coerces them to the column type as Spark does.
func parseKeys(keys []string) (fileindex.Query, error) {
	q := fileindex.Query{}
	for _, k := range keys {
		col, vals, ok := strings.Cut(k, "=")
		if !ok || strings.TrimSpace(col) == "" {
			return nil, usagef("--key %q: want COL=V1,V2", k)
		}
		for _, v := range strings.Split(vals, ",") {
			q[col] = append(q[col], v)
		}
	}
	return q, nil
}

// addExactValues adds --value COL=VALUE flags to q: the value is
// everything after the first '=', verbatim (commas, "..", spaces).
func addExactValues(q fileindex.Query, values []string) error {
	for _, kv := range values {
		col, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(col) == "" {
			return usagef("--value %q: want COL=VALUE", kv)
		}
		q[col] = append(q[col], v)
	}
	return nil
}

func newJoinCmd(g *globals) *cobra.Command {
	var keysFile, on, how, sel, out, keysFormatFlag, engine, spark, sparkOut, sparkOutFormat, sparkOutMode, rowIndex string
	var indexLeft, explain bool
	var keyOpts []string
	cmd := &cobra.Command{
		Use:   "join NAME --keys FILE --on COL[,COL] [--how inner|left|right|full|semi|anti] [--select COLS] [--out FILE.csv|.json|.parquet]",
		Short: "Join a keys file with only the data files the index locates",
		Long: "Read the keys file (CSV with a header, JSON lines, or Parquet, by extension or --keys-format), locate the\n" +
			"data files that can hold its keys, and join them. Without --out, rows go to stdout as CSV (JSON lines\n" +
			"with --json).\n\n" +
			"--engine spark runs the read of the located files and the join on Apache Spark through Spark Connect\n" +
			"(--spark sc://host:port, or the config keys engine and sparkRemote); locating stays here. With\n" +
			"--spark-out PATH, Spark writes the rows to PATH itself, as Parquet or as a Delta table (--spark-out-format;\n" +
			"default: delta when PATH is a Delta table, else parquet); an existing PATH fails the join unless\n" +
			"--spark-out-mode overwrite|append (see docs/spark-engine.md).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if keysFile == "" || on == "" {
				return usagef("join: --keys and --on are required")
			}
			cfg, err := g.config()
			if err != nil {
				return err
			}
			resolved := cmp.Or(engine, cfg.Engine, ariadne.EngineDuckDB)
			switch resolved {
			case ariadne.EngineDuckDB, ariadne.EngineSpark:
			default:
				return usagef("join: --engine %q: want duckdb or spark", engine)
			}
			if spark != "" && resolved != ariadne.EngineSpark {
				return usagef("join: --spark needs --engine spark")
			}
			var output string
			if sparkOut == "" && (sparkOutFormat != "" || sparkOutMode != "") {
				return usagef("join: --spark-out-format and --spark-out-mode need --spark-out")
			}
			if err := fileindex.ValidateOutput(sparkOut, sparkOutFormat, sparkOutMode); err != nil {
				return usagef("%v", err)
			}
			if sparkOut != "" {
				if resolved != ariadne.EngineSpark {
					return usagef("join: --spark-out needs --engine spark")
				}
				if out != "" {
					return usagef("join: --out and --spark-out exclude each other")
				}
				if output, err = store.Canonical(sparkOut); err != nil {
					return err
				}
			}
			if _, err := fileindex.ParseJoinType(how); err != nil {
				return usagef("join: %v", err)
			}
			format, ro, err := keysFormat(keysFile, keysFormatFlag, keyOpts)
			if err != nil {
				return err
			}
			return g.withFaceIndex(ctx, args[0], func(ix *ariadne.Index) error {
				keys, err := ix.OpenKeys(ctx, keysFile, format, ro)
				if err != nil {
					return err
				}
				rows, err := ix.Join(ctx, ariadne.JoinRequest{Source: keys, On: splitList(on), How: how, Select: splitList(sel), IndexOnLeft: indexLeft,
					Engine: engine, SparkRemote: spark, Output: output, OutputFormat: sparkOutFormat, OutputMode: sparkOutMode, RowIndex: rowIndex})
				if err != nil {
					return err
				}
				defer rows.Close()
				if output != "" {
					// Spark wrote the rows; the result has none.
					for rows.Next() {
					}
					if err := rows.Err(); err != nil {
						return err
					}
					st := rows.Stats()
					mode := cmp.Or(sparkOutMode, fileindex.OutputErrorIfExists)
					g.summary("summary", "join", fmt.Sprintf("rows written by Spark to %s as %s (mode %s) from %d located file(s)",
						output, st.OutputFormat, mode, len(rows.Files())),
						map[string]any{"output": output, "output_format": st.OutputFormat, "output_mode": mode, "files_located": len(rows.Files()),
							"engine": string(ariadne.EngineSpark)})
					return nil
				}
				sink, err := newRowSink(g.env.Stdout, out, g.jsonOut, rows.Schema())
				if err != nil {
					return err
				}
				n := 0
				batch := make([][]any, 0, 1024)
				flush := func() error {
					err := sink.write(batch)
					batch = batch[:0]
					return err
				}
				for rows.Next() {
					if batch = append(batch, rows.Values()); len(batch) == cap(batch) {
						if err := flush(); err != nil {
							abortSink(sink)
							return err
						}
					}
					n++
				}
				if err := rows.Err(); err != nil {
					abortSink(sink)
					return err
				}
				if err := flush(); err != nil {
					abortSink(sink)
					return err
				}
				if err := sink.close(); err != nil {
					return err
				}
				if st := rows.Stats(); st.Engine == ariadne.EngineSpark {
					g.summary("summary", "join", fmt.Sprintf("%d row(s) from %d located file(s); Spark read %d file(s), %d byte(s)", n, len(rows.Files()), st.EngineFilesRead, st.EngineBytesRead),
						map[string]any{"rows": n, "files_located": len(rows.Files()), "engine": string(st.Engine), "engine_files_read": st.EngineFilesRead, "engine_bytes_read": st.EngineBytesRead})
				} else {
					g.summary("summary", "join", fmt.Sprintf("%d row(s) from %d located file(s)", n, len(rows.Files())),
						map[string]any{"rows": n, "files_located": len(rows.Files()), "engine": string(st.Engine)})
				}
				if explain {
					st := rows.Stats()
					g.summary("explain", "join", fmt.Sprintf("path %s: %s\nindex side: %d file(s) located, row groups %d (%d skipped), key pages %d (%d skipped), %d row(s) scanned, %d loaded, %d request(s), %d byte(s) read by our readers",
						st.Path, st.Plan, st.FilesLocated, st.RowGroups, st.RowGroupsSkipped, st.Pages, st.PagesSkipped, st.RowsScanned, st.RowsLoaded, st.Requests, st.BytesRead),
						map[string]any{"path": st.Path, "plan": st.Plan, "files_located": st.FilesLocated, "row_groups": st.RowGroups, "row_groups_skipped": st.RowGroupsSkipped,
							"pages": st.Pages, "pages_skipped": st.PagesSkipped, "rows_scanned": st.RowsScanned, "rows_loaded": st.RowsLoaded, "requests": st.Requests, "bytes_read": st.BytesRead})
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&keysFile, "keys", "", "file holding the keys (CSV with header, JSON lines, Parquet)")
	f.StringVar(&keysFormatFlag, "keys-format", "", "format of --keys: csv, json or parquet (default: by extension)")
	f.StringArrayVar(&keyOpts, "keys-option", nil, "reader option for --keys, KEY=VALUE (e.g. sep=;)")
	f.StringVar(&on, "on", "", "join columns, comma-separated")
	f.StringVar(&how, "how", "inner", "join type: inner, left, right, full, semi, anti")
	f.StringVar(&sel, "select", "", "index-side columns to keep, comma-separated (must include the join columns)")
	f.StringVar(&out, "out", "", "write rows to FILE.csv, FILE.json (JSON lines) or FILE.parquet")
	f.BoolVar(&indexLeft, "index-left", false, "put the index side on the left (the library's index.join(df))")
	f.StringVar(&engine, "engine", "", "engine that reads the located files and joins: duckdb or spark (default: config key engine, else duckdb)")
	f.StringVar(&spark, "spark", "", "Spark Connect URL for --engine spark, sc://host:port (default: config key sparkRemote)")
	f.StringVar(&sparkOut, "spark-out", "", "with --engine spark: Spark writes the rows to this path itself (see --spark-out-format, --spark-out-mode)")
	f.StringVar(&sparkOutFormat, "spark-out-format", "", "format of --spark-out: parquet or delta (default: delta when the path is a Delta table, else parquet)")
	f.StringVar(&sparkOutMode, "spark-out-mode", "", "what an existing --spark-out gets: error (default), overwrite or append")
	f.StringVar(&rowIndex, "row-index", "auto", "read the index side through a row index on the join column: auto (when one holds the located files unchanged and few rows match), force, off")
	f.BoolVar(&explain, "explain", false, "say on stderr how the index side was read: the path (rowindex, late materialization, the engine's scan, filtered, full), why, and what was read")
	return cmd
}

func splitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// keysFormat resolves a keys file's format (--keys-format, else by
// extension) and its reader options (--keys-option KEY=VALUE).
func keysFormat(path, format string, opts []string) (string, map[string]string, error) {
	if format == "" {
		switch strings.ToLower(filepath.Ext(path)) {
		case ".csv":
			format = "csv"
		case ".json", ".jsonl", ".ndjson":
			format = "json"
		case ".parquet":
			format = "parquet"
		default:
			return "", nil, usagef("--keys %s: unknown format; give --keys-format csv|json|parquet", path)
		}
	}
	ro := map[string]string{}
	for _, kv := range opts {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return "", nil, usagef("--keys-option %q: want KEY=VALUE", kv)
		}
		ro[k] = v
	}
	return format, ro, nil
}

// openKeys opens a keys file as a key source for `locate --keys` (which
// runs on the file index's per-key path).
func openKeys(ctx context.Context, fi *fileindex.FileIndex, path, format string, opts []string) (fileindex.KeySource, error) {
	format, ro, err := keysFormat(path, format, opts)
	if err != nil {
		return nil, err
	}
	if format == "csv" {
		if _, set := ro["header"]; !set {
			ro["header"] = "true"
		}
	}
	uri, err := store.Canonical(path)
	if err != nil {
		return nil, err
	}
	res := fi.Index().Catalog().Resolver()
	st, err := infer.FromFile(ctx, res, uri, format, ro)
	if err != nil {
		return nil, fmt.Errorf("--keys %s: %w", path, err)
	}
	return datafile.Open(ctx, res, uri, datafile.Spec{Format: format, Schema: st, Options: ro}, nil)
}

func newStatsCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "stats NAME",
		Short: "Per indexed column: how many values the files' value sets hold",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return g.withFileIndex(ctx, args[0], false, func(fi *fileindex.FileIndex) error {
				stats, err := fi.Stats(ctx)
				if err != nil {
					return err
				}
				st := fileindex.StatsSchema()
				// JSON: snake_case keys, numbers as numbers, null where
				// the statistic is undefined (the text table keeps the
				// Spark library's column names).
				var rows []map[string]any
				for _, s := range stats {
					rows = append(rows, map[string]any{
						"column": s.Column, "file_count": s.FileCount, "min_values": s.MinValues, "max_values": s.MaxValues,
						"avg_values": decimalNumber(s.AvgValues), "median_values": s.MedianValues, "std_dev": decimalNumber(s.StdDev),
					})
				}
				return g.emit(map[string]any{"name": args[0], "columns": nonNil(rows)}, func(w io.Writer) {
					tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, strings.Join(st.Names(), "\t"))
					for _, s := range stats {
						var cells []string
						for i, v := range s.Row() {
							cells = append(cells, csvValue(v, st.Fields[i].Type))
						}
						fmt.Fprintln(tw, strings.Join(cells, "\t"))
					}
					tw.Flush()
				})
			})
		},
	}
}

// decimalNumber renders a decimal statistic as a JSON number (nil stays
// null).
func decimalNumber(d *pqrow.Decimal) any {
	if d == nil {
		return nil
	}
	f, err := strconv.ParseFloat(d.String(), 64)
	if err != nil {
		return d.String()
	}
	return f
}

func newDeleteFilesCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete-files NAME FILE...",
		Short: "Remove files from every index table and from the tracked files (GDPR deletes; data files are not touched)",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var names []string
			for _, a := range args[1:] {
				u, err := store.Canonical(a)
				if err != nil {
					return err
				}
				names = append(names, u)
			}
			return g.withFileIndex(ctx, args[0], false, func(fi *fileindex.FileIndex) error {
				if err := fi.DeleteFiles(ctx, names...); err != nil {
					return err
				}
				fx, done, err := g.faceIndex(ctx, args[0])
				if err != nil {
					return err
				}
				defer done()
				rows, err := fx.RemoveFromRowIndexes(ctx, names)
				if err != nil {
					return err
				}
				return g.emit(map[string]any{"name": args[0], "deleted": names, "row_indexes": rows}, func(w io.Writer) {
					fmt.Fprintf(w, "removed %d file(s) from %s\n", len(names), args[0])
					for _, n := range slices.Sorted(maps.Keys(rows)) {
						fmt.Fprintf(w, "row index %s: %d file(s) removed\n", n, rows[n])
					}
				})
			})
		},
	}
}

func newCompactCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "compact NAME",
		Short: "Bin-pack the index tables' small files (OPTIMIZE), reset the auto-compact counter, and compact every row index",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return g.withFileIndex(ctx, args[0], true, func(fi *fileindex.FileIndex) error {
				res, err := fi.Compact(ctx)
				if err != nil {
					return err
				}
				fx, done, err := g.faceIndex(ctx, args[0])
				if err != nil {
					return err
				}
				defer done()
				rows, err := fx.CompactRowIndexes(ctx, ariadne.WithMaintainProgress(g.progress().maintain))
				if err != nil {
					return err
				}
				tables := map[string]any{}
				for t, m := range res.Tables {
					tables[t] = map[string]any{"committed": m.Committed, "files_removed": m.FilesRemoved, "files_added": m.FilesAdded,
						"partitions_touched": m.PartitionsTouched, "bytes_removed": m.BytesRemoved, "bytes_added": m.BytesAdded, "version": m.Version}
				}
				return g.emit(map[string]any{"name": args[0], "tables": tables, "row_indexes": rows}, func(w io.Writer) {
					for _, t := range slices.Sorted(maps.Keys(res.Tables)) {
						m := res.Tables[t]
						if !m.Committed {
							fmt.Fprintf(w, "%s: nothing to compact\n", t)
							continue
						}
						fmt.Fprintf(w, "%s: %d files (%d bytes) rewritten as %d (%d bytes), version %d\n",
							t, m.FilesRemoved, m.BytesRemoved, m.FilesAdded, m.BytesAdded, m.Version)
					}
					for _, n := range slices.Sorted(maps.Keys(rows)) {
						printRowIndexCompaction(w, n, rows[n])
					}
				})
			})
		},
	}
}

func newVacuumCmd(g *globals) *cobra.Command {
	var retain time.Duration
	cmd := &cobra.Command{
		Use:   "vacuum NAME [--retain DURATION]",
		Short: "Delete index files (and row index fragments) no longer referenced and older than the retention",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return g.withFileIndex(ctx, args[0], true, func(fi *fileindex.FileIndex) error {
				res, err := fi.Vacuum(ctx, retain)
				if err != nil {
					return err
				}
				n := 0
				for _, d := range res.Deleted {
					n += len(d)
				}
				fx, done, err := g.faceIndex(ctx, args[0])
				if err != nil {
					return err
				}
				defer done()
				rows, err := fx.VacuumRowIndexes(ctx, retain, ariadne.WithMaintainProgress(g.progress().maintain))
				if err != nil {
					return err
				}
				rowsJSON := map[string]any{}
				for name, r := range rows {
					rowsJSON[name] = map[string]any{"deleted": append([]string{}, r.Deleted...), "bytes": r.Bytes, "kept": r.Kept}
				}
				deleted := map[string][]string{}
				for t, files := range res.Deleted {
					deleted[t] = nonNil(files)
				}
				return g.emit(map[string]any{"name": args[0], "deleted": deleted, "retain": retain.String(), "retain_seconds": retain.Seconds(), "row_indexes": rowsJSON,
					"temporary_files": append([]string{}, res.Temps...)}, func(w io.Writer) {
					fmt.Fprintf(w, "deleted %d unreferenced file(s) older than %s\n", n, retain)
					if len(res.Temps) > 0 {
						fmt.Fprintf(w, "deleted %d temporary file(s) left by killed writes\n", len(res.Temps))
					}
					for _, name := range slices.Sorted(maps.Keys(rows)) {
						r := rows[name]
						fmt.Fprintf(w, "row index %s: deleted %d orphan fragment(s) (%d bytes), kept %d younger than the retention\n",
							name, len(r.Deleted), r.Bytes, r.Kept)
					}
				})
			})
		},
	}
	cmd.Flags().DurationVar(&retain, "retain", fileindex.DefaultVacuumRetention, "keep unreferenced files younger than this (e.g. 168h, 0s)")
	return cmd
}
