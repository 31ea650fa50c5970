package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// This file holds row index maintenance on the command line: the row index
// part of `compact` and `describe`, and `drop-row-index`.

// rowIndexInfo describes one row index for `describe`: its definition and
// the sizes of its newest manifest version.
type rowIndexInfo struct {
	Name       string   `json:"name"`
	Key        string   `json:"key"`
	Kind       string   `json:"kind"`
	Cover      []string `json:"cover"`
	Aggregates []string `json:"aggregates"` // as on the command line: count, sum:COL, ...
	// Version is the manifest version described.
	Version int64 `json:"version"`
	// Files is the number of indexed data files (removed ones excluded).
	Files int `json:"files"`
	// Removed is the number of tombstones: removed data files whose entries
	// the fragments still hold until the next compact.
	Removed    int   `json:"removed"`
	Entries    int64 `json:"entries"`
	Fragments  int   `json:"fragments"`
	IndexBytes int64 `json:"index_bytes"`
	DataBytes  int64 `json:"data_bytes"`
	// IndexFraction is IndexBytes / DataBytes (0 with no data).
	IndexFraction float64 `json:"index_fraction"`
}

func newRowIndexInfo(m *rowindex.Manifest) rowIndexInfo {
	aggs := make([]string, len(m.Aggregates))
	for i, a := range m.Aggregates {
		aggs[i] = a.String()
	}
	info := rowIndexInfo{
		Name: m.Name, Key: m.Key, Kind: string(m.Kind), Cover: nonNil(m.Cover), Aggregates: aggs,
		Version: m.Version, Files: len(m.Files), Removed: len(m.Removed), Entries: m.Entries(),
		Fragments: len(m.Fragments), IndexBytes: m.IndexBytes(), DataBytes: m.DataBytes(),
	}
	if info.DataBytes > 0 {
		info.IndexFraction = float64(info.IndexBytes) / float64(info.DataBytes)
	}
	return info
}

// rowIndexManifest reads the newest manifest of the row index name. It
// reads no data file and no fragment.
func rowIndexManifest(ctx context.Context, folder store.Store, name string) (*rowindex.Manifest, error) {
	ri, err := rowindex.Open(ctx, folder, name, rowindex.Options{})
	if err != nil {
		return nil, err
	}
	return ri.Manifest(), nil
}

// describeRowIndexes describes every row index of ix, by name. A row index
// dropped while it is listed is left out.
func describeRowIndexes(ctx context.Context, ix *index.Index) ([]rowIndexInfo, error) {
	folder := indexFolder(ix)
	defs, err := rowindex.List(ctx, folder)
	if err != nil {
		return nil, err
	}
	infos := []rowIndexInfo{}
	for _, d := range defs {
		m, err := rowIndexManifest(ctx, folder, d.Name)
		if errors.Is(err, rowindex.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("row index %s: %w", d.Name, err)
		}
		infos = append(infos, newRowIndexInfo(m))
	}
	return infos, nil
}

// printRowIndexes prints the row index table of `describe NAME`.
func printRowIndexes(w io.Writer, infos []rowIndexInfo) {
	if len(infos) == 0 {
		fmt.Fprintln(w, "row indexes: none")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROW INDEX\tKEY\tKIND\tCOVER\tAGGREGATES\tFILES\tENTRIES\tINDEX BYTES\tOF DATA\tFRAGMENTS\tREMOVED")
	for _, r := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%.2f%%\t%d\t%d\n", r.Name, r.Key, r.Kind, list(r.Cover), list(r.Aggregates),
			r.Files, r.Entries, r.IndexBytes, 100*r.IndexFraction, r.Fragments, r.Removed)
	}
	tw.Flush()
}

// rowIndexCompaction is what `compact` did to one row index.
type rowIndexCompaction struct {
	Version          int64 `json:"version"` // the manifest version committed
	FragmentsBefore  int   `json:"fragments_before"`
	FragmentsAfter   int   `json:"fragments_after"`
	EntriesBefore    int64 `json:"entries_before"`
	EntriesAfter     int64 `json:"entries_after"`
	IndexBytesBefore int64 `json:"index_bytes_before"`
	IndexBytesAfter  int64 `json:"index_bytes_after"`
	// RemovedFiles is the number of removed data files (tombstones) whose
	// entries the compaction dropped.
	RemovedFiles int `json:"removed_files"`
}

// compactRowIndexes compacts every row index of ix (rowindex.Compact: all
// fragments merged into a fresh sequence, removed files' entries dropped)
// and reports each by name. It stops at the first failure; row indexes
// compacted before it stay compacted.
//
// The "before" numbers are of the manifest read just before Compact; a
// writer committing in between makes Compact fail with
// rowindex.ErrConcurrentUpdate unless Compact read that writer's version,
// in which case "before" may miss its last change.
func compactRowIndexes(ctx context.Context, ix *index.Index) (map[string]rowIndexCompaction, error) {
	folder := indexFolder(ix)
	defs, err := rowindex.List(ctx, folder)
	if err != nil {
		return nil, err
	}
	out := make(map[string]rowIndexCompaction, len(defs))
	for _, d := range defs {
		before, err := rowIndexManifest(ctx, folder, d.Name)
		if err != nil {
			return nil, fmt.Errorf("compact row index %s: %w", d.Name, err)
		}
		after, err := rowindex.Compact(ctx, folder, d.Name)
		if err != nil {
			return nil, fmt.Errorf("compact row index %s: %w", d.Name, err)
		}
		out[d.Name] = rowIndexCompaction{
			Version:         after.Version,
			FragmentsBefore: len(before.Fragments), FragmentsAfter: len(after.Fragments),
			EntriesBefore: before.Entries(), EntriesAfter: after.Entries(),
			IndexBytesBefore: before.IndexBytes(), IndexBytesAfter: after.IndexBytes(),
			RemovedFiles: len(before.Removed),
		}
	}
	return out, nil
}

// printRowIndexCompaction prints one line of `compact` for a row index.
func printRowIndexCompaction(w io.Writer, name string, c rowIndexCompaction) {
	fmt.Fprintf(w, "row index %s: fragments %d → %d, entries %d → %d, index bytes %d → %d, %d removed file(s) dropped\n",
		name, c.FragmentsBefore, c.FragmentsAfter, c.EntriesBefore, c.EntriesAfter, c.IndexBytesBefore, c.IndexBytesAfter, c.RemovedFiles)
}

// rowIndexNotFound is the error of a row index name the index does not
// have: it names the ones it has and matches rowindex.ErrNotFound.
func rowIndexNotFound(ctx context.Context, ix *index.Index, name string) error {
	var names []string
	if defs, err := rowindex.List(ctx, indexFolder(ix)); err == nil {
		for _, d := range defs {
			names = append(names, d.Name)
		}
	}
	have := "none"
	if len(names) > 0 {
		have = strings.Join(names, ", ")
	}
	return fmt.Errorf("index %s has no row index %q (row indexes: %s): %w", ix.Name(), name, have, rowindex.ErrNotFound)
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
			return g.withIndex(ctx, args[0], func(ix *index.Index) error {
				err := rowindex.Drop(ctx, indexFolder(ix), name)
				if errors.Is(err, rowindex.ErrNotFound) {
					return rowIndexNotFound(ctx, ix, name)
				}
				if err != nil {
					return err
				}
				return g.emit(map[string]any{"name": ix.Name(), "dropped": name}, func(w io.Writer) {
					fmt.Fprintf(w, "dropped row index %s of %s\n", name, ix.Name())
				})
			})
		},
	}
}
