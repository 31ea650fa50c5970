// Package s3test runs an in-process, S3-compatible server on loopback for
// tests: github.com/johannesboyne/gofakes3 with its in-memory backend,
// behind a thin layer that completes its conditional-request support, so
// that the store package's S3 code path (conditional writes, conditional
// deletes, multipart uploads) is exercised against real HTTP.
//
// What gofakes3 v1.2.0 does itself, and what this layer adds:
//
//   - PUT with If-None-Match: * or If-Match: gofakes3 checks them inside its
//     backend's write lock, atomically. Kept as is.
//   - DELETE with If-Match: ignored by gofakes3. Added here: 412
//     PreconditionFailed on an ETag mismatch, 404 NoSuchKey for a missing
//     object (as AWS answers).
//   - CompleteMultipartUpload with If-None-Match: * or If-Match: ignored by
//     gofakes3. Added here with the same answers as PUT (412, or 404 for
//     If-Match on a missing object, as AWS answers).
//   - Ranged GET: gofakes3 sends the whole object's x-amz-checksum-* header
//     with a part of it, which the AWS SDK then rejects as a checksum
//     mismatch. AWS sends no such header for a range; this layer drops it.
//
// To make a check and the change it guards one atomic step, the layer runs
// every request that changes an object (PUT of an object, DELETE of an
// object, POST completing a multipart upload) under one mutex, checks its
// conditions against the backend inside it, and only then hands the request
// to gofakes3. Part uploads and reads are not serialised.
package s3test

import (
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Bucket is the name of the bucket every Server creates.
const Bucket = "test-bucket"

// Server is a running fake S3 endpoint on 127.0.0.1.
type Server struct {
	// Endpoint is the server's base URL, http://127.0.0.1:port.
	Endpoint string
	// Backend is gofakes3's in-memory backend, for tests that want to look
	// behind the HTTP API.
	Backend *s3mem.Backend

	srv      *httptest.Server
	requests atomic.Int64
	cut      atomic.Pointer[cutRule]
}

// cutRule: GET responses of matching keys end after After body bytes.
type cutRule struct {
	match func(key string) bool
	after int
}

// CutReads makes the server drop the connection of every GET of an object
// whose key match accepts after sending after bytes of its body (headers,
// Content-Length included, are sent in full): the network failing
// mid-read, as the client sees it. A nil match restores normal reads.
func (s *Server) CutReads(match func(key string) bool, after int) {
	if match == nil {
		s.cut.Store(nil)
		return
	}
	s.cut.Store(&cutRule{match: match, after: after})
}

// Start starts a server with one empty bucket (Bucket) and stops it when
// the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(Bucket); err != nil {
		tb.Fatalf("s3test: create bucket: %v", err)
	}
	fake := gofakes3.New(backend, gofakes3.WithoutVersioning())
	s := &Server{Backend: backend}
	s.srv = httptest.NewServer(&conditional{next: fake.Server(), backend: backend, requests: &s.requests, cut: &s.cut})
	tb.Cleanup(s.srv.Close)
	s.Endpoint = s.srv.URL
	return s
}

// URL returns an s3:// URL for the bucket, below the key prefix (may be
// ""), with the parameters that point gocloud.dev's S3 driver at this
// server: endpoint, path-style addressing, a fixed region and anonymous
// credentials (so the AWS SDK never looks for real ones). extra is added
// to the query (e.g. "part_size=5242880"), may be "".
func (s *Server) URL(prefix, extra string) string {
	q := url.Values{}
	q.Set("endpoint", s.Endpoint)
	q.Set("use_path_style", "true")
	q.Set("region", "us-east-1")
	q.Set("anonymous", "true")
	u := "s3://" + Bucket
	if prefix != "" {
		u += "/" + strings.Trim(prefix, "/")
	}
	u += "?" + q.Encode()
	if extra != "" {
		u += "&" + extra
	}
	return u
}

// Requests returns the number of HTTP requests the server has received.
func (s *Server) Requests() int64 { return s.requests.Load() }

// conditional is the layer described in the package comment.
type conditional struct {
	next     http.Handler
	backend  *s3mem.Backend
	requests *atomic.Int64
	cut      *atomic.Pointer[cutRule]
	mu       sync.Mutex // held while a request changes an object
}

func (c *conditional) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.requests.Add(1)
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	q := r.URL.Query()
	_, hasUploadID := q["uploadId"]
	var mutates, check bool
	switch {
	case key == "":
	case r.Method == http.MethodPut && !hasUploadID:
		mutates = true // gofakes3 checks PUT conditions itself
	case r.Method == http.MethodDelete && !hasUploadID:
		mutates, check = true, true
	case r.Method == http.MethodPost && hasUploadID:
		mutates, check = true, true
	}
	if !mutates {
		if r.Method == http.MethodGet && r.Header.Get("Range") != "" {
			w = &dropChecksums{ResponseWriter: w}
		}
		if cr := c.cut.Load(); cr != nil && r.Method == http.MethodGet && key != "" && cr.match(key) {
			w = &cutter{ResponseWriter: w, left: cr.after}
		}
		c.next.ServeHTTP(w, r)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if check {
		if status, code, msg := c.checkConditions(bucket, key, r.Header); status != 0 {
			writeError(w, status, code, msg, r.URL.Path)
			return
		}
	}
	c.next.ServeHTTP(w, r)
}

// checkConditions evaluates If-None-Match and If-Match against the object
// as it is now; it returns status 0 when the request may proceed.
func (c *conditional) checkConditions(bucket, key string, h http.Header) (status int, code, msg string) {
	ifMatch, ifNoneMatch := h.Get("If-Match"), h.Get("If-None-Match")
	if ifMatch == "" && ifNoneMatch == "" {
		return 0, "", ""
	}
	obj, err := c.backend.HeadObject(bucket, key)
	exists := err == nil
	if err != nil && !gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchKey) {
		return http.StatusInternalServerError, "InternalError", err.Error()
	}
	if ifNoneMatch != "" {
		if ifNoneMatch != "*" {
			return http.StatusNotImplemented, "NotImplemented", "If-None-Match supports only *"
		}
		if exists {
			return http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold"
		}
	}
	if ifMatch != "" {
		if !exists {
			return http.StatusNotFound, "NoSuchKey", "The specified key does not exist."
		}
		if strings.Trim(ifMatch, `"`) != hex.EncodeToString(obj.Hash) {
			return http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold"
		}
	}
	return 0, "", ""
}

// writeError writes an S3 XML error response.
func writeError(w http.ResponseWriter, status int, code, msg, resource string) {
	type s3Error struct {
		XMLName  xml.Name `xml:"Error"`
		Code     string
		Message  string
		Resource string
	}
	body, err := xml.Marshal(s3Error{Code: code, Message: msg, Resource: resource})
	if err != nil {
		panic(fmt.Sprintf("s3test: marshal error: %v", err)) // static struct: cannot fail
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	w.Write([]byte(xml.Header))
	w.Write(body)
}

// dropChecksums removes x-amz-checksum-* headers from a response.
type dropChecksums struct {
	http.ResponseWriter
	wrote bool
}

func (d *dropChecksums) WriteHeader(status int) {
	if !d.wrote {
		d.wrote = true
		h := d.Header()
		for k := range h {
			if strings.HasPrefix(strings.ToLower(k), "x-amz-checksum-") {
				delete(h, k)
			}
		}
	}
	d.ResponseWriter.WriteHeader(status)
}

func (d *dropChecksums) Write(p []byte) (int, error) {
	if !d.wrote {
		d.WriteHeader(http.StatusOK)
	}
	return d.ResponseWriter.Write(p)
}

// cutter passes on left body bytes, then aborts the response: net/http
// closes the connection without finishing the body.
type cutter struct {
	http.ResponseWriter
	left int
}

func (c *cutter) Write(p []byte) (int, error) {
	if len(p) <= c.left {
		c.left -= len(p)
		return c.ResponseWriter.Write(p)
	}
	if c.left > 0 {
		c.ResponseWriter.Write(p[:c.left])
	}
	// Headers and the bytes so far reach the client before the cut.
	http.NewResponseController(c.ResponseWriter).Flush()
	panic(http.ErrAbortHandler)
}

// Unwrap lets http.ResponseController reach the server's writer.
func (c *cutter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// Unwrap lets http.ResponseController reach the server's writer.
func (d *dropChecksums) Unwrap() http.ResponseWriter { return d.ResponseWriter }
