package cli

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/internal/lakegen"
)

func TestRowIndexCommands(t *testing.T) {
	dir := t.TempDir()
	cfg := lakegen.Config{Seed: 7, TargetBytes: 2 << 20, Days: 2, FilesPerDay: 2, Users: 500, Tracks: 1000, Sorted: true}
	lakeDir, files := genLake(t, cfg)
	if len(files) != 4 {
		t.Fatalf("lake: %v files", len(files))
	}
	mustRun := func(args ...string) string { t.Helper(); return runOK(t, dir, args...) }
	first := filepath.Join(lakeDir, files[0].Key)
	mustRun("create", "plays", "--format", "parquet", "--infer-from", first)
	// Two files now, two later: the later ones must be row-indexed by update.
	mustRun("add-files", "plays", filepath.Join(lakeDir, files[0].Key), filepath.Join(lakeDir, files[1].Key))
	b := decode(t, mustRun("--json", "add-row-index", "plays", "--key", "user_id", "--cover", "duration_ms", "--aggregate", "count"))["build"].(map[string]any)
	if b["files"] != 2.0 || b["entries"].(float64) == 0 {
		t.Fatalf("build: %v", b)
	}
	mustRun("add-files", "plays", filepath.Join(lakeDir, files[2].Key), filepath.Join(lakeDir, files[3].Key))
	mustRun("add-index", "plays", "--bloom", "user_id")
	upd := decode(t, mustRun("--json", "update", "plays"))
	if ri := upd["row_indexes"].(map[string]any)["user_id"].(map[string]any); ri["files"] != 2.0 {
		t.Fatalf("update did not row-index the new files: %v", upd)
	}

	// The most active user (rank 1) has rows in every file.
	hot := lakegen.UserID(0)
	res := decode(t, mustRun("--json", "lookup", "plays", "--key", "user_id="+itoa(hot), "--explain"))
	rows := res["rows"].([]any)
	plan := res["plan"].(map[string]any)
	if len(rows) == 0 || plan["files"].(float64) < 1 || plan["entries"].(float64) < 1 {
		t.Fatalf("hot key lookup: %d rows, plan %v", len(rows), plan)
	}
	// Each row names its source, and that row of that file is the row.
	for _, r := range rows {
		checkRowSource(t, r.(map[string]any))
	}
	// Covered: asking only for the key and cover columns reads no data file.
	cov := decode(t, mustRun("--json", "lookup", "plays", "--key", "user_id="+itoa(hot), "--columns", "user_id,duration_ms", "--explain"))
	if p := cov["plan"].(map[string]any); p["data_requests"] != 0.0 || !p["covered"].(bool) || len(cov["rows"].([]any)) != len(rows) {
		t.Fatalf("covered lookup: %v", p)
	}
	// Pagination returns the same rows in pages.
	page := decode(t, mustRun("--json", "lookup", "plays", "--key", "user_id="+itoa(hot), "--limit", "2"))
	if len(page["rows"].([]any)) != min(2, len(rows)) || (len(rows) > 2 && page["cursor"] == "") {
		t.Fatalf("page: %v", page)
	}
	// An unknown key: empty, and no data read.
	none := decode(t, mustRun("--json", "lookup", "plays", "--key", "user_id=-12345", "--explain"))
	if len(none["rows"].([]any)) != 0 || none["plan"].(map[string]any)["data_requests"] != 0.0 {
		t.Fatalf("absent key: %v", none)
	}
	mustRun("warm", "plays")
	if code, _, _ := run(t, dir, "lookup", "plays", "--key", "track_uri=x"); code != 1 {
		t.Fatal("lookup on a column without a row index must fail")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestAddRowIndexMemory: a build under a tiny --memory spills (an int key's
// rows to partition files, on the partitioned key-id path), reports it on
// stderr, and gives the same entries as the default budget.
func TestAddRowIndexMemory(t *testing.T) {
	dir := t.TempDir()
	lakeDir, files := genLake(t, lakegen.Config{Seed: 3, TargetBytes: 2 << 20, Days: 2, FilesPerDay: 2, Users: 500, Tracks: 1000})
	runOK(t, dir, "create", "plays", "--format", "parquet", "--infer-from", filepath.Join(lakeDir, files[0].Key))
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(lakeDir, f.Key))
	}
	runOK(t, dir, append([]string{"add-files", "plays"}, paths...)...)
	wide := decode(t, runOK(t, dir, "--json", "add-row-index", "plays", "--key", "user_id", "--name", "wide"))["build"].(map[string]any)
	code, out, errs := run(t, dir, "--json", "add-row-index", "plays", "--key", "user_id", "--name", "slim", "--memory", "64KiB")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	tight := decode(t, out)["build"].(map[string]any)
	if tight["entries"] != wide["entries"] || tight["index_bytes"] != wide["index_bytes"] || tight["entries"] == 0.0 {
		t.Fatalf("slim build %v, wide build %v (names of equal length: the name is in the fragment)", tight, wide)
	}
	// --json: the build's progress as JSON lines on stderr, its last one
	// counting the bytes spilled.
	if !regexp.MustCompile(`"phase":"row index done".*"final":true.*"spill_bytes":[1-9]`).MatchString(errs) {
		t.Fatalf("progress on stderr: %q", errs)
	}
	if code, _, _ := run(t, dir, "add-row-index", "plays", "--key", "user_id", "--name", "bad", "--memory", "12 parsecs"); code == 0 {
		t.Fatal("a bad --memory was accepted")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1024": 1024, "64KiB": 64 << 10, "64k": 64 << 10, "512MiB": 512 << 20, "1.5G": 3 << 29, "2GB": 2e9, "10 MB": 1e7} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "1XB", "1e3"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) succeeded", in)
		}
	}
}

// checkRowSource checks that a lookup --json row's source (file, row_group,
// row) holds the row: that row of the Parquet file has the row's values.
func checkRowSource(t *testing.T, r map[string]any) {
	t.Helper()
	vals, _ := r["values"].(map[string]any)
	file, _ := r["file"].(string)
	rg, ok1 := r["row_group"].(float64)
	row, ok2 := r["row"].(float64)
	if vals == nil || file == "" || !ok1 || !ok2 || r["key"] == nil {
		t.Fatalf("row without its source: %v", r)
	}
	u, err := url.Parse(file)
	if err != nil || u.Scheme != "file" {
		t.Fatalf("file %q: not a file URI", file)
	}
	f, err := os.Open(u.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	groups := pf.RowGroups()
	first := int64(0) // the first row of the row group in the file
	for _, g := range groups[:int(rg)] {
		first += g.NumRows()
	}
	g := groups[int(rg)]
	if int64(row) < first || int64(row) >= first+g.NumRows() {
		t.Fatalf("row %v is not in row group %v (rows %d..%d)", row, rg, first, first+g.NumRows())
	}
	rr := g.Rows()
	defer rr.Close()
	if err := rr.SeekToRow(int64(row) - first); err != nil {
		t.Fatal(err)
	}
	buf := make([]parquet.Row, 1)
	if n, _ := rr.ReadRows(buf); n != 1 {
		t.Fatalf("row %v of %s: not read", row, file)
	}
	compared := 0
	for col, want := range vals {
		leaf, ok := pf.Schema().Lookup(col)
		if !ok {
			continue
		}
		for _, v := range buf[0] {
			w, num := want.(float64) // timestamps are text in JSON: not compared here
			if v.Column() != leaf.ColumnIndex || !num || (v.Kind() != parquet.Int64 && v.Kind() != parquet.Int32) {
				continue
			}
			compared++
			if v.Int64() != int64(w) {
				t.Errorf("%s row %v column %s: file has %d, lookup %v", file, row, col, v.Int64(), want)
			}
		}
	}
	if compared == 0 {
		t.Fatalf("no integer column of %v to compare", vals)
	}
	if want, ok := vals["user_id"]; ok && r["key"] != want {
		t.Errorf("key %v, values' user_id %v", r["key"], want)
	}
}

// TestLookupJSONFailsAfterRows: a lookup whose later batches fail (data
// files truncated after indexing) has already written rows; with --json its
// answer is still one JSON object, the rows so far followed by the error's
// "error" and "kind", and the exit code is 1.
func TestLookupJSONFailsAfterRows(t *testing.T) {
	dir := t.TempDir()
	// One user: every row is the key's, more than a batch of the iterator.
	lakeDir, files := genLake(t, lakegen.Config{Seed: 3, TargetBytes: 4 << 20, Days: 2, FilesPerDay: 2, Users: 1, Tracks: 100})
	mustRun := func(args ...string) string { t.Helper(); return runOK(t, dir, args...) }
	mustRun("create", "plays", "--format", "parquet", "--infer-from", filepath.Join(lakeDir, files[0].Key))
	for _, f := range files {
		mustRun("add-files", "plays", filepath.Join(lakeDir, f.Key))
	}
	mustRun("add-row-index", "plays", "--key", "user_id")
	for _, f := range files[1:] {
		if err := os.Truncate(filepath.Join(lakeDir, f.Key), 1000); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := run(t, dir, "--json", "lookup", "plays", "--key", "user_id="+itoa(lakegen.UserID(0)))
	res := decode(t, out)
	if code != 1 || errs != "" || res["kind"] != "data file changed" || res["error"] == "" || len(res["rows"].([]any)) == 0 {
		t.Fatalf("exit %d, stderr %q, kind %v, error %v, %d rows", code, errs, res["kind"], res["error"], len(res["rows"].([]any)))
	}
}
