package ariadne

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// Index is the handle of one index: its file index (Locate) and its row
// indexes (Lookup). It is safe for concurrent use. It keeps each row index
// it has served open, with its caches, until the Store is closed.
type Index struct {
	s   *Store
	reg *index.Index
	fi  *fileindex.FileIndex

	// types maps top-level column names to their Spark types (from the
	// stored schema; empty when the index has none).
	types atomic.Pointer[map[string]schema.Type]

	mu   sync.Mutex
	rows map[string]*rowHandle // by row index name
	defs []rowindex.Definition // as last listed
	// listed is when defs was read (zero: never).
	listed time.Time
	// listedMans are the manifests of the row indexes a listing found
	// when none was open (listRowIndexes), until rowIndex takes them: a
	// process's first lookup reads its row index's manifest once, in the
	// listing's round. mansAt is when that listing started.
	listedMans map[string]*rowindex.Manifest
	mansAt     time.Time
}

// listedManifestAge is how long after its listing started a manifest the
// listing read may open its row index instead of a read of the newest: the
// lookup that listed opens it at once; a later one reads again.
const listedManifestAge = 5 * time.Second

// rowHandle is the open version of one row index. ri is replaced, never
// mutated, when Refresh finds a newer manifest.
type rowHandle struct {
	ri atomic.Pointer[rowindex.RowIndex]
}

func newIndex(s *Store, reg *index.Index) *Index {
	ix := &Index{s: s, reg: reg, fi: fileindex.New(reg, fileindex.Options{}), rows: map[string]*rowHandle{}}
	ix.loadTypes()
	return ix
}

// Name returns the index's name.
func (ix *Index) Name() string { return ix.reg.Name() }

// Format returns the index's data file format (parquet, csv, json).
func (ix *Index) Format() string { return ix.reg.Format() }

func (ix *Index) loadTypes() {
	m := map[string]schema.Type{}
	if st, err := ix.reg.StoredSchema(); err == nil {
		for _, f := range st.Fields {
			m[f.Name] = f.Type
		}
	}
	ix.types.Store(&m)
}

func (ix *Index) columnType(col string) schema.Type { return (*ix.types.Load())[col] }

// folder is the index's folder, where its row indexes live.
func (ix *Index) folder() store.Store { return store.Sub(ix.reg.Root(), ix.reg.Paths().Dir) }

func (ix *Index) rowOptions() rowindex.Options {
	return rowindex.Options{Resolver: ix.s.res, CacheBytes: ix.s.opts.CacheBytes, PageCacheBytes: ix.s.opts.PageCacheBytes, ResidentBytes: ix.s.opts.ResidentBytes, ShapeBytes: ix.s.opts.ShapeBytes, VerifyKeys: ix.s.opts.VerifyKeys}
}

// openRowIndex opens the row index name with the Store's cache budget
// (with none set, Options.CacheBytes and the config's both 0, the row index
// sizes it to the version opened: rowindex.AutoCacheBytes).
//
// A first open (fromListing) takes the manifest a listing that just ran
// read, if any (listRowIndexes); a refresh always reads the newest.
func (ix *Index) openRowIndex(ctx context.Context, name string, fromListing bool) (*rowindex.RowIndex, error) {
	if fromListing {
		ix.mu.Lock()
		man := ix.listedMans[name]
		delete(ix.listedMans, name)
		recent := time.Since(ix.mansAt) < listedManifestAge
		if !recent {
			ix.listedMans = nil // stale: none will open
		}
		ix.mu.Unlock()
		if man != nil && recent {
			return rowindex.OpenManifest(ix.folder(), name, man, ix.rowOptions())
		}
	}
	return rowindex.Open(ctx, ix.folder(), name, ix.rowOptions())
}

// cacheBudget is the most memory the caches of the open row index ri may
// hold: its cache budget (as rowindex.Open set it), its resident groups',
// its learnt page shapes' and its page cache.
func (ix *Index) cacheBudget(ri *rowindex.RowIndex) int64 {
	b := ri.CacheBudget() + ri.ResidentBudget() + ri.ShapeBudget()
	switch p := ix.s.opts.PageCacheBytes; {
	case p == 0:
		b += rowindex.DefaultPageCacheBytes
	case p > 0:
		b += p
	}
	return b
}

// MaxAutoCacheBytes caps the cache budget AutoCacheBytes gives one row
// index: past it, set the budget (Options.CacheBytes, config key
// rowIndexCacheBytes) to what the machine can hold.
const MaxAutoCacheBytes = rowindex.MaxAutoCacheBytes

// AutoCacheBytes is the cache budget of a row index version when none is
// set (rowindex.AutoCacheBytes): its compressed fragments, the data files'
// metadata and the dictionaries lookups decode stay cached, at least
// rowindex.DefaultCacheBytes, at most MaxAutoCacheBytes.
func AutoCacheBytes(m *rowindex.Manifest) int64 { return rowindex.AutoCacheBytes(m) }

// RowIndexes returns the definitions of the index's row indexes, by name.
func (ix *Index) RowIndexes(ctx context.Context) ([]rowindex.Definition, error) {
	return ix.rowIndexDefs(ctx, false)
}

// rowIndexDefs returns the definitions as last listed, or lists them
// (listRowIndexes; forOpen as there).
func (ix *Index) rowIndexDefs(ctx context.Context, forOpen bool) ([]rowindex.Definition, error) {
	ix.mu.Lock()
	defs, listed := ix.defs, ix.listed
	ix.mu.Unlock()
	if !listed.IsZero() {
		return defs, nil
	}
	return ix.listRowIndexes(ctx, forOpen)
}

// listRowIndexes lists the row indexes. forOpen says a row index is to be
// opened next (a lookup's): if none is open yet, the manifests are read
// whole and kept for that open (listedMans); else only their heads.
func (ix *Index) listRowIndexes(ctx context.Context, forOpen bool) ([]rowindex.Definition, error) {
	start := time.Now()
	ix.mu.Lock()
	opened := !forOpen || len(ix.rows) > 0
	ix.mu.Unlock()
	var defs []rowindex.Definition
	var mans map[string]*rowindex.Manifest
	var err error
	if !opened {
		if mans, err = rowindex.ListManifests(ctx, ix.folder()); err == nil {
			for _, m := range mans {
				defs = append(defs, m.Definition)
			}
		} else {
			// A manifest whose body does not decode fails only the open
			// of its own row index, as when the listing reads heads.
			mans = nil
		}
	}
	if mans == nil {
		// No open to serve, or the open ones refresh themselves: the
		// definitions suffice.
		defs, err = rowindex.List(ctx, ix.folder())
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(defs, func(a, b rowindex.Definition) int { return cmpString(a.Name, b.Name) })
	ix.mu.Lock()
	ix.defs, ix.listed = defs, time.Now()
	if mans != nil && !start.Before(ix.mansAt) {
		// Not of row indexes opened meanwhile (their handles may be
		// newer), nor over a listing that started later.
		for name := range mans {
			if ix.rows[name] != nil {
				delete(mans, name)
			}
		}
		ix.listedMans, ix.mansAt = mans, start
	}
	ix.mu.Unlock()
	return defs, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// rowIndexFor returns the definition of the row index that serves req:
// the one req.RowIndex names (its key must be req.Column, if given), else,
// among those on key column req.Column (else the one named req.Column),
// the first by name that can answer the query — a sorted one for a range,
// one that covers every asked column and, for aggregates only, one with
// aggregates, when there is such a one. An empty column picks the only row
// index.
func (ix *Index) rowIndexFor(ctx context.Context, req LookupRequest) (rowindex.Definition, error) {
	col := req.Column
	isRange := req.Low != nil || req.High != nil || req.Range
	pick := func(defs []rowindex.Definition) (rowindex.Definition, bool, error) {
		if req.RowIndex != "" {
			for _, d := range defs {
				if d.Name != req.RowIndex {
					continue
				}
				if col != "" && col != d.Key && col != d.Name {
					return d, false, aerr.Invalid("row index %s is on column %s, not %s", d.Name, d.Key, col)
				}
				return d, true, nil
			}
			return rowindex.Definition{}, false, nil
		}
		if col == "" && len(defs) == 1 {
			return defs[0], true, nil
		}
		// The row indexes on key column col, if any (a row index named
		// like its key column is one of them); else the one named col.
		var onKey []rowindex.Definition
		for _, d := range defs {
			if d.Key == col {
				onKey = append(onKey, d)
			}
		}
		if len(onKey) == 0 {
			for _, d := range defs {
				if d.Name == col {
					return d, true, nil
				}
			}
			return rowindex.Definition{}, false, nil
		}
		best, bestScore := onKey[0], -1
		for _, d := range onKey {
			score := 0
			if !isRange || d.Kind == rowindex.KindSorted {
				score += 4 // can answer at all
			}
			if req.Columns != nil && covers(d, req.Columns) {
				score += 2 // no data file read
			}
			if req.NoRows && len(d.Aggregates) > 0 {
				score++
			}
			if score > bestScore {
				best, bestScore = d, score
			}
		}
		if isRange && best.Kind != rowindex.KindSorted {
			return best, false, fmt.Errorf("index %s: a range on %s needs a sorted row index, and its row indexes on %s are %s: %w",
				ix.Name(), col, col, describeDefs(onKey), rowindex.ErrBadQuery)
		}
		return best, true, nil
	}
	for attempt := 0; attempt < 2; attempt++ {
		var defs []rowindex.Definition
		var err error
		if attempt == 0 {
			defs, err = ix.rowIndexDefs(ctx, true)
		} else {
			// Maybe created since the last listing.
			defs, err = ix.listRowIndexes(ctx, true)
		}
		if err != nil {
			return rowindex.Definition{}, err
		}
		d, ok, err := pick(defs)
		if err != nil || ok {
			return d, err
		}
		if attempt == 1 && req.RowIndex != "" {
			return rowindex.Definition{}, ix.rowIndexNotFound(ctx, req.RowIndex)
		}
		if attempt == 1 && col == "" {
			return rowindex.Definition{}, fmt.Errorf("index %s: name the key column or the row index (it has %d row indexes): %w", ix.Name(), len(defs), rowindex.ErrBadQuery)
		}
	}
	return rowindex.Definition{}, fmt.Errorf("index %s has no row index on %q: %w", ix.Name(), col, rowindex.ErrNotFound)
}

// covers reports whether every column in cols is the key or a cover
// column of d.
func covers(d rowindex.Definition, cols []string) bool {
	for _, c := range cols {
		if c != d.Key && !slices.Contains(d.Cover, c) {
			return false
		}
	}
	return true
}

// describeDefs lists row indexes as "name (kind)", for messages.
func describeDefs(defs []rowindex.Definition) string {
	parts := make([]string, len(defs))
	for i, d := range defs {
		parts[i] = fmt.Sprintf("%s (%s)", d.Name, d.Kind)
	}
	return strings.Join(parts, ", ")
}

// rowIndex returns the open handle of the row index name, opening it on
// first use.
func (ix *Index) rowIndex(ctx context.Context, name string) (*rowindex.RowIndex, error) {
	ix.mu.Lock()
	h := ix.rows[name]
	ix.mu.Unlock()
	if h != nil {
		return h.ri.Load(), nil
	}
	ri, err := ix.openRowIndex(ctx, name, true)
	if err != nil {
		return nil, err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if h := ix.rows[name]; h != nil {
		return h.ri.Load(), nil
	}
	h = &rowHandle{}
	h.ri.Store(ri)
	ix.rows[name] = h
	return ri, nil
}

// Versions returns the manifest version served of each row index opened so
// far, by name.
func (ix *Index) Versions() map[string]int64 {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	out := make(map[string]int64, len(ix.rows))
	for n, h := range ix.rows {
		out[n] = h.ri.Load().Manifest().Version
	}
	return out
}

// Refresh picks up what other processes committed since the handle opened
// or last refreshed: the index metadata (new index columns, schema), the
// list of row indexes, and the newest manifest of every open row index. A
// row index whose manifest changed is opened anew (and warmed, with
// WithWarmOnRefresh) and then replaces the old handle: queries in flight
// finish on the version they started with. A row index dropped meanwhile
// is closed. The file index needs no refresh: Locate reads its newest
// version on every call.
func (ix *Index) Refresh(ctx context.Context) error {
	if err := ix.reg.RefreshMetadata(ctx); err != nil {
		return err
	}
	ix.loadTypes()
	return ix.refreshRowIndexes(ctx)
}

func (ix *Index) refreshRowIndex(ctx context.Context, name string) error {
	ix.mu.Lock()
	h := ix.rows[name]
	ix.mu.Unlock()
	if h == nil {
		return nil
	}
	cur := h.ri.Load()
	// Opening reads only the manifest (one list and, in the same round, the
	// newest manifest's copy); the caches of a handle are allocated as they
	// fill.
	next, err := ix.openRowIndex(ctx, name, false)
	if errors.Is(err, rowindex.ErrNotFound) {
		ix.mu.Lock()
		if ix.rows[name] == h {
			delete(ix.rows, name)
		}
		ix.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	if next.Manifest().Version == cur.Manifest().Version {
		return nil
	}
	if ix.s.opts.WarmOnRefresh {
		// The page shapes the old version and the other row indexes
		// learnt serve the files they share: only new files' pages are
		// read, once.
		ix.adoptShapes(next)
		if _, err := next.Warm(ctx); err != nil && ctx.Err() == nil {
			return err
		}
	}
	h.ri.CompareAndSwap(cur, next)
	return nil
}

// WarmStats is the storage work of a warm-up.
type WarmStats struct {
	RowIndexes int   `json:"row_indexes"` // row indexes warmed
	Requests   int64 `json:"requests"`    // storage requests
	BytesRead  int64 `json:"bytes_read"`
	// Groups is the row indexes' fragment row groups, ResidentGroups those
	// kept decoded for point lookups (config rowIndexResidentBytes), in
	// ResidentBytes of memory.
	Groups         int   `json:"groups"`
	ResidentGroups int   `json:"resident_groups"`
	ResidentBytes  int64 `json:"resident_bytes"`
	// ShapePages is the data pages whose shapes the row indexes learnt
	// (config rowIndexShapeBytes), in ShapeBytes of memory.
	ShapePages int   `json:"shape_pages"`
	ShapeBytes int64 `json:"shape_bytes"`
	// ByRowIndex is each row index's share, by name (Index.Warm only).
	ByRowIndex map[string]WarmStats `json:"by_row_index,omitempty"`
}

func (w *WarmStats) add(o WarmStats) {
	w.RowIndexes += o.RowIndexes
	w.Requests += o.Requests
	w.BytesRead += o.BytesRead
	w.Groups += o.Groups
	w.ResidentGroups += o.ResidentGroups
	w.ResidentBytes += o.ResidentBytes
	w.ShapePages += o.ShapePages
	w.ShapeBytes += o.ShapeBytes
}

// WarmProgress reports a Warm's advance through one row index: the row
// index's own report (its step, "fragments", "footers", "resident" or
// "shapes", Done of Total units of it, the bytes read so far) with its
// name.
type WarmProgress struct {
	RowIndex string
	rowindex.WarmProgress
}

// WarmOption configures Warm.
type WarmOption func(*warmConfig)

type warmConfig struct {
	progress func(WarmProgress)
}

// WithWarmProgress makes Warm report its advance to fn (one call at a
// time; a slow fn slows Warm).
func WithWarmProgress(fn func(WarmProgress)) WarmOption {
	return func(c *warmConfig) { c.progress = fn }
}

// adoptShapes gives ri the page shapes the index's open row index handles
// learnt (rowindex.RowIndex.AdoptShapes: only for the same data files), so
// that row indexes over the same files read each page once to learn it.
func (ix *Index) adoptShapes(ri *rowindex.RowIndex) {
	if ri.ShapeBudget() <= 0 {
		return
	}
	ix.mu.Lock()
	others := make([]*rowindex.RowIndex, 0, len(ix.rows))
	for _, h := range ix.rows {
		others = append(others, h.ri.Load())
	}
	ix.mu.Unlock()
	for _, o := range others {
		ri.AdoptShapes(o)
	}
}

// Warm opens every row index of the index and loads its caches: every
// fragment row group and every data file's footer and offset index (within
// the cache budget), so that the first lookups pay no cold reads; within
// the shape budget (WithShapeBytes, config rowIndexShapeBytes), it also
// loads saved shape files and learns the shapes of the data pages lookups
// may read in parts (by default only of files on local stores: see
// rowindex.Options.ShapeBytes).
func (ix *Index) Warm(ctx context.Context, opts ...WarmOption) (WarmStats, error) {
	var cfg warmConfig
	for _, o := range opts {
		o(&cfg)
	}
	var st WarmStats
	if ix.Format() != "parquet" {
		return st, nil
	}
	defs, err := ix.listRowIndexes(ctx, true) // each opened next
	if err != nil {
		return st, err
	}
	for _, d := range defs {
		ri, err := ix.rowIndex(ctx, d.Name)
		if err != nil {
			return st, err
		}
		var ropts []rowindex.WarmOption
		if fn := cfg.progress; fn != nil {
			name := d.Name
			ropts = append(ropts, rowindex.WithWarmProgress(func(p rowindex.WarmProgress) {
				fn(WarmProgress{RowIndex: name, WarmProgress: p})
			}))
		}
		ix.adoptShapes(ri)
		c, err := ri.Warm(ctx, ropts...)
		if err != nil {
			st.add(WarmStats{Requests: c.Requests, BytesRead: c.BytesRead})
			return st, err
		}
		one := WarmStats{RowIndexes: 1, Requests: c.Requests, BytesRead: c.BytesRead}
		one.ResidentGroups, one.Groups, one.ResidentBytes = ri.ResidentGroups()
		one.ShapePages, one.ShapeBytes = ri.LearntShapes()
		st.add(one)
		if st.ByRowIndex == nil {
			st.ByRowIndex = map[string]WarmStats{}
		}
		st.ByRowIndex[d.Name] = one
	}
	return st, nil
}

// SavedShapes is what SaveShapes wrote: per row index, and in all.
type SavedShapes struct {
	// Files counts the shape files written, Pages the page shapes in
	// them, Bytes their size.
	Files int   `json:"shape_files"`
	Pages int   `json:"shape_pages"`
	Bytes int64 `json:"shape_file_bytes"`
	// Existing counts the data files whose shape file was saved before.
	Existing int `json:"shape_files_existing"`
	// Missing counts the pages lookups may read in parts whose shape was
	// not known (not saved: a Warm that reads the pages for their shapes —
	// by default over local files — learns them first).
	Missing    int                    `json:"shape_pages_missing"`
	ByRowIndex map[string]SavedShapes `json:"by_row_index,omitempty"`
}

// SaveShapes persists, for each row index, the page shapes its handle
// learnt (by Warm, within the shape budget, or by lookups) as shape files
// beside the row index (rowindex.RowIndex.SaveShapes), so that a fresh
// process reads light keys' values in parts from its first lookup. Run
// Warm first.
func (ix *Index) SaveShapes(ctx context.Context) (SavedShapes, error) {
	var all SavedShapes
	if ix.Format() != "parquet" {
		return all, nil
	}
	defs, err := ix.listRowIndexes(ctx, false)
	if err != nil {
		return all, err
	}
	for _, d := range defs {
		ri, err := ix.rowIndex(ctx, d.Name)
		if err != nil {
			return all, err
		}
		r, err := ri.SaveShapes(ctx)
		one := SavedShapes{Files: r.Files, Pages: r.Pages, Bytes: r.Bytes, Existing: r.Existing, Missing: r.Missing}
		all.Files, all.Pages, all.Bytes = all.Files+one.Files, all.Pages+one.Pages, all.Bytes+one.Bytes
		all.Existing, all.Missing = all.Existing+one.Existing, all.Missing+one.Missing
		if all.ByRowIndex == nil {
			all.ByRowIndex = map[string]SavedShapes{}
		}
		all.ByRowIndex[d.Name] = one
		if err != nil {
			return all, err
		}
	}
	return all, nil
}

// Description describes an index: the registry's summary and each row index.
type Description struct {
	index.Summary
	RowIndexes []RowIndexInfo `json:"row_indexes"`
	// Quarantined are the tracked files updates set aside (their index
	// values do not fit the main table's column types), with the reason;
	// `update --retry-quarantined` tries them again.
	Quarantined []fileindex.QuarantinedFile `json:"quarantined"`
}

// Quarantined returns the tracked files updates set aside (see
// fileindex.QuarantinedFile).
func (ix *Index) Quarantined(ctx context.Context) ([]fileindex.QuarantinedFile, error) {
	return ix.fi.Quarantined(ctx)
}

// Describe returns the index's summary and its row indexes.
func (ix *Index) Describe(ctx context.Context) (*Description, error) {
	sum, err := ix.reg.Catalog().Describe(ctx, ix.Name())
	if err != nil {
		return nil, err
	}
	d := &Description{Summary: sum, RowIndexes: []RowIndexInfo{}}
	if d.Quarantined, err = ix.fi.Quarantined(ctx); err != nil {
		return nil, err
	}
	defs, err := ix.RowIndexes(ctx)
	if err != nil {
		return nil, err
	}
	for _, def := range defs {
		ri, err := ix.rowIndex(ctx, def.Name)
		if errors.Is(err, rowindex.ErrNotFound) {
			continue // dropped since listed
		}
		if err != nil {
			return nil, err
		}
		d.RowIndexes = append(d.RowIndexes, ix.rowIndexInfoWithShapes(ctx, ri.Manifest()))
	}
	return d, nil
}

// UpdateResult is what Update did.
type UpdateResult struct {
	// File is the file index's update.
	File fileindex.UpdateResult
	// RowIndexes are the row indexes' builds, by name.
	RowIndexes map[string]rowindex.BuildStats
}

// Update indexes the tracked files that are not indexed yet: the file index
// first, then every row index (which also forgets files the index no longer
// tracks, and those the file index skipped as vanished). It then refreshes
// the handle, so its next queries serve the new versions.
func (ix *Index) Update(ctx context.Context) (*UpdateResult, error) {
	return ix.UpdateWith(ctx, UpdateOptions{})
}

// UpdateOptions configure UpdateWith.
type UpdateOptions struct {
	// Engine computes the new files' per-file summaries: "duckdb" (here,
	// the default) or "spark" (Apache Spark through Spark Connect at
	// SparkRemote; "": the config keys engine and sparkRemote). Either way
	// the index is written here, under its lock, and is the same index.
	// On Spark, the row indexes' new entries are computed there too, except
	// for row indexes with cover columns or aggregates (built here).
	// See docs/spark-engine.md.
	Engine, SparkRemote string
	// SparkSummaryTables (with Engine spark) has Spark write the per-file
	// summaries as Delta tables in the index's folder, read back here and
	// deleted, instead of streaming them back
	// (fileindex.UpdateOptions.SummaryTables): Spark then needs write
	// access to the index's folder.
	SparkSummaryTables bool
	// RetryQuarantined indexes the quarantined files again.
	RetryQuarantined bool
}

// UpdateWith is Update with options.
func (ix *Index) UpdateWith(ctx context.Context, opts UpdateOptions) (*UpdateResult, error) {
	eng, err := ix.s.engineFor(ctx, "update", opts.Engine, opts.SparkRemote)
	if err != nil {
		return nil, err
	}
	fopts := fileindex.UpdateOptions{RetryQuarantined: opts.RetryQuarantined}
	if eng != nil {
		fopts.Summaries = eng
		fopts.SummaryTables = opts.SparkSummaryTables
	} else if opts.SparkSummaryTables {
		return nil, aerr.Invalid("update: SparkSummaryTables needs the spark engine")
	}
	res, err := ix.fi.Update(ctx, fopts)
	if err != nil {
		return nil, err
	}
	out := &UpdateResult{File: res}
	skipped := make([]string, len(res.Skipped))
	for i, s := range res.Skipped {
		skipped[i] = s.URI
	}
	var ropts []BuildOption
	if eng != nil {
		// The row indexes' new entries on the same engine, where it can
		// build them (rowindex.WithEngineWhereSupported).
		ropts = append(ropts, rowindex.WithEngineWhereSupported(eng, 0))
	}
	if out.RowIndexes, err = ix.UpdateRowIndexes(ctx, skipped, ropts...); err != nil {
		return nil, err
	}
	return out, ix.Refresh(ctx)
}

// isIndexGone reports whether err says the index no longer exists.
func isIndexGone(err error) bool {
	return errors.Is(err, aerr.ErrIndexNotFound) || errors.Is(err, aerr.ErrMetadataMissingOrCorrupt)
}

// cacheBudgets returns the cache budgets of the open row indexes, summed.
func (ix *Index) cacheBudgets() int64 {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var n int64
	for _, h := range ix.rows {
		n += ix.cacheBudget(h.ri.Load())
	}
	return n
}

// cacheBytes returns the bytes held by the caches of the open row indexes.
func (ix *Index) cacheBytes() int64 {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var n int64
	for _, h := range ix.rows {
		b, _ := h.ri.Load().CacheStats()
		n += b
	}
	return n
}
