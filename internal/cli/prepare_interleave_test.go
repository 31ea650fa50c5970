package cli

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/internal/lakegen"
)

// TestPrepareInterleave: `prepare --frames --interleave` writes files that
// DuckDB reads with the source's rows, records the group in the choices
// (--json and text), and a row index over them answers every lookup as
// DuckDB's scan of the source lake does, in one byte range per file
// holding the key; bad groups are refused with their kind.
func TestPrepareInterleave(t *testing.T) {
	dir := t.TempDir()
	lakeDir, _ := genLake(t, lakegen.Config{Seed: 6, TargetBytes: 2 << 20, Days: 2, FilesPerDay: 2, Users: 2000, Tracks: 800})
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := filepath.Join(t.TempDir(), "il")
	res := decode(t, runOK(t, dir, "--json", "prepare", lakeDir, "--out", out, "--key", "user_id", "--sort", "ts",
		"--frames", "--frame-min-bytes", "4096", "--interleave", "ts,track_uri,duration_ms,context"))
	fr, _ := res["choices"].(map[string]any)["frames"].(map[string]any)
	if fmt.Sprint(fr["interleave"]) != "[ts track_uri duration_ms context]" {
		t.Fatalf("choices.frames %v", fr)
	}
	if res["interleaved_copy_bytes"].(float64) <= 0 {
		t.Fatalf("interleaved_copy_bytes %v", res["interleaved_copy_bytes"])
	}
	var n, srcN int64
	glob := filepath.Join(out, "**", "*.parquet")
	if err := db.QueryRow(`SELECT count(*) FROM (SELECT * FROM read_parquet('` + glob + `') EXCEPT ALL SELECT * FROM read_parquet('` + filepath.Join(lakeDir, "**", "*.parquet") + `'))`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM read_parquet('` + glob + `')`).Scan(&srcN); err != nil {
		t.Fatal(err)
	}
	if n != 0 || srcN != int64(res["rows"].(float64)) {
		t.Fatalf("DuckDB: %d rows not in the source, %d rows of %v", n, srcN, res["rows"])
	}
	runOK(t, dir, "create", "plays", "--format", "parquet", "--infer-from", filepath.Join(out, res["files"].([]any)[0].(map[string]any)["key"].(string)))
	runOK(t, dir, "add-files", "plays", out)
	runOK(t, dir, "add-row-index", "plays", "--key", "user_id")
	lookupsEqualScan(t, db, dir, "plays", lakeDir, func(user int64, lk map[string]any) {
		plan := lk["plan"].(map[string]any)
		if plan["byte_ranges"] != plan["files"] {
			t.Errorf("user %d: %v byte ranges for %v files", user, plan["byte_ranges"], plan["files"])
		}
	})
	for _, c := range []struct {
		args []string
		code int
		kind string
	}{
		{[]string{"--interleave", "ts"}, 2, "usage"},
		{[]string{"--frames", "--interleave", "user_id,ts"}, 1, "invalid argument"},
		{[]string{"--frames", "--interleave", "nope"}, 1, "invalid argument"},
		{[]string{"--frames", "--interleave", "ts,ts"}, 1, "invalid argument"},
		{[]string{"--frames", "--frame-raw-blocks", "--interleave", "ts"}, 1, "invalid argument"},
	} {
		args := append([]string{"--json", "prepare", lakeDir, "--out", out + "-bad", "--key", "user_id"}, c.args...)
		code, stdout, _ := run(t, dir, args...)
		if code != c.code || decode(t, stdout)["kind"] != c.kind {
			t.Errorf("%v: exit %d, %s; want exit %d kind %q", c.args, code, stdout, c.code, c.kind)
		}
	}
	stdout := runOK(t, dir, "prepare", lakeDir, "--out", out+"-text", "--key", "user_id", "--frames", "--interleave", "context")
	if !strings.Contains(stdout, "interleave      context copied next to each key's frame (set)") || !strings.Contains(stdout, "interleaved: ") {
		t.Errorf("text output lacks the group:\n%s", stdout)
	}
}
