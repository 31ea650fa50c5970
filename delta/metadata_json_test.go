package delta

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// TestCommittedMetadataHasNoNulls: every metaData action we commit carries
// partitionColumns as an array and configuration/format.options as objects,
// never null (Spark 3.5 + delta-spark fails on null). Covers the commits that
// copy metadata from a snapshot: Overwrite with a schema change and Append
// with MergeSchema, with and without a checkpoint in between.
func TestCommittedMetadataHasNoNulls(t *testing.T) {
	ctx := context.Background()
	v1 := &schema.Struct{Fields: []schema.Field{{Name: "a", Type: schema.Long, Nullable: true}}}
	v2 := &schema.Struct{Fields: []schema.Field{{Name: "a", Type: schema.Long, Nullable: true}, {Name: "b", Type: schema.String, Nullable: true}}}
	for _, checkpoint := range []bool{false, true} {
		for name, op := range map[string]func(*Table) error{
			"overwrite": func(tbl *Table) error {
				_, err := tbl.Overwrite(ctx, v2, Rows([][]any{{int64(1), "x"}}), WriteOptions{})
				return err
			},
			"merge schema": func(tbl *Table) error {
				_, err := tbl.Append(ctx, Rows([][]any{{int64(1), "x"}}), WriteOptions{Schema: v2, MergeSchema: true})
				return err
			},
		} {
			s, _ := store.Open(ctx, "mem://")
			tbl, err := Create(ctx, s, v1, CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			v, err := tbl.Append(ctx, Rows([][]any{{int64(0)}}), WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if checkpoint {
				if err := tbl.Checkpoint(ctx, v); err != nil {
					t.Fatal(err)
				}
			}
			if err := op(tbl); err != nil {
				t.Fatal(err)
			}
			data, err := store.ReadAll(ctx, s, CommitKey(v+1))
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var a map[string]map[string]json.RawMessage
				if err := json.Unmarshal([]byte(line), &a); err != nil {
					t.Fatal(err)
				}
				md, ok := a["metaData"]
				if !ok {
					continue
				}
				found = true
				var f map[string]json.RawMessage
				json.Unmarshal(md["format"], &f)
				if string(md["partitionColumns"]) != "[]" || string(md["configuration"]) == "null" || string(f["options"]) == "null" {
					t.Errorf("%s (checkpoint %v): metaData with nulls: %s", name, checkpoint, line)
				}
			}
			if !found {
				t.Errorf("%s: no metaData action committed", name)
			}
		}
	}
}
