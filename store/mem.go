package store

import (
	"bytes"
	"context"
	"io"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memStore is the mem:// backend: a map guarded by one mutex. Every
// operation, conditional or not, runs under the mutex, so conditional writes
// and deletes are trivially atomic. ETags are a per-store generation counter,
// so every commit, even of identical bytes, gets a new ETag.
type memStore struct {
	url string

	mu      sync.Mutex
	objects map[string]*memObject
	gen     uint64 // last generation handed out
}

type memObject struct {
	data    []byte // never modified after commit
	modTime time.Time
	etag    string
}

// newMem returns an empty in-memory store.
func newMem(url string) *memStore {
	return &memStore{url: url, objects: make(map[string]*memObject)}
}

func (m *memStore) info(key string, o *memObject) ObjectInfo {
	return ObjectInfo{Key: key, Size: int64(len(o.data)), ModTime: o.modTime, ETag: o.etag}
}

func (m *memStore) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	if err := ValidKey(key); err != nil {
		return ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[key]
	if !ok {
		return ObjectInfo{}, notExist("stat", key)
	}
	return m.info(key, o), nil
}

func (m *memStore) NewRangeReader(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if err := ValidKey(key); err != nil {
		return nil, err
	}
	if err := checkRange(key, offset); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	o, ok := m.objects[key]
	m.mu.Unlock()
	if !ok {
		return nil, notExist("read", key)
	}
	data := o.data
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	data = data[offset:]
	if length >= 0 && length < int64(len(data)) {
		data = data[:length]
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (m *memStore) NewWriter(ctx context.Context, key string, opts *WriteOptions) (Writer, error) {
	if err := ValidKey(key); err != nil {
		return nil, err
	}
	if err := checkWriteOptions(key, opts); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &memWriter{m: m, ctx: ctx, key: key}
	if opts != nil {
		w.opts = *opts
	}
	return w, nil
}

type memWriter struct {
	m    *memStore
	ctx  context.Context
	key  string
	opts WriteOptions
	buf  bytes.Buffer
	done bool
}

func (w *memWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, errWriterDone
	}
	return w.buf.Write(p)
}

func (w *memWriter) Close() error {
	if w.done {
		return errWriterDone
	}
	w.done = true
	if err := w.ctx.Err(); err != nil {
		return err
	}
	m := w.m
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, exists := m.objects[w.key]
	switch {
	case w.opts.IfNotExist && exists:
		return precondition("write", w.key, "object exists")
	case w.opts.IfMatch != "" && !exists:
		return precondition("write", w.key, "object does not exist")
	case w.opts.IfMatch != "" && cur.etag != w.opts.IfMatch:
		return precondition("write", w.key, "ETag does not match")
	}
	m.gen++
	m.objects[w.key] = &memObject{
		data:    bytes.Clone(w.buf.Bytes()),
		modTime: time.Now(),
		etag:    "m" + strconv.FormatUint(m.gen, 10),
	}
	return nil
}

func (w *memWriter) Abort() error {
	w.done = true
	w.buf = bytes.Buffer{}
	return nil
}

func (m *memStore) Delete(ctx context.Context, key string, opts *DeleteOptions) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.objects[key]
	if !ok {
		return notExist("delete", key)
	}
	if opts != nil && opts.IfMatch != "" && cur.etag != opts.IfMatch {
		return precondition("delete", key, "ETag does not match")
	}
	delete(m.objects, key)
	return nil
}

// List takes a sorted snapshot of the matching keys under the mutex and
// yields from it, so it sees one consistent state and never blocks writers
// while the caller consumes it.
func (m *memStore) List(ctx context.Context, opts ListOptions) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		if err := validPrefix(opts.Prefix); err != nil {
			yield(ObjectInfo{}, err)
			return
		}
		if err := checkDelimiter(opts.Delimiter); err != nil {
			yield(ObjectInfo{}, err)
			return
		}
		m.mu.Lock()
		var infos []ObjectInfo
		for k, o := range m.objects {
			if strings.HasPrefix(k, opts.Prefix) {
				infos = append(infos, m.info(k, o))
			}
		}
		m.mu.Unlock()
		slices.SortFunc(infos, func(a, b ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
		for info, err := range delimit(infos, opts) {
			if err := ctx.Err(); err != nil {
				yield(ObjectInfo{}, err)
				return
			}
			if !yield(info, err) {
				return
			}
		}
	}
}

func (m *memStore) URL() string { return m.url }

func (m *memStore) Close() error { return nil }
