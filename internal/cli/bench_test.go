package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/internal/lakegen"
)

// TestBenchRowIndexDir runs `bench rowindex --dir --key` on existing files
// and checks the --json report: snake_case keys, durations as numbers in
// milliseconds, and the absent and top-key classes measured in both
// systems.
func TestBenchRowIndexDir(t *testing.T) {
	lakeDir, _ := genLake(t, lakegen.Config{Seed: 7, TargetBytes: 1 << 20, Days: 1, FilesPerDay: 2, Users: 500, Tracks: 1000})
	code, out, errs := run(t, t.TempDir(), "bench", "rowindex", "--dir", lakeDir, "--key", "user_id", "--keys", "2", "--top-repeats", "1", "--json")
	if code != 0 {
		t.Fatalf("bench rowindex --json: exit %d: %s", code, errs)
	}
	// Its progress text is notices on stderr, every line JSON.
	evs := checkEventLines(t, "bench rowindex --json", errs)
	if len(evs) == 0 {
		t.Errorf("bench rowindex --json: no progress on stderr")
	}
	for _, ev := range evs {
		if ev["event"] != "notice" || ev["source"] != "bench" {
			t.Errorf("bench rowindex --json: %v, want a notice of bench", ev)
		}
	}
	var rep struct {
		Lake struct {
			Files      int   `json:"files"`
			TopKeyRows int64 `json:"top_key_rows"`
		} `json:"lake"`
		Classes []struct {
			Sampling string             `json:"sampling"`
			Class    string             `json:"class"`
			Limit    int                `json:"limit"`
			RowIndex map[string]float64 `json:"row_index"`
			DuckDB   map[string]float64 `json:"duckdb"`
			RatioP50 float64            `json:"ratio_p50"`
		} `json:"classes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if rep.Lake.Files != 2 || rep.Lake.TopKeyRows == 0 {
		t.Fatalf("lake: %+v", rep.Lake)
	}
	classes := map[string]bool{}
	for _, c := range rep.Classes {
		classes[c.Class] = true
		if c.RowIndex["p50_ms"] <= 0 || c.DuckDB["p99_ms"] <= 0 || c.RatioP50 <= 0 {
			t.Errorf("class %s/%s: %+v", c.Sampling, c.Class, c)
		}
	}
	if !classes["absent"] || !classes["top key"] || !classes["1-100"] {
		t.Errorf("classes measured: %v", classes)
	}
	code, _, errs = run(t, t.TempDir(), "bench", "rowindex", "--dir", lakeDir)
	if code == 0 || !strings.Contains(errs, "--key") {
		t.Errorf("--dir without --key: exit %d, %s", code, errs)
	}
	code, _, errs = run(t, t.TempDir(), "bench", "rowindex", "--layout", "zigzag")
	if code == 0 || !strings.Contains(errs, "zigzag") {
		t.Errorf("an unknown layout: exit %d, %s", code, errs)
	}
}
