package store

import (
	"context"
	"io"
	"iter"
	"sync/atomic"
)

// Op is a kind of Store request, as Counting counts them and Faulty
// matches them.
type Op int

// The kinds of request.
const (
	OpStat   Op = iota // Stat
	OpRead             // NewRangeReader
	OpWrite            // a Writer's Close: one commit attempt
	OpDelete           // Delete
	OpList             // List
	numOps
)

func (o Op) String() string {
	switch o {
	case OpStat:
		return "stat"
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	case OpDelete:
		return "delete"
	case OpList:
		return "list"
	}
	return "op?"
}

// OpStats counts one kind of request.
type OpStats struct {
	Requests int64 // calls that reached the wrapped store, failed or not
	Bytes    int64 // bytes returned by readers (OpRead) or committed (OpWrite)
}

// Stats is a snapshot of a Counting store's counters.
type Stats struct {
	Stat, Read, Write, Delete, List OpStats
	Total                           OpStats // sum of the above
}

// Op returns the counters of one kind of request.
func (s Stats) Op(o Op) OpStats {
	switch o {
	case OpStat:
		return s.Stat
	case OpRead:
		return s.Read
	case OpWrite:
		return s.Write
	case OpDelete:
		return s.Delete
	case OpList:
		return s.List
	}
	return OpStats{}
}

// Sub returns s minus an earlier snapshot prev: what happened in between.
func (s Stats) Sub(prev Stats) Stats {
	d := func(a, b OpStats) OpStats { return OpStats{a.Requests - b.Requests, a.Bytes - b.Bytes} }
	return Stats{
		Stat: d(s.Stat, prev.Stat), Read: d(s.Read, prev.Read), Write: d(s.Write, prev.Write),
		Delete: d(s.Delete, prev.Delete), List: d(s.List, prev.List), Total: d(s.Total, prev.Total),
	}
}

// Counting wraps a Store and counts its requests and bytes per kind of
// request (see Op), which is Ariadne's main cost metric. It is safe for
// concurrent use; the counters are atomic, so a Snapshot taken while
// requests run may split them, but one taken after they return is exact.
//
// What counts as one request: every Stat, NewRangeReader and Delete call,
// every iteration of a List (however many pages the backend fetches; S3
// returns 1000 keys per page), and every Writer.Close (a multipart upload
// counts once). These are the calls Ariadne makes; a backend may turn one
// into more HTTP requests (gocloud's S3 Delete stats the object first). Aborted writes count nothing. Read bytes are counted as the reader
// returns them, so a reader closed early counts only what was read.
type Counting struct {
	s Store
	c [numOps]struct{ requests, bytes atomic.Int64 }
}

// NewCounting returns s wrapped with zeroed counters.
func NewCounting(s Store) *Counting { return &Counting{s: s} }

// Snapshot returns the counters now.
func (c *Counting) Snapshot() Stats {
	var ops [numOps]OpStats
	var total OpStats
	for i := range ops {
		ops[i] = OpStats{Requests: c.c[i].requests.Load(), Bytes: c.c[i].bytes.Load()}
		total.Requests += ops[i].Requests
		total.Bytes += ops[i].Bytes
	}
	return Stats{Stat: ops[OpStat], Read: ops[OpRead], Write: ops[OpWrite], Delete: ops[OpDelete], List: ops[OpList], Total: total}
}

// Reset sets every counter to zero.
func (c *Counting) Reset() {
	for i := range c.c {
		c.c[i].requests.Store(0)
		c.c[i].bytes.Store(0)
	}
}

func (c *Counting) count(o Op) { c.c[o].requests.Add(1) }

// Stat implements Store.
func (c *Counting) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	c.count(OpStat)
	return c.s.Stat(ctx, key)
}

// NewRangeReader implements Store.
func (c *Counting) NewRangeReader(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	c.count(OpRead)
	r, err := c.s.NewRangeReader(ctx, key, offset, length)
	if err != nil {
		return nil, err
	}
	return &countingReader{ReadCloser: r, bytes: &c.c[OpRead].bytes}, nil
}

type countingReader struct {
	io.ReadCloser
	bytes *atomic.Int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.bytes.Add(int64(n))
	return n, err
}

// NewWriter implements Store.
func (c *Counting) NewWriter(ctx context.Context, key string, opts *WriteOptions) (Writer, error) {
	w, err := c.s.NewWriter(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return &countingWriter{Writer: w, c: c}, nil
}

type countingWriter struct {
	Writer
	c *Counting
	n int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.Writer.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *countingWriter) Close() error {
	w.c.count(OpWrite)
	err := w.Writer.Close()
	if err == nil {
		w.c.c[OpWrite].bytes.Add(w.n)
	}
	return err
}

// Delete implements Store.
func (c *Counting) Delete(ctx context.Context, key string, opts *DeleteOptions) error {
	c.count(OpDelete)
	return c.s.Delete(ctx, key, opts)
}

// List implements Store.
func (c *Counting) List(ctx context.Context, opts ListOptions) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		c.count(OpList)
		c.s.List(ctx, opts)(yield)
	}
}

// URL implements Store.
func (c *Counting) URL() string { return c.s.URL() }

// Close closes the wrapped store.
func (c *Counting) Close() error { return c.s.Close() }
