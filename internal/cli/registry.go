package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/infer"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// withCatalog opens the store root and the index catalog on it, runs fn,
// and releases them.
func (g *globals) withCatalog(ctx context.Context, fn func(cat *index.Catalog) error) error {
	cat, done, err := g.catalog(ctx)
	if err != nil {
		return err
	}
	defer done()
	return fn(cat)
}

// withIndex opens an existing index (read-only reconnect) and runs fn.
func (g *globals) withIndex(ctx context.Context, name string, fn func(ix *index.Index) error) error {
	return g.withCatalog(ctx, func(cat *index.Catalog) error {
		ix, err := cat.Get(ctx, name)
		if err != nil {
			return err
		}
		return fn(ix)
	})
}

// catalog opens the store root and the index catalog on it.
func (g *globals) catalog(ctx context.Context) (*index.Catalog, func(), error) {
	cfg, err := g.config()
	if err != nil {
		return nil, nil, err
	}
	root, err := g.openStore(ctx)
	if err != nil {
		return nil, nil, err
	}
	res := store.NewResolver(store.ResolverOptions{})
	cat := index.NewCatalog(root, index.Options{Config: cfg, Resolver: res, OnLockEvent: g.lockEvent})
	return cat, func() { root.Close(); res.Close() }, nil
}

func newCreateCmd(g *globals) *cobra.Command {
	var format, schemaFile, inferFrom string
	var readOpts []string
	var allowMismatch bool
	cmd := &cobra.Command{
		Use:   "create NAME --format csv|json|parquet (--schema FILE | --infer-from DATAFILE)",
		Short: "Create an index, or reconnect to it with the same schema and format",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if (schemaFile == "") == (inferFrom == "") {
				return usagef("create: give exactly one of --schema FILE or --infer-from DATAFILE")
			}
			switch format {
			case "csv", "json", "parquet":
			default:
				return usagef("create: --format must be csv, json or parquet, not %q", format)
			}
			ro := map[string]string{}
			for _, kv := range readOpts {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usagef("create: --read-option %q: want KEY=VALUE", kv)
				}
				ro[k] = v
			}
			cat, done, err := g.catalog(ctx)
			if err != nil {
				return err
			}
			defer done()
			var st *schema.Struct
			if schemaFile != "" {
				data, err := os.ReadFile(schemaFile)
				if err != nil {
					return err
				}
				if st, err = schema.Parse(strings.TrimSpace(string(data))); err != nil {
					return fmt.Errorf("create: --schema %s: %w", schemaFile, err)
				}
			} else if st, err = inferSchema(ctx, cat, inferFrom, format, ro); err != nil {
				return err
			}
			o := index.OpenOptions{Schema: st, Format: format, AllowSchemaMismatch: allowMismatch}
			if len(ro) > 0 {
				o.ReadOptions = ro
			}
			ix, err := cat.Open(ctx, args[0], o)
			if err != nil {
				return err
			}
			m := ix.Metadata()
			return g.emit(map[string]any{"name": ix.Name(), "format": m.Format, "schema": m.Schema, "read_options": readOptionsMap(m)},
				func(w io.Writer) {
					fmt.Fprintf(w, "index %s ready (format %s)\nschema: %s\n", ix.Name(), m.Format, st)
				})
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "", "data file format: csv, json or parquet")
	f.StringVar(&schemaFile, "schema", "", "file holding the Spark schema JSON of the data files")
	f.StringVar(&inferFrom, "infer-from", "", "data file (path or URI) to infer the schema from")
	f.StringArrayVar(&readOpts, "read-option", nil, "reader option KEY=VALUE (header=true, delimiter=;, multiLine=true, ...)")
	f.BoolVar(&allowMismatch, "allow-schema-mismatch", false, "replace the stored schema of an existing index")
	_ = cmd.MarkFlagRequired("format")
	return cmd
}

// inferSchema reads a sample of a data file through the store.
func inferSchema(ctx context.Context, cat *index.Catalog, file, format string, ro map[string]string) (*schema.Struct, error) {
	uri, err := store.Canonical(file)
	if err != nil {
		return nil, err
	}
	return infer.FromFile(ctx, cat.Resolver(), uri, format, ro)
}

func newListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the indexes in the store",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withCatalog(cmd.Context(), func(cat *index.Catalog) error {
				names, err := cat.List(cmd.Context())
				if err != nil {
					return err
				}
				return g.emit(map[string]any{"indexes": nonNil(names)}, func(w io.Writer) {
					if len(names) == 0 {
						// Say where we looked: an empty answer from a
						// mistyped store is otherwise silent.
						u, _ := g.resolvedStoreURL()
						g.notice("ariadne", "no indexes in store "+u)
					}
					for _, n := range names {
						fmt.Fprintln(w, n)
					}
				})
			})
		},
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func newDescribeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "describe [NAME]",
		Short: "Describe one index (with its row indexes), or all of them",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cat, done, err := g.catalog(ctx)
			if err != nil {
				return err
			}
			defer done()
			var descs []*ariadne.Description
			if len(args) == 1 {
				err := g.withFaceIndex(ctx, args[0], func(ix *ariadne.Index) error {
					desc, err := ix.Describe(ctx)
					descs = append(descs, desc)
					return err
				})
				if err != nil {
					return err
				}
			} else {
				sums, warns, err := cat.DescribeAll(ctx)
				for _, w := range warns {
					g.notice("warning", fmt.Sprint(w))
				}
				if err != nil {
					return err
				}
				if descs, err = g.withRowIndexes(ctx, sums); err != nil {
					return err
				}
			}
			if g.jsonOut && len(args) == 1 {
				return g.emit(descs[0], nil)
			}
			return g.emit(map[string]any{"indexes": nonNil(descs)}, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tFORMAT\tFILES\tINDEXED BYTES\tREGULAR\tBLOOM\tCOMPUTED\tTEMPORAL\tRANGE\tEXPLODED")
				for _, d := range descs {
					s := d.Summary
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Format, s.FileCount, sizeText(s.TotalIndexedFileSize),
						list(s.RegularIndexes), list(s.BloomIndexes), list(s.ComputedIndexes), list(s.TemporalIndexes), list(s.RangeIndexes), list(s.ExplodedFieldIndexes))
				}
				tw.Flush()
				if len(args) == 1 {
					fmt.Fprintln(w)
					printRowIndexes(w, descs[0].RowIndexes)
					printQuarantined(w, descs[0].Quarantined)
					return
				}
				for _, d := range descs {
					if len(d.RowIndexes) > 0 {
						fmt.Fprintf(w, "\nrow indexes of %s:\n", d.Name)
						printRowIndexes(w, d.RowIndexes)
					}
					printQuarantined(w, d.Quarantined)
				}
			})
		},
	}
}

// withRowIndexes adds each index's row indexes to its summary (describe of
// every index), as describing one index does. A row index that cannot be
// read is a warning, not a failure of the whole listing.
func (g *globals) withRowIndexes(ctx context.Context, sums []index.Summary) ([]*ariadne.Description, error) {
	st, err := g.faceStore(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	out := make([]*ariadne.Description, 0, len(sums))
	for _, s := range sums {
		d := &ariadne.Description{Summary: s, RowIndexes: []ariadne.RowIndexInfo{}, Quarantined: []fileindex.QuarantinedFile{}}
		out = append(out, d)
		ix, err := st.Index(ctx, s.Name)
		if err != nil {
			g.notice("warning", fmt.Sprintf("index %s: row indexes: %v", s.Name, err))
			continue
		}
		if q, err := ix.Quarantined(ctx); err != nil {
			g.notice("warning", fmt.Sprintf("index %s: quarantined files: %v", s.Name, err))
		} else {
			d.Quarantined = q
		}
		defs, err := ix.RowIndexes(ctx)
		if err != nil {
			g.notice("warning", fmt.Sprintf("index %s: row indexes: %v", s.Name, err))
			continue
		}
		for _, def := range defs {
			info, err := ix.DescribeRowIndex(ctx, def.Name)
			if err != nil {
				g.notice("warning", fmt.Sprintf("index %s: row index %s: %v", s.Name, def.Name, err))
				continue
			}
			d.RowIndexes = append(d.RowIndexes, info)
		}
	}
	return out, nil
}

func list(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

func sizeText(n int64) string {
	if n < 0 {
		return "unknown"
	}
	return fmt.Sprint(n)
}

func newRemoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an index (its index data and FileList; data files are never touched)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withCatalog(cmd.Context(), func(cat *index.Catalog) error {
				removed, err := cat.Remove(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return g.emit(map[string]any{"name": args[0], "removed": removed}, func(w io.Writer) {
					fmt.Fprintf(w, "removed index %s\n", args[0])
				})
			})
		},
	}
}

func newFindIndexesCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "find-indexes FILE",
		Short: "List the indexes that track a data file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			uri, err := store.Canonical(args[0])
			if err != nil {
				return err
			}
			return g.withCatalog(cmd.Context(), func(cat *index.Catalog) error {
				names, err := cat.FindIndexes(cmd.Context(), uri)
				if err != nil {
					return err
				}
				return g.emit(map[string]any{"file": uri, "indexes": nonNil(names)}, func(w io.Writer) {
					for _, n := range names {
						fmt.Fprintln(w, n)
					}
				})
			})
		},
	}
}

func newAddFilesCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "add-files NAME PATH...",
		Short: "Track data files in an index (paths, URIs, folders or globs; stored as canonical URIs)",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return g.withIndex(ctx, args[0], func(ix *index.Index) error {
				files, skipped, err := ix.ExpandFilesSkipped(ctx, args[1:])
				if err != nil {
					return err
				}
				added, err := ix.AddFiles(ctx, files...)
				if err != nil {
					return err
				}
				return g.emit(map[string]any{"name": ix.Name(), "files": nonNil(files), "added": added, "skipped": nonNil(skipped)}, func(w io.Writer) {
					fmt.Fprintf(w, "%d file(s) given, %d newly tracked by %s\n", len(files), added, ix.Name())
					if len(skipped) > 0 {
						fmt.Fprintf(w, "%d file(s) in the folders skipped: not %s files by their names (name them one by one to add them):\n", len(skipped), ix.Metadata().Format)
						for _, f := range skipped {
							fmt.Fprintf(w, "  %s\n", f)
						}
					}
				})
			})
		},
	}
}

func newFilesCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "files NAME",
		Short: "List the data files an index tracks",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return g.withIndex(ctx, args[0], func(ix *index.Index) error {
				files, err := ix.Files(ctx)
				if err != nil {
					return err
				}
				return g.emit(map[string]any{"name": ix.Name(), "files": nonNil(files)}, func(w io.Writer) {
					tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "FILE\tADDED AT")
					for _, f := range files {
						fmt.Fprintf(tw, "%s\t%s\n", f.Name, f.AddedAt.UTC().Format("2006-01-02T15:04:05.000Z"))
					}
					tw.Flush()
				})
			})
		},
	}
}

// readOptionsMap renders the stored read options for JSON output.
func readOptionsMap(m *metadata.Metadata) map[string]string {
	out := map[string]string{}
	for k, v := range m.ReadOptions.All() {
		out[k] = v
	}
	return out
}

// printQuarantined lists the files updates set aside (describe).
func printQuarantined(w io.Writer, q []fileindex.QuarantinedFile) {
	for _, f := range q {
		fmt.Fprintf(w, "quarantined %s (since %s; update --retry-quarantined tries it again): %s\n", f.File, f.At.Format(time.RFC3339), f.Reason)
	}
}
