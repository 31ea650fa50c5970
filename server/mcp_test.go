package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds a token to every request.
type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPOverHTTP: the SDK's own client calls the agent tools at /mcp over
// a real socket (with the bearer token the server asks for), and gets the
// rows the lookup endpoint gives.
func TestMCPOverHTTP(t *testing.T) {
	ctx := context.Background()
	ts := start(t, 4, Config{Tokens: []string{"s3cret"}, MCPMaxRows: 20})
	connect := func(tok string) (*mcp.ClientSession, error) {
		tr := &mcp.StreamableClientTransport{Endpoint: ts.url + "/mcp", HTTPClient: &http.Client{Transport: bearer{tok}},
			DisableStandaloneSSE: true, MaxRetries: -1}
		return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, tr, nil)
	}
	if cs, err := connect("wrong"); err == nil {
		cs.Close()
		t.Fatal("connected with a wrong token")
	}
	cs, err := connect("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	hot := strconv.FormatInt(ts.lake.Hot, 10)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup", Arguments: map[string]any{
		"index": "plays", "column": "user_id", "key": hot, "columns": []string{"ts", "duration_ms"}}})
	if err != nil || res.IsError {
		t.Fatalf("lookup: %v %v", err, res)
	}
	var page struct {
		Rows   []map[string]any `json:"rows"` // {key, file, row_group, row, values}
		Cursor string           `json:"cursor"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &page); err != nil {
		t.Fatal(err)
	}
	_, m := ts.call(t, "POST", "/v1/indexes/plays/lookup", map[string]any{"column": "user_id", "key": hot, "columns": []string{"ts", "duration_ms"}, "limit": 20},
		"Authorization", "Bearer s3cret")
	rowsOf(m) // every API row has its source
	want, _ := m["rows"].([]any)
	if len(page.Rows) != 20 || page.Cursor == "" || len(want) != 20 {
		t.Fatalf("%d rows (cursor %q), the API gave %d", len(page.Rows), page.Cursor, len(want))
	}
	// The same rows with the same source and values (MCP rows are {key,
	// file, row_group, row, values}; the API's are the values by column
	// with the source in "sources": compared decoded).
	srcs, _ := m["sources"].([]any)
	for i := range want {
		api := srcs[i].(map[string]any)
		api["values"] = want[i]
		a, _ := json.Marshal(page.Rows[i])
		b, _ := json.Marshal(api)
		if string(a) != string(b) {
			t.Fatalf("row %d: %s, the API gave %s", i, a, b)
		}
	}
	// A message over the body limit is refused, not read whole.
	big := `{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lookup", "arguments": {"index": "` +
		strings.Repeat("x", 2<<20) + `"}}}`
	req, _ := http.NewRequest("POST", ts.url+"/mcp", strings.NewReader(big))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Fatalf("a 2 MiB MCP message: %d", resp.StatusCode)
	}
}
