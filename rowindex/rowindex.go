package rowindex

import (
	"context"
	"errors"
	"fmt"
	"github.com/parquet-go/parquet-go"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/store"
)

// DefaultCoalesceGap is the default gap under which two byte ranges of one
// data file are fetched as one read. On object storage a request costs
// 10–20 ms to first byte while one stream moves ≈100 MB/s, so reading up to
// 1–2 MB of unneeded bytes is cheaper than one more request in the tail; on
// local disk (≈0.1 ms, ≈2 GB/s) the break-even is ≈200 KiB and 1 MiB costs
// at most ≈0.5 ms. 1 MiB also makes the pages of one key in the different
// column chunks of a row group of up to ~1 MiB per column one read.
const DefaultCoalesceGap = 1 << 20

// LocalCoalesceGap is the coalescing gap for local stores (file://, mem://):
// a request costs ≈0.1 ms while a disk streams ≈1 GB/s, so the break-even
// gap is ≈100 KiB; 64 KiB keeps the bytes read close to the pages needed.
const LocalCoalesceGap = 64 << 10

// BatchedCoalesceGap is the coalescing gap for stores that read the ranges
// of one file in a batch (store.BatchesRanges: the file store, which copies
// them out of a mapping of the file, without a request of its own per
// range): a range then costs about as much as copying a few KiB, and a
// light lookup of arrival-order files, whose pages of ≈6 KiB lie tens of
// KiB apart, read 3.4 MB in 46 ranges at 64 KiB and 0.75 MB in 113 at
// 16 KiB, for ≈15 % less CPU. Where such a store does pread a range (a file
// over 1 GiB, or grown past its mapping), 16 KiB of copying still costs
// less than the ≈4 µs of a pread(2).
const BatchedCoalesceGap = 16 << 10

// CoalesceGapFor returns the break-even coalescing gap of a store whose
// requests cost latency before the first byte and whose streams then move
// bandwidth bytes per second: reading latency × bandwidth unneeded bytes
// costs as much as one more request. The result is kept within
// [LocalCoalesceGap, 4 MiB] (beyond 4 MiB a single range holds most row
// groups' columns anyway). S3 (≈15 ms, ≈100 MB/s per stream) gives ≈1.5 MB.
func CoalesceGapFor(latency time.Duration, bandwidth float64) int64 {
	g := int64(latency.Seconds() * bandwidth)
	return min(max(g, LocalCoalesceGap), 4<<20)
}

// Options configure a RowIndex handle.
type Options struct {
	// Resolver resolves data file URIs; required for lookups that read data.
	Resolver Resolver
	// CacheBytes is the metadata cache budget (0: AutoCacheBytes of the
	// version opened, at least DefaultCacheBytes).
	CacheBytes int64
	// PageCacheBytes bounds the cache of decoded data pages, shared by the
	// handle's lookups (0: DefaultPageCacheBytes; negative: no page
	// cache). Only lookups that decode at most pageCacheMaxPages pages fill
	// it, so one hot key's scan does not flush the pages of many light
	// keys.
	PageCacheBytes int64
	// ResidentBytes bounds the fragment row groups Warm keeps decoded for
	// point lookups (resident.go; 0: AutoResidentBytes of the version
	// opened; negative: none). Only Warm fills it.
	ResidentBytes int64
	// ShapeBytes bounds the page shapes Warm keeps (shapes.go): those of
	// saved shape files (SaveShapes), then of the data pages that lookups
	// may read in parts, each read once (a read of those column chunks,
	// about a scan of the lake), so light keys read parts of pages from the
	// first lookup on. 0: DefaultShapeBytes, and Warm reads the pages only
	// of data files on local stores (file://, mem://), where that scan
	// takes seconds; from an object store, where it would take minutes, it
	// only loads shape files. Negative: Warm keeps none; lookups still
	// learn shapes as they read pages whole.
	ShapeBytes int64
	// VerifyKeys reads the key column of every row a lookup returns and
	// checks it still holds the key (a *FileChangedError if not): a guard
	// against a data file rewritten in place with the same size and the
	// same footer, which the footer check cannot see. Without it the key
	// column's values are the key's, from the index (for boolean, integer
	// and byte-array key columns; float and INT96 keys are always read):
	// one column fewer to read and decompress a row — on an arrival-order
	// lake of ZSTD pages, 38 % of a light lookup's time.
	VerifyKeys bool
	// CoalesceGap is the coalescing gap of data reads. 0 picks per data
	// store: BatchedCoalesceGap for stores that batch a file's ranges (the
	// file store), LocalCoalesceGap for other file:// and mem:// stores,
	// DefaultCoalesceGap otherwise (see CoalesceGapFor). Negative coalesces
	// only overlapping or adjacent ranges.
	CoalesceGap int64
}

// RowIndex is an open row index. It is safe for concurrent use: lookups
// share the metadata cache and each carries its own accounting. It reads the
// manifest once at Open; Refresh picks up newer versions.
type RowIndex struct {
	st    store.Store
	name  string
	opts  Options
	cache *cache // metadata, dictionaries, compressed fragment groups
	// budget is the metadata cache's and decoded's together, as Open set
	// it (a Refresh keeps it).
	budget int64
	// decoded holds decoded fragment groups of recent lookups (≈100 bytes
	// per entry in Go memory), within a quarter of the budget.
	decoded *cache
	// pages holds decoded data pages (nil: no page cache).
	pages *pageCache
	// resident holds fragment row groups Warm decoded for point lookups
	// (resident.go).
	resident *residentSet

	mu  sync.RWMutex
	man *Manifest
	ids map[int32]*FileEntry
	// blockFiles: a file of man is FileEntry.Blocks (set with man: a
	// lookup asks, and the files are many).
	blockFiles bool

	// slowChunks counts the column chunks decoded by parquet-go rather
	// than the direct path, subCuts the pages cut from sub-page reads
	// (tests assert which path a file takes).
	slowChunks, subCuts atomic.Int64
	// inlineBatches counts the lookup batches read and decoded on the
	// caller's goroutine (inlineRead).
	inlineBatches atomic.Int64
	// residentStreams counts the entry streams whose every candidate
	// group was resident, loaded on the caller's goroutine
	// (newEntryStream).
	residentStreams atomic.Int64
	// shapeSeen remembers the SNAPPY pages read whole once: the second
	// read learns the page's shape (learnShape).
	shapeSeen *seenFilter
	// dictSeen remembers the dictionaries read in parts once: the second
	// lookup reads (and caches) the whole page (dictparts.go).
	dictSeen *seenFilter
	// shapes are the page shapes Warm learnt (shapes.go), within
	// shapeBytes (Options.ShapeBytes resolved: shapeBudget).
	shapes     *shapeSet
	shapeBytes int64
	// shapeList is the listing of the row index's shape files
	// (shapefile.go), taken once.
	shapeList shapeListing
	// inflated counts the bytes of data pages the direct path
	// decompressed (DecompressedBytes).
	inflated atomic.Int64
	// dictParts counts the dictionary entries read in parts
	// (dictparts.go).
	dictParts atomic.Int64
	// poisonFreed: buffers given back to the pools are overwritten first,
	// so a value that still points into one reads garbage (tests set it:
	// a lookup must still equal the full scan).
	poisonFreed bool
	// spreadReads: every lookup's reads and decoding go to other
	// goroutines, as a remote store's do, however few its bytes (tests set
	// it to cover that path on local files; inlineRead).
	spreadReads bool
	// batchRows, if set, replaces the constant batchRows as the rows an
	// iterator selects per batch (tests set it to cover many batches on
	// small files).
	batchRows int
	// batchBytes, if set, replaces the constant batchBytes (tests set it
	// to bound batches on small files).
	batchBytes int64
	// ints pools the integer columns of decoded fragment groups
	// (decodeGroupKey): *[]int64.
	ints sync.Pool
	// lens pools the decoded lengths of DELTA_LENGTH_BYTE_ARRAY pages
	// (decodeDirect): *[]int32.
	lens sync.Pool
	// vals pools the chunks' selected values of lookup batches
	// (getVals): *[]parquet.Value.
	vals sync.Pool
}

// valsPoolMin is the smallest value buffer worth pooling: a light key's
// chunk holds a few values, a hot key's batch millions (allocating them
// afresh per batch was a fifth of its garbage).
const valsPoolMin = 1 << 10

// getVals returns an empty value buffer of capacity at least n, pooled
// when one is.
func (ri *RowIndex) getVals(n int) []parquet.Value {
	if n >= valsPoolMin {
		if p, ok := ri.vals.Get().(*[]parquet.Value); ok && cap(*p) >= n {
			return (*p)[:0]
		}
	}
	return make([]parquet.Value, 0, n)
}

// putVals gives back a value buffer of getVals once nothing points into
// it: cleared, so that its values keep no bytes alive (poisoned in tests,
// so that a row still pointing into it reads garbage).
func (ri *RowIndex) putVals(v []parquet.Value) {
	if cap(v) < valsPoolMin {
		return
	}
	if ri.poisonFreed {
		poison := parquet.ByteArrayValue([]byte("poisoned"))
		for i := range v[:cap(v)] {
			v[:cap(v)][i] = poison
		}
	} else {
		clear(v)
	}
	p := v[:0] // not v itself: &v would move every caller's v to the heap
	ri.vals.Put(&p)
}

// getLens returns pooled storage for DELTA_LENGTH_BYTE_ARRAY lengths
// (length 0; nil when the pool is empty: deltaLengths allocates).
func (ri *RowIndex) getLens() []int32 {
	if p, ok := ri.lens.Get().(*[]int32); ok {
		return (*p)[:0]
	}
	return nil
}

// putLens gives getLens' storage back (nil is ignored), overwritten first
// when the index poisons freed buffers.
func (ri *RowIndex) putLens(b []int32) {
	if cap(b) == 0 {
		return
	}
	if ri.poisonFreed {
		for i := range b[:cap(b)] {
			b[:cap(b)][i] = -0x5a5a5a5a
		}
	}
	b = b[:0]
	ri.lens.Put(&b)
}

// getInts returns pooled storage for n int64s (length n).
func (ri *RowIndex) getInts(n int) []int64 {
	if p, ok := ri.ints.Get().(*[]int64); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]int64, n)
}

// putInts gives getInts' storage back, overwritten first when the index
// poisons freed buffers.
func (ri *RowIndex) putInts(b []int64) {
	if ri.poisonFreed {
		for i := range b[:cap(b)] {
			b[:cap(b)][i] = -0x5a5a5a5a5a5a5a5a
		}
	}
	b = b[:0]
	ri.ints.Put(&b)
}

// poisonFreedBuffers is set by this package's tests only: every RowIndex
// they open poisons the buffers it gives back (RowIndex.poisonFreed).
var poisonFreedBuffers = false

// Open opens the row index name under the index folder idx (ErrNotFound if
// it does not exist).
func Open(ctx context.Context, idx store.Store, name string, opts Options) (*RowIndex, error) {
	man, err := loadManifest(ctx, idx, name, new(meter))
	if err != nil {
		return nil, err
	}
	return open(idx, name, man, opts), nil
}

// OpenManifest opens the row index name under the index folder idx at
// manifest man, its newest version as ListManifests read it, without
// reading the manifest again (ErrNotFound for a nil or dropped one). The
// handle owns man: it must not be changed after. Refresh reads the newest
// version as for a handle Open opened.
func OpenManifest(idx store.Store, name string, man *Manifest, opts Options) (*RowIndex, error) {
	if man == nil || man.Dropped {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return open(idx, name, man, opts), nil
}

// open makes the handle of row index name at manifest man.
func open(idx store.Store, name string, man *Manifest, opts Options) *RowIndex {
	ri := &RowIndex{st: idx, name: name, opts: opts, poisonFreed: poisonFreedBuffers, shapeSeen: newSeenFilter(1 << 16), dictSeen: newSeenFilter(1 << 14),
		shapeBytes: shapeBudget(opts.ShapeBytes)}
	ri.shapes = newBudgetSet[pageKey, *pageShape](ri.shapeBytes)
	ri.useManifest(man)
	budget := opts.CacheBytes
	if budget <= 0 {
		budget = AutoCacheBytes(ri.Manifest())
	}
	ri.budget = budget
	ri.cache, ri.decoded = newCache(budget-budget/4), newCache(budget/4)
	switch rb := opts.ResidentBytes; {
	case rb == 0:
		ri.resident = newResidentSet(AutoResidentBytes(ri.Manifest()))
	default:
		ri.resident = newResidentSet(rb) // negative: none
	}
	switch pb := opts.PageCacheBytes; {
	case pb == 0:
		ri.pages = newPageCache(DefaultPageCacheBytes)
	case pb > 0:
		ri.pages = newPageCache(pb)
	}
	return ri
}

// Refresh reads the newest manifest version.
func (ri *RowIndex) Refresh(ctx context.Context) error {
	man, err := loadManifest(ctx, ri.st, ri.name, new(meter))
	if err != nil {
		return err
	}
	ri.useManifest(man)
	return nil
}

// useManifest makes man the handle's version, dropping what the caches
// hold of files and fragments it no longer lists.
func (ri *RowIndex) useManifest(man *Manifest) {
	ri.setManifest(man)
	// Shapes of files the new version dropped are never asked again.
	_, ids := ri.snapshot()
	ri.shapes.keepOnly(func(pk pageKey) bool { _, ok := ids[pk.id]; return ok })
	ri.shapeList.reset() // the version's files may have shape files now
	if ri.resident != nil {
		// Groups of fragments the new version dropped are never asked
		// again; an automatic budget follows the version.
		keepFragments(ri.resident, man.fragmentPaths())
		if ri.opts.ResidentBytes == 0 {
			ri.resident.setBudget(AutoResidentBytes(man))
		}
	}
}

func (ri *RowIndex) setManifest(man *Manifest) {
	ids := make(map[int32]*FileEntry, len(man.Files))
	for i := range man.Files {
		ids[man.Files[i].ID] = &man.Files[i]
	}
	blocks := false
	for i := range man.Files {
		blocks = blocks || man.Files[i].Blocks
	}
	ri.mu.Lock()
	ri.man, ri.ids, ri.blockFiles = man, ids, blocks
	ri.mu.Unlock()
}

// Manifest returns the manifest version the handle serves. The caller must
// not modify it.
func (ri *RowIndex) Manifest() *Manifest {
	ri.mu.RLock()
	defer ri.mu.RUnlock()
	return ri.man
}

func (ri *RowIndex) snapshot() (*Manifest, map[int32]*FileEntry) {
	man, ids, _ := ri.filesSnapshot()
	return man, ids
}

// filesSnapshot is snapshot, and whether a file of that version is a block
// file (FileEntry.Blocks).
func (ri *RowIndex) filesSnapshot() (*Manifest, map[int32]*FileEntry, bool) {
	ri.mu.RLock()
	defer ri.mu.RUnlock()
	return ri.man, ri.ids, ri.blockFiles
}

// CacheBudget returns the budget of the handle's metadata cache and
// decoded fragment groups (Options.CacheBytes, or AutoCacheBytes of the
// version Open read), the page cache's apart.
func (ri *RowIndex) CacheBudget() int64 { return ri.budget }

// ShapeBudget returns the budget of the page shapes Warm keeps
// (Options.ShapeBytes, DefaultShapeBytes when that is 0, and 0 when it is
// negative).
func (ri *RowIndex) ShapeBudget() int64 { return ri.shapeBytes }

// ResidentBudget returns the budget of the handle's resident fragment
// groups (Options.ResidentBytes, or AutoResidentBytes of the version Open
// read, and of each version a Refresh reads; 0 when there are none).
func (ri *RowIndex) ResidentBudget() int64 { return ri.resident.limit() }

// CacheStats returns the bytes and entries held by the caches: the
// metadata cache, decoded groups, the page cache, resident groups and the
// page shapes Warm learnt.
func (ri *RowIndex) CacheStats() (bytes int64, entries int) {
	b1, n1 := ri.cache.stats()
	b2, n2 := ri.decoded.stats()
	b4, n4 := ri.resident.stats()
	n5, b5 := ri.LearntShapes()
	var b3 int64
	var n3 int
	if ri.pages != nil {
		b3, n3 = ri.pages.stats()
	}
	return b1 + b2 + b3 + b4 + b5, n1 + n2 + n3 + n4 + n5
}

// DecompressedBytes returns the bytes of data pages that lookups through
// the direct page path decompressed since Open (what a warm lookup of a
// compressed lake spends most of its CPU on; benchmarks report it per
// lookup). Pages decoded by parquet-go's fallback are not counted.
func (ri *RowIndex) DecompressedBytes() int64 { return ri.inflated.Load() }

// DropCache empties the caches (the next lookups are cold).
func (ri *RowIndex) DropCache() {
	ri.cache.clear()
	ri.decoded.clear()
	ri.resident.clear()
	ri.shapes.clear()
	if ri.pages != nil {
		ri.pages.clear()
	}
}

// gapFor returns the coalescing gap for reads of st.
func (ri *RowIndex) gapFor(st store.Store) int64 {
	switch g := ri.opts.CoalesceGap; {
	case g < 0:
		return 0
	case g > 0:
		return g
	}
	if store.BatchesRanges(st) {
		return BatchedCoalesceGap
	}
	if localStore(st) {
		return LocalCoalesceGap
	}
	return DefaultCoalesceGap
}

// localStore reports whether st reads local files or memory (file://,
// mem://, the file store), where a request costs microseconds, not an
// object store's milliseconds.
func localStore(st store.Store) bool {
	u := st.URL()
	return store.BatchesRanges(st) || strings.HasPrefix(u, "file://") || strings.HasPrefix(u, "mem://")
}

// errFragmentGone: a fragment of the handle's manifest no longer exists (a
// Compact replaced it); Lookup refreshes the manifest and retries once. It
// is matched by a *FragmentError of a missing fragment: if the fragment is
// still missing after the refresh, that error (the row index is damaged)
// is what the caller gets.
var errFragmentGone = fmt.Errorf("%w: fragment missing (compacted away?)", ErrCorrupt)

// fragmentErr classifies an error of reading fragment fr: a missing,
// short or undecodable fragment is a *FragmentError; a storage failure,
// cancellation or anything else keeps its kind.
func (ri *RowIndex) fragmentErr(fr *FragmentEntry, err error) error {
	if err == nil {
		return nil
	}
	var fe *FragmentError
	if errors.As(err, &fe) || errors.Is(err, store.ErrStorage) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	reason := ""
	var fce *FileChangedError
	switch {
	case errors.Is(err, store.ErrNotExist):
		reason = fragMissing
	case errors.As(err, &fce) && !strings.HasPrefix(fce.Reason, corruptReason):
		reason = fragTruncated
		if fce.Reason != "truncated" {
			reason += " or replaced (" + fce.Reason + ")"
		}
		if fce.Err != nil {
			err = fce.Err
		} else {
			err = nil
		}
	case errors.Is(err, io.ErrUnexpectedEOF):
		reason = fragTruncated
	case errors.As(err, &fce), errors.Is(err, ErrCorrupt), errors.Is(err, pqrow.ErrCorrupt):
		reason = fragUndecodable
	default:
		return err
	}
	man, _ := ri.snapshot()
	return &FragmentError{RowIndex: man.Name, Key: man.Key, Path: fr.Path, Reason: reason, Err: err}
}

// Cache keys.
type (
	fragMetaKey  struct{ path string }
	fragGroupKey struct {
		path  string
		group int
	}
	fragDecodedKey fragGroupKey
	dataMetaKey    struct{ id int32 }
	pageKey        struct {
		id            int32
		rg, col, page int
	}
	dictKey struct {
		id      int32
		rg, col int
	}
	// rawPageKey is a page of the direct path in the page cache (a
	// *rawPage, decompressed); decodedDictKey a decoded dictionary.
	rawPageKey     pageKey
	decodedDictKey dictKey
)

// fragment returns the cached metadata of a fragment.
func (ri *RowIndex) fragmentMeta(ctx context.Context, m *meter, fr *FragmentEntry) (*fileMeta, error) {
	if v, ok := ri.cache.get(fragMetaKey{fr.Path}); ok {
		m.hits.Add(1)
		return v.(*fileMeta), nil
	}
	o := object{st: ri.st, key: folderOf(ri.name) + fr.Path, uri: fr.Path}
	fm, err := loadWalkedMeta(ctx, m, o, fr.Size, fr.TailBytes)
	if err != nil {
		return nil, ri.fragmentErr(fr, err)
	}
	ri.cache.put(fragMetaKey{fr.Path}, fm, fm.charge)
	return fm, nil
}

// group returns the decoded entries of one fragment row group. The cache
// keeps the group's compressed bytes (≈4 bytes per entry, so the whole index
// of a 1 GB lake is ≈30 MB), not the decoded entries (≈100 bytes each in Go
// memory): a warm lookup decodes the one group it needs, ≈fragmentRowGroupBytes
// of entries, from memory.
func (ri *RowIndex) group(ctx context.Context, m *meter, fr *FragmentEntry, gi int) ([]entry, error) {
	dk := fragDecodedKey{fr.Path, gi}
	if v, ok := ri.decoded.get(dk); ok {
		m.hits.Add(1)
		return v.([]entry), nil
	}
	fm, err := ri.fragmentMeta(ctx, m, fr)
	if err != nil {
		return nil, err
	}
	b, err := ri.groupBytes(ctx, m, fr, gi)
	if err != nil {
		return nil, err
	}
	o := object{st: ri.st, key: folderOf(ri.name) + fr.Path, uri: fr.Path}
	pr := &pageReader{ctx: ctx, m: m, obj: o, sp: spans{{fr.Groups[gi].Offset, b}}, fallThrough: true, chunks: fm.chunks}
	man, _ := ri.snapshot()
	es, err := decodeGroup(fm, gi, pr, man.Kind, man.BucketHash)
	if err != nil {
		return nil, ri.fragmentErr(fr, err)
	}
	var charge int64 = 64
	for i := range es {
		charge += es[i].size() + 64
	}
	ri.decoded.put(dk, es, charge)
	return es, nil
}

// groupBytes returns the compressed bytes of one fragment row group, from
// the cache or in one ranged read.
func (ri *RowIndex) groupBytes(ctx context.Context, m *meter, fr *FragmentEntry, gi int) ([]byte, error) {
	k := fragGroupKey{fr.Path, gi}
	if v, ok := ri.cache.get(k); ok {
		m.hits.Add(1)
		return v.([]byte), nil
	}
	g := fr.Groups[gi]
	o := object{st: ri.st, key: folderOf(ri.name) + fr.Path, uri: fr.Path}
	b, err := readRange(ctx, m, o, g.Offset, g.Length)
	if err != nil {
		return nil, ri.fragmentErr(fr, err)
	}
	ri.cache.put(k, b, int64(len(b))+64)
	return b, nil
}

// dataMeta returns the cached metadata of a data file, loading it (and
// checking its footer against the manifest) on a miss.
func (ri *RowIndex) dataMeta(ctx context.Context, m *meter, fe *FileEntry) (*fileMeta, object, error) {
	fm, o, err := ri.cachedDataMeta(ctx, m, fe)
	if fm != nil || err != nil {
		return fm, o, err
	}
	fm, err = ri.loadDataMeta(ctx, m, fe, o)
	return fm, o, err
}

// loadDataMeta reads the metadata of data file fe, resolved to o, and
// caches it.
func (ri *RowIndex) loadDataMeta(ctx context.Context, m *meter, fe *FileEntry, o object) (*fileMeta, error) {
	fm, err := loadFileMetaTail(ctx, m, o, fe.Size, fe.FooterCRC, fe.ScannedPages, fe.TailBytes, fe.TailRanges)
	if err != nil {
		return nil, err
	}
	ri.cache.put(dataMetaKey{fe.ID}, fm, fm.charge)
	return fm, nil
}

// cachedDataMeta returns the object of a data file and its metadata when
// cached (nil otherwise), without reading anything.
func (ri *RowIndex) cachedDataMeta(ctx context.Context, m *meter, fe *FileEntry) (*fileMeta, object, error) {
	if ri.opts.Resolver == nil {
		return nil, object{}, badQuery("no Resolver to read data files")
	}
	st, key, err := ri.opts.Resolver.Resolve(ctx, fe.URI)
	if err != nil {
		return nil, object{}, err
	}
	o := object{st: st, key: key, uri: fe.URI}
	if v, ok := ri.cache.get(dataMetaKey{fe.ID}); ok {
		m.hits.Add(1)
		return v.(*fileMeta), o, nil
	}
	return nil, o, nil
}
