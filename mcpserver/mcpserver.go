// Package mcpserver is Ariadne's agent interface: a Model Context Protocol
// server (built with the official Go SDK) over the library face, exposing
// list_indexes, describe_index, lookup, locate and join as tools with typed
// JSON schemas. An agent fetches one user's history a page at a time
// (lookup with a cursor), asks which files hold keys (locate), and joins a
// small key set with the located files' rows (join). Results are bounded:
// every page and every join answer holds at most Limits.MaxRows rows.
//
// The answers use the face's JSON vocabulary, the same as `ariadne serve`
// and the command line's --json: snake_case fields, numbers as numbers,
// timestamps in RFC 3339. The server runs over stdio (`ariadne mcp`) or
// over streamable HTTP (mounted at /mcp by package server).
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/aerr"
)

// Limits bound what a tool call may ask and return.
type Limits struct {
	// MaxRows is the most rows a lookup page or a join answer holds
	// (default 100: an agent's context is small).
	MaxRows int
	// MaxKeys is the most keys a lookup batch or a locate may carry, and
	// the most key rows a join may post (default 1000).
	MaxKeys int
	// JoinEngines are the engines a join call may name (default: duckdb
	// only); a call naming none runs on the store's configured engine.
	JoinEngines []string
}

func (l Limits) withDefaults() Limits {
	if l.MaxRows <= 0 {
		l.MaxRows = 100
	}
	if l.MaxKeys <= 0 {
		l.MaxKeys = 1000
	}
	if l.JoinEngines == nil {
		l.JoinEngines = []string{ariadne.EngineDuckDB}
	}
	return l
}

// Version is the implementation version the server reports.
const Version = "1"

// New returns an MCP server whose tools answer from st. It does not take
// ownership of st; the server is safe to serve many sessions at once.
func New(st *ariadne.Store, lim Limits) *mcp.Server {
	t := &tools{st: st, lim: lim.withDefaults()}
	s := mcp.NewServer(&mcp.Implementation{Name: "ariadne", Title: "Ariadne: lookups and joins straight from the data lake", Version: Version},
		&mcp.ServerOptions{Instructions: instructions})
	addTool(s, "list_indexes", "List the indexes of the store, with the row indexes each has (the key columns a lookup can use).", t.listIndexes)
	addTool(s, "describe_index", "Describe one index: its columns, file index columns, data files and sizes, and each row index (key, kind, cover columns, aggregates, version, entries).", t.describeIndex)
	addTool(s, "lookup", fmt.Sprintf("Return the rows of one key (or a batch of keys, or a key range on a sorted row index) straight from the data files, through a row index, a page of at most %d rows at a time: pass the answer's cursor back to get the next page. Each row carries its source (file, row_group, row: its number in the file) beside its values. Name row_index to pick one of several row indexes on the key column. Columns that are all cover columns are answered without reading data files. Keys are typed by the key column: give them as strings to keep every digit.", t.lim.MaxRows), t.lookup)
	addTool(s, "query_key", fmt.Sprintf("Run one read-only DuckDB SQL query (SELECT, WITH ... SELECT, or FROM-first) over the rows of a key (or a batch, or a range), loaded into a table named rows with the index's column types: filter, aggregate, group or sort a user's history in one call instead of paging through it. At most %d result rows (truncated tells when more exist). Anything but one query (COPY, ATTACH, INSTALL, PRAGMA, SET, several statements, reading files) is refused with kind bad query; a query is bounded in time and memory.", t.lim.MaxRows), t.queryKey)
	addTool(s, "locate", "Return the data files that can hold keys, from the file index (no data file is read): for every column one of its values (AND across columns, OR within one).", t.locate)
	addTool(s, "join", fmt.Sprintf("Join a key set (by column: lists of equal length, row i the i-th value of each) with the rows of only the data files that can hold its keys; at most %d rows are returned (truncated tells when more exist).", t.lim.MaxRows), t.join)
	return s
}

const instructions = `Ariadne indexes a data lake's files where they lie. Start with list_indexes; ` +
	`use lookup to read one key's rows a page at a time (pass back the cursor), locate to find the files that can ` +
	`hold keys, and join for the rows of a small set of keys. Errors come back as {"error": {"kind", "message"}}.`

// Key is a key or filter value: a string (parsed by the column's type:
// integers, floats, booleans, ISO-8601 timestamps, YYYY-MM-DD dates), a
// number (kept exact, not rounded through float64) or a boolean.
type Key struct{ v any }

// UnmarshalJSON keeps numbers exact (json.Number).
func (k *Key) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(&k.v)
}

// MarshalJSON writes the value as given.
func (k Key) MarshalJSON() ([]byte, error) { return json.Marshal(k.v) }

// Value returns the key as the face takes it: string, json.Number, bool or
// nil.
func (k *Key) Value() any {
	if k == nil {
		return nil
	}
	return k.v
}

func keyValues(ks []Key) []any {
	if ks == nil {
		return nil
	}
	out := make([]any, len(ks))
	for i := range ks {
		out[i] = ks[i].v
	}
	return out
}

func keyMap(m map[string][]Key) map[string][]any {
	out := make(map[string][]any, len(m))
	for c, ks := range m {
		out[c] = keyValues(ks)
	}
	return out
}

// keySchema is Key's JSON schema (jsonschema-go cannot infer it from the
// Go type).
var keySchema = &jsonschema.Schema{Types: []string{"string", "number", "boolean"},
	Description: "a key: a string (parsed by the column's type), a number or a boolean"}

var nullableKeySchema = &jsonschema.Schema{Types: []string{"string", "number", "boolean", "null"},
	Description: "a key: a string (parsed by the column's type), a number, a boolean, or null"}

// addTool registers a typed tool with its inferred input and output
// schemas. It decodes the arguments and encodes the answer itself rather
// than through the SDK's typed tools, which pass both through
// map[string]any and so round integers beyond 2^53 (a bigint key, or a
// value in a row) to float64: here arguments are validated against the
// schema, then decoded with exact numbers, and the answer's JSON is sent as
// written (structured content, and the same text for clients without
// structured output).
func addTool[In, Out any](s *mcp.Server, name, desc string, h func(context.Context, In) (Out, error)) {
	opts := &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[Key]():  keySchema,
		reflect.TypeFor[*Key](): keySchema,
	}}
	in, err := jsonschema.For[In](opts)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema of %s: %v", name, err))
	}
	if name == "join" {
		// A join's key set may hold nulls (a null key).
		in.Properties["keys"].AdditionalProperties.Items = nullableKeySchema
	}
	resolved, err := in.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema of %s: %v", name, err))
	}
	out, err := jsonschema.For[Out](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: output schema of %s: %v", name, err))
	}
	s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: in, OutputSchema: out}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw := []byte(req.Params.Arguments)
		if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
			raw = []byte("{}")
		}
		var loose any
		if err := json.Unmarshal(raw, &loose); err != nil {
			return errorResult(aerr.Invalid("arguments: %v", err)), nil
		}
		if err := resolved.Validate(loose); err != nil {
			return errorResult(aerr.Invalid("arguments: %v", err)), nil
		}
		var args In
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return errorResult(aerr.Invalid("arguments: %v", err)), nil
		}
		res, err := h(ctx, args)
		if err != nil {
			return errorResult(err), nil
		}
		b, err := json.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("encoding the answer: %w", err)
		}
		return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	})
}

// errorResult is a failed call: its text is the JSON error object of the
// HTTP API, {"error": {"kind", "message"}}.
func errorResult(err error) *mcp.CallToolResult {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"kind": ariadne.ErrorKind(err), "message": err.Error()}})
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

type tools struct {
	st  *ariadne.Store
	lim Limits
}

func (t *tools) index(ctx context.Context, name string) (*ariadne.Index, error) {
	return t.st.Index(ctx, name)
}
