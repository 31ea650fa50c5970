package rowindex

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync"

	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/internal/bufpool"
)

// Shapes learnt by Warm. A lookup learns a page's shape (pageShape) when it
// reads the page whole: at once for an uncompressed page, on the second
// read for a SNAPPY one. Until then a light key's value in a page of 1 MiB
// (pyarrow's and Spark's default) costs the whole page, so a fresh handle
// is an order of magnitude slower on such files until every page has been
// read twice. With Options.ShapeBytes, Warm reads every page that lookups
// may read in parts once and keeps the shapes in a set of their own,
// which lookups never evict (knownShape looks there first).

// shapeReadBytes bounds one read of a column chunk's pages while learning
// (a larger chunk is read in several; a single larger page alone).
const shapeReadBytes = 16 << 20

// shapeEntryBytes is what a shape costs in the set beyond its own charge
// (the map's key, pointer and slot).
const shapeEntryBytes = 48

// shapeSet is the shapes Warm learnt: immutable once published
// (RowIndex.warmShapes), a later Warm or a Refresh publishes a new one.
type shapeSet struct {
	m     map[pageKey]*pageShape
	bytes int64
}

// errShapeBudget stops learning when the set is full.
var errShapeBudget = errors.New("rowindex: page shape budget reached")

// LearntShapes reports the pages whose shapes Warm learnt and their bytes
// in memory (Options.ShapeBytes bounds them).
func (ri *RowIndex) LearntShapes() (pages int, bytes int64) {
	if ws := ri.warmShapes.Load(); ws != nil {
		return len(ws.m), ws.bytes
	}
	return 0, 0
}

// learnShapes reads, for every data file of man, the pages lookups may read
// in parts and whose shape the handle does not hold yet (a shape a lookup
// learnt is taken from the metadata cache, not read again), and publishes
// the shapes, until they reach Options.ShapeBytes; a file that cannot be
// read fails it (as it fails Warm), the shapes learnt until then still
// kept. Files are read on one worker per core (at least four, to overlap
// remote reads), a column chunk (up to shapeReadBytes) a request.
func (ri *RowIndex) learnShapes(ctx context.Context, m *meter, man *Manifest, rep *warmReporter) error {
	budget := ri.opts.ShapeBytes
	if budget <= 0 {
		return nil
	}
	// The shapes learnt here, published into the handle's set at the end
	// (publishShapes); the budget counts the set's shapes as it was.
	held := ri.warmShapes.Load()
	learnt := &shapeSet{m: map[pageKey]*pageShape{}}
	if held != nil {
		learnt.bytes = held.bytes
	}
	var mu sync.Mutex
	add := func(pk pageKey, sh *pageShape) error {
		mu.Lock()
		defer mu.Unlock()
		c := sh.charge() + shapeEntryBytes
		if learnt.bytes+c > budget {
			return errShapeBudget
		}
		learnt.m[pk] = sh
		learnt.bytes += c
		return nil
	}
	known := func(pk pageKey) (bool, error) {
		if held != nil {
			if _, ok := held.m[pk]; ok {
				return true, nil
			}
		}
		mu.Lock()
		_, ok := learnt.m[pk]
		mu.Unlock()
		if ok {
			return true, nil
		}
		if v, ok := ri.cache.get(shapeKey(pk)); ok {
			return true, add(pk, v.(*pageShape))
		}
		return false, nil
	}
	var (
		errMu sync.Mutex
		first error
	)
	fileDone := rep.counter("shapes", len(man.Files))
	eachOnWorkers(len(man.Files), max(runtime.GOMAXPROCS(0), 4), func(i int) {
		defer fileDone()
		errMu.Lock()
		stop := first != nil
		errMu.Unlock()
		if stop {
			return
		}
		if err := ri.learnFileShapes(ctx, m, &man.Files[i], known, add); err != nil {
			errMu.Lock()
			if first == nil {
				first = err
			}
			errMu.Unlock()
		}
	})
	// What was learnt is published whatever stopped the rest (a full
	// budget, a file that changed, a deadline): each shape is its page's.
	ri.publishShapes(learnt.m, budget)
	if first != nil && !errors.Is(first, errShapeBudget) {
		return first
	}
	return nil
}

// publishShapes adds shapes to the handle's set, within budget, keeping
// only pages of the files the handle's version holds. It swaps the set
// whole (lookups read it without a lock); a Refresh, DropCache or another
// Warm that swapped it meanwhile is not undone, the shapes go into theirs.
func (ri *RowIndex) publishShapes(shapes map[pageKey]*pageShape, budget int64) {
	for {
		cur := ri.warmShapes.Load()
		_, ids := ri.snapshot()
		next := &shapeSet{m: make(map[pageKey]*pageShape, len(shapes))}
		if cur != nil {
			next = cur.keepOnly(ids)
		}
		for pk, sh := range shapes {
			if _, ok := ids[pk.id]; !ok {
				continue
			}
			if _, ok := next.m[pk]; ok {
				continue
			}
			c := sh.charge() + shapeEntryBytes
			if next.bytes+c > budget {
				continue
			}
			next.m[pk] = sh
			next.bytes += c
		}
		if ri.warmShapes.CompareAndSwap(cur, next) {
			return
		}
	}
}

// AdoptShapes takes the shapes Warm learnt on another handle — an earlier
// version of this row index (a refresh), or another row index over the
// same files — for the files this handle holds that are the same data:
// the same URI, size and footer checksum (what a lookup checks before it
// reads a file), within this handle's Options.ShapeBytes. A Warm after it
// reads only the pages of the other files. The shapes themselves are
// shared, not copied (each handle's budget still counts them).
func (ri *RowIndex) AdoptShapes(other *RowIndex) {
	if other == nil || other == ri || ri.opts.ShapeBytes <= 0 {
		return
	}
	ws := other.warmShapes.Load()
	if ws == nil || len(ws.m) == 0 {
		return
	}
	_, theirs := other.snapshot()
	man, _ := ri.snapshot()
	ours := make(map[string]*FileEntry, len(man.Files))
	for i := range man.Files {
		ours[man.Files[i].URI] = &man.Files[i]
	}
	mapped := make(map[pageKey]*pageShape, len(ws.m))
	for pk, sh := range ws.m {
		fe := theirs[pk.id]
		if fe == nil {
			continue
		}
		mine := ours[fe.URI]
		if mine == nil || mine.Size != fe.Size || mine.FooterCRC != fe.FooterCRC {
			continue
		}
		pk.id = mine.ID
		mapped[pk] = sh
	}
	ri.publishShapes(mapped, ri.opts.ShapeBytes)
}

// learnFileShapes learns the shapes of one file's pages (learnShapes).
func (ri *RowIndex) learnFileShapes(ctx context.Context, m *meter, fe *FileEntry, known func(pageKey) (bool, error), add func(pageKey, *pageShape) error) error {
	fm, o, err := ri.dataMeta(ctx, m, fe)
	if err != nil {
		return err
	}
	if fm.copies != nil {
		return nil // a prepared file's copied columns are read by their frames
	}
	ncol := fm.ncol()
	for rg := range fm.f.Metadata().RowGroups {
		for col := range ncol {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !fm.aligned[rg*ncol+col] || framedChunk(fm, rg, col) || !ri.subPageReads(fm, rg, col) {
				continue
			}
			ci, _ := directInfo(fm, rg, col)
			locs := fm.offsetIndex(rg, col)
			if !sanePages(locs, fm.size) {
				continue // a lying page index: the lookups of its pages say so
			}
			// The chunk's dictionary, unless decoded already or larger than
			// a read, is read with its first page (it lies just before it).
			dict := fm.dictRange(rg, col)
			if _, ok := ri.cache.get(decodedDictKey{fe.ID, rg, col}); ok || dict.off < 0 || dict.end <= dict.off || dict.end > locs[0].Offset || dict.end-dict.off > shapeReadBytes {
				dict = brange{}
			}
			for j := 0; j < len(locs); {
				// The next pages without a shape, up to shapeReadBytes.
				if ok, err := known(pageKey{fe.ID, rg, col, j}); err != nil {
					return err
				} else if ok {
					j++
					continue
				}
				k := j + 1
				for k < len(locs) && byteEnd(locs[k])-locs[j].Offset <= shapeReadBytes {
					if ok, err := known(pageKey{fe.ID, rg, col, k}); err != nil {
						return err
					} else if ok {
						break
					}
					k++
				}
				if j > 0 {
					dict = brange{} // read with page 0 only
				}
				if err := ri.learnPages(ctx, m, o, fe, rg, col, ci, locs, j, k, dict, add); err != nil {
					return err
				}
				j = k
			}
		}
	}
	return nil
}

// learnPages reads pages [j, k) of a column chunk in one request and adds
// their shapes; with them, when dict is not empty, the chunk's dictionary,
// decoded into the metadata cache if it fits beside what the cache holds
// (it evicts nothing: fragment groups matter more). A page or dictionary
// that does not parse is left out: the lookup that needs it reads it and
// reports what is wrong.
func (ri *RowIndex) learnPages(ctx context.Context, m *meter, o object, fe *FileEntry, rg, col int, ci colInfo, locs []format.PageLocation, j, k int, dict brange, add func(pageKey, *pageShape) error) error {
	off, end := locs[j].Offset, byteEnd(locs[k-1])
	if dict.end > dict.off {
		off = dict.off
	}
	buf := bufpool.Get(int(end - off))
	defer ri.putBuf(buf)
	b, err := readRangeInto(ctx, m, o, off, buf[:end-off])
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fileChanged(fe.URI, "truncated", err)
		}
		return err
	}
	// A dictionary decodes to at least its page's bytes: none is decoded
	// once the cache has no room for that.
	if dict.end > dict.off && ri.cache.room() >= dict.end-dict.off {
		if d, err := parseDictionary(b[:dict.end-dict.off], ci); err == nil {
			ri.cache.putIfRoom(decodedDictKey{fe.ID, rg, col}, d, d.size)
		}
	}
	for i := j; i < k; i++ {
		at, n := locs[i].Offset-off, int64(locs[i].CompressedPageSize)
		if at < 0 || n <= 0 || at > int64(len(b))-n {
			continue
		}
		pb := b[at : at+n]
		p, _, err := parseRawPage(pb, ci)
		if err != nil {
			continue
		}
		sh := measureShape(ci, p, pb)
		if p.buf != nil {
			ri.releasePage(p)
		}
		if sh == nil {
			continue
		}
		if err := add(pageKey{fe.ID, rg, col, i}, sh); err != nil {
			return err
		}
	}
	return nil
}

// sanePages reports whether a chunk's page locations can be read as they
// say: at least one page, each inside a file of size bytes, in increasing
// order without overlap (a lying page index is left to the lookups, which
// report it).
func sanePages(locs []format.PageLocation, size int64) bool {
	prev := int64(0)
	for _, l := range locs {
		n := int64(l.CompressedPageSize)
		if l.Offset < prev || n <= 0 || l.Offset > size-n {
			return false
		}
		prev = l.Offset + n
	}
	return len(locs) > 0
}

// byteEnd is the offset in its file just past a page.
func byteEnd(l format.PageLocation) int64 { return l.Offset + int64(l.CompressedPageSize) }

// keepOnly returns the set without the pages of files not in ids (a
// Refresh: files the version no longer holds are never asked again).
func (s *shapeSet) keepOnly(ids map[int32]*FileEntry) *shapeSet {
	out := &shapeSet{m: make(map[pageKey]*pageShape, len(s.m))}
	for k, v := range s.m {
		if _, ok := ids[k.id]; ok {
			out.m[k] = v
			out.bytes += v.charge() + shapeEntryBytes
		}
	}
	return out
}
