package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/internal/playsfixture"
	"github.com/ariadne-go/ariadne/rowindex"
)

// testServer is a server on a real socket over the plays lake.
type testServer struct {
	url  string
	lake *playsfixture.PlaysLake
	srv  *Server
	done chan error
	stop context.CancelFunc
}

func start(t *testing.T, indexed int, cfg Config) *testServer {
	t.Helper()
	ctx := context.Background()
	lake, err := playsfixture.Plays(ctx, t.TempDir(), indexed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lake.Close() })
	st, err := ariadne.Open(ctx, lake.StoreURL, ariadne.WithWarmOnRefresh(true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ts := &testServer{url: "http://" + ln.Addr().String(), lake: lake, srv: New(st, cfg), done: make(chan error, 1)}
	sctx, stop := context.WithCancel(ctx)
	ts.stop = stop
	go func() { ts.done <- ts.srv.Serve(sctx, ln, "", "") }()
	t.Cleanup(func() {
		stop()
		if err := <-ts.done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(ts.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("not ready after 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ts
}

// call sends a request and decodes the JSON answer.
func (ts *testServer) call(t *testing.T, method, path string, body any, hdr ...string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, _ := json.Marshal(b)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, ts.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if resp.Header.Get("Content-Type") == "application/json" {
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s %s: not JSON: %v\n%s", method, path, err, data)
		}
	}
	return resp.StatusCode, m
}

func (ts *testServer) mustOK(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	code, m := ts.call(t, method, path, body)
	if code != 200 {
		t.Fatalf("%s %s: %d %v", method, path, code, m)
	}
	return m
}

func rowsOf(m map[string]any) []map[string]any {
	rs, _ := m["rows"].([]any)
	srcs, _ := m["sources"].([]any)
	if len(srcs) != len(rs) {
		panic(fmt.Sprintf("%d rows with %d sources", len(rs), len(srcs)))
	}
	out := make([]map[string]any, len(rs))
	for i, r := range rs {
		// Rows are objects by column name (the HTTP contract); each row's
		// source is beside it, in "sources".
		src := srcs[i].(map[string]any)
		if f, _ := src["file"].(string); f == "" || src["row_group"] == nil || src["row"] == nil || src["key"] == nil {
			panic(fmt.Sprintf("lookup row without its source: %v", src))
		}
		out[i] = r.(map[string]any)
	}
	return out
}

func TestContract(t *testing.T) {
	ts := start(t, 4, Config{})
	hot := ts.lake.Hot
	list := ts.mustOK(t, "GET", "/v1/indexes", nil)
	ixs := list["indexes"].([]any)
	if len(ixs) != 1 || ixs[0].(map[string]any)["name"] != "plays" {
		t.Fatalf("indexes: %v", list)
	}
	desc := ts.mustOK(t, "GET", "/v1/indexes/plays", nil)
	if desc["name"] != "plays" || len(desc["row_indexes"].([]any)) != 2 {
		t.Fatalf("describe: %v", desc)
	}

	// One key, every column: rows as objects, values typed as the CLI's --json.
	all := ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"column": "user_id", "key": strconv.FormatInt(hot, 10)})
	rows := rowsOf(all)
	if len(rows) < 100 || all["cursor"] != nil {
		t.Fatalf("lookup: %d rows, cursor %v", len(rows), all["cursor"])
	}
	for _, r := range rows {
		if r["user_id"] != float64(hot) || r["track_uri"] == nil {
			t.Fatalf("row %v", r)
		}
		if _, err := time.Parse(time.RFC3339Nano, r["ts"].(string)); err != nil {
			t.Fatalf("ts %v: %v", r["ts"], err)
		}
	}
	// Covered rows render the same values as read rows.
	cov := ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"column": "user_id", "key": hot, "columns": []string{"user_id", "ts", "duration_ms"}, "explain": true})
	crows := rowsOf(cov)
	if plan := cov["plan"].(map[string]any); plan["covered"] != true || plan["data_requests"] != 0.0 || len(crows) != len(rows) {
		t.Fatalf("covered: %v rows, plan %v", len(crows), plan)
	}
	for i := range crows {
		for _, c := range []string{"user_id", "ts", "duration_ms"} {
			if crows[i][c] != rows[i][c] {
				t.Fatalf("row %d %s: covered %v, read %v", i, c, crows[i][c], rows[i][c])
			}
		}
	}
	if aggs := cov["aggregates"].([]any); aggs[0].(map[string]any)["values"].(map[string]any)["count"] != float64(len(rows)) {
		t.Fatalf("aggregates %v", aggs)
	}

	// Pages: the cursor continues, and is absent on the last page.
	var paged []map[string]any
	body := map[string]any{"column": "user_id", "key": hot, "limit": 40}
	for {
		page := ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", body)
		paged = append(paged, rowsOf(page)...)
		c, _ := page["cursor"].(string)
		if c == "" {
			break
		}
		body["cursor"] = c
	}
	if len(paged) != len(rows) {
		t.Fatalf("paged %d rows, want %d", len(paged), len(rows))
	}

	// A batch, and a range on the sorted row index.
	batch := ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"column": "user_id", "keys": []any{hot, "-5"}, "columns": []string{"user_id"}})
	if len(rowsOf(batch)) != len(rows) {
		t.Fatalf("batch: %d rows", len(rowsOf(batch)))
	}
	rng := ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"column": "ts", "low": rows[0]["ts"], "high": rows[0]["ts"], "columns": []string{"ts", "user_id"}})
	if len(rowsOf(rng)) == 0 || rowsOf(rng)[0]["ts"] != rows[0]["ts"] {
		t.Fatalf("range: %v", rng)
	}
	// A filter on a cover column.
	flt := ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"column": "user_id", "key": hot, "columns": []string{"duration_ms"},
		"where": []any{map[string]any{"column": "duration_ms", "op": "<", "value": 100000}}})
	for _, r := range rowsOf(flt) {
		if r["duration_ms"].(float64) >= 100000 {
			t.Fatalf("filtered row %v", r)
		}
	}

	// Locate.
	loc := ts.mustOK(t, "POST", "/v1/indexes/plays/locate", map[string]any{"keys": map[string]any{"user_id": []any{strconv.FormatInt(hot, 10), "-5"}}, "per_key": true})
	files := loc["files"].([]any)
	if len(files) == 0 || !strings.HasPrefix(files[0].(string), "file://") || len(loc["per_key"].([]any)) != 2 {
		t.Fatalf("locate: %v", loc)
	}

	// Health, metrics, OpenAPI.
	if code, _ := ts.call(t, "GET", "/healthz", nil); code != 200 {
		t.Fatalf("healthz %d", code)
	}
	resp, err := http.Get(ts.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, name := range []string{`ariadne_http_request_duration_seconds_bucket{code="2xx",endpoint="lookup"`, `ariadne_storage_requests_total{op="read",store="data"}`,
		`ariadne_storage_bytes_total`, `ariadne_lookup_cache_hits_total`, `ariadne_row_index_version{index="plays",row_index="user_id"} 1`, `ariadne_cache_bytes`, "ariadne_ready 1"} {
		if !bytes.Contains(metrics, []byte(name)) {
			t.Errorf("metrics lack %s", name)
		}
	}
	resp, err = http.Get(ts.url + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(doc, OpenAPI) {
		t.Fatal("/openapi.json is not the embedded document")
	}
}

func TestHostileInput(t *testing.T) {
	ts := start(t, 2, Config{})
	hot := ts.lake.Hot
	big := bytes.Repeat([]byte(" "), 10<<20)
	copy(big, `{"column": "user_id", "key": "1"}`)
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = strconv.Itoa(i)
	}
	hugeBatch, _ := json.Marshal(map[string]any{"column": "user_id", "keys": keys})
	someKeys, _ := json.Marshal(map[string]any{"column": "user_id", "keys": keys[:1001]})
	locKeys, _ := json.Marshal(map[string]any{"keys": map[string]any{"user_id": keys[:1001]}})
	joinKeys, _ := json.Marshal(map[string]any{"keys": map[string]any{"user_id": keys[:10001]}})
	bigJoin := bytes.Repeat([]byte(" "), 10<<20)
	copy(bigJoin, `{"keys": {"user_id": ["1"]}}`)
	cases := []struct {
		name, method, path string
		body               any
		code               int
		kind               string
	}{
		{"10 MB body", "POST", "/v1/indexes/plays/lookup", big, 413, "invalid argument"},
		{"100k-key batch", "POST", "/v1/indexes/plays/lookup", hugeBatch, 400, "invalid argument"},
		{"1001-key batch", "POST", "/v1/indexes/plays/lookup", someKeys, 400, "invalid argument"},
		{"1001-value locate", "POST", "/v1/indexes/plays/locate", locKeys, 400, "invalid argument"},
		{"malformed JSON", "POST", "/v1/indexes/plays/lookup", `{"column": "user_id", "key": `, 400, "invalid argument"},
		{"two objects", "POST", "/v1/indexes/plays/lookup", `{"key": "1"} {"key": "2"}`, 400, "invalid argument"},
		{"not an object", "POST", "/v1/indexes/plays/lookup", `[1, 2]`, 400, "invalid argument"},
		{"unknown field", "POST", "/v1/indexes/plays/lookup", `{"column": "user_id", "key": "1", "sequel": "drop"}`, 400, "invalid argument"},
		{"sql not a query", "POST", "/v1/indexes/plays/lookup", `{"column": "user_id", "key": "1", "sql": "drop table rows"}`, 400, "bad query"},
		{"empty body", "POST", "/v1/indexes/plays/lookup", ``, 400, "invalid argument"},
		{"nested key", "POST", "/v1/indexes/plays/lookup", `{"column": "user_id", "key": {"a": 1}}`, 400, "invalid argument"},
		{"wrong key type", "POST", "/v1/indexes/plays/lookup", `{"column": "user_id", "key": "u1"}`, 400, "invalid argument"},
		{"no key", "POST", "/v1/indexes/plays/lookup", `{"column": "user_id"}`, 400, "bad query"},
		{"two key modes", "POST", "/v1/indexes/plays/lookup", `{"column": "user_id", "key": 1, "keys": [2]}`, 400, "bad query"},
		{"negative limit", "POST", "/v1/indexes/plays/lookup", `{"column": "user_id", "key": 1, "limit": -1}`, 400, "invalid argument"},
		{"huge limit", "POST", "/v1/indexes/plays/lookup", `{"column": "user_id", "key": 1, "limit": 1e30}`, 400, "invalid argument"},
		{"bad cursor", "POST", "/v1/indexes/plays/lookup", `{"column": "user_id", "key": 1, "cursor": "!!"}`, 400, "bad query"},
		{"tampered cursor", "POST", "/v1/indexes/plays/lookup", `{"column": "user_id", "key": 1, "cursor": "eyJrIjoiQUFBIiwiZiI6In0"}`, 400, "bad query"},
		{"tampered batch cursor", "POST", "/v1/indexes/plays/lookup", `{"column": "user_id", "keys": [1], "cursor": "b1.eyJpIjo3fQ"}`, 400, "bad query"},
		{"filter on a non-cover column", "POST", "/v1/indexes/plays/lookup", `{"column": "user_id", "key": 1, "where": [{"column": "track_uri", "op": "=", "value": "x"}]}`, 400, "bad query"},
		{"bad filter op", "POST", "/v1/indexes/plays/lookup", `{"column": "user_id", "key": 1, "where": [{"column": "duration_ms", "op": "~", "value": 1}]}`, 400, "bad query"},
		{"no row index", "POST", "/v1/indexes/plays/lookup", `{"column": "track_uri", "key": "x"}`, 404, "row index not found"},
		{"unknown index", "POST", "/v1/indexes/nope/lookup", `{"key": "1"}`, 404, "index not found"},
		{"dotted index", "POST", "/v1/indexes/../x/lookup", `{"key": "1"}`, 400, "invalid argument"},
		{"escaped path index", "POST", "/v1/indexes/..%2Fx/lookup", `{"key": "1"}`, 400, "invalid argument"},
		{"escaped slash index", "GET", "/v1/indexes/a%2Fb", nil, 400, "invalid argument"},
		{"hidden index", "GET", "/v1/indexes/.x", nil, 400, "invalid argument"},
		{"locate without keys", "POST", "/v1/indexes/plays/locate", `{"keys": {}}`, 400, "invalid argument"},
		{"locate unindexed column", "POST", "/v1/indexes/plays/locate", `{"keys": {"track_uri": ["x"]}}`, 400, "column not found"},
		{"GET lookup", "GET", "/v1/indexes/plays/lookup", nil, 405, "usage"},
		{"10 MB join body", "POST", "/v1/indexes/plays/join", bigJoin, 413, "invalid argument"},
		{"10001-row join", "POST", "/v1/indexes/plays/join", joinKeys, 400, "invalid argument"},
		{"malformed join", "POST", "/v1/indexes/plays/join", `{"keys": {"user_id": [`, 400, "invalid argument"},
		{"join unknown field", "POST", "/v1/indexes/plays/join", `{"keys": {"user_id": [1]}, "sql": "x"}`, 400, "invalid argument"},
		{"join on an unknown index", "POST", "/v1/indexes/nope/join", `{"keys": {"user_id": [1]}}`, 404, "index not found"},
		{"GET join", "GET", "/v1/indexes/plays/join", nil, 405, "usage"},
		{"MCP without its media type", "POST", "/mcp", `{"jsonrpc": "2.0", "method": `, 415, ""},
		{"unknown endpoint", "GET", "/v2/x", nil, 404, "not found"},
	}
	for _, c := range cases {
		code, m := ts.call(t, c.method, c.path, c.body)
		var kind string
		if e, ok := m["error"].(map[string]any); ok {
			kind, _ = e["kind"].(string)
			if msg, _ := e["message"].(string); msg == "" {
				t.Errorf("%s: no message", c.name)
			}
		}
		if code != c.code || kind != c.kind {
			t.Errorf("%s: %d %q, want %d %q (%v)", c.name, code, kind, c.code, c.kind, m)
		}
	}
	// Still serving.
	if rows := rowsOf(ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"column": "user_id", "key": hot, "columns": []string{"user_id"}})); len(rows) == 0 {
		t.Fatal("no rows after the hostile requests")
	}
}

func TestFollowsTheStore(t *testing.T) {
	ts := start(t, 2, Config{PollInterval: 50 * time.Millisecond})
	body := map[string]any{"column": "user_id", "key": ts.lake.Hot, "columns": []string{"user_id"}}
	first := ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", body)
	before := len(rowsOf(first))
	// Another process tracks and indexes the other files.
	ctx := context.Background()
	other, err := ariadne.Open(ctx, ts.lake.StoreURL)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ix, err := other.Index(ctx, "plays")
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.lake.AddFiles(ctx, ts.lake.Files[2:]...); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Update(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		res := ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", body)
		if len(rowsOf(res)) > before {
			if res["version"].(float64) <= first["version"].(float64) {
				t.Fatalf("more rows from version %v (was %v)", res["version"], first["version"])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the update was not served after 20s (%d rows)", before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBearerToken(t *testing.T) {
	ts := start(t, 1, Config{Tokens: []string{"s3cret"}})
	if code, m := ts.call(t, "GET", "/v1/indexes", nil); code != 401 || m["error"].(map[string]any)["kind"] != "unauthorized" {
		t.Fatalf("no token: %d %v", code, m)
	}
	if code, _ := ts.call(t, "GET", "/v1/indexes", nil, "Authorization", "Bearer wrong"); code != 401 {
		t.Fatalf("wrong token: %d", code)
	}
	if code, _ := ts.call(t, "GET", "/v1/indexes", nil, "Authorization", "Bearer s3cret"); code != 200 {
		t.Fatalf("token: %d", code)
	}
	if code, _ := ts.call(t, "GET", "/healthz", nil); code != 200 {
		t.Fatalf("healthz needs no token: %d", code)
	}
}

// TestShutdownDrains: a request in flight when the server is told to stop
// completes; new connections are refused.
func TestShutdownDrains(t *testing.T) {
	ts := start(t, 2, Config{})
	// A slow client: the body arrives after the shutdown began.
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", ts.url+"/v1/indexes/plays/lookup", pr)
	got := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- -1
			return
		}
		resp.Body.Close()
		got <- resp.StatusCode
	}()
	fmt.Fprintf(pw, `{"column": "user_id", `)
	time.Sleep(100 * time.Millisecond)
	ts.stop()
	time.Sleep(100 * time.Millisecond)
	fmt.Fprintf(pw, `"key": %d}`, ts.lake.Hot)
	pw.Close()
	if code := <-got; code != 200 {
		t.Fatalf("request in flight: %d", code)
	}
	if err := <-ts.done; err != nil {
		t.Fatal(err)
	}
	ts.done <- nil // for the cleanup
	if _, err := http.Get(ts.url + "/healthz"); err == nil {
		t.Fatal("still accepting after shutdown")
	}
}

// TestOpenAPIInSync: docs/openapi.json is the served document, and it
// describes every route the server registers.
func TestOpenAPIInSync(t *testing.T) {
	docs, err := os.ReadFile("../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(docs, OpenAPI) {
		t.Fatal("docs/openapi.json differs from server/openapi.json: copy it over")
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("not an OpenAPI 3 document: %v %q", err, doc.OpenAPI)
	}
	for _, r := range Routes() {
		method, path, _ := strings.Cut(r, " ")
		if _, ok := doc.Paths[path][strings.ToLower(method)]; !ok {
			t.Errorf("route %s is not in the OpenAPI document", r)
		}
	}
	if n := len(Routes()); n != countOps(doc.Paths) {
		t.Errorf("%d routes, %d documented operations", n, countOps(doc.Paths))
	}
}

func countOps(paths map[string]map[string]any) int {
	n := 0
	for _, ops := range paths {
		n += len(ops)
	}
	return n
}

// TestMemorySlack: after the warm-up the server bounds the Go heap to the
// open row indexes' cache budget plus the slack.
func TestMemorySlack(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: the server leaves the limit alone")
	}
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	ts := start(t, 4, Config{MemorySlack: 100 << 20})
	budget := ts.srv.st.CacheBudget()
	if budget < 2*(256<<20) { // two row indexes, each at least the default
		t.Fatalf("cache budget %d", budget)
	}
	if got := debug.SetMemoryLimit(-1); got != budget+100<<20 {
		t.Fatalf("memory limit %d, want %d", got, budget+100<<20)
	}
}

// TestLookupNamesRowIndex: the lookup body's row_index picks one of two row
// indexes on user_id (hash and sorted), for rows and for sql; a range on the
// named hash one is refused; with none named a range takes the sorted one.
func TestLookupNamesRowIndex(t *testing.T) {
	ctx := context.Background()
	ts := start(t, 4, Config{})
	ix, err := ts.srv.st.Index(ctx, "plays")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ix.AddRowIndex(ctx, ariadne.RowIndexDefinition{Name: "user_sorted", Key: "user_id", Kind: rowindex.KindSorted}); err != nil {
		t.Fatal(err)
	}
	hot := strconv.FormatInt(ts.lake.Hot, 10)
	byHash := ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"row_index": "user_id", "key": hot, "columns": []string{"user_id"}})
	bySorted := ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"column": "user_id", "row_index": "user_sorted", "key": hot, "columns": []string{"user_id"}})
	if byHash["row_index"] != "user_id" || bySorted["row_index"] != "user_sorted" || len(rowsOf(byHash)) == 0 || len(rowsOf(byHash)) != len(rowsOf(bySorted)) {
		t.Fatalf("named row indexes: %v (%d rows), %v (%d rows)", byHash["row_index"], len(rowsOf(byHash)), bySorted["row_index"], len(rowsOf(bySorted)))
	}
	auto := ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"column": "user_id", "low": hot, "high": hot, "columns": []string{"user_id"}})
	if auto["row_index"] != "user_sorted" || len(rowsOf(auto)) != len(rowsOf(byHash)) {
		t.Fatalf("range, none named: %v, %d rows", auto["row_index"], len(rowsOf(auto)))
	}
	if code, m := ts.call(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"row_index": "user_id", "low": hot, "high": hot}); code != 400 {
		t.Fatalf("range on the named hash row index: %d %v", code, m)
	}
	if code, m := ts.call(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"row_index": "nope", "key": hot}); code != 404 {
		t.Fatalf("unknown row index: %d %v", code, m)
	}
	sq := ts.mustOK(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"row_index": "user_sorted", "key": hot, "sql": "SELECT count(*) AS n FROM rows"})
	if sq["row_index"] != "user_sorted" || sq["input_rows"] != float64(len(rowsOf(byHash))) {
		t.Fatalf("sql on the named row index: %v", sq)
	}
}
