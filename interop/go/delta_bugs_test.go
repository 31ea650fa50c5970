package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/schema"
)

// TestMetadataCommitKeepsEmptyPartitionColumns is the regression test of a
// bug in package delta that TestGoWrittenTablesReadByEngines found: a
// metaData action re-emitted for an unpartitioned table must carry
// "partitionColumns":[] (PROTOCOL.md: an array of strings). With null,
// delta-rs 1.6.6 refuses the log ("Encountered unmasked nulls in non-nullable
// StructArray child partitionColumns") and Spark 3.5.8 + delta-spark 3.3.2
// fails with a NullPointerException in Metadata.partitionColumns(), on every
// version once the latest snapshot holds it. No engine is needed to see it:
// the commit's JSON says it.
//
// Cause (fixed in package delta by commit 0035fe2): (*Snapshot).Metadata
// copied PartitionColumns with append([]string(nil), ...), turning the empty
// list into nil; Overwrite with a schema change and Append with MergeSchema
// committed that copy.
func TestMetadataCommitKeepsEmptyPartitionColumns(t *testing.T) {
	ctx := testContext(t, time.Minute)
	// mergeSchema adds one nullable column to the first schema.
	merged := &schema.Struct{Fields: append(append([]schema.Field{}, writtenSchemaV1.Fields...),
		schema.Field{Name: "extra", Type: schema.String, Nullable: true})}
	ops := map[string]func(tbl *delta.Table) (int64, error){
		"overwrite with schema change": func(tbl *delta.Table) (int64, error) {
			res, err := tbl.Overwrite(ctx, writtenSchemaV2, delta.Rows(genRows(10, 3, "b", genRowV2)), delta.WriteOptions{})
			return res.Version, err
		},
		"append with mergeSchema": func(tbl *delta.Table) (int64, error) {
			row := append(genRow(20, "c"), "extra value")
			return tbl.Append(ctx, delta.Rows([][]any{row}), delta.WriteOptions{Schema: merged, MergeSchema: true})
		},
	}
	for name, op := range ops {
		for _, checkpointFirst := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/checkpoint=%v", name, checkpointFirst), func(t *testing.T) {
				dir := t.TempDir()
				tbl, err := delta.Create(ctx, openStore(t, ctx, dir), writtenSchemaV1, delta.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				v, err := tbl.Append(ctx, delta.Rows(genRows(0, 3, "a", genRow)), delta.WriteOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if checkpointFirst {
					if err := tbl.Checkpoint(ctx, v); err != nil {
						t.Fatal(err)
					}
				}
				cv, err := op(tbl)
				if err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", cv)))
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
					var a map[string]map[string]json.RawMessage
					if err := json.Unmarshal([]byte(line), &a); err != nil {
						t.Fatal(err)
					}
					if md, ok := a["metaData"]; ok {
						found = true
						if got := string(md["partitionColumns"]); got != "[]" {
							t.Errorf("commit v%d: metaData.partitionColumns = %s, want []", cv, got)
						}
					}
				}
				if !found {
					t.Fatalf("the schema change committed no metaData action")
				}
			})
		}
	}
}
