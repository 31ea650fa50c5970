package cli

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/internal/lakegen"
)

// TestPrepareBlob: `prepare --blob served=...` replaces the served columns
// by one binary column (named in the choices), DuckDB reads the files, and
// a lookup through the row index returns the source's columns with the
// rows of a scan of the unprepared lake, reading one range per file.
func TestPrepareBlob(t *testing.T) {
	dir := t.TempDir()
	lakeDir, _ := genLake(t, lakegen.Config{Seed: 5, TargetBytes: 2 << 20, Days: 2, FilesPerDay: 2, Users: 2000, Tracks: 800})
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out string
	// A blob per row (framed), and co-grouped blocks with a dictionary.
	for i, codec := range []string{"row", "zstd-dict"} {
		out = filepath.Join(t.TempDir(), "blob")
		res := decode(t, runOK(t, dir, "--json", "prepare", lakeDir, "--out", out, "--key", "user_id", "--sort", "ts",
			"--frames", "--blob", "served=ts,track_uri,duration_ms,context", "--blob-codec", codec))
		bl, _ := res["choices"].(map[string]any)["blob"].(map[string]any)
		if bl["column"] != "served" || bl["keep"] != false || fmt.Sprint(bl["fields"]) != "[ts track_uri duration_ms context]" || bl["codec"] != codec {
			t.Fatalf("choices.blob %v", bl)
		}
		var n, users int64
		var typ string
		glob := filepath.Join(out, "**", "*.parquet")
		if err := db.QueryRow(`SELECT count(*), count(DISTINCT user_id), typeof(any_value(served)) FROM read_parquet('`+glob+`')`).Scan(&n, &users, &typ); err != nil {
			t.Fatal(err)
		}
		// Co-grouped files store a row per key (and file), fewer than the
		// source's rows.
		if rows := int64(res["rows"].(float64)); (codec == "row") != (n == rows) || n > rows || typ != "BLOB" {
			t.Fatalf("%s: DuckDB reads %d rows (%d written), served is %s", codec, n, rows, typ)
		}
		table := fmt.Sprint("plays", i)
		runOK(t, dir, "create", table, "--format", "parquet", "--infer-from", filepath.Join(out, res["files"].([]any)[0].(map[string]any)["key"].(string)))
		runOK(t, dir, "add-files", table, out)
		runOK(t, dir, "add-row-index", table, "--key", "user_id")
		lookupsEqualScan(t, db, dir, table, lakeDir, func(user int64, lk map[string]any) {
			plan := lk["plan"].(map[string]any)
			if plan["byte_ranges"] != plan["files"] {
				t.Errorf("%s: user %d: %v byte ranges for %v files", codec, user, plan["byte_ranges"], plan["files"])
			}
		})
	}
	// Refused: a malformed --blob, --blob-keep alone, an unknown field.
	for _, c := range []struct {
		args []string
		code int
		kind string
	}{
		{[]string{"--blob", "served"}, 2, "usage"},
		{[]string{"--blob-keep"}, 2, "usage"},
		{[]string{"--blob-codec", "zstd-dict"}, 2, "usage"},
		{[]string{"--blob", "served=ts", "--blob-codec", "zstd-dict"}, 1, "invalid argument"},
		{[]string{"--blob", "served=nope"}, 1, "column not found"},
	} {
		args := append([]string{"--json", "prepare", lakeDir, "--out", out + "-bad", "--key", "user_id"}, c.args...)
		code, stdout, _ := run(t, dir, args...)
		if code != c.code || decode(t, stdout)["kind"] != c.kind {
			t.Errorf("%v: exit %d, %s; want exit %d kind %q", c.args, code, stdout, c.code, c.kind)
		}
	}
	// Human output names the blob.
	stdout := runOK(t, dir, "prepare", lakeDir, "--out", out+"-text", "--key", "user_id", "--blob", "served=context", "--blob-keep")
	if !strings.Contains(stdout, "blob            served = key + context, columns kept true") {
		t.Errorf("text output lacks the blob:\n%s", stdout)
	}
}
