package interop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/delta"
)

// engineTables are the tables delta_write.py writes: five scenarios per
// engine (docs/interop.md, "Spark and delta-rs writers").
var engineTables = []string{
	"deltars_append", "deltars_delete", "deltars_merge", "deltars_optimize", "deltars_checkpoint",
	"spark_append", "spark_delete", "spark_merge", "spark_optimize", "spark_checkpoint",
}

// TestEngineWrittenTablesReadByGo is issue 5 item 4b: tables written by
// Spark + delta-spark and by delta-rs (append, delete, merge, optimize,
// checkpoint) are read by our delta package, which must give the version,
// schemaString and canonical rows the engines themselves read back
// (expected.json); where Spark wrote the table, delta-rs and Spark must also
// agree with each other.
func TestEngineWrittenTablesReadByGo(t *testing.T) {
	e := loadEnv(t)
	ctx := testContext(t, 10*time.Minute)
	out := t.TempDir()
	if _, err := e.RunScript(ctx, "delta_write.py", out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var expected map[string]map[Engine]EngineResult
	if err := json.Unmarshal(data, &expected); err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range expected {
		names = append(names, n)
	}
	slices.Sort(names)
	want := slices.Clone(engineTables)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("delta_write.py wrote %v, want %v", names, want)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			exp := expected[name]
			ref, ok := exp[DeltaRS]
			if !ok || ref.Error != nil {
				t.Fatalf("delta-rs could not read back %s: %v", name, ref.Error)
			}
			if sp, ok := exp[Spark]; ok {
				if sp.Error != nil {
					t.Fatalf("Spark could not read back %s: %s", name, *sp.Error)
				}
				if d := diffLines(ref.Rows, sp.Rows); d != "" {
					t.Errorf("Spark and delta-rs disagree on %s: %s", name, d)
				}
			}
			tbl, err := delta.Open(ctx, openStore(t, ctx, filepath.Join(out, name)))
			if err != nil {
				t.Fatal(err)
			}
			snap, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ref.Version == nil || snap.Version() != *ref.Version {
				t.Errorf("version %d, delta-rs read %v", snap.Version(), ref.Version)
			}
			if ref.Schema == nil || snap.Metadata().SchemaString != *ref.Schema {
				t.Errorf("schemaString %q, the log has %v", snap.Metadata().SchemaString, ref.Schema)
			}
			got, err := scanLines(ctx, snap)
			if err != nil {
				t.Fatalf("our scan: %v", err)
			}
			if d := diffLines(ref.Rows, got); d != "" {
				t.Errorf("our reader: %s", d)
			}
			if len(got) == 0 {
				t.Errorf("no rows: the scenario must leave rows to compare")
			}
			if ref.RowsSHA256 == nil || RowsSHA256(got) != *ref.RowsSHA256 {
				t.Errorf("rows_sha256 %s, engines %v", RowsSHA256(got), ref.RowsSHA256)
			}
			if name == "spark_checkpoint" || name == "deltars_checkpoint" {
				cps, _ := filepath.Glob(filepath.Join(out, name, "_delta_log", "*.checkpoint*.parquet"))
				if len(cps) < 2 {
					t.Errorf("%s: %d checkpoints, the scenario writes 2", name, len(cps))
				}
			}
		})
	}
}
