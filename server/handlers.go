package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/rowindex"
)

// LookupBody is the body of POST /v1/indexes/{name}/lookup. The fields
// mean what the fields of ariadne.LookupRequest of the same names mean;
// keys and filter values are strings, JSON numbers (kept exact as
// json.Number) or booleans.
type LookupBody struct {
	Column  string           `json:"column"`
	Key     any              `json:"key"`
	Keys    []any            `json:"keys"`
	Low     any              `json:"low"`
	High    any              `json:"high"`
	Range   bool             `json:"range"`
	Columns []string         `json:"columns"`
	Where   []ariadne.Filter `json:"where"`
	Limit   int              `json:"limit"`
	Cursor  string           `json:"cursor"`
	NoRows  bool             `json:"no_rows"`
	// Explain adds the lookup's plan and cost to the answer.
	Explain bool `json:"explain"`
}

// LocateBody is the body of POST /v1/indexes/{name}/locate: the fields of
// ariadne.LocateRequest.
type LocateBody struct {
	Keys   map[string][]any `json:"keys"`
	PerKey bool             `json:"per_key"`
}

// Limits bound what a request may ask.
type Limits struct {
	MaxKeys int // keys in a batch or a locate
	MaxRows int // rows in a page
}

// requestError is a bad request: its status and error kind.
type requestError struct {
	status int
	kind   string
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &requestError{http.StatusBadRequest, "invalid argument", fmt.Sprintf(format, args...)}
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
		return &requestError{http.StatusRequestEntityTooLarge, "invalid argument", fmt.Sprintf("request body larger than %d bytes", mbe.Limit)}
	}
	return badRequest(format, args...)
}

// DecodeLookup reads a lookup body and checks it against the limits: the
// request the face gets, and whether the plan was asked for. A limit of 0
// or above MaxRows is cut to MaxRows.
func DecodeLookup(r io.Reader, lim Limits) (ariadne.LookupRequest, bool, error) {
	var b LookupBody
	if err := decode(r, &b); err != nil {
		return ariadne.LookupRequest{}, false, err
	}
	if len(b.Keys) > lim.MaxKeys {
		return ariadne.LookupRequest{}, false, badRequest("%d keys: at most %d per request", len(b.Keys), lim.MaxKeys)
	}
	if b.Keys != nil && len(b.Keys) == 0 {
		return ariadne.LookupRequest{}, false, badRequest("keys: an empty batch")
	}
	if b.Limit < 0 {
		return ariadne.LookupRequest{}, false, badRequest("limit %d: want 0 or more", b.Limit)
	}
	if len(b.Where) > 64 || len(b.Columns) > 4096 {
		return ariadne.LookupRequest{}, false, badRequest("too many filters or columns")
	}
	for _, v := range append([]any{b.Key, b.Low, b.High}, b.Keys...) {
		switch v.(type) {
		case nil, string, json.Number, bool:
		default:
			return ariadne.LookupRequest{}, false, badRequest("a key must be a string, a number or a boolean, not %T", v)
		}
	}
	limit := b.Limit
	if limit == 0 || limit > lim.MaxRows {
		limit = lim.MaxRows
	}
	return ariadne.LookupRequest{Column: b.Column, Key: b.Key, Keys: b.Keys, Low: b.Low, High: b.High, Range: b.Range,
		Columns: b.Columns, Where: b.Where, NoRows: b.NoRows, Limit: limit, Cursor: b.Cursor}, b.Explain, nil
}

// DecodeLocate reads a locate body and checks it against the limits.
func DecodeLocate(r io.Reader, lim Limits) (ariadne.LocateRequest, error) {
	var b LocateBody
	if err := decode(r, &b); err != nil {
		return ariadne.LocateRequest{}, err
	}
	if len(b.Keys) == 0 {
		return ariadne.LocateRequest{}, badRequest(`keys: want {"column": [values...]}`)
	}
	n := 0
	for c, vs := range b.Keys {
		n += len(vs)
		for _, v := range vs {
			switch v.(type) {
			case string, json.Number, bool:
			default:
				return ariadne.LocateRequest{}, badRequest("column %s: a value must be a string, a number or a boolean, not %T", c, v)
			}
		}
	}
	if n > lim.MaxKeys {
		return ariadne.LocateRequest{}, badRequest("%d values: at most %d per request", n, lim.MaxKeys)
	}
	return ariadne.LocateRequest{Keys: b.Keys, PerKey: b.PerKey}, nil
}

func (s *Server) limits() Limits { return Limits{MaxKeys: s.cfg.MaxKeys, MaxRows: s.cfg.MaxRows} }

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if !s.ready.Load() {
		writeError(w, http.StatusServiceUnavailable, "not ready", "warming up")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready"})
}

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(OpenAPI)
}

// indexInfo is an entry of GET /v1/indexes.
type indexInfo struct {
	Name       string         `json:"name"`
	Format     string         `json:"format"`
	RowIndexes []rowIndexInfo `json:"row_indexes"`
}

type rowIndexInfo struct {
	Name  string   `json:"name"`
	Key   string   `json:"key"`
	Kind  string   `json:"kind"`
	Cover []string `json:"cover"`
}

func (s *Server) indexes(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	names, err := s.st.Indexes(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]indexInfo, 0, len(names))
	for _, n := range names {
		ix, err := s.st.Index(ctx, n)
		if err != nil {
			continue // removed meanwhile, or unreadable: describe says why
		}
		info := indexInfo{Name: n, Format: ix.Format(), RowIndexes: []rowIndexInfo{}}
		defs, err := ix.RowIndexes(ctx)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		for _, d := range defs {
			cover := d.Cover
			if cover == nil {
				cover = []string{}
			}
			info.RowIndexes = append(info.RowIndexes, rowIndexInfo{Name: d.Name, Key: d.Key, Kind: string(d.Kind), Cover: cover})
		}
		out = append(out, info)
	}
	writeJSON(w, http.StatusOK, map[string]any{"indexes": out})
}

func (s *Server) describe(w http.ResponseWriter, r *http.Request) {
	ix, err := s.st.Index(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d, err := ix.Describe(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) {
	req, explain, err := DecodeLookup(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), s.limits())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ix, err := s.st.Index(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := ix.Lookup(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.m.observeLookup(res)
	rows := make([]map[string]any, len(res.Rows))
	for i := range res.Rows {
		rows[i] = res.Rows[i].Values
	}
	out := map[string]any{"rows": rows, "columns": nonNil(res.Columns), "row_index": res.RowIndex, "version": res.Version}
	if res.Cursor != "" {
		out["cursor"] = res.Cursor
	}
	if len(res.Aggregates) > 0 {
		out["aggregates"] = res.Aggregates
	}
	if explain {
		out["plan"] = planJSON(res.Plan)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) locate(w http.ResponseWriter, r *http.Request) {
	req, err := DecodeLocate(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), s.limits())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ix, err := s.st.Index(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := ix.Locate(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := map[string]any{"files": res.Files}
	if req.PerKey {
		out["per_key"] = res.PerKey
	}
	writeJSON(w, http.StatusOK, out)
}

// planJSON is the lookup plan, with the command line's field names.
func planJSON(p rowindex.Plan) map[string]any {
	return map[string]any{
		"kind": p.Kind, "entries": p.Entries, "files": p.Files, "row_ranges": p.RowRanges, "byte_ranges": p.ByteRanges,
		"rows": p.Rows, "covered": p.Covered, "requests": p.Requests(), "bytes_read": p.BytesRead(),
		"bytes_returned": p.BytesReturned, "index_requests": p.Index.Requests, "data_requests": p.Data.Requests,
		"cache_hits": p.Index.CacheHits + p.Data.CacheHits, "pages_decoded": p.Data.Pages, "page_cache_hits": p.Data.PageHits,
		"elapsed_ms": float64(p.Elapsed.Microseconds()) / 1000,
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// statusOf maps an error kind to an HTTP status.
func statusOf(kind string) int {
	switch kind {
	case "invalid argument", "bad query", "usage", "column not found", "bad column", "invalid key":
		return http.StatusBadRequest
	case "index not found", "row index not found", "not found", "file list not found":
		return http.StatusNotFound
	case "deadline exceeded":
		return http.StatusGatewayTimeout
	case "canceled":
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// fail answers an error with its kind; server-side failures are logged.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var re *requestError
	if errors.As(err, &re) {
		writeError(w, re.status, re.kind, re.msg)
		return
	}
	kind := ariadne.ErrorKind(err)
	code := statusOf(kind)
	if code >= 500 {
		s.log.Error("request failed", "path", r.URL.Path, "kind", kind, "error", err)
	}
	writeError(w, code, kind, err.Error())
}

func writeError(w http.ResponseWriter, code int, kind, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]string{"kind": kind, "message": msg}})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		b, _ = json.Marshal(map[string]any{"error": map[string]string{"kind": "error", "message": "encoding the response: " + err.Error()}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}
