package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// TestRowIndexForgetsDeletedFiles: a Delta delete rewrites a data file
// (remove + add); once the index follows it (delete-files of the removed
// file, add-files of the new one, update), lookup returns no row and no
// aggregate contribution of the removed file. A tracked file that vanished
// before update is dropped from the row indexes by update.
func TestRowIndexForgetsDeletedFiles(t *testing.T) {
	ctx := context.Background()
	dir, lakeDir := t.TempDir(), t.TempDir()
	lake, err := store.Open(ctx, "file://"+filepath.Join(lakeDir, "plays"))
	if err != nil {
		t.Fatal(err)
	}
	st := &schema.Struct{Fields: []schema.Field{
		{Name: "user_id", Type: schema.Long, Nullable: true},
		{Name: "duration_ms", Type: schema.Long, Nullable: true},
	}}
	tbl, err := delta.Create(ctx, lake, st, delta.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// User 1 plays in both files, user 2 only in the second, user 3 only in
	// the third.
	batches := [][][]any{
		{{int64(1), int64(100)}, {int64(1), int64(110)}, {int64(4), int64(400)}},
		{{int64(1), int64(120)}, {int64(2), int64(200)}, {int64(2), int64(210)}, {int64(4), int64(410)}},
		{{int64(3), int64(300)}, {int64(1), int64(130)}},
	}
	activeFiles := func() []string {
		t.Helper()
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range snap.Files() {
			p, err := delta.DecodePath(a.Path)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, filepath.Join(lakeDir, "plays", p))
		}
		return out
	}
	var files []string // data file of each batch
	for _, b := range batches {
		if _, err := tbl.Append(ctx, delta.Rows(b), delta.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, f := range activeFiles() {
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	if len(files) != 3 {
		t.Fatalf("%d data files, want one per append", len(files))
	}
	mustRun := func(args ...string) map[string]any {
		t.Helper()
		code, out, errs := run(t, dir, append([]string{"--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		return decode(t, out)
	}
	// lookup returns the durations of a user (sorted) and its count.
	lookup := func(user string) ([]float64, any) {
		t.Helper()
		res := mustRun("lookup", "plays", "--key", "user_id="+user)
		var ds []float64
		for _, r := range res["rows"].([]any) {
			ds = append(ds, r.(map[string]any)["values"].(map[string]any)["duration_ms"].(float64))
		}
		slices.Sort(ds)
		var count any
		if aggs, ok := res["aggregates"].([]any); ok {
			count = aggs[0].(map[string]any)["values"].(map[string]any)["count"]
		}
		return ds, count
	}

	mustRun("create", "plays", "--format", "parquet", "--infer-from", files[0])
	mustRun("add-files", "plays", files[0], files[1])
	mustRun("add-row-index", "plays", "--key", "user_id", "--aggregate", "count")
	mustRun("update", "plays")
	if ds, n := lookup("1"); !slices.Equal(ds, []float64{100, 110, 120}) || n != 3.0 {
		t.Fatalf("user 1 before the delete: %v, count %v", ds, n)
	}

	// The Delta delete of user 2 rewrites the second file.
	res, err := tbl.Delete(ctx, func(row []any) bool { return row[0] == int64(2) }, delta.DeleteOptions{})
	if err != nil || res.FilesRemoved != 1 || res.FilesAdded != 1 {
		t.Fatalf("delta delete: %+v, %v", res, err)
	}
	var rewritten string
	for _, f := range activeFiles() {
		if !slices.Contains(files, f) {
			rewritten = f
		}
	}
	del := mustRun("delete-files", "plays", files[1])
	if ri := del["row_indexes"].(map[string]any); ri["user_id"] != 1.0 {
		t.Fatalf("delete-files: %v", del)
	}
	if ds, n := lookup("2"); len(ds) != 0 || n != nil {
		t.Fatalf("user 2 after delete-files: %v, count %v", ds, n)
	}
	mustRun("add-files", "plays", rewritten)
	upd := mustRun("update", "plays")
	if ri := upd["row_indexes"].(map[string]any)["user_id"].(map[string]any); ri["files"] != 1.0 || ri["removed"] != 0.0 {
		t.Fatalf("update after the delete: %v", ri)
	}
	if ds, n := lookup("1"); !slices.Equal(ds, []float64{100, 110, 120}) || n != 3.0 {
		t.Fatalf("user 1 after the delete: %v, count %v", ds, n)
	}
	if ds, n := lookup("2"); len(ds) != 0 || n != nil {
		t.Fatalf("user 2 after the delete: %v, count %v", ds, n)
	}
	if ds, n := lookup("4"); !slices.Equal(ds, []float64{400, 410}) || n != 2.0 {
		t.Fatalf("user 4 after the delete: %v, count %v", ds, n)
	}

	// A tracked file that vanishes before update: the row index built over
	// it forgets it, so lookups do not fail on the missing file.
	mustRun("add-files", "plays", files[2])
	mustRun("add-row-index", "plays", "--key", "duration_ms", "--name", "by_duration")
	if err := os.Remove(files[2]); err != nil {
		t.Fatal(err)
	}
	upd = mustRun("update", "plays")
	if ri := upd["row_indexes"].(map[string]any)["by_duration"].(map[string]any); ri["removed"] != 1.0 {
		t.Fatalf("update after the file vanished: %v", upd["row_indexes"])
	}
	if ds, _ := lookup("1"); !slices.Equal(ds, []float64{100, 110, 120}) {
		t.Fatalf("user 1 after the file vanished: %v", ds)
	}
	if rows := mustRun("lookup", "plays", "--key", "duration_ms=130")["rows"].([]any); len(rows) != 0 {
		t.Fatalf("a vanished file's row: %v", rows)
	}
}
