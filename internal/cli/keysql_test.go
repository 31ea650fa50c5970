package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestLookupSQL runs `lookup --sql` over real Parquet files: the answer
// (text and --json) equals the rows computed here from the data written,
// and a refused statement fails with the kind "bad query".
func TestLookupSQL(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	type row struct {
		UserID int64  `parquet:"user_id"`
		Track  string `parquet:"track"`
		Ms     int64  `parquet:"ms"`
	}
	count, sum := 0, int64(0)
	for f := range 2 {
		var rows []row
		for i := range 300 {
			r := row{UserID: int64((i*7 + f) % 30), Track: fmt.Sprintf("t%03d", (i+f)%40), Ms: int64(i * 1000)}
			if r.UserID == 4 {
				count++
				sum += r.Ms
			}
			rows = append(rows, r)
		}
		if err := parquet.WriteFile(filepath.Join(data, fmt.Sprintf("part-%d.parquet", f)), rows); err != nil {
			t.Fatal(err)
		}
	}
	runOK(t, dir, "create", "plays", "--format", "parquet", "--infer-from", filepath.Join(data, "part-0.parquet"))
	runOK(t, dir, "add-files", "plays", data)
	runOK(t, dir, "update", "plays")
	runOK(t, dir, "add-row-index", "plays", "--key", "user_id", "--cover", "ms")
	q := "SELECT count(*) AS n, sum(ms) AS total FROM rows"
	out := runOK(t, dir, "lookup", "plays", "--key", "user_id=4", "--sql", q)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[1]), " ") != fmt.Sprintf("%d %d", count, sum) {
		t.Fatalf("text answer %q, want n=%d total=%d", out, count, sum)
	}
	m := decode(t, runOK(t, dir, "--json", "lookup", "plays", "--key", "user_id=4", "--columns", "user_id,ms", "--sql", q))
	r := m["rows"].([]any)[0].(map[string]any)
	if r["n"] != float64(count) || r["total"] != float64(sum) || m["input_rows"] != float64(count) || m["truncated"] != false {
		t.Fatalf("json answer %v", m)
	}
	// --limit caps result rows and says so.
	m = decode(t, runOK(t, dir, "--json", "lookup", "plays", "--key", "user_id=4", "--limit", "2", "--sql", "SELECT * FROM rows"))
	if len(m["rows"].([]any)) != 2 || m["truncated"] != true {
		t.Fatalf("limited answer %v", m)
	}
	code, out, _ := run(t, dir, "--json", "lookup", "plays", "--key", "user_id=4", "--sql", "COPY rows TO '"+filepath.Join(dir, "x.csv")+"'")
	if code == 0 || decode(t, out)["kind"] != "bad query" {
		t.Fatalf("COPY: exit %d, %s", code, out)
	}
}
