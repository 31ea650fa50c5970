package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/store"
)

func newDeltaCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delta",
		Short: "Diagnostics for Delta Lake tables",
	}
	cmd.AddCommand(newDeltaLsCmd(g))
	return cmd
}

// deltaFile is one active file in `delta ls` output.
type deltaFile struct {
	Path            string            `json:"path"`
	Size            int64             `json:"size"`
	NumRecords      *int64            `json:"num_records"`
	PartitionValues map[string]string `json:"partition_values,omitempty"`
	DeletionVector  bool              `json:"deletion_vector,omitempty"`
}

func newDeltaLsCmd(g *globals) *cobra.Command {
	var version int64
	cmd := &cobra.Command{
		Use:   "ls TABLE_URL",
		Short: "Print a Delta table's version, protocol, schema and active files",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			uri, err := store.Canonical(args[0])
			if err != nil {
				return err
			}
			s, err := store.Open(ctx, uri)
			if err != nil {
				return err
			}
			defer s.Close()
			t, err := delta.Open(ctx, s)
			if err != nil {
				return err
			}
			snap, err := t.Snapshot(ctx)
			if cmd.Flags().Changed("version") {
				snap, err = t.SnapshotAt(ctx, version)
			}
			if err != nil {
				return err
			}
			var files []deltaFile
			var total, records int64
			recordsKnown := true
			for _, f := range snap.Files() {
				df := deltaFile{Path: f.Path, Size: f.Size, DeletionVector: f.DeletionVector != nil}
				if len(f.PartitionValues) > 0 {
					df.PartitionValues = map[string]string{}
					for k, v := range f.PartitionValues {
						if v != nil {
							df.PartitionValues[k] = *v
						}
					}
				}
				var st struct {
					NumRecords *int64 `json:"numRecords"`
				}
				if f.Stats != "" && json.Unmarshal([]byte(f.Stats), &st) == nil && st.NumRecords != nil {
					df.NumRecords = st.NumRecords
					records += *st.NumRecords
				} else {
					recordsKnown = false
				}
				total += f.Size
				files = append(files, df)
			}
			p := snap.Protocol()
			out := map[string]any{
				"table":             uri,
				"version":           snap.Version(),
				"protocol":          p,
				"schema":            json.RawMessage(snap.Schema().Marshal()),
				"partition_columns": nonNil(snap.PartitionColumns()),
				"files":             nonNil(files),
				"num_files":         len(files),
				"total_size":        total,
			}
			if recordsKnown {
				out["num_records"] = records
			}
			return g.emit(out, func(w io.Writer) {
				fmt.Fprintf(w, "table:    %s\nversion:  %d\nprotocol: reader %d, writer %d", uri, snap.Version(), p.MinReaderVersion, p.MinWriterVersion)
				if len(p.ReaderFeatures) > 0 || len(p.WriterFeatures) > 0 {
					fmt.Fprintf(w, " (reader features %v, writer features %v)", p.ReaderFeatures, p.WriterFeatures)
				}
				fmt.Fprintf(w, "\nschema:   %s\n", snap.Schema())
				if pc := snap.PartitionColumns(); len(pc) > 0 {
					fmt.Fprintf(w, "partitioned by: %v\n", pc)
				}
				rec := "unknown"
				if recordsKnown {
					rec = fmt.Sprint(records)
				}
				fmt.Fprintf(w, "files:    %d, %d bytes, %s records\n\n", len(files), total, rec)
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
				fmt.Fprintln(tw, "SIZE\tRECORDS\t PATH\t")
				for _, f := range files {
					r := "?"
					if f.NumRecords != nil {
						r = fmt.Sprint(*f.NumRecords)
					}
					fmt.Fprintf(tw, "%d\t%s\t %s\t\n", f.Size, r, f.Path)
				}
				tw.Flush()
			})
		},
	}
	cmd.Flags().Int64Var(&version, "version", 0, "read the table as of this version (time travel)")
	return cmd
}
