package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/metadata"
)

func newAddIndexCmd(g *globals) *cobra.Command {
	var regular, bloomCols, ranges, computed, exploded []string
	var temporal, timestamp string
	var fpr float64
	cmd := &cobra.Command{
		Use: "add-index NAME (--regular COL | --bloom COL [--fpr F] | --range COL | --temporal COL --timestamp TSCOL |\n" +
			"                  --computed ALIAS=SQL | --exploded ARRAY:FIELD_PATH:ALIAS)...",
		Short: "Register index definitions on an index (built by the next update)",
		Long: "Register index definitions (spec §3). Flags may be repeated and combined; they are applied in the order\n" +
			"regular, bloom, range, temporal, computed, exploded. Re-adding a definition is a no-op; a column can\n" +
			"have only one index type.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if len(regular)+len(bloomCols)+len(ranges)+len(computed)+len(exploded) == 0 && temporal == "" {
				return usagef("add-index: give at least one of --regular, --bloom, --range, --temporal, --computed, --exploded")
			}
			if (temporal == "") != (timestamp == "") {
				return usagef("add-index: --temporal and --timestamp go together")
			}
			type step struct {
				what string
				run  func(ix *index.Index) error
			}
			var steps []step
			for _, c := range regular {
				steps = append(steps, step{"regular " + c, func(ix *index.Index) error { return ix.AddIndex(ctx, c) }})
			}
			for _, c := range bloomCols {
				steps = append(steps, step{fmt.Sprintf("bloom %s (fpr %v)", c, fpr), func(ix *index.Index) error { return ix.AddBloomIndex(ctx, c, fpr) }})
			}
			for _, c := range ranges {
				steps = append(steps, step{"range " + c, func(ix *index.Index) error { return ix.AddRangeIndex(ctx, c) }})
			}
			if temporal != "" {
				steps = append(steps, step{"temporal " + temporal + " by " + timestamp, func(ix *index.Index) error {
					return ix.AddTemporalIndex(ctx, temporal, timestamp)
				}})
			}
			for _, c := range computed {
				alias, expr, ok := strings.Cut(c, "=")
				if !ok {
					return usagef("add-index: --computed %q: want ALIAS=SQL", c)
				}
				steps = append(steps, step{"computed " + alias + " = " + expr, func(ix *index.Index) error {
					name, sql := strings.TrimSpace(alias), strings.TrimSpace(expr)
					// Definitions can never be removed: check the SQL
					// before registering it (see FileIndex.CheckComputed).
					if err := fileindex.New(ix, fileindex.Options{}).CheckComputed(ctx, name, sql); err != nil {
						return err
					}
					return ix.AddComputedIndex(ctx, name, sql)
				}})
			}
			for _, e := range exploded {
				parts := strings.Split(e, ":")
				if len(parts) != 3 {
					return usagef("add-index: --exploded %q: want ARRAY:FIELD_PATH:ALIAS", e)
				}
				steps = append(steps, step{"exploded " + parts[0] + "." + parts[1] + " as " + parts[2], func(ix *index.Index) error {
					return ix.AddExplodedFieldIndex(ctx, parts[0], parts[1], parts[2])
				}})
			}
			return g.withIndex(ctx, args[0], func(ix *index.Index) error {
				var done, existing []string
				for _, s := range steps {
					before := ix.Metadata()
					if err := s.run(ix); err != nil {
						return fmt.Errorf("%s: %w", s.what, err)
					}
					// Re-registering is a silent no-op (spec §3.1 step 5):
					// report it as such instead of as a change.
					if metadata.Equal(before, ix.Metadata()) {
						existing = append(existing, s.what)
					} else {
						done = append(done, s.what)
					}
				}
				cols := ix.Indexes()
				slices.Sort(cols)
				return g.emit(map[string]any{"name": ix.Name(), "added": nonNil(done), "already_registered": nonNil(existing), "indexes": nonNil(cols)}, func(w io.Writer) {
					for _, d := range done {
						fmt.Fprintf(w, "registered %s\n", d)
					}
					for _, d := range existing {
						fmt.Fprintf(w, "already registered: %s\n", d)
					}
					fmt.Fprintf(w, "index columns of %s: %s\n", ix.Name(), strings.Join(cols, ", "))
				})
			})
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&regular, "regular", nil, "regular (exact value set) index on COL")
	f.StringArrayVar(&bloomCols, "bloom", nil, "bloom filter index on COL")
	f.Float64Var(&fpr, "fpr", index.DefaultBloomFPR, "false-positive rate of --bloom filters, in (0, 1)")
	f.StringArrayVar(&ranges, "range", nil, "range (min/max) index on COL")
	f.StringVar(&temporal, "temporal", "", "temporal index: newest version per value of COL")
	f.StringVar(&timestamp, "timestamp", "", "timestamp column (may be nested: a.b) of --temporal")
	f.StringArrayVar(&computed, "computed", nil, "computed index ALIAS=SQL expression")
	f.StringArrayVar(&exploded, "exploded", nil, "exploded field index ARRAY:FIELD_PATH:ALIAS")
	return cmd
}
