package store

import (
	"context"
	"errors"
	"io"
	"iter"
	"sync"
	"time"
)

// ErrCrashed is returned by every write and delete of a Faulty store after
// its simulated crash (Faults.CrashAfterWrites).
var ErrCrashed = errors.New("store: crashed (injected fault)")

// Faults configures a Faulty store. The zero value injects nothing.
type Faults struct {
	// Latency is added before every request (Stat, NewRangeReader,
	// Writer.Close, Delete, List); a cancelled context cuts it short.
	Latency time.Duration
	// Errors are injected by rule; the first matching rule that fires
	// decides the request's error.
	Errors []FaultRule
	// ShortReads, if > 0, makes every Read of a reader return at most this
	// many bytes, as network readers may: callers must loop (io.ReadFull).
	ShortReads int
	// CrashAfterWrites, if > 0, simulates a process that dies right after its
	// k-th committed write: once k Writer.Close calls have succeeded, every
	// further Writer.Close and Delete fails with ErrCrashed and nothing more
	// reaches the wrapped store. Reads, Stat and List keep working so a test
	// can inspect what survived. Commits are serialised while this is set,
	// so exactly k writes commit even under concurrency.
	CrashAfterWrites int
}

// FaultRule injects Err into the requests it matches.
type FaultRule struct {
	Op Op // kind of request
	// Key selects keys (for List, the prefix); nil selects all.
	Key func(key string) bool
	// Nth, if > 0, fires only on the Nth matching request (counting from
	// 1); if 0, on every matching request.
	Nth int
	// Err is returned (for OpWrite, from Writer.Close, after the inner
	// write was aborted, so nothing is committed; for OpList, yielded
	// first).
	Err error
}

// Faulty wraps a Store and injects latency, errors, short reads and a
// crash, deterministically (rules count matching calls in the order they
// arrive). It is meant for tests and benchmarks and is safe for concurrent
// use.
type Faulty struct {
	s Store
	f Faults

	mu      sync.Mutex
	matches []int // per rule: matching requests seen
	commits int   // successful Writer.Close calls
	crashed bool

	commitMu sync.Mutex // serialises commits while CrashAfterWrites > 0
}

// NewFaulty returns s wrapped with the faults f.
func NewFaulty(s Store, f Faults) *Faulty {
	return &Faulty{s: s, f: f, matches: make([]int, len(f.Errors))}
}

// Crashed reports whether the simulated crash has happened.
func (f *Faulty) Crashed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.crashed
}

// Commits returns how many writes have committed through f.
func (f *Faulty) Commits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.commits
}

// before runs the latency and rules for one request.
func (f *Faulty) before(ctx context.Context, op Op, key string) error {
	if f.f.Latency > 0 {
		t := time.NewTimer(f.f.Latency)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var fire error
	for i, r := range f.f.Errors {
		if r.Op != op || (r.Key != nil && !r.Key(key)) {
			continue
		}
		f.matches[i]++
		if fire == nil && (r.Nth == 0 || r.Nth == f.matches[i]) {
			fire = &OpError{Op: op.String(), Key: key, Err: r.Err}
		}
	}
	return fire
}

func (f *Faulty) crashErr(op Op, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.crashed {
		return &OpError{Op: op.String(), Key: key, Err: ErrCrashed}
	}
	return nil
}

// Stat implements Store.
func (f *Faulty) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	if err := f.before(ctx, OpStat, key); err != nil {
		return ObjectInfo{}, err
	}
	return f.s.Stat(ctx, key)
}

// NewRangeReader implements Store.
func (f *Faulty) NewRangeReader(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if err := f.before(ctx, OpRead, key); err != nil {
		return nil, err
	}
	r, err := f.s.NewRangeReader(ctx, key, offset, length)
	if err != nil || f.f.ShortReads <= 0 {
		return r, err
	}
	return &shortReader{ReadCloser: r, max: f.f.ShortReads}, nil
}

type shortReader struct {
	io.ReadCloser
	max int
}

func (r *shortReader) Read(p []byte) (int, error) {
	if len(p) > r.max {
		p = p[:r.max]
	}
	return r.ReadCloser.Read(p)
}

// NewWriter implements Store.
func (f *Faulty) NewWriter(ctx context.Context, key string, opts *WriteOptions) (Writer, error) {
	w, err := f.s.NewWriter(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return &faultyWriter{Writer: w, f: f, ctx: ctx, key: key}, nil
}

type faultyWriter struct {
	Writer
	f   *Faulty
	ctx context.Context
	key string
}

func (w *faultyWriter) Close() error {
	f := w.f
	if err := f.before(w.ctx, OpWrite, w.key); err != nil {
		w.Writer.Abort()
		return err
	}
	if f.f.CrashAfterWrites > 0 {
		f.commitMu.Lock()
		defer f.commitMu.Unlock()
	}
	if err := f.crashErr(OpWrite, w.key); err != nil {
		w.Writer.Abort()
		return err
	}
	if err := w.Writer.Close(); err != nil {
		return err
	}
	f.mu.Lock()
	f.commits++
	if f.f.CrashAfterWrites > 0 && f.commits >= f.f.CrashAfterWrites {
		f.crashed = true
	}
	f.mu.Unlock()
	return nil
}

// Delete implements Store.
func (f *Faulty) Delete(ctx context.Context, key string, opts *DeleteOptions) error {
	if err := f.before(ctx, OpDelete, key); err != nil {
		return err
	}
	if f.f.CrashAfterWrites > 0 {
		f.commitMu.Lock()
		defer f.commitMu.Unlock()
	}
	if err := f.crashErr(OpDelete, key); err != nil {
		return err
	}
	return f.s.Delete(ctx, key, opts)
}

// List implements Store.
func (f *Faulty) List(ctx context.Context, opts ListOptions) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		if err := f.before(ctx, OpList, opts.Prefix); err != nil {
			yield(ObjectInfo{}, err)
			return
		}
		f.s.List(ctx, opts)(yield)
	}
}

// URL implements Store.
func (f *Faulty) URL() string { return f.s.URL() }

// Close closes the wrapped store.
func (f *Faulty) Close() error { return f.s.Close() }
