package cli

import (
	"fmt"
	"io"
	"strings"
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

// deltaLsJSON is the JSON output of `delta ls` in the command line's
// vocabulary: snake_case keys, lists never null, the schema as its JSON
// text (as `create` prints it), a file's record count null when its stats
// lack it.
func deltaLsJSON(uri string, info delta.TableInfo) map[string]any {
	files := make([]map[string]any, len(info.Files))
	for i, f := range info.Files {
		var n any
		if f.NumRecords != nil {
			n = *f.NumRecords
		}
		pv := map[string]string{}
		for k, v := range f.PartitionValues {
			pv[k] = v
		}
		files[i] = map[string]any{"path": f.Path, "size": f.Size, "num_records": n, "deleted_rows": f.DeletedRows, "partition_values": pv}
	}
	conf := map[string]string{}
	for k, v := range info.Configuration {
		conf[k] = v
	}
	p := info.Protocol
	return map[string]any{
		"table": uri, "version": info.Version,
		"protocol": map[string]any{"min_reader_version": p.MinReaderVersion, "min_writer_version": p.MinWriterVersion,
			"reader_features": nonNil(p.ReaderFeatures), "writer_features": nonNil(p.WriterFeatures)},
		"schema": info.SchemaString, "partition_columns": nonNil(info.PartitionColumns), "configuration": conf,
		"column_mapping": string(info.ColumnMapping), "files": files, "num_files": info.NumFiles, "size_bytes": info.SizeBytes,
		"num_records": info.NumRecords, "records_known": info.RecordsKnown,
	}
}

func newDeltaLsCmd(g *globals) *cobra.Command {
	var version int64
	cmd := &cobra.Command{
		Use:   "ls TABLE_URL",
		Short: "Print a Delta table's version, protocol, schema and active files (sizes, record counts)",
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
			var snap *delta.Snapshot
			if cmd.Flags().Changed("version") {
				snap, err = t.SnapshotAt(ctx, version)
			} else {
				snap, err = t.Snapshot(ctx)
			}
			if err != nil {
				return err
			}
			info := delta.Describe(ctx, snap)
			return g.emit(deltaLsJSON(uri, info), func(w io.Writer) {
				p := info.Protocol
				fmt.Fprintf(w, "table:    %s\nversion:  %d\nprotocol: reader %d, writer %d", uri, info.Version, p.MinReaderVersion, p.MinWriterVersion)
				if len(p.ReaderFeatures) > 0 || len(p.WriterFeatures) > 0 {
					fmt.Fprintf(w, "; reader features %s; writer features %s", list(p.ReaderFeatures), list(p.WriterFeatures))
				}
				fmt.Fprintf(w, "\nschema:   %s\n", info.Schema)
				if len(info.PartitionColumns) > 0 {
					fmt.Fprintf(w, "partitioned by: %s\n", strings.Join(info.PartitionColumns, ", "))
				}
				if info.ColumnMapping != "" && info.ColumnMapping != delta.MappingNone {
					fmt.Fprintf(w, "column mapping: %s\n", info.ColumnMapping)
				}
				rec := "unknown"
				if info.RecordsKnown {
					rec = fmt.Sprint(info.NumRecords)
				}
				fmt.Fprintf(w, "files:    %d, %d bytes, %s live records\n\n", info.NumFiles, info.SizeBytes, rec)
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
				fmt.Fprintln(tw, "SIZE\tRECORDS\tDELETED\t PATH\t")
				for _, f := range info.Files {
					r := "?"
					if f.NumRecords != nil {
						r = fmt.Sprint(*f.NumRecords)
					}
					fmt.Fprintf(tw, "%d\t%s\t%d\t %s\t\n", f.Size, r, f.DeletedRows, f.Path)
				}
				tw.Flush()
			})
		},
	}
	cmd.Flags().Int64Var(&version, "version", 0, "read the table as of this version (time travel)")
	return cmd
}
