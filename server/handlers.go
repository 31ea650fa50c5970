package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/server/api"
)

func (s *Server) limits() api.Limits {
	return api.Limits{MaxKeys: s.cfg.MaxKeys, MaxRows: s.cfg.MaxRows}
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
	b, err := api.DecodeLookup(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), s.limits())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	explain := b.Explain
	req := ariadne.LookupRequest{Column: b.Column, Key: b.Key, Keys: b.Keys, Low: b.Low, High: b.High, Range: b.Range,
		Columns: b.Columns, NoRows: b.NoRows, Limit: b.Limit, Cursor: b.Cursor}
	for _, f := range b.Where {
		req.Where = append(req.Where, ariadne.Filter(f))
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
