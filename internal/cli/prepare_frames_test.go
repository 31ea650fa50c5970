package cli

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/prepared"
)

// duckRows returns every row of the Parquet files under dir (or those of
// one user) as sorted text, read by DuckDB's own reader.
func duckRows(t *testing.T, db *sql.DB, dir, where string) []string {
	t.Helper()
	q := fmt.Sprintf(`SELECT user_id, epoch_us(ts), track_uri, duration_ms, context
		FROM read_parquet('%s/**/*.parquet', hive_partitioning = false) %s`, dir, where)
	rs, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var u, ts int64
		var tr, ctx string
		var d int32
		if err := rs.Scan(&u, &ts, &tr, &d, &ctx); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d|%d|%s|%d|%s", u, ts, tr, d, ctx))
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestPrepareFrames: `prepare --frames` writes framed files through the
// scaling writer (bucketed, sorted externally here), records the framing,
// DuckDB reads the same rows as the unprepared lake, and a row index lookup
// on the output decodes frames, returns what a full scan returns, and reads
// bytes near what it returns.
func TestPrepareFrames(t *testing.T) {
	dir := t.TempDir()
	lakeDir, files := genLake(t, lakegen.Config{Seed: 5, TargetBytes: 2 << 20, Days: 2, FilesPerDay: 2, Users: 2000, Tracks: 800})
	var srcRows int64
	for _, f := range files {
		srcRows += f.Rows
	}
	out := filepath.Join(t.TempDir(), "framed")
	res := decode(t, runOK(t, dir, "--json", "prepare", lakeDir, "--out", out, "--key", "user_id", "--sort", "ts",
		"--buckets", "2", "--frames", "--memory", "1MiB", "--temp-dir", t.TempDir()))
	ch := res["choices"].(map[string]any)
	fr, _ := ch["frames"].(map[string]any)
	if res["rows"] != float64(srcRows) || res["frames"].(float64) == 0 || res["runs"].(float64) == 0 ||
		fr["min_frame_bytes"] != float64(prepared.DefaultMinFrameBytes) || fr["align"] != 0.0 || ch["codec"] != "ZSTD" {
		t.Fatalf("result %v", res)
	}
	// Every file is framed, PLAIN, ZSTD, and its marker records it.
	for _, f := range res["files"].([]any) {
		key := f.(map[string]any)["key"].(string)
		b, err := os.ReadFile(filepath.Join(out, key))
		if err != nil {
			t.Fatal(err)
		}
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		m, ok, err := prepared.MarkerOf(pf)
		if !ok || err != nil || m.Frames == nil || m.Frames.MinFrameBytes != prepared.DefaultMinFrameBytes || m.Codec != "ZSTD" {
			t.Errorf("%s: marker %+v %v %v", key, m, ok, err)
		}
		if _, ok := pf.Lookup(prepared.FramesKey); !ok {
			t.Errorf("%s: no frame table", key)
		}
		for _, cc := range pf.Metadata().RowGroups[0].Columns {
			if cc.MetaData.Codec.String() != "ZSTD" || cc.MetaData.DictionaryPageOffset != 0 {
				t.Errorf("%s: column %v: codec %v, dictionary at %d", key, cc.MetaData.PathInSchema, cc.MetaData.Codec, cc.MetaData.DictionaryPageOffset)
			}
		}
	}
	// DuckDB reads the rows of the unprepared lake.
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := duckRows(t, db, lakeDir, "")
	if got := duckRows(t, db, out, ""); int64(len(want)) != srcRows || !slices.Equal(got, want) {
		t.Fatalf("DuckDB reads %d rows of the framed files, %d of the sources (equal: %v)", len(got), len(want), slices.Equal(got, want))
	}
	// Refused: another codec, a non-PLAIN encoding, a bad alignment, frame flags without --frames.
	for _, c := range []struct {
		args []string
		code int
		kind string
	}{
		{[]string{"--frames", "--codec", "snappy"}, 2, "usage"},
		{[]string{"--frames", "--encoding", "track_uri=dictionary"}, 1, "invalid argument"},
		{[]string{"--frames", "--frame-align", "100"}, 1, "invalid argument"},
		{[]string{"--frame-min-bytes", "100"}, 2, "usage"},
		{[]string{"--frame-raw-blocks"}, 2, "usage"},
		{[]string{"--frames", "--frame-raw-blocks", "--frame-align", "4096"}, 1, "invalid argument"},
	} {
		args := append([]string{"--json", "prepare", lakeDir, "--out", out + "-bad", "--key", "user_id"}, c.args...)
		code, stdout, _ := run(t, dir, args...)
		if code != c.code || decode(t, stdout)["kind"] != c.kind {
			t.Errorf("%v: exit %d, %s; want exit %d kind %q", c.args, code, stdout, c.code, c.kind)
		}
	}
	// Human output names the framing.
	stdout := runOK(t, dir, "prepare", filepath.Join(lakeDir, files[0].Key), "--out", out+"-text", "--key", "user_id", "--frames", "--frame-align", "4096")
	for _, s := range []string{"frames          ZSTD frames of whole keys, ≥ 4096 B of values each, align 4096", "framed: ", "encodings       (chosen: PLAIN"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("text output lacks %q:\n%s", s, stdout)
		}
	}

	// Raw blocks (--frame-raw-blocks): named in the choices, the same rows
	// for DuckDB.
	rb := decode(t, runOK(t, dir, "--json", "prepare", lakeDir, "--out", out+"-raw", "--key", "user_id",
		"--sort", "ts", "--frames", "--frame-min-bytes", "0", "--frame-raw-blocks"))
	if fr, _ := rb["choices"].(map[string]any)["frames"].(map[string]any); fr["raw_blocks"] != true || fr["min_frame_bytes"] != 0.0 {
		t.Errorf("raw blocks: choices.frames %v", fr)
	}
	if got := duckRows(t, db, out+"-raw", ""); !slices.Equal(got, want) {
		t.Errorf("raw blocks: DuckDB reads %d rows, %d in the sources (equal: %v)", len(got), len(want), slices.Equal(got, want))
	}

	// A row index on the framed output: a light user's lookup equals the
	// full scan, decodes frames, and reads little more than it returns.
	runOK(t, dir, "create", "plays", "--format", "parquet", "--infer-from", filepath.Join(out, res["files"].([]any)[0].(map[string]any)["key"].(string)))
	runOK(t, dir, "add-files", "plays", out)
	runOK(t, dir, "add-row-index", "plays", "--key", "user_id")
	user := lakegen.UserID(700)
	scan := duckRows(t, db, lakeDir, fmt.Sprintf("WHERE user_id = %d", user))
	if len(scan) == 0 {
		t.Fatal("the light user has no rows")
	}
	lk := decode(t, runOK(t, dir, "--json", "lookup", "plays", "--key", fmt.Sprint("user_id=", user), "--explain"))
	// The same rows as the scan (compared on the columns JSON renders
	// unambiguously: user, track, duration, context).
	var got, scanCols []string
	for _, r := range lk["rows"].([]any) {
		m := r.(map[string]any)["values"].(map[string]any)
		got = append(got, fmt.Sprintf("%.0f|%v|%v|%v", m["user_id"], m["track_uri"], m["duration_ms"], m["context"]))
	}
	for _, r := range scan {
		f := strings.Split(r, "|")
		scanCols = append(scanCols, strings.Join([]string{f[0], f[2], f[3], strings.Join(f[4:], "|")}, "|"))
	}
	slices.Sort(got)
	slices.Sort(scanCols)
	plan := lk["plan"].(map[string]any)
	t.Logf("lookup: %d rows, plan %v", len(got), plan)
	if !slices.Equal(got, scanCols) {
		t.Fatalf("lookup returned %d rows, the scan %d:\n%v\n%v", len(got), len(scan), got, scanCols)
	}
	if plan["frames_decoded"].(float64) == 0 || plan["frames_decoded"] != plan["pages_decoded"] {
		t.Errorf("no frames decoded: %v", plan)
	}
	// Cold, the read is mostly the two files' footers, page indexes and
	// frame tables; the data it decodes is frames of ≈ 4 KiB of values
	// per column, not the ≈ 0.5 MB files.
	if br := plan["bytes_read"].(float64); br >= plan["scan_bytes"].(float64) {
		t.Errorf("the lookup read %.0f bytes, a projected scan %.0f", br, plan["scan_bytes"])
	}
}
