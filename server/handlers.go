package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/server/api"
)

func (s *Server) limits() api.Limits {
	return api.Limits{MaxKeys: s.cfg.MaxKeys, MaxRows: s.cfg.MaxRows, MaxJoinKeys: s.cfg.MaxJoinKeys, JoinEngines: s.cfg.JoinEngines}
}

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

func (s *Server) indexes(w http.ResponseWriter, r *http.Request) {
	out, err := s.st.ListIndexes(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
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
	b, err := api.DecodeLookup(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), s.limits())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	explain := b.Explain
	req := ariadne.LookupRequest{Column: b.Column, RowIndex: b.RowIndex, Key: b.Key, Keys: b.Keys, Low: b.Low, High: b.High, Range: b.Range,
		Columns: b.Columns, NoRows: b.NoRows, Limit: b.Limit, Cursor: b.Cursor}
	for _, f := range b.Where {
		req.Where = append(req.Where, ariadne.Filter(f))
	}
	ix, err := s.st.Index(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if b.SQL != "" {
		s.lookupSQL(w, r, ix, req, b.SQL, explain)
		return
	}
	rows, err := ix.LookupRows(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer rows.Close()
	// The page is built in a pooled buffer (at most MaxRows rows) and sent
	// in one write, so an error while reading still gets an error answer.
	// Rows are written by appendRow from the values in column order (no
	// map per row), the rest by encoding/json, spliced into one object.
	bp := bodyPool.Get().(*[]byte)
	defer putBody(bp)
	body := append((*bp)[:0], `{"rows":[`...)
	sp := bodyPool.Get().(*[]byte)
	defer putBody(sp)
	srcs := (*sp)[:0]
	var quoted [][]byte
	n := 0
	for rows.Next() {
		if quoted == nil {
			quoted = quoteNames(rows.Columns())
		}
		if n > 0 {
			body = append(body, ',')
			srcs = append(srcs, ',')
		}
		if body, err = appendRow(body, quoted, nil, rows.Values(), nil); err != nil {
			s.fail(w, r, err)
			return
		}
		src := rows.Source()
		if srcs, err = appendSource(srcs, &src); err != nil {
			s.fail(w, r, err)
			return
		}
		n++
	}
	*sp = srcs
	if err := rows.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	plan := rows.Plan()
	s.m.observeLookup(plan, n)
	// "rows" (objects by column name, the HTTP contract) and "sources" (one
	// per row: key, file, row_group, row) first, then the keys in
	// encoding/json's order for a map: aggregates, columns, cursor, plan,
	// row_index, version.
	body = append(body, `],"sources":[`...)
	body = append(body, srcs...)
	body = append(body, "],"...)
	if aggs := rows.Aggregates(); len(aggs) > 0 {
		if body, err = appendField(body, "aggregates", aggs); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	body, _ = appendField(body, "columns", nonNil(rows.Columns()))
	if c := rows.Cursor(); c != "" {
		body, _ = appendField(body, "cursor", c)
	}
	if explain {
		body, _ = appendField(body, "plan", planJSON(plan))
	}
	body, _ = appendField(body, "row_index", rows.RowIndex())
	body = append(body, `"version":`...)
	body = strconv.AppendInt(body, rows.Version(), 10)
	body = append(body, "}\n"...)
	*bp = body
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// lookupSQL answers a lookup carrying "sql": {"columns", "input_rows",
// "plan"?, "row_index", "rows" (objects by result column, values as a
// lookup's), "truncated", "version"}. The query runs within the request's
// deadline and the Store's SQL bounds; its result has at most the page's
// limit of rows.
func (s *Server) lookupSQL(w http.ResponseWriter, r *http.Request, ix *ariadne.Index, req ariadne.LookupRequest, query string, explain bool) {
	res, err := ix.LookupSQL(r.Context(), ariadne.LookupSQLRequest{Column: req.Column, RowIndex: req.RowIndex, Key: req.Key, Keys: req.Keys, Low: req.Low,
		High: req.High, Range: req.Range, Columns: req.Columns, Where: req.Where, SQL: query, Limit: req.Limit})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.m.observeLookup(res.Plan, len(res.Rows))
	body := []byte(`{`)
	body, _ = appendField(body, "columns", nonNil(res.Columns))
	body, _ = appendField(body, "input_rows", res.InputRows)
	if explain {
		body, _ = appendField(body, "plan", planJSON(res.Plan))
	}
	body, _ = appendField(body, "row_index", res.RowIndex)
	body = append(body, `"rows":[`...)
	quoted := quoteNames(res.Columns)
	for i, vals := range res.Rows {
		if i > 0 {
			body = append(body, ',')
		}
		if body, err = appendRow(body, quoted, nil, vals, nil); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	body = append(body, "],"...)
	body, _ = appendField(body, "truncated", res.Truncated)
	body = append(body, `"version":`...)
	body = strconv.AppendInt(body, res.Version, 10)
	body = append(body, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// bodyPool holds lookup answer buffers: a page of 1,000 rows is tens of
// KB, allocated and zeroed anew per request otherwise.
var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// putBody returns a buffer to the pool unless a huge page grew it.
func putBody(bp *[]byte) {
	if cap(*bp) <= 4<<20 {
		bodyPool.Put(bp)
	}
}

// appendField appends "key":value, (value as encoding/json writes it).
func appendField(b []byte, key string, v any) ([]byte, error) {
	b = strconv.AppendQuote(b, key) // keys are fixed ASCII names
	b = append(b, ':')
	j, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(append(b, j...), ','), nil
}

func (s *Server) locate(w http.ResponseWriter, r *http.Request) {
	b, err := api.DecodeLocate(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), s.limits())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	req := ariadne.LocateRequest{Keys: b.Keys, PerKey: b.PerKey}
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

// joinFlushRows is how many NDJSON rows a join writes between flushes.
const joinFlushRows = 1024

// join streams the rows of a join: NDJSON (one object per row, its fields
// in column order), or an Arrow IPC stream when the client accepts one.
// Errors found before the first byte are answered as usual; an error while
// streaming ends an NDJSON answer with an {"error": ...} line and aborts an
// Arrow one (the client sees a truncated stream).
func (s *Server) join(w http.ResponseWriter, r *http.Request) {
	b, err := api.DecodeJoin(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), s.limits())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ix, err := s.st.Index(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	select {
	case s.joins <- struct{}{}:
		defer func() { <-s.joins }()
	case <-r.Context().Done():
		s.fail(w, r, fmt.Errorf("waiting for one of the %d joins running to end: %w", cap(s.joins), r.Context().Err()))
		return
	}
	rows, err := ix.Join(r.Context(), ariadne.JoinRequest{Keys: b.Keys, On: b.On, How: b.How, Select: b.Select, IndexOnLeft: b.IndexOnLeft, Engine: b.Engine})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer rows.Close()
	rc := http.NewResponseController(w)
	flush := func() { _ = rc.Flush() }
	h := w.Header()
	h.Set("Ariadne-Files-Located", strconv.Itoa(len(rows.Files())))
	cols, _ := json.Marshal(rows.Columns())
	h.Set("Ariadne-Columns", string(cols))
	var n int64
	if strings.Contains(r.Header.Get("Accept"), arrowMIME) {
		h.Set("Content-Type", arrowMIME)
		w.WriteHeader(http.StatusOK)
		aw := newArrowWriter(w, rows.Schema(), flush)
		for (b.Limit == 0 || n < b.Limit) && rows.Next() {
			if err := aw.Write(rows.Values()); err != nil {
				s.abort(r, err)
			}
			n++
		}
		if err := rows.Err(); err != nil {
			s.abort(r, err)
		}
		if err := aw.Close(); err != nil {
			s.abort(r, err)
		}
		s.m.joinRows.Add(float64(n))
		return
	}
	h.Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	quoted := quoteNames(rows.Columns())
	var line []byte
	for (b.Limit == 0 || n < b.Limit) && rows.Next() {
		line, err = appendRow(line[:0], quoted, nil, rows.Values(), nil)
		if err != nil {
			s.streamError(bw, r, err)
			return
		}
		if _, err := bw.Write(append(line, '\n')); err != nil {
			return // the client went away
		}
		if n++; n%joinFlushRows == 0 {
			if bw.Flush() != nil {
				return // the client went away
			}
			flush()
		}
	}
	if err := rows.Err(); err != nil {
		s.streamError(bw, r, err)
		return
	}
	_ = bw.Flush()
	s.m.joinRows.Add(float64(n))
}

// streamError ends a streamed NDJSON answer with an error line.
func (s *Server) streamError(w *bufio.Writer, r *http.Request, err error) {
	kind := ariadne.ErrorKind(err)
	s.log.Error("streaming failed", "path", r.URL.Path, "kind", kind, "error", err)
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"kind": kind, "message": err.Error()}})
	w.Write(append(b, '\n'))
	_ = w.Flush()
}

// abort cuts a streamed binary answer that cannot carry an error: the
// client sees the connection end before the stream does.
func (s *Server) abort(r *http.Request, err error) {
	s.log.Error("streaming failed", "path", r.URL.Path, "kind", ariadne.ErrorKind(err), "error", err)
	panic(http.ErrAbortHandler)
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
	var re *api.Error
	if errors.As(err, &re) {
		writeError(w, re.Status, re.Kind, re.Msg)
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
