package server

import (
	"strings"
	"testing"
	"time"
)

// TestLookupSQL: a lookup carrying "sql" over a real socket answers the
// query over the key's rows, equal to what the plain lookup's rows give;
// hostile statements get a 400 "bad query", a slow one the request
// deadline.
func TestLookupSQL(t *testing.T) {
	ts := start(t, 4, Config{RequestTimeout: 3 * time.Second})
	hot := ts.lake.Hot
	rows := rowsOf(ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"column": "user_id", "key": hot}))
	var sum float64
	var last string
	for _, r := range rows {
		sum += r["duration_ms"].(float64)
		if ts := r["ts"].(string); ts > last {
			last = ts
		}
	}
	m := ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"column": "user_id", "key": hot, "explain": true,
		"sql": "SELECT count(*) AS n, sum(duration_ms) AS total, max(ts) AS last, count(DISTINCT track_uri) AS tracks FROM rows"})
	got := m["rows"].([]any)
	if len(got) != 1 || m["truncated"] != false || m["input_rows"] != float64(len(rows)) || m["plan"] == nil {
		t.Fatalf("sql answer %v", m)
	}
	r := got[0].(map[string]any)
	if r["n"] != float64(len(rows)) || r["total"] != sum || r["last"] != last {
		t.Fatalf("sql row %v, want n=%d total=%v last=%s", r, len(rows), sum, last)
	}
	if cols := m["columns"].([]any); len(cols) != 4 || cols[0] != "n" {
		t.Fatalf("columns %v", cols)
	}
	// The page limit caps the result.
	m = ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"column": "user_id", "key": hot, "limit": 5, "sql": "FROM rows ORDER BY ts"})
	if len(m["rows"].([]any)) != 5 || m["truncated"] != true {
		t.Fatalf("limited: %v", m)
	}
	if first := m["rows"].([]any)[0].(map[string]any); first["ts"] != rows[0]["ts"] || first["user_id"] != float64(hot) {
		t.Fatalf("first row %v", first)
	}
	for _, c := range []struct {
		body map[string]any
		code int
		kind string
	}{
		{map[string]any{"column": "user_id", "key": hot, "sql": "COPY rows TO '/tmp/x.csv'"}, 400, "bad query"},
		{map[string]any{"column": "user_id", "key": hot, "sql": "SELECT 1; DROP TABLE rows"}, 400, "bad query"},
		{map[string]any{"column": "user_id", "key": hot, "sql": "SELECT * FROM read_parquet('" + strings.TrimPrefix(ts.lake.Files[0], "file://") + "')"}, 400, "bad query"},
		{map[string]any{"column": "user_id", "key": hot, "sql": "ATTACH ':memory:' AS m"}, 400, "bad query"},
		{map[string]any{"column": "user_id", "key": hot, "sql": "SELECT 1", "cursor": "abc"}, 400, "invalid argument"},
		{map[string]any{"column": "user_id", "key": hot, "sql": "SELECT '" + strings.Repeat("x", 70000) + "'"}, 400, "invalid argument"},
		{map[string]any{"column": "user_id", "key": hot, "sql": "SELECT count(*) FROM range(100000000000) a WHERE a.range % 7 = 3"}, 504, "deadline exceeded"},
	} {
		code, m := ts.call(t, "POST", "/v1/indexes/plays/lookup", c.body)
		e, _ := m["error"].(map[string]any)
		if code != c.code || e["kind"] != c.kind {
			t.Errorf("%.80v: %d %v, want %d %s", c.body["sql"], code, m, c.code, c.kind)
		}
	}
	// Still serving after the refusals and the cut query.
	ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"column": "user_id", "key": hot, "sql": "SELECT 1 AS one"})
}
