package fileindex

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// The query side never scans the main table per query. Everything a lookup
// needs from one version of the main table is immutable, so it is loaded
// once into a tableView and shared by every query of that version, in every
// goroutine:
//
//   - the file list: file id (int32) → filename and file_size;
//   - per exact column (regular, computed, exploded alias): value key →
//     sorted file ids, plus the ids of files whose cell is null (large or
//     without elements);
//   - per temporal column: value key → (file id, max_ts) entries, plus null
//     cells;
//   - per bloom and auto-bloom column: each file's parsed filter;
//   - per range column: each file's (min, max).
//
// Columns are loaded lazily, the first time a query needs them (one scan of
// that column's Parquet pages), under a per-column lock, so concurrent first
// queries load a column once; a load that fails (say, a cancelled context)
// is not cached and the next query retries it.
//
// When the version has a locate snapshot (locsnap.go), the file list and the
// columns come from it instead of the scan: exact and temporal columns as
// blocks of sorted value keys read on demand (lazyBlocks), the others whole.
// A view without a usable snapshot scans, and says why (tableView.note).
//
// A warm query therefore costs one List of the main table's _delta_log/
// (delta.Table.Snapshot, to learn the latest version) and nothing else;
// large-index tables cost one more List each, and reads only of the files
// that can hold candidate rows (see view_large.go).
//
// Memory, per loaded column (64-bit Go maps and slices):
//
//   - exact and temporal: ≈ 110 B per distinct value, measured by
//     BenchmarkLocate (map entry: 16 B key header + 24 B slice header +
//     bucket overhead; the key bytes, the value's canonical text, 1–20 B
//     for numbers, the string itself for strings; the posting slice's
//     allocation) + 4 B per further (value, file) posting (16 B + the
//     max_ts value, ≈ 40 B, for temporal entries);
//   - bloom: the filter itself, ≈ 1.2 B per distinct value at 1% FPR
//     (−ln 0.01/(ln 2)² = 9.59 bits), + 40 B per file;
//   - range: 2 interface values per file, ≈ 32 B + the values.
//
// The file list costs ≈ 90 B per file + the filename (≈ 60 B for a typical
// object URI). Example: 100,000 files with ten distinct long values each in
// one regular column: 100,000 × 150 B + 1,000,000 × 110 B ≈ 125 MB
// (BenchmarkLocate measures 124 MiB).
// A main table row never holds a large value set (those live in the large
// tables, §3.8), so an exact column is bounded by files × largeIndexLimit
// but in practice by the table size itself: a view is about as large as the
// decompressed main-table columns it loads. maxCachedViews versions are
// kept, so the budget is twice the largest view.

// maxCachedViews is the number of main-table versions whose views are kept:
// the latest, and the one before it for queries that started just before an
// update committed. Older views are dropped (queries holding them finish with
// their own reference).
const maxCachedViews = 2

// viewCache holds the handles and views the query side shares. The zero
// value is ready to use; it is safe for concurrent use.
type viewCache struct {
	mu    sync.Mutex
	main  *delta.Table            // opened main table, nil until it exists
	views map[int64]*tableView    // by main-table version
	large map[string]*delta.Table // opened large-index tables by column
	// noSnapshot makes new views ignore locate snapshots
	// (Options.IgnoreLocateSnapshots; tests also set it directly).
	noSnapshot bool
}

// tableView is the immutable in-memory view of one version of the main
// table. Its accessors are safe for concurrent use.
type tableView struct {
	snap *delta.Snapshot
	// snapStore is the locate-snapshot folder; nil: do not use snapshots.
	snapStore store.Store

	baseMu sync.Mutex
	based  bool
	// ls is the locate snapshot of the version (locsnap_read.go), opened
	// by base; nil when there is none or it cannot be used.
	ls    *locSnap
	files []string         // file id → filename
	ids   map[string]int32 // filename → file id
	sizes []int64          // file id → file_size (0 when null or absent)

	colMu sync.Mutex
	cols  map[string]*columnSlot // by table column name
	// note says why the view scans instead of using a snapshot (a missing,
	// stale or damaged one), "" when it does not.
	note string
	// keepRaw makes load keep the serialized bloom filters (the snapshot
	// writer encodes them).
	keepRaw bool
	// fedKinds, in a view built from an update's rows (locsnap_feed.go),
	// is the kind each column was built as.
	fedKinds map[string]viewKind
}

// newTableView returns an empty view of snap.
func newTableView(snap *delta.Snapshot) *tableView {
	return &tableView{snap: snap, cols: make(map[string]*columnSlot)}
}

// columnSlot loads one column once; mu serialises the loaders.
type columnSlot struct {
	mu  sync.Mutex
	col *viewColumn
}

// viewColumn is the loaded content of one main-table column; which fields
// are set depends on the column's kind.
type viewColumn struct {
	elem schema.Type // exact/temporal: element (value) type; range: T; bloom: nil

	postings postingMap                 // exact: value key → file ids
	temporal map[string][]temporalEntry // temporal: value key → entries
	nullIDs  []int32                    // exact/temporal: files with a null cell, ascending

	blooms    []*bloomBits // bloom: per file id, nil for a null cell
	rawBlooms [][]byte     // bloom, with tableView.keepRaw: the filters as stored
	ranges    []rangeCell  // range: per file id

	// lazy, set for an exact or temporal column of a locate snapshot,
	// replaces postings and temporal: its blocks are read as keys need
	// them.
	lazy *lazyBlocks
}

// temporalEntry is one (file, max_ts) of a temporal value.
type temporalEntry struct {
	file  int32
	maxTS any // nil when every timestamp of the value in the file was null
}

// rangeCell is one file's range; min and max are nil for a null cell.
type rangeCell struct{ min, max any }

// viewKind says how a main-table column is loaded.
type viewKind int

const (
	viewExact viewKind = iota
	viewTemporal
	viewBloom
	viewRange
)

// snapshotMain returns the latest snapshot of the main table, or nil when
// the index has none yet. Warm, it costs one List.
func (fi *FileIndex) snapshotMain(ctx context.Context) (*delta.Snapshot, error) {
	c := &fi.views
	c.mu.Lock()
	tbl := c.main
	c.mu.Unlock()
	if tbl == nil {
		t, err := delta.Open(ctx, store.Sub(fi.ix.Root(), fi.ix.Paths().Main))
		if errors.Is(err, delta.ErrNotATable) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("fileindex: opening the main table: %w", err)
		}
		c.mu.Lock()
		if c.main == nil {
			c.main = t
		}
		tbl = c.main
		c.mu.Unlock()
	}
	snap, err := tbl.Snapshot(ctx)
	if errors.Is(err, delta.ErrNotATable) {
		// The table was removed (the index was dropped and re-created):
		// forget the handle and its views.
		c.mu.Lock()
		if c.main == tbl {
			c.main, c.views = nil, nil
		}
		c.mu.Unlock()
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fileindex: reading the main table: %w", err)
	}
	return snap, nil
}

// currentView returns the view of the latest main-table version, nil when
// there is no main table.
func (fi *FileIndex) currentView(ctx context.Context) (*tableView, error) {
	snap, err := fi.snapshotMain(ctx)
	if err != nil || snap == nil {
		return nil, err
	}
	c := &fi.views
	c.mu.Lock()
	defer c.mu.Unlock()
	if v := c.views[snap.Version()]; v != nil && v.snap == snap {
		return v, nil
	}
	if c.views == nil {
		c.views = make(map[int64]*tableView)
	}
	v := newTableView(snap)
	if c.noSnapshot {
		v.note = "scan: locate snapshots disabled"
	} else {
		v.snapStore = fi.locSnapStore()
	}
	c.views[snap.Version()] = v
	if len(c.views) > maxCachedViews {
		versions := make([]int64, 0, len(c.views))
		for ver := range c.views {
			versions = append(versions, ver)
		}
		slices.Sort(versions)
		for _, ver := range versions[:len(versions)-maxCachedViews] {
			delete(c.views, ver)
		}
	}
	return v, nil
}

// hasColumn reports whether the main table has a top-level column.
func (v *tableView) hasColumn(name string) bool {
	_, ok := v.snap.Schema().Field(name)
	return ok
}

// base loads the file list once.
func (v *tableView) base(ctx context.Context) error {
	v.baseMu.Lock()
	defer v.baseMu.Unlock()
	if v.based {
		return nil
	}
	if v.snapStore != nil {
		ls, err := openLocSnap(ctx, v.snapStore, v.snap)
		var files []string
		var sizes []int64
		if err == nil {
			files, sizes, err = ls.files(ctx)
		}
		if err == nil {
			ids := make(map[string]int32, len(files))
			for i, name := range files {
				ids[name] = int32(i)
			}
			v.ls, v.files, v.ids, v.sizes, v.based = ls, files, ids, sizes, true
			return nil
		}
		if err := v.snapFailed(ctx, err); err != nil {
			return err
		}
	}
	cols := []string{FilenameColumn}
	withSize := v.hasColumn(FileSizeColumn)
	if withSize {
		cols = append(cols, FileSizeColumn)
	}
	var files []string
	var sizes []int64
	ids := make(map[string]int32)
	for row, err := range v.snap.Scan(ctx, delta.ScanOptions{Columns: cols}) {
		if err != nil {
			return fmt.Errorf("fileindex: scanning the main table: %w", err)
		}
		name, ok := row[0].(string)
		if !ok {
			continue // a row without filename cannot be located
		}
		if _, dup := ids[name]; dup {
			continue
		}
		var size int64
		if withSize {
			size, _ = row[1].(int64)
		}
		ids[name] = int32(len(files))
		files = append(files, name)
		sizes = append(sizes, size)
	}
	v.files, v.ids, v.sizes, v.based = files, ids, sizes, true
	return nil
}

// column returns the loaded column name of the given kind, loading it on
// first use. The caller has checked that the column exists.
func (v *tableView) column(ctx context.Context, name string, kind viewKind) (*viewColumn, error) {
	if err := v.base(ctx); err != nil {
		return nil, err
	}
	v.colMu.Lock()
	slot := v.cols[name]
	if slot == nil {
		slot = &columnSlot{}
		v.cols[name] = slot
	}
	v.colMu.Unlock()
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if slot.col != nil {
		return slot.col, nil
	}
	f, _ := v.snap.Schema().Field(name)
	if ls := v.snapshot(); ls != nil {
		if c := ls.column(f, kind); c != nil {
			col, err := ls.loadColumn(ctx, f, kind, c)
			if err := v.snapFailed(ctx, err); err != nil {
				return nil, err
			}
			if err == nil && col != nil {
				slot.col = col
				return col, nil
			}
		}
	}
	col, err := v.load(ctx, f, kind)
	if err != nil {
		return nil, err
	}
	slot.col = col
	return col, nil
}

// snapshot returns the view's locate snapshot, nil when it has none or
// stopped using it.
func (v *tableView) snapshot() *locSnap {
	v.colMu.Lock()
	defer v.colMu.Unlock()
	if v.note != "" {
		return nil
	}
	return v.ls
}

// snapFailed records why the snapshot cannot be used and returns nil, so
// that the caller falls back to the scan; a cancelled context is returned
// instead (it says nothing about the snapshot). err == nil is a no-op.
func (v *tableView) snapFailed(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	note := "scan: " + err.Error()
	if errors.Is(err, store.ErrNotExist) {
		note = fmt.Sprintf("scan: no locate snapshot of version %d", v.snap.Version())
	}
	v.colMu.Lock()
	if v.note == "" {
		v.note = note
	}
	v.colMu.Unlock()
	return nil
}

// rescan replaces a snapshot-backed column whose blocks turned out damaged
// by the scan's, after recording why.
func (v *tableView) rescan(ctx context.Context, name string, kind viewKind, old *viewColumn, cause error) (*viewColumn, error) {
	if err := v.snapFailed(ctx, cause); err != nil {
		return nil, err
	}
	v.colMu.Lock()
	slot := v.cols[name]
	v.colMu.Unlock()
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if slot.col != old {
		return slot.col, nil
	}
	f, _ := v.snap.Schema().Field(name)
	col, err := v.load(ctx, f, kind)
	if err != nil {
		return nil, err
	}
	slot.col = col
	return col, nil
}

// exactIDs returns, per key, the ids of the files whose exact column holds
// it, and the column the answer came from (another one when a damaged
// snapshot block made the view fall back to the scan).
func (v *tableView) exactIDs(ctx context.Context, name string, col *viewColumn, keys []string) (*viewColumn, [][]int32, error) {
	out := make([][]int32, len(keys))
	if col.lazy == nil {
		for i, k := range keys {
			out[i] = col.postings.get(k)
		}
		return col, out, nil
	}
	nf := len(v.files)
	err := col.lazy.find(ctx, keys, func(i int, p []byte) error {
		ids, n := readIDs(p, nf)
		if n == 0 {
			return fmt.Errorf("%w: %s: postings of column %q", errLocSnapCorrupt, col.lazy.snap.key, name)
		}
		out[i] = ids
		return nil
	})
	if err == nil {
		return col, out, nil
	}
	if col, err = v.rescan(ctx, name, viewExact, col, err); err != nil {
		return nil, nil, err
	}
	return v.exactIDs(ctx, name, col, keys)
}

// temporalEntries is exactIDs for a temporal column.
func (v *tableView) temporalEntries(ctx context.Context, name string, col *viewColumn, keys []string) (*viewColumn, [][]temporalEntry, error) {
	out := make([][]temporalEntry, len(keys))
	if col.lazy == nil {
		for i, k := range keys {
			out[i] = col.temporal[k]
		}
		return col, out, nil
	}
	nf := len(v.files)
	err := col.lazy.find(ctx, keys, func(i int, p []byte) error {
		es, ok := decodeTemporal(p, nf)
		if !ok {
			return fmt.Errorf("%w: %s: entries of column %q", errLocSnapCorrupt, col.lazy.snap.key, name)
		}
		out[i] = es
		return nil
	})
	if err == nil {
		return col, out, nil
	}
	if col, err = v.rescan(ctx, name, viewTemporal, col, err); err != nil {
		return nil, nil, err
	}
	return v.temporalEntries(ctx, name, col, keys)
}

// load scans (filename, column) once and builds the column's structure.
func (v *tableView) load(ctx context.Context, f schema.Field, kind viewKind) (*viewColumn, error) {
	col, err := newViewColumn(f, kind)
	if err != nil {
		return nil, err
	}
	for row, err := range v.snap.Scan(ctx, delta.ScanOptions{Columns: []string{FilenameColumn, f.Name}}) {
		if err != nil {
			return nil, fmt.Errorf("fileindex: scanning main-table column %q: %w", f.Name, err)
		}
		name, _ := row[0].(string)
		id, ok := v.ids[name]
		if !ok {
			continue
		}
		if err := col.add(id, len(v.files), row[1], kind, v.keepRaw); err != nil {
			return nil, fmt.Errorf("fileindex: %s in column %q: %w", name, f.Name, err)
		}
	}
	col.finish(len(v.files), kind)
	return col, nil
}

// newViewColumn returns the empty view column of main-table field f.
func newViewColumn(f schema.Field, kind viewKind) (*viewColumn, error) {
	col := &viewColumn{}
	switch kind {
	case viewExact, viewTemporal:
		a, ok := f.Type.(*schema.Array)
		if !ok {
			return nil, fmt.Errorf("fileindex: main-table column %q is %s, not an array", f.Name, f.Type)
		}
		col.elem = a.Element
		if kind == viewTemporal {
			st, ok := a.Element.(*schema.Struct)
			if !ok || len(st.Fields) != 2 {
				return nil, fmt.Errorf("fileindex: temporal column %q is %s, not array<struct<value,max_ts>>", f.Name, f.Type)
			}
			col.elem = st.Fields[0].Type
			col.temporal = make(map[string][]temporalEntry)
		} else {
			col.postings = newPostingMap()
		}
	case viewBloom:
		if f.Type != schema.Binary {
			return nil, fmt.Errorf("fileindex: bloom column %q is %s, not binary", f.Name, f.Type)
		}
	case viewRange:
		st, ok := f.Type.(*schema.Struct)
		if !ok || len(st.Fields) != 2 {
			return nil, fmt.Errorf("fileindex: range column %q is %s, not struct<min,max>", f.Name, f.Type)
		}
		col.elem = st.Fields[0].Type
	}
	return col, nil
}

// add records file id's cell (nfiles: the files known so far, > id).
func (col *viewColumn) add(id int32, nfiles int, cell any, kind viewKind, keepRaw bool) error {
	switch kind {
	case viewExact:
		arr, _ := cell.([]any)
		if cell == nil {
			col.nullIDs = append(col.nullIDs, id)
			return nil
		}
		if isIntKeyType(col.elem) {
			// Integer keys are formatted into one buffer and looked up
			// without a string: only a value new to the view allocates
			// its key (an update's feed adds every (value, file) pair).
			for _, e := range arr {
				if i, ok := pqrow.AsInt64(e); ok {
					col.postings.addInt(i, id)
				}
			}
			return nil
		}
		for _, e := range arr {
			if k, ok := valueKey(e, col.elem); ok {
				col.postings.add(k, id)
			}
		}
	case viewTemporal:
		arr, _ := cell.([]any)
		if cell == nil {
			col.nullIDs = append(col.nullIDs, id)
			return nil
		}
		for _, e := range arr {
			s, _ := e.([]any)
			if len(s) != 2 {
				continue
			}
			k := nullKey
			if s[0] != nil {
				var ok bool
				if k, ok = valueKey(s[0], col.elem); !ok {
					continue
				}
			}
			col.temporal[k] = append(col.temporal[k], temporalEntry{file: id, maxTS: s[1]})
		}
	case viewBloom:
		b, _ := cell.([]byte)
		if b == nil {
			return nil
		}
		bf, err := parseBloom(b)
		if err != nil {
			return fmt.Errorf("bloom filter: %w", err)
		}
		col.blooms = growTo(col.blooms, nfiles)
		col.blooms[id] = bf
		if keepRaw {
			col.rawBlooms = growTo(col.rawBlooms, nfiles)
			col.rawBlooms[id] = b
		}
	case viewRange:
		s, _ := cell.([]any)
		if len(s) == 2 {
			col.ranges = growTo(col.ranges, nfiles)
			col.ranges[id] = rangeCell{min: s[0], max: s[1]}
		}
	}
	return nil
}

// finish sizes the per-file slices to nfiles and orders the null list.
func (col *viewColumn) finish(nfiles int, kind viewKind) {
	switch kind {
	case viewBloom:
		col.blooms = growTo(col.blooms, nfiles)
		if col.rawBlooms != nil {
			col.rawBlooms = growTo(col.rawBlooms, nfiles)
		}
	case viewRange:
		col.ranges = growTo(col.ranges, nfiles)
	}
	slices.Sort(col.nullIDs)
	col.nullIDs = slices.Compact(col.nullIDs)
	col.postings.ints = nil
}

// growTo returns s extended with zero values to length n.
func growTo[T any](s []T, n int) []T {
	if len(s) >= n {
		return s
	}
	return append(s, make([]T, n-len(s))...)
}

// postingMap maps value keys to ascending file ids. The lists live in one
// slice indexed by the map, so that adding a file to a key already seen is
// one map lookup (a map of slices takes a lookup and an assignment): the
// feed of an update adds every (value, file) pair of the files it merges,
// tens of millions on a large table.
type postingMap struct {
	idx   map[string]int32
	lists [][]int32
	ints  map[int64]int32 // addInt's index of integer keys into lists, until finish
}

func newPostingMap() postingMap { return postingMap{idx: make(map[string]int32)} }

// get returns k's file ids (nil when absent).
func (p *postingMap) get(k string) []int32 {
	if i, ok := p.idx[k]; ok {
		return p.lists[i]
	}
	return nil
}

// add appends id to k's list (see appendID).
func (p *postingMap) add(k string, id int32) {
	if i, ok := p.idx[k]; ok {
		p.lists[i] = appendID(p.lists[i], id)
		return
	}
	p.idx[k] = int32(len(p.lists))
	p.lists = append(p.lists, []int32{id})
}

// addInt is add of integer i's key (its decimal string, valueKey of an
// integer column). An update's feed adds every (value, file) pair of the
// files it merges (9 M on the benchmark lake), mostly to values already
// seen: the ints map finds their list by the integer itself, without
// formatting the key or comparing strings, and the string map is touched
// once per value. The ints map lives until the column is finished.
func (p *postingMap) addInt(i int64, id int32) {
	if p.ints == nil {
		p.ints = make(map[int64]int32, len(p.idx))
	}
	if j, ok := p.ints[i]; ok {
		p.lists[j] = appendID(p.lists[j], id)
		return
	}
	var buf [24]byte
	k := strconv.AppendInt(buf[:0], i, 10)
	j, ok := p.idx[string(k)]
	if ok {
		p.lists[j] = appendID(p.lists[j], id)
	} else {
		j = int32(len(p.lists))
		p.idx[string(k)] = j
		p.lists = append(p.lists, []int32{id})
	}
	p.ints[i] = j
}

// isIntKeyType reports the integer types, whose valueKey is the decimal
// integer (strconv.FormatInt of pqrow.AsInt64).
func isIntKeyType(t schema.Type) bool {
	switch t {
	case schema.Byte, schema.Short, schema.Integer, schema.Long:
		return true
	}
	return false
}

// set sets k's list.
func (p *postingMap) set(k string, ids []int32) {
	if i, ok := p.idx[k]; ok {
		p.lists[i] = ids
		return
	}
	p.idx[k] = int32(len(p.lists))
	p.lists = append(p.lists, ids)
}

// nullKey is the temporal map key of a null value (§3.7: a null key forms
// its own entry; lookups never match it, since literals drop nulls).
const nullKey = "\x00null"

// appendID appends id unless it is already the last element (a file's
// array holds each value once; the check guards against duplicates).
func appendID(ids []int32, id int32) []int32 {
	if n := len(ids); n > 0 && ids[n-1] == id {
		return ids
	}
	return append(ids, id)
}

// fileSet is a set of file ids of one view.
type fileSet map[int32]struct{}

// intersect keeps the ids of s also in o.
func (s fileSet) intersect(o fileSet) fileSet {
	if len(o) < len(s) {
		s, o = o, s
	}
	out := make(fileSet, len(s))
	for id := range s {
		if _, ok := o[id]; ok {
			out[id] = struct{}{}
		}
	}
	return out
}

// names returns the filenames of the ids, sorted and distinct.
func (v *tableView) names(s fileSet) []string {
	out := make([]string, 0, len(s))
	for id := range s {
		out = append(out, v.files[id])
	}
	slices.SortFunc(out, cmp.Compare[string])
	return out
}
