package ariadne

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/sparkengine"
	"github.com/ariadne-go/ariadne/store"
)

// Options configure a Store. The zero value is the defaults.
type Options struct {
	// Config holds the tunables (config.Defaults() when zero).
	Config config.Config
	// CacheBytes is each open row index's metadata cache budget
	// (0: Config's RowIndexCacheBytes, else sized to each row index version:
	// rowindex.AutoCacheBytes).
	CacheBytes int64
	// PageCacheBytes is each open row index's decoded page cache budget
	// (0: Config's RowIndexPageCacheBytes, else the rowindex default;
	// negative: none).
	PageCacheBytes int64
	// ResidentBytes bounds the fragment row groups each warmed row index
	// keeps decoded for point lookups (0: Config's RowIndexResidentBytes,
	// else sized to each row index version: rowindex.AutoResidentBytes;
	// negative: none).
	ResidentBytes int64
	// ShapeBytes bounds the page shapes each warmed row index learns by
	// reading once every data page that lookups may read in parts (0:
	// Config's RowIndexShapeBytes; 0 there too: rowindex.DefaultShapeBytes,
	// the pages read only of files on local stores; negative: none). See
	// rowindex.Options.ShapeBytes.
	ShapeBytes int64
	// VerifyKeys makes row index lookups read the key column of every row
	// they return and check it still holds the key (or Config's
	// RowIndexVerifyKeys); see rowindex.Options.VerifyKeys.
	VerifyKeys bool
	// WarmOnRefresh warms a row index opened by Refresh (fragments and data
	// file footers) before it replaces the old version, so the first queries
	// on the new version are not cold.
	WarmOnRefresh bool
	// SQL bounds LookupSQL (memory, connections, rows, time).
	SQL SQLOptions
	// Wrap, when set, wraps every store the handle opens (the store root
	// and each data file bucket), inside the request counters: to inject
	// latency in a benchmark (store.NewFaulty), or to add tracing.
	Wrap func(store.Store) store.Store
}

// Option sets a field of Options.
type Option func(*Options)

// WithConfig sets the configuration (index tunables and cache budgets).
func WithConfig(c config.Config) Option { return func(o *Options) { o.Config = c } }

// WithCacheBytes sets each row index's metadata cache budget.
func WithCacheBytes(n int64) Option { return func(o *Options) { o.CacheBytes = n } }

// WithPageCacheBytes sets each row index's decoded page cache budget
// (negative: no page cache).
func WithPageCacheBytes(n int64) Option { return func(o *Options) { o.PageCacheBytes = n } }

// WithResidentBytes sets the budget of the fragment row groups each
// warmed row index keeps decoded for point lookups (negative: none).
func WithResidentBytes(n int64) Option { return func(o *Options) { o.ResidentBytes = n } }

// WithShapeBytes sets the budget of the page shapes each warmed row index
// learns (Options.ShapeBytes; 0: the default; negative: none).
func WithShapeBytes(n int64) Option { return func(o *Options) { o.ShapeBytes = n } }

// WithVerifyKeys makes row index lookups read and check the key column of
// every row they return (Options.VerifyKeys).
func WithVerifyKeys(on bool) Option { return func(o *Options) { o.VerifyKeys = on } }

// WithStoreWrap wraps every store the handle opens (see Options.Wrap).
func WithStoreWrap(f func(store.Store) store.Store) Option { return func(o *Options) { o.Wrap = f } }

// WithWarmOnRefresh makes Refresh warm a new row index version before it
// is served.
func WithWarmOnRefresh(b bool) Option { return func(o *Options) { o.WarmOnRefresh = b } }

// Store is an open store root and the indexes under it. It is safe for
// concurrent use; Index handles are cached, so asking for an index twice
// returns the same handle.
type Store struct {
	url    string
	opts   Options
	root   *store.Counting
	dataMu sync.Mutex
	data   []*store.Counting // one per data file store the resolver opens
	res    *store.Resolver
	cat    *index.Catalog
	mu     sync.Mutex
	idx    map[string]*Index
	close  sync.Once

	sparkMu sync.Mutex
	spark   map[string]*sparkengine.Engine // by Spark Connect URL

	// sql is the database of LookupSQL, opened on first use.
	sqlMu  sync.Mutex
	sql    *duck.Sandbox
	closed bool
}

// Open opens the store root at storeURL (file:///dir, s3://bucket/prefix,
// gs://, azblob://, mem://). It reads nothing yet.
func Open(ctx context.Context, storeURL string, opts ...Option) (*Store, error) {
	var o Options
	for _, f := range opts {
		f(&o)
	}
	if o.Config == (config.Config{}) {
		o.Config = config.Defaults()
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = o.Config.RowIndexCacheBytes
	}
	if o.PageCacheBytes == 0 {
		o.PageCacheBytes = o.Config.RowIndexPageCacheBytes
	}
	if o.ResidentBytes == 0 {
		o.ResidentBytes = o.Config.RowIndexResidentBytes
	}
	if o.ShapeBytes == 0 {
		o.ShapeBytes = o.Config.RowIndexShapeBytes
	}
	o.VerifyKeys = o.VerifyKeys || o.Config.RowIndexVerifyKeys
	raw, err := store.Open(ctx, storeURL)
	if err != nil {
		return nil, err
	}
	if o.Wrap != nil {
		raw = o.Wrap(raw)
	}
	s := &Store{url: storeURL, opts: o, root: store.NewCounting(raw), idx: map[string]*Index{}}
	// Data files may live in many buckets: one counter per bucket, summed
	// by Stats.
	s.res = store.NewResolver(store.ResolverOptions{Wrap: func(st store.Store) store.Store {
		if o.Wrap != nil {
			st = o.Wrap(st)
		}
		c := store.NewCounting(st)
		s.dataMu.Lock()
		s.data = append(s.data, c)
		s.dataMu.Unlock()
		return c
	}})
	s.cat = index.NewCatalog(s.root, index.Options{Config: o.Config, Resolver: s.res})
	return s, nil
}

// URL returns the store root URL Open was given.
func (s *Store) URL() string { return s.url }

// Close releases the store and every index handle. Queries in flight may
// fail; handles must not be used afterwards.
func (s *Store) Close() error {
	var err error
	s.close.Do(func() {
		errs := []error{s.closeSQL(), s.res.Close(), s.root.Close()}
		s.sparkMu.Lock()
		for _, e := range s.spark {
			errs = append(errs, e.Close())
		}
		s.spark = nil
		s.sparkMu.Unlock()
		err = errors.Join(errs...)
	})
	return err
}

// Indexes returns the names of the indexes in the store, sorted.
func (s *Store) Indexes(ctx context.Context) ([]string, error) {
	names, err := s.cat.List(ctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// Index returns the handle of the index name, opening it on first use. A
// name that is not a valid index name (path-like, blank) is an
// aerr.ErrInvalidArgument; an index that does not exist is
// aerr.ErrIndexNotFound.
func (s *Store) Index(ctx context.Context, name string) (*Index, error) {
	if err := index.ValidateName(name); err != nil {
		return nil, err
	}
	s.mu.Lock()
	ix := s.idx[name]
	s.mu.Unlock()
	if ix != nil {
		return ix, nil
	}
	reg, err := s.cat.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	ix = newIndex(s, reg)
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.idx[name]; old != nil {
		return old, nil
	}
	s.idx[name] = ix
	return ix, nil
}

// open returns the handles opened so far.
func (s *Store) open() []*Index {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Index, 0, len(s.idx))
	for _, ix := range s.idx {
		out = append(out, ix)
	}
	return out
}

// Refresh refreshes every open index handle (see Index.Refresh) and forgets
// the handles of indexes removed from the store.
func (s *Store) Refresh(ctx context.Context) error {
	var errs []error
	for _, ix := range s.open() {
		err := ix.Refresh(ctx)
		if err != nil && isIndexGone(err) {
			s.mu.Lock()
			if s.idx[ix.Name()] == ix {
				delete(s.idx, ix.Name())
			}
			s.mu.Unlock()
			continue
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Warm opens every row index of every index in the store and loads its
// caches (fragments, data file footers), until ctx ends. It returns the
// storage work done.
func (s *Store) Warm(ctx context.Context, opts ...WarmOption) (WarmStats, error) {
	var total WarmStats
	names, err := s.Indexes(ctx)
	if err != nil {
		return total, err
	}
	for _, n := range names {
		ix, err := s.Index(ctx, n)
		if err != nil {
			return total, err
		}
		st, err := ix.Warm(ctx, opts...)
		total.add(st)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// StorageStats is the storage work done through a Store since Open.
type StorageStats struct {
	// Index is the work on the store root (index metadata, file index
	// tables, row index manifests and fragments); Data on data files.
	Index, Data store.Stats
}

// Stats returns the storage requests and bytes done through the store.
func (s *Store) Stats() StorageStats {
	s.dataMu.Lock()
	data := slices.Clone(s.data)
	s.dataMu.Unlock()
	var d store.Stats
	for _, c := range data {
		d = addStats(d, c.Snapshot())
	}
	return StorageStats{Index: s.root.Snapshot(), Data: d}
}

func addStats(a, b store.Stats) store.Stats {
	o := func(x, y store.OpStats) store.OpStats {
		return store.OpStats{Requests: x.Requests + y.Requests, Bytes: x.Bytes + y.Bytes}
	}
	return store.Stats{Stat: o(a.Stat, b.Stat), Read: o(a.Read, b.Read), Write: o(a.Write, b.Write),
		Delete: o(a.Delete, b.Delete), List: o(a.List, b.List), Total: o(a.Total, b.Total)}
}

// Versions returns, per open index, the manifest version served of each of
// its open row indexes.
func (s *Store) Versions() map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for _, ix := range s.open() {
		out[ix.Name()] = ix.Versions()
	}
	return out
}

// CacheBytes returns the bytes held by the caches of every open row index
// (metadata, fragments, decoded pages): the memory the handles hold beyond
// a small constant per index.
func (s *Store) CacheBytes() int64 {
	var n int64
	for _, ix := range s.open() {
		n += ix.cacheBytes()
	}
	return n
}

// CacheBudget returns the most memory the caches of every open row index
// may hold (metadata and fragment cache, decoded pages): with CacheBytes,
// the bound on the memory the handles hold beyond a small constant per
// index. While a refresh replaces a row index, the old version's caches
// live on until its last query ends (see the package documentation).
func (s *Store) CacheBudget() int64 {
	var n int64
	for _, ix := range s.open() {
		n += ix.cacheBudgets()
	}
	return n
}

// IndexInfo is an entry of ListIndexes: an index's name, data file format
// and row index definitions.
type IndexInfo struct {
	Name       string             `json:"name"`
	Format     string             `json:"format"`
	RowIndexes []RowIndexListItem `json:"row_indexes"`
}

// RowIndexListItem is a row index as ListIndexes names it: what a lookup
// can ask of it.
type RowIndexListItem struct {
	Name  string   `json:"name"`
	Key   string   `json:"key"`
	Kind  string   `json:"kind"`
	Cover []string `json:"cover"`
}

// ListIndexes lists the store's indexes with their row indexes, sorted by
// name. An index removed or unreadable while listed is left out (Index
// says why).
func (s *Store) ListIndexes(ctx context.Context) ([]IndexInfo, error) {
	names, err := s.Indexes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]IndexInfo, 0, len(names))
	for _, n := range names {
		ix, err := s.Index(ctx, n)
		if err != nil {
			continue
		}
		info := IndexInfo{Name: n, Format: ix.Format(), RowIndexes: []RowIndexListItem{}}
		defs, err := ix.RowIndexes(ctx)
		if err != nil {
			return nil, err
		}
		for _, d := range defs {
			info.RowIndexes = append(info.RowIndexes, RowIndexListItem{Name: d.Name, Key: d.Key, Kind: string(d.Kind), Cover: nonNil(d.Cover)})
		}
		out = append(out, info)
	}
	return out, nil
}
