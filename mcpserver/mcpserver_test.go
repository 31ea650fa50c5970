package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/internal/playsfixture"
	"github.com/ariadne-go/ariadne/rowindex"
)

// session starts the MCP server over the plays lake and connects the SDK's
// own client to it through in-memory transports.
func session(t *testing.T, lim Limits) (*mcp.ClientSession, *playsfixture.PlaysLake, *ariadne.Index) {
	t.Helper()
	ctx := context.Background()
	lake, err := playsfixture.Plays(ctx, t.TempDir(), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lake.Close() })
	st, err := ariadne.Open(ctx, lake.StoreURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ct, stt := mcp.NewInMemoryTransports()
	ss, err := New(st, lim).Connect(ctx, stt, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	ix, err := st.Index(ctx, playsfixture.PlaysIndex)
	if err != nil {
		t.Fatal(err)
	}
	return cs, lake, ix
}

// call calls a tool and decodes its structured answer into out; it returns
// the error text of a failed call.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		return res.Content[0].(*mcp.TextContent).Text
	}
	// The text content is the answer's JSON as written (the client SDK
	// decodes the structured content with numbers as float64); the
	// structured content holds the same value.
	text := res.Content[0].(*mcp.TextContent).Text
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Fatalf("%s: %v in %s", name, err, text)
	}
	var a, b any
	sc, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(sc, &a) != nil || json.Unmarshal([]byte(text), &b) != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("%s: structured content %s differs from the text %s", name, sc, text)
	}
	return ""
}

func TestTools(t *testing.T) {
	ctx := context.Background()
	cs, lake, ix := session(t, Limits{MaxRows: 50})
	tl, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tl.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("tool %s lacks a schema or a description", tool.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"describe_index", "join", "list_indexes", "locate", "lookup", "query_key"}) {
		t.Fatalf("tools %v", names)
	}
	in, _ := json.Marshal(tl.Tools[slices.IndexFunc(tl.Tools, func(x *mcp.Tool) bool { return x.Name == "lookup" })].InputSchema)
	if !strings.Contains(string(in), `"key":{"description":"one key","type":["null","string","number","boolean"]}`) {
		t.Errorf("lookup's key schema: %s", in)
	}

	var list ListIndexesOut
	if e := call(t, cs, "list_indexes", nil, &list); e != "" || len(list.Indexes) != 1 || len(list.Indexes[0].RowIndexes) != 2 {
		t.Fatalf("list_indexes: %s %+v", e, list)
	}
	var desc map[string]any
	if e := call(t, cs, "describe_index", map[string]any{"index": "plays"}, &desc); e != "" || desc["file_count"] != 4.0 {
		t.Fatalf("describe_index: %s %v", e, desc)
	}

	// A hot user's history, page by page: the same rows and JSON values as
	// the face's own lookup.
	cols := []string{"ts", "duration_ms", "track_uri"}
	want, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: lake.Hot, Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	args := map[string]any{"index": "plays", "column": "user_id", "key": lake.Hot, "columns": cols, "limit": 500}
	pages := 0
	for {
		var page LookupOut
		if e := call(t, cs, "lookup", args, &page); e != "" {
			t.Fatal(e)
		}
		if len(page.Rows) > 50 {
			t.Fatalf("page of %d rows over the limit", len(page.Rows))
		}
		for _, r := range page.Rows {
			b, _ := json.Marshal(r)
			got = append(got, string(b))
		}
		pages++
		if page.Cursor == "" {
			break
		}
		args["cursor"] = page.Cursor
	}
	if len(got) != len(want.Rows) || pages != (len(want.Rows)+49)/50 {
		t.Fatalf("%d rows in %d pages, want %d", len(got), pages, len(want.Rows))
	}
	// Each row carries its source as the face's (and so the CLI's and the
	// HTTP API's) rows do.
	for i, r := range want.Rows {
		if b, _ := json.Marshal(LookupRow{Key: r.Key, File: r.File, RowGroup: r.RowGroup, Row: r.Row, Values: r.Values}); string(b) != got[i] {
			t.Fatalf("row %d: %s, want %s", i, got[i], b)
		}
		if !strings.HasPrefix(r.File, "file://") || r.Row < 0 {
			t.Fatalf("row %d: source %s row %d", i, r.File, r.Row)
		}
	}

	var loc LocateOut
	if e := call(t, cs, "locate", map[string]any{"index": "plays", "keys": map[string]any{"user_id": []any{strconv.FormatInt(lake.Hot, 10)}}}, &loc); e != "" || len(loc.Files) == 0 {
		t.Fatalf("locate: %s %+v", e, loc)
	}

	faceLoc, err := ix.Locate(ctx, ariadne.LocateRequest{Keys: map[string][]any{"user_id": {lake.Hot}}})
	if err != nil || !slices.Equal(faceLoc.Files, loc.Files) {
		t.Fatalf("locate: %v, the face says %v (%v)", loc.Files, faceLoc, err)
	}
	var j JoinOut
	if e := call(t, cs, "join", map[string]any{"index": "plays", "keys": map[string]any{"user_id": []any{lake.Hot, nil}}, "how": "left",
		"select": []string{"user_id", "ts"}, "limit": 10, "engine": "duckdb"}, &j); e != "" {
		t.Fatal(e)
	}
	if len(j.Rows) != 10 || !j.Truncated || j.FilesLocated != len(loc.Files) || !slices.Equal(j.Columns, []string{"user_id", "ts"}) || j.Rows[0]["user_id"] != float64(lake.Hot) {
		t.Fatalf("join: %+v", j)
	}

	// An engine the server does not allow is refused.
	if e := call(t, cs, "join", map[string]any{"index": "plays", "keys": map[string]any{"user_id": []any{lake.Hot}}, "engine": "spark"}, new(any)); !strings.Contains(e, "invalid argument") || !strings.Contains(e, "[duckdb]") {
		t.Errorf("join on spark: %q", e)
	}

	// Failures carry the API's error object.
	for name, args := range map[string]map[string]any{
		"lookup":         {"index": "plays", "column": "user_id", "key": "u1"},
		"locate":         {"index": "plays", "keys": map[string]any{}},
		"join":           {"index": "plays", "keys": map[string]any{"user_id": []any{1, 2}, "x": []any{1}}},
		"describe_index": {"index": "../etc"},
		"query_key":      {"index": "plays", "column": "user_id", "key": "u1", "sql": "SELECT 1"},
	} {
		e := call(t, cs, name, args, new(any))
		var m struct {
			Error struct{ Kind, Message string }
		}
		if err := json.Unmarshal([]byte(e), &m); err != nil || m.Error.Kind != "invalid argument" {
			t.Errorf("%s: error %q, want kind invalid argument", name, e)
		}
	}
	if e := call(t, cs, "describe_index", map[string]any{"index": "nope"}, new(any)); !strings.Contains(e, `"kind":"index not found"`) {
		t.Errorf("describe of a missing index: %s", e)
	}
}

// TestExactIntegerKeys: a number key beyond float64's exact integers is
// not rounded on its way to the index (a left join hands the key back).
func TestExactIntegerKeys(t *testing.T) {
	cs, _, _ := session(t, Limits{})
	var out struct {
		Rows []map[string]json.RawMessage `json:"rows"`
	}
	// 2^53+1 rounds to 2^53 through float64.
	args := map[string]any{"index": "plays", "keys": map[string]any{"user_id": []any{json.Number("9007199254740993")}}, "how": "left", "select": []string{"user_id", "ts"}}
	if e := call(t, cs, "join", args, &out); e != "" {
		t.Fatal(e)
	}
	if len(out.Rows) != 1 || string(out.Rows[0]["user_id"]) != "9007199254740993" || string(out.Rows[0]["ts"]) != "null" {
		t.Fatalf("rows %v", out.Rows)
	}
}

// TestQueryKey: query_key, driven by the SDK's client, answers a query over
// the key's rows as the face's LookupSQL does, and refuses a hostile
// statement with kind bad query.
func TestQueryKey(t *testing.T) {
	ctx := context.Background()
	cs, lake, ix := session(t, Limits{MaxRows: 5})
	q := "SELECT context, count(*) AS n, sum(duration_ms) AS total FROM rows GROUP BY context ORDER BY context"
	want, err := ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot, SQL: q})
	if err != nil {
		t.Fatal(err)
	}
	var got QueryKeyOut
	if e := call(t, cs, "query_key", map[string]any{"index": "plays", "column": "user_id", "key": strconv.FormatInt(lake.Hot, 10), "sql": q}, &got); e != "" {
		t.Fatal(e)
	}
	if got.InputRows != want.InputRows || !slices.Equal(got.Columns, want.Columns) || len(got.Rows) != min(5, len(want.Rows)) || got.Truncated != (len(want.Rows) > 5) {
		t.Fatalf("query_key %+v, face %+v", got, want)
	}
	for i, r := range got.Rows {
		w := want.Record(i)
		if r["context"] != w["context"] || fmt.Sprint(r["n"]) != fmt.Sprint(w["n"]) || fmt.Sprint(r["total"]) != fmt.Sprint(w["total"]) {
			t.Fatalf("row %d: %v, face %v", i, r, w)
		}
	}
	for _, bad := range []string{"COPY rows TO '/tmp/x.csv'", "INSTALL httpfs", "SELECT 1; SELECT 2", "PRAGMA version"} {
		e := call(t, cs, "query_key", map[string]any{"index": "plays", "column": "user_id", "key": lake.Hot, "sql": bad}, new(any))
		if !strings.Contains(e, `"kind":"bad query"`) {
			t.Errorf("%q: %s", bad, e)
		}
	}
}

// TestLookupNamesRowIndex: with two row indexes on user_id (hash and
// sorted), lookup and query_key use the one named by row_index, refuse a
// range on the hash one, and choose the sorted one for a range when none
// is named.
func TestLookupNamesRowIndex(t *testing.T) {
	ctx := context.Background()
	cs, lake, ix := session(t, Limits{MaxRows: 1000})
	if _, _, err := ix.AddRowIndex(ctx, ariadne.RowIndexDefinition{Name: "user_sorted", Key: "user_id", Kind: rowindex.KindSorted}); err != nil {
		t.Fatal(err)
	}
	hot := strconv.FormatInt(lake.Hot, 10)
	sources := func(p LookupOut) []string {
		var s []string
		for _, r := range p.Rows {
			s = append(s, fmt.Sprintf("%s#%d", r.File, r.Row))
		}
		slices.Sort(s)
		return s
	}
	var byHash, bySorted, auto LookupOut
	if e := call(t, cs, "lookup", map[string]any{"index": "plays", "row_index": "user_id", "key": hot, "columns": []string{"user_id"}}, &byHash); e != "" || byHash.RowIndex != "user_id" {
		t.Fatalf("named hash row index: %s %q", e, byHash.RowIndex)
	}
	if e := call(t, cs, "lookup", map[string]any{"index": "plays", "row_index": "user_sorted", "key": hot, "columns": []string{"user_id"}}, &bySorted); e != "" || bySorted.RowIndex != "user_sorted" {
		t.Fatalf("named sorted row index: %s %q", e, bySorted.RowIndex)
	}
	if len(byHash.Rows) == 0 || !slices.Equal(sources(byHash), sources(bySorted)) {
		t.Fatalf("hash and sorted row indexes found different rows: %d vs %d", len(byHash.Rows), len(bySorted.Rows))
	}
	if e := call(t, cs, "lookup", map[string]any{"index": "plays", "column": "user_id", "low": hot, "high": hot, "columns": []string{"user_id"}}, &auto); e != "" || auto.RowIndex != "user_sorted" || len(auto.Rows) != len(byHash.Rows) {
		t.Fatalf("range with no row index named: %s %q, %d rows", e, auto.RowIndex, len(auto.Rows))
	}
	if e := call(t, cs, "lookup", map[string]any{"index": "plays", "row_index": "user_id", "low": hot, "high": hot}, new(LookupOut)); !strings.Contains(e, `"kind":"bad query"`) {
		t.Errorf("range on the named hash row index: %q", e)
	}
	if e := call(t, cs, "lookup", map[string]any{"index": "plays", "row_index": "nope", "key": hot}, new(LookupOut)); !strings.Contains(e, "not found") {
		t.Errorf("unknown row index: %q", e)
	}
	var q QueryKeyOut
	if e := call(t, cs, "query_key", map[string]any{"index": "plays", "row_index": "user_sorted", "key": hot, "sql": "SELECT count(*) AS n FROM rows"}, &q); e != "" || q.RowIndex != "user_sorted" || q.InputRows != int64(len(byHash.Rows)) {
		t.Fatalf("query_key on the named row index: %s %+v", e, q)
	}
}
