package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPCommand runs `ariadne mcp` with its stdin and stdout on pipes and
// drives it with the SDK's client: it lists the store's indexes, answers a
// failed call with the API's error object, and ends when stdin closes.
func TestMCPCommand(t *testing.T) {
	dir := t.TempDir()
	runOK(t, dir, "list") // the store exists, with no index
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := Main(context.Background(), []string{"mcp", "--store", "file://" + dir}, Env{Stdin: inR, Stdout: outW, Stderr: &errb})
		outW.Close()
		done <- code
	}()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_indexes"})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != `{"indexes":[]}` {
		t.Fatalf("list_indexes: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup", Arguments: map[string]any{"index": "nope", "key": "1"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"kind":"index not found"`) {
		t.Fatalf("lookup on a missing index: %v %+v", err, res)
	}
	cs.Close()
	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ariadne mcp did not end when its stdin closed")
	}
}
