package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestLookupRowIndexChoice: with several row indexes on one column, a
// lookup takes one that can answer it (a range: the sorted one, though a
// hash one comes first by name; asked columns all covered: the covering
// one), and --row-index picks one by name.
func TestLookupRowIndexChoice(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	type row struct {
		UserID int64  `parquet:"user_id"`
		Track  string `parquet:"track"`
		Ms     int64  `parquet:"ms"`
	}
	var rows []row
	for i := range 300 {
		rows = append(rows, row{UserID: int64(i % 30), Track: fmt.Sprintf("t%03d", i%40), Ms: int64(i * 1000)})
	}
	p := filepath.Join(data, "part-0.parquet")
	if err := parquet.WriteFile(p, rows); err != nil {
		t.Fatal(err)
	}
	runOK(t, dir, "create", "plays", "--format", "parquet", "--infer-from", p)
	runOK(t, dir, "add-files", "plays", p)
	runOK(t, dir, "add-row-index", "plays", "--key", "ms", "--name", "a_hash")
	runOK(t, dir, "add-row-index", "plays", "--key", "ms", "--name", "b_sorted", "--kind", "sorted")
	runOK(t, dir, "add-row-index", "plays", "--key", "ms", "--name", "c_cover", "--cover", "track")
	lookup := func(args ...string) map[string]any {
		t.Helper()
		return decode(t, runOK(t, dir, append([]string{"--json", "lookup", "plays"}, args...)...))
	}
	n := func(m map[string]any) int { return len(m["rows"].([]any)) }

	// A range: the sorted one, though a hash one sorts first by name.
	rng := lookup("--key", "ms=10000..14000")
	if rng["row_index"] != "b_sorted" || n(rng) != 5 {
		t.Errorf("range: row index %v, %d rows; want b_sorted, 5", rng["row_index"], n(rng))
	}
	// The usual pair: a hash one named like its column (the default name)
	// and a sorted one named otherwise: a range takes the sorted one.
	runOK(t, dir, "add-row-index", "plays", "--key", "user_id")
	runOK(t, dir, "add-row-index", "plays", "--key", "user_id", "--kind", "sorted", "--name", "user_id_sorted")
	if u := lookup("--key", "user_id=1..3"); u["row_index"] != "user_id_sorted" || n(u) != 30 {
		t.Errorf("user_id range: row index %v, %d rows; want user_id_sorted, 30", u["row_index"], n(u))
	}
	if u := lookup("--key", "user_id=4"); u["row_index"] != "user_id" || n(u) != 10 {
		t.Errorf("user_id key: row index %v, %d rows; want user_id, 10", u["row_index"], n(u))
	}
	// One key: the first by name; with only covered columns, the covering one.
	if one := lookup("--key", "ms=7000"); one["row_index"] != "a_hash" || n(one) != 1 {
		t.Errorf("one key: row index %v, %d rows", one["row_index"], n(one))
	}
	cov := lookup("--key", "ms=7000", "--columns", "ms,track", "--explain")
	if cov["row_index"] != "c_cover" || n(cov) != 1 || cov["plan"].(map[string]any)["covered"] != true {
		t.Errorf("covered columns: row index %v, plan %v", cov["row_index"], cov["plan"])
	}
	// By name: the one named, the same rows.
	named := lookup("--key", "ms=7000", "--row-index", "b_sorted")
	if named["row_index"] != "b_sorted" || jsonText(t, named["rows"]) != jsonText(t, lookup("--key", "ms=7000")["rows"]) {
		t.Errorf("--row-index b_sorted: %v", named)
	}
	if r := lookup("--key", "ms=10000..14000", "--row-index", "b_sorted"); n(r) != 5 {
		t.Errorf("--row-index b_sorted, range: %d rows", n(r))
	}
	text := runOK(t, dir, "lookup", "plays", "--key", "ms=7000", "--row-index", "c_cover", "--explain")
	if !strings.Contains(text, "plan: row index c_cover (hash") {
		t.Errorf("--explain does not name the row index:\n%s", text)
	}
	// A range named on the hash one, a row index of another column, an
	// unknown name: refused with the reason.
	for _, c := range []struct {
		args       []string
		kind, text string
	}{
		{[]string{"--key", "ms=10000..14000", "--row-index", "a_hash"}, "bad query", "range"},
		{[]string{"--key", "user_id=1", "--row-index", "b_sorted"}, "invalid argument", "is on column ms"},
		{[]string{"--key", "ms=1", "--row-index", "nope"}, "row index not found", "a_hash, b_sorted, c_cover"},
	} {
		code, out, errs := run(t, dir, append([]string{"--json", "lookup", "plays"}, c.args...)...)
		if code != 1 || decode(t, out)["kind"] != c.kind || !strings.Contains(decode(t, out)["error"].(string), c.text) || errs != "" {
			t.Errorf("%v: exit %d, %s %s; want kind %q naming %q", c.args, code, out, errs, c.kind, c.text)
		}
	}
	// Without a sorted one, a range names the row indexes there are.
	runOK(t, dir, "drop-row-index", "plays", "b_sorted")
	code, _, errs := run(t, dir, "lookup", "plays", "--key", "ms=10000..14000")
	if code != 1 || !strings.Contains(errs, "needs a sorted row index") || !strings.Contains(errs, "a_hash (hash)") {
		t.Errorf("range without a sorted row index: exit %d, %s", code, errs)
	}
}
