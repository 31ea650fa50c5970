// Package api owns the wire format of the server's requests: the bodies of
// lookup, locate and join, their decoding (strict: one JSON object, exact numbers,
// no unknown fields) and their limits. It depends on nothing of Ariadne, so
// that decoding is fuzzed on its own.
package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
)

// Filter is a filter of a lookup body (see ariadne.Filter).
type Filter struct {
	Column string `json:"column"`
	Op     string `json:"op"`
	Value  any    `json:"value"`
}

// LookupBody is the body of POST /v1/indexes/{name}/lookup. The fields
// mean what the fields of ariadne.LookupRequest of the same names mean;
// keys and filter values are strings, JSON numbers (kept exact as
// json.Number) or booleans.
type LookupBody struct {
	Column   string   `json:"column"`
	RowIndex string   `json:"row_index"`
	Key      any      `json:"key"`
	Keys     []any    `json:"keys"`
	Low      any      `json:"low"`
	High     any      `json:"high"`
	Range    bool     `json:"range"`
	Columns  []string `json:"columns"`
	Where    []Filter `json:"where"`
	Limit    int      `json:"limit"`
	Cursor   string   `json:"cursor"`
	NoRows   bool     `json:"no_rows"`
	// Explain adds the lookup's plan and cost to the answer.
	Explain bool `json:"explain"`
	// SQL, when set, is one read-only DuckDB query over the table "rows"
	// holding the selected rows (ariadne.LookupSQLRequest): the answer is
	// the query's rows, at most Limit, in one page (no cursor).
	SQL string `json:"sql"`
}

// MaxSQLBytes is the longest query a lookup may carry.
const MaxSQLBytes = 64 << 10

// LocateBody is the body of POST /v1/indexes/{name}/locate: the fields of
// ariadne.LocateRequest.
type LocateBody struct {
	Keys   map[string][]any `json:"keys"`
	PerKey bool             `json:"per_key"`
}

// Limits bound what a request may ask.
type Limits struct {
	MaxKeys     int // keys in a batch or a locate
	MaxRows     int // rows in a page
	MaxJoinKeys int // key rows in a join
	// JoinEngines are the engines a join may name (none: only the
	// server's default, by naming no engine).
	JoinEngines []string
}

// Error is a request refused before it reached the face: its HTTP status
// (4xx) and error kind.
type Error struct {
	Status int
	Kind   string
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

func badRequest(format string, args ...any) error {
	return &Error{http.StatusBadRequest, "invalid argument", fmt.Sprintf(format, args...)}
}

// decode reads exactly one JSON object into v: numbers stay exact
// (json.Number, so integer keys keep every digit), unknown fields are
// refused.
func decode(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, "malformed JSON body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return decodeError(err, "malformed JSON body: one object expected")
	}
	return nil
}

// decodeError is a body over the limit (413) or malformed (400).
func decodeError(err error, format string, args ...any) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &Error{http.StatusRequestEntityTooLarge, "invalid argument", fmt.Sprintf("request body larger than %d bytes", mbe.Limit)}
	}
	return badRequest(format, args...)
}

// DecodeLookup reads a lookup body and checks it against the limits. A
// limit of 0 or above MaxRows is cut to MaxRows.
func DecodeLookup(r io.Reader, lim Limits) (LookupBody, error) {
	var b LookupBody
	if err := decode(r, &b); err != nil {
		return LookupBody{}, err
	}
	if len(b.Keys) > lim.MaxKeys {
		return LookupBody{}, badRequest("%d keys: at most %d per request", len(b.Keys), lim.MaxKeys)
	}
	if b.Keys != nil && len(b.Keys) == 0 {
		return LookupBody{}, badRequest("keys: an empty batch")
	}
	if b.Limit < 0 {
		return LookupBody{}, badRequest("limit %d: want 0 or more", b.Limit)
	}
	if len(b.SQL) > MaxSQLBytes {
		return LookupBody{}, badRequest("sql: %d bytes, at most %d", len(b.SQL), MaxSQLBytes)
	}
	if b.SQL != "" && (b.Cursor != "" || b.NoRows) {
		return LookupBody{}, badRequest("sql: answers in one page, without cursor or no_rows")
	}
	if len(b.Where) > 64 || len(b.Columns) > 4096 {
		return LookupBody{}, badRequest("too many filters or columns")
	}
	for _, v := range append([]any{b.Key, b.Low, b.High}, b.Keys...) {
		switch v.(type) {
		case nil, string, json.Number, bool:
		default:
			return LookupBody{}, badRequest("a key must be a string, a number or a boolean, not %T", v)
		}
	}
	if b.Limit == 0 || b.Limit > lim.MaxRows {
		b.Limit = lim.MaxRows
	}
	return b, nil
}

// DecodeLocate reads a locate body and checks it against the limits.
func DecodeLocate(r io.Reader, lim Limits) (LocateBody, error) {
	var b LocateBody
	if err := decode(r, &b); err != nil {
		return LocateBody{}, err
	}
	if len(b.Keys) == 0 {
		return LocateBody{}, badRequest(`keys: want {"column": [values...]}`)
	}
	n := 0
	for c, vs := range b.Keys {
		n += len(vs)
		for _, v := range vs {
			switch v.(type) {
			case string, json.Number, bool:
			default:
				return LocateBody{}, badRequest("column %s: a value must be a string, a number or a boolean, not %T", c, v)
			}
		}
	}
	if n > lim.MaxKeys {
		return LocateBody{}, badRequest("%d values: at most %d per request", n, lim.MaxKeys)
	}
	return b, nil
}

// JoinBody is the body of POST /v1/indexes/{name}/join: the fields of
// ariadne.JoinRequest, the key set by column (every list the same length,
// row i the i-th value of each), and Limit, the most rows streamed (0: all).
type JoinBody struct {
	Keys        map[string][]any `json:"keys"`
	On          []string         `json:"on"`
	How         string           `json:"how"`
	Select      []string         `json:"select"`
	IndexOnLeft bool             `json:"index_on_left"`
	Limit       int64            `json:"limit"`
	// Engine picks the join's engine ("duckdb", "spark"; "": the server's
	// default); the server allows only those it is configured for.
	Engine string `json:"engine"`
}

// DecodeJoin reads a join body and checks it against the limits: at most
// MaxJoinKeys key rows.
func DecodeJoin(r io.Reader, lim Limits) (JoinBody, error) {
	var b JoinBody
	if err := decode(r, &b); err != nil {
		return JoinBody{}, err
	}
	if len(b.Keys) == 0 {
		return JoinBody{}, badRequest(`keys: want {"column": [values...]}`)
	}
	if len(b.Keys) > 64 || len(b.On) > 64 || len(b.Select) > 4096 {
		return JoinBody{}, badRequest("too many key, join or selected columns")
	}
	n := -1
	for c, vs := range b.Keys {
		if n >= 0 && len(vs) != n {
			return JoinBody{}, badRequest("keys: column %s has %d values, others %d: every column needs one per key row", c, len(vs), n)
		}
		n = len(vs)
		for _, v := range vs {
			switch v.(type) {
			case nil, string, json.Number, bool:
			default:
				return JoinBody{}, badRequest("column %s: a key must be a string, a number, a boolean or null, not %T", c, v)
			}
		}
	}
	if n > lim.MaxJoinKeys {
		return JoinBody{}, badRequest("%d key rows: at most %d per request", n, lim.MaxJoinKeys)
	}
	if b.Limit < 0 {
		return JoinBody{}, badRequest("limit %d: want 0 (all rows) or more", b.Limit)
	}
	if b.Engine != "" && !slices.Contains(lim.JoinEngines, b.Engine) {
		return JoinBody{}, badRequest("engine %q: this server runs joins on %v", b.Engine, lim.JoinEngines)
	}
	return b, nil
}
