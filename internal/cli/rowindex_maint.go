package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne"
)

// This file holds row index maintenance on the command line: the row index
// part of `compact` and `describe`, and `drop-row-index`.

// printRowIndexes prints the row index table of `describe NAME`.
func printRowIndexes(w io.Writer, infos []ariadne.RowIndexInfo) {
	if len(infos) == 0 {
		fmt.Fprintln(w, "row indexes: none")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROW INDEX\tKEY\tKIND\tBUCKET HASH\tFORMAT\tCOVER\tAGGREGATES\tFILES\tENTRIES\tINDEX BYTES\tOF DATA\tFRAGMENTS\tREMOVED\tSHAPE FILES")
	for _, r := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%d\t%d\t%d\t%.2f%%\t%d\t%d\t%s\n", r.Name, r.Key, r.Kind, bucketHash(r.BucketHash), r.FormatVersion, list(r.Cover), list(r.Aggregates),
			r.Files, r.Entries, r.IndexBytes, 100*r.IndexFraction, r.Fragments, r.Removed, shapeFiles(r))
	}
	tw.Flush()
	for _, r := range infos {
		for _, s := range r.Skipped {
			fmt.Fprintf(w, "row index %s skipped %s: %s\n", r.Name, s.File, s.Reason)
		}
	}
}

// shapeFiles prints a row index's shape files: "?" when they could not be
// listed.
func shapeFiles(r ariadne.RowIndexInfo) string {
	if r.ShapeFiles == nil || r.ShapeFileBytes == nil {
		return "?"
	}
	return fmt.Sprintf("%d (%d bytes)", *r.ShapeFiles, *r.ShapeFileBytes)
}

// bucketHash prints a row index's bucket hash: "-" for a sorted one.
func bucketHash(h *string) string {
	if h == nil {
		return "-"
	}
	return *h
}

// printRowIndexCompaction prints one line of `compact` for a row index.
func printRowIndexCompaction(w io.Writer, name string, c ariadne.RowIndexCompaction) {
	fmt.Fprintf(w, "row index %s: fragments %d → %d, entries %d → %d, index bytes %d → %d, %d removed file(s) dropped\n",
		name, c.FragmentsBefore, c.FragmentsAfter, c.EntriesBefore, c.EntriesAfter, c.IndexBytesBefore, c.IndexBytesAfter, c.RemovedFiles)
}

func newDropRowIndexCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "drop-row-index NAME ROWINDEX",
		Short: "Delete a row index (its manifests and fragments; data files are never touched)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			name := args[1]
			if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\") {
				return usagef("drop-row-index: invalid row index name %q", name)
			}
			return g.withFaceIndex(ctx, args[0], func(ix *ariadne.Index) error {
				if err := ix.DropRowIndex(ctx, name); err != nil {
					return err
				}
				return g.emit(map[string]any{"name": ix.Name(), "dropped": name}, func(w io.Writer) {
					fmt.Fprintf(w, "dropped row index %s of %s\n", name, ix.Name())
				})
			})
		},
	}
}
