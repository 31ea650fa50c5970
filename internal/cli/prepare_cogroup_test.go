package cli

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/internal/lakegen"
)

// TestPrepareCoGroup: `prepare --co-group` writes one row per key and file
// with the other columns as lists (in the choices and the text output);
// DuckDB's unnest of the lists gives the lake's rows; a lookup through the
// row index returns the source's columns with the rows of a scan of the
// unprepared lake; --co-group with --frames is a usage error.
func TestPrepareCoGroup(t *testing.T) {
	dir := t.TempDir()
	lakeDir, _ := genLake(t, lakegen.Config{Seed: 5, TargetBytes: 2 << 20, Days: 2, FilesPerDay: 2, Users: 2000, Tracks: 800})
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := filepath.Join(t.TempDir(), "nested")
	res := decode(t, runOK(t, dir, "--json", "prepare", lakeDir, "--out", out, "--key", "user_id", "--sort", "ts", "--co-group"))
	cg, _ := res["choices"].(map[string]any)["co_group"].(map[string]any)
	if cg["layout"] != "lists" || cg["block_bytes"] != float64(64<<10) {
		t.Fatalf("choices.co_group %v", cg)
	}
	glob := filepath.Join(out, "**", "*.parquet")
	var stored, rows, extra int64
	nested := `SELECT user_id, unnest(ts) AS ts, unnest(track_uri) AS track_uri, unnest(duration_ms) AS duration_ms, unnest(context) AS context FROM read_parquet('` + glob + `')`
	flat := `SELECT user_id, ts, track_uri, duration_ms, context FROM read_parquet('` + filepath.Join(lakeDir, "**", "*.parquet") + `')`
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM read_parquet('`+glob+`')), (SELECT count(*) FROM (`+nested+`)), `+
		`(SELECT count(*) FROM ((`+nested+`) EXCEPT ALL (`+flat+`))) + (SELECT count(*) FROM ((`+flat+`) EXCEPT ALL (`+nested+`)))`).Scan(&stored, &rows, &extra); err != nil {
		t.Fatal(err)
	}
	if rows != int64(res["rows"].(float64)) || stored >= rows || extra != 0 {
		t.Fatalf("DuckDB: %d stored rows, %d unnested (%v written), %d differ from the lake's", stored, rows, res["rows"], extra)
	}
	runOK(t, dir, "create", "plays", "--format", "parquet", "--infer-from", filepath.Join(out, res["files"].([]any)[0].(map[string]any)["key"].(string)))
	runOK(t, dir, "add-files", "plays", out)
	runOK(t, dir, "add-row-index", "plays", "--key", "user_id")
	lookupsEqualScan(t, db, dir, "plays", lakeDir, nil)
	code, stdout, _ := run(t, dir, "--json", "prepare", lakeDir, "--out", out+"-bad", "--key", "user_id", "--co-group", "--frames")
	if code != 2 || decode(t, stdout)["kind"] != "usage" {
		t.Errorf("--co-group --frames: exit %d, %s", code, stdout)
	}
	stdout = runOK(t, dir, "prepare", lakeDir, "--out", out+"-text", "--key", "user_id", "--co-group")
	if !strings.Contains(stdout, "co-group        one row per key and file") {
		t.Errorf("text output lacks the co-grouping:\n%s", stdout)
	}
}

// lookupsEqualScan looks up a light and a hot user of the lake at lakeDir
// in table (a row index on user_id over prepared files) and checks the rows,
// with the source's five columns, against DuckDB's scan of the lake; check,
// if not nil, is given each lookup's JSON.
func lookupsEqualScan(t *testing.T, db *sql.DB, dir, table, lakeDir string, check func(user int64, lk map[string]any)) {
	t.Helper()
	for _, user := range []int64{lakegen.UserID(700), lakegen.UserID(3)} {
		scan := duckRows(t, db, lakeDir, fmt.Sprintf("WHERE user_id = %d", user))
		lk := decode(t, runOK(t, dir, "--json", "lookup", table, "--key", fmt.Sprint("user_id=", user), "--explain"))
		var got, want []string
		for _, r := range lk["rows"].([]any) {
			m := r.(map[string]any)["values"].(map[string]any)
			got = append(got, fmt.Sprintf("%.0f|%v|%v|%v", m["user_id"], m["track_uri"], m["duration_ms"], m["context"]))
			if _, ok := m["ts"].(string); !ok || len(m) != 5 {
				t.Fatalf("row values %v: want the source's five columns", m)
			}
		}
		for _, r := range scan {
			f := strings.Split(r, "|")
			want = append(want, strings.Join([]string{f[0], f[2], f[3], strings.Join(f[4:], "|")}, "|"))
		}
		slices.Sort(got)
		slices.Sort(want)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Fatalf("user %d: lookup %d rows, the scan %d:\n%v\n%v", user, len(got), len(want), got, want)
		}
		if check != nil {
			check(user, lk)
		}
	}
}
