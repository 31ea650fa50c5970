// Package server owns `ariadne serve`: a read-only HTTP/JSON server over the
// library face (package ariadne) and nothing else. It maps the /v1 API onto
// Store and Index calls, enforces the request limits, follows the store by
// polling for newer index versions, reports Prometheus metrics, and shuts
// down gracefully. Its contract is docs/serving.md and the OpenAPI document
// it serves (openapi.json, kept equal to docs/openapi.json by a test).
package server

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/mcpserver"
)

// OpenAPI is the OpenAPI 3 document of the API, served at /openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

// Config configures a Server. Zero fields take the defaults of
// DefaultConfig.
type Config struct {
	// PollInterval is how often the server refreshes the open indexes (row
	// index manifests, index metadata) from the store; negative: never.
	PollInterval time.Duration
	// WarmTimeout bounds the warm-up after which /readyz answers 200.
	WarmTimeout time.Duration
	// MaxKeys is the most keys a lookup batch or a locate may carry.
	MaxKeys int
	// MaxJoinKeys is the most key rows a join may post.
	MaxJoinKeys int
	// JoinEngines are the engines a join request may name ("duckdb",
	// "spark"); a request naming none runs on the store's configured engine
	// (config key engine). Default: duckdb only. The Spark Connect URL is
	// always the store's (config key sparkRemote), never the request's.
	JoinEngines []string
	// MaxJoins is the most joins run at once (each runs an in-memory DuckDB
	// engine); more wait for a turn until their deadline.
	MaxJoins int
	// MaxBodyBytes is the largest request body accepted.
	MaxBodyBytes int64
	// RequestTimeout is each request's deadline.
	RequestTimeout time.Duration
	// MaxRows is the most rows a lookup page returns; a larger (or no)
	// limit is cut to it and the cursor continues.
	MaxRows int
	// MCPMaxRows is the most rows an MCP tool answer holds (lookup pages,
	// join answers): agents' contexts are small.
	MCPMaxRows int
	// ShutdownTimeout bounds the drain of in-flight requests on shutdown.
	ShutdownTimeout time.Duration
	// Tokens, when set, are the bearer tokens accepted on every endpoint
	// but /healthz and /readyz.
	Tokens []string
	// MemorySlack, when positive, bounds the process's Go heap to the
	// store's cache budget (ariadne.Store.CacheBudget) plus this much, as a
	// soft limit (runtime/debug.SetMemoryLimit) set after the warm-up and
	// each refresh, unless GOMEMLIMIT is set: without it the heap grows to
	// twice the live caches before a collection (GOGC=100). It is
	// process-wide: set it only where the server owns the process.
	MemorySlack int64
	// Logger receives structured logs (slog.Default() if nil).
	Logger *slog.Logger
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		PollInterval: 10 * time.Second, WarmTimeout: 60 * time.Second, MaxKeys: 1000, MaxJoinKeys: 10000, MaxJoins: 4, MaxBodyBytes: 1 << 20,
		RequestTimeout: 10 * time.Second, MaxRows: 1000, MCPMaxRows: 100, ShutdownTimeout: 30 * time.Second,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.PollInterval == 0 {
		c.PollInterval = d.PollInterval
	}
	if c.WarmTimeout <= 0 {
		c.WarmTimeout = d.WarmTimeout
	}
	if c.MaxKeys <= 0 {
		c.MaxKeys = d.MaxKeys
	}
	if c.MaxJoinKeys <= 0 {
		c.MaxJoinKeys = d.MaxJoinKeys
	}
	if c.JoinEngines == nil {
		c.JoinEngines = []string{ariadne.EngineDuckDB}
	}
	if c.MaxJoins <= 0 {
		c.MaxJoins = d.MaxJoins
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = d.MaxBodyBytes
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = d.RequestTimeout
	}
	if c.MaxRows <= 0 {
		c.MaxRows = d.MaxRows
	}
	if c.MCPMaxRows <= 0 {
		c.MCPMaxRows = d.MCPMaxRows
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = d.ShutdownTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Server serves one store. It is safe for concurrent use.
type Server struct {
	st      *ariadne.Store
	cfg     Config
	log     *slog.Logger
	reg     *prometheus.Registry
	m       *metrics
	ready   atomic.Bool
	handler http.Handler
	mcp     http.Handler  // the MCP server over streamable HTTP
	joins   chan struct{} // one token per join running
}

// New returns a server over st. It does not take ownership of st.
func New(st *ariadne.Store, cfg Config) *Server {
	cfg = cfg.withDefaults()
	s := &Server{st: st, cfg: cfg, log: cfg.Logger, reg: prometheus.NewRegistry(), joins: make(chan struct{}, cfg.MaxJoins)}
	s.m = newMetrics(s.reg, st, &s.ready)
	// Stateless: any replica answers any call (no session to route to),
	// with plain JSON answers (tools do not stream).
	agent := mcpserver.New(st, mcpserver.Limits{MaxRows: cfg.MCPMaxRows, MaxKeys: cfg.MaxKeys, JoinEngines: cfg.JoinEngines})
	s.mcp = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return agent },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: cfg.Logger})
	mux := http.NewServeMux()
	for _, r := range s.routes() {
		s.route(mux, r.pattern, r.endpoint, r.auth, r.h)
	}
	s.handler = s.guard(mux)
	return s
}

type routeDef struct {
	pattern, endpoint string
	auth              bool
	h                 http.HandlerFunc
}

func (s *Server) routes() []routeDef {
	var metrics http.HandlerFunc
	if s.reg != nil {
		metrics = promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}).ServeHTTP
	}
	return []routeDef{
		{"GET /healthz", "healthz", false, s.healthz},
		{"GET /readyz", "readyz", false, s.readyz},
		{"GET /metrics", "metrics", true, metrics},
		{"GET /openapi.json", "openapi", true, s.openapi},
		{"GET /v1/indexes", "indexes", true, s.indexes},
		{"GET /v1/indexes/{name}", "describe", true, s.describe},
		{"POST /v1/indexes/{name}/lookup", "lookup", true, s.lookup},
		{"POST /v1/indexes/{name}/locate", "locate", true, s.locate},
		{"POST /v1/indexes/{name}/join", "join", true, s.join},
		{"POST /mcp", "mcp", true, s.serveMCP},
	}
}

// serveMCP answers the MCP protocol over streamable HTTP (package
// mcpserver's tools), bounded like every other request.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	s.mcp.ServeHTTP(w, r)
}

// Routes returns the server's routes ("METHOD /path"), as the OpenAPI
// document lists them.
func Routes() []string {
	var out []string
	for _, r := range (&Server{}).routes() {
		out = append(out, r.pattern)
	}
	return out
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Ready reports whether the warm-up is done.
func (s *Server) Ready() bool { return s.ready.Load() }

// route registers a handler with its metrics, logs, deadline and (when
// auth) the bearer token check.
func (s *Server) route(mux *http.ServeMux, pattern, endpoint string, auth bool, h http.HandlerFunc) {
	mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		s.m.inFlight.Inc()
		defer func() {
			s.m.inFlight.Dec()
			d := time.Since(start)
			s.m.latency.WithLabelValues(endpoint, statusClass(rec.status)).Observe(d.Seconds())
			s.log.LogAttrs(r.Context(), slog.LevelInfo, "request", slog.String("endpoint", endpoint), slog.String("method", r.Method),
				slog.String("path", r.URL.Path), slog.Int("status", rec.status), slog.Int64("bytes", rec.bytes),
				slog.Duration("elapsed", d), slog.String("remote", r.RemoteAddr))
		}()
		if auth && !s.authorized(r) {
			rec.Header().Set("WWW-Authenticate", `Bearer realm="ariadne"`)
			writeError(rec, http.StatusUnauthorized, "unauthorized", "a valid bearer token is required")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		h(rec, r.WithContext(ctx))
	}))
}

// guard answers requests the mux must not see: paths with dot segments or
// empty segments (the mux would redirect them elsewhere), and routes it does
// not know, with the API's error shape.
func (s *Server) guard(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath()
		if strings.Contains(p, "//") || hasDotSegment(p) {
			writeError(w, http.StatusBadRequest, "invalid argument", "the path must not hold '.', '..' or empty segments")
			return
		}
		if _, pattern := mux.Handler(r); pattern == "" {
			code, kind, msg := http.StatusNotFound, "not found", "no such endpoint: "+r.Method+" "+r.URL.Path
			// A known path with another method.
			probe := r.Clone(r.Context())
			for _, m := range []string{http.MethodGet, http.MethodPost} {
				probe.Method = m
				if _, pat := mux.Handler(probe); pat != "" && m != r.Method {
					code, kind, msg = http.StatusMethodNotAllowed, "usage", r.Method+" is not allowed on "+r.URL.Path
					w.Header().Set("Allow", m)
				}
			}
			writeError(w, code, kind, msg)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func hasDotSegment(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

func (s *Server) authorized(r *http.Request) bool {
	if len(s.cfg.Tokens) == 0 {
		return true
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	good := 0
	for _, t := range s.cfg.Tokens {
		good |= subtle.ConstantTimeCompare([]byte(tok), []byte(t))
	}
	return good == 1
}

// Warm runs the bounded warm-up (WarmTimeout): it opens and warms every row
// index of the store, then marks the server ready. A warm-up cut by its
// deadline still makes the server ready (the rest warms on use); an error
// reaching the store does not.
func (s *Server) Warm(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.WarmTimeout)
	defer cancel()
	start := time.Now()
	st, err := s.st.Warm(ctx, ariadne.WithWarmProgress(func(p ariadne.WarmProgress) {
		if p.Done == p.Total && ctx.Err() == nil { // a step of a row index's warm-up done
			s.log.Info("warm-up step", "row_index", p.RowIndex, "step", p.Step, "done", p.Done, "bytes_read", p.Bytes, "elapsed", time.Since(start))
		}
	}))
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		s.log.Error("warm-up failed", "error", err, "elapsed", time.Since(start))
		return err
	}
	s.log.Info("warm-up done", "row_indexes", st.RowIndexes, "requests", st.Requests, "bytes_read", st.BytesRead,
		"resident_groups", st.ResidentGroups, "groups", st.Groups, "resident_bytes", st.ResidentBytes, "shape_pages", st.ShapePages, "shape_bytes", st.ShapeBytes, "elapsed", time.Since(start), "complete", err == nil, "cache_bytes", s.st.CacheBytes(), "cache_budget", s.st.CacheBudget())
	s.limitMemory()
	s.ready.Store(true)
	return nil
}

// limitMemory sets the Go heap's soft limit to the cache budget plus
// MemorySlack (see Config.MemorySlack).
func (s *Server) limitMemory() {
	if s.cfg.MemorySlack <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	lim := s.st.CacheBudget() + s.cfg.MemorySlack
	if debug.SetMemoryLimit(lim) != lim {
		s.log.Info("memory limit", "bytes", lim)
	}
}

// poll refreshes the store's open indexes every PollInterval until ctx
// ends, retrying a failed warm-up on the way.
func (s *Server) poll(ctx context.Context) {
	if s.cfg.PollInterval < 0 {
		return
	}
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !s.ready.Load() {
			_ = s.Warm(ctx)
			continue
		}
		s.Refresh(ctx)
	}
}

// Refresh picks up newer index versions now (the poll does it every
// PollInterval).
func (s *Server) Refresh(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, max(s.cfg.PollInterval, s.cfg.RequestTimeout))
	defer cancel()
	if err := s.st.Refresh(ctx); err != nil {
		s.m.refreshes.WithLabelValues("error").Inc()
		s.log.Warn("refresh failed", "error", err)
		return
	}
	s.m.refreshes.WithLabelValues("ok").Inc()
	s.limitMemory()
}

// Serve serves on ln until ctx ends, then stops accepting connections and
// drains the requests in flight (at most ShutdownTimeout). It warms up in
// the background (see Warm) and polls the store. tlsCert and tlsKey, when
// set, serve HTTPS.
func (s *Server) Serve(ctx context.Context, ln net.Listener, tlsCert, tlsKey string) error {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       s.cfg.RequestTimeout + 5*time.Second,
		WriteTimeout:      s.cfg.RequestTimeout + 5*time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	bg, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		_ = s.Warm(bg)
		s.poll(bg)
	}()
	errc := make(chan error, 1)
	go func() {
		if tlsCert != "" {
			errc <- hs.ServeTLS(ln, tlsCert, tlsKey)
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	s.log.Info("serving", "addr", ln.Addr().String(), "store", s.st.URL(), "tls", tlsCert != "")
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down: draining requests in flight", "timeout", s.cfg.ShutdownTimeout)
	dctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(dctx)
	if e := <-errc; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	s.log.Info("stopped", "error", err)
	return err
}

// recorder keeps the status and size of a response.
type recorder struct {
	http.ResponseWriter
	status      int
	bytes       int64
	wroteHeader bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (to flush a
// streamed answer).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) Write(b []byte) (int, error) {
	r.wroteHeader = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func statusClass(code int) string {
	switch {
	case code < 300:
		return "2xx"
	case code < 400:
		return "3xx"
	case code < 500:
		return "4xx"
	}
	return "5xx"
}
