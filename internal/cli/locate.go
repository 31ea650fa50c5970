package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne/fileindex"
)

func newLocateCmd(g *globals) *cobra.Command {
	var keys, exact []string
	var keysFile, keysFormat, on string
	var keyOpts []string
	var perKey, explain bool
	cmd := &cobra.Command{
		Use:   "locate NAME (--key COL=V1,V2 [--key COL=...] [--value COL=V] | --keys FILE [--on COLS] [--per-key]) [--explain]",
		Short: "Print the data files that can hold the given keys (AND across columns, OR within values)",
		Long: "With --key, values are given on the command line, split at commas. --value COL=V gives one value exactly as\n" +
			"typed (commas and all; COL ends at the first '='); both repeat and add values. With --keys, they are read\n" +
			"from a file (CSV with a\n" +
			"header, JSON lines, or Parquet, by extension or --keys-format), one key per row; --on picks its columns\n" +
			"(default: all), each an index column. The union of the files is printed; --per-key also answers each\n" +
			"distinct key on its own (key → files). --explain says how the answer was found: from the index's locate\n" +
			"snapshot of the table version, or by scanning the main index table (and why).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if (len(keys)+len(exact) == 0) == (keysFile == "") {
				return usagef("locate: give either --key/--value or --keys")
			}
			if keysFile == "" && (perKey || on != "") {
				return usagef("locate: --per-key and --on need --keys")
			}
			return g.withFileIndex(ctx, args[0], false, func(fi *fileindex.FileIndex) error {
				start := time.Now()
				var res *fileindex.KeysResult
				var cols []string
				if keysFile == "" {
					q, err := parseKeys(keys)
					if err != nil {
						return err
					}
					if err := addExactValues(q, exact); err != nil {
						return err
					}
					files, plan, err := fi.LocateWithPlan(ctx, q)
					if err != nil {
						return err
					}
					res = &fileindex.KeysResult{Files: files, Plan: plan}
				} else {
					src, err := openKeys(ctx, fi, keysFile, keysFormat, keyOpts)
					if err != nil {
						return err
					}
					var rows iter.Seq2[[]any, error]
					if cols, rows, err = keyRows(ctx, src, splitList(on)); err != nil {
						return err
					}
					if res, err = fi.LocateKeys(ctx, cols, rows, fileindex.KeysOptions{PerKey: perKey}); err != nil {
						return err
					}
				}
				return g.printLocate(args[0], cols, res, perKey, explain, time.Since(start))
			})
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&keys, "key", nil, "COL=V1,V2,...: values of an index column, split at commas (repeatable; repeated columns add values)")
	f.StringArrayVar(&exact, "value", nil, "COL=VALUE: one value taken exactly as typed, commas included (repeatable; adds to --key)")
	f.StringVar(&keysFile, "keys", "", "file holding the keys, one per row (CSV with header, JSON lines, Parquet)")
	f.StringVar(&keysFormat, "keys-format", "", "format of --keys: csv, json or parquet (default: by extension)")
	f.StringArrayVar(&keyOpts, "keys-option", nil, "reader option for --keys, KEY=VALUE (e.g. sep=;)")
	f.StringVar(&on, "on", "", "columns of --keys to look up, comma-separated (default: all)")
	f.BoolVar(&perKey, "per-key", false, "also print, for each distinct key of --keys, the files that can hold it")
	f.BoolVar(&explain, "explain", false, "print how the answer was found: table version, locate snapshot or scan, reads")
	return cmd
}

// keyRows projects a key source on cols (all its columns when empty).
func keyRows(ctx context.Context, src fileindex.KeySource, cols []string) ([]string, iter.Seq2[[]any, error], error) {
	names := src.Schema().Names()
	if len(cols) == 0 {
		cols = names
	}
	pos := make([]int, len(cols))
	for i, c := range cols {
		if pos[i] = slices.Index(names, c); pos[i] < 0 {
			return nil, nil, usagef("--on %s: the keys file has no such column (columns: %s)", c, strings.Join(names, ", "))
		}
	}
	return cols, func(yield func([]any, error) bool) {
		for {
			batch, err := src.Next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			for _, r := range batch {
				row := make([]any, len(pos))
				for i, p := range pos {
					row[i] = r[p]
				}
				if !yield(row, nil) {
					return
				}
			}
		}
	}, nil
}

// printLocate renders a locate's answer.
func (g *globals) printLocate(name string, cols []string, res *fileindex.KeysResult, perKey, explain bool, elapsed time.Duration) error {
	out := map[string]any{"name": name, "files": nonNil(res.Files), "file_count": len(res.Files)}
	if perKey {
		keys := make([]map[string]any, len(res.PerKey))
		for i, kf := range res.PerKey {
			key := make(map[string]any, len(cols))
			for j, c := range cols {
				key[c] = keyJSON(kf.Key[j])
			}
			keys[i] = map[string]any{"key": key, "files": nonNil(kf.Files), "file_count": len(kf.Files)}
		}
		out["per_key"] = keys
	}
	p := res.Plan
	if explain {
		out["plan"] = map[string]any{
			"version": p.Version, "snapshot": p.Snapshot, "note": p.Note,
			"snapshot_reads": p.SnapshotReads, "snapshot_bytes": p.SnapshotBytes,
			"elapsed_ms": float64(elapsed.Microseconds()) / 1000,
		}
	}
	return g.emit(out, func(w io.Writer) {
		if perKey {
			for _, kf := range res.PerKey {
				parts := make([]string, len(cols))
				for j, c := range cols {
					parts[j] = fmt.Sprintf("%s=%v", c, valueText(kf.Key[j]))
				}
				fmt.Fprintf(w, "%s: %d file(s)\n", strings.Join(parts, " "), len(kf.Files))
				for _, f := range kf.Files {
					fmt.Fprintf(w, "  %s\n", f)
				}
			}
			fmt.Fprintf(w, "all keys: %d file(s)\n", len(res.Files))
			for _, f := range res.Files {
				fmt.Fprintf(w, "  %s\n", f)
			}
		} else {
			for _, f := range res.Files {
				fmt.Fprintln(w, f)
			}
		}
		if explain {
			how := "from the locate snapshot"
			if !p.Snapshot {
				how = "by scanning the main index table (" + strings.TrimPrefix(p.Note, "scan: ") + ")"
			}
			if p.Version < 0 {
				how = "nothing to read (no main index table or no key)"
			}
			fmt.Fprintf(w, "plan: version %d %s; %d snapshot read(s), %d bytes; %s\n",
				p.Version, how, p.SnapshotReads, p.SnapshotBytes, elapsed.Round(time.Microsecond))
		}
	})
}

// keyJSON renders a key value for --json: numbers stay numbers; times,
// decimals and non-finite floats become text.
func keyJSON(v any) any {
	switch x := v.(type) {
	case time.Time:
		return valueText(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprint(x)
		}
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Sprint(x)
		}
	case fmt.Stringer:
		return x.String()
	}
	return v
}
