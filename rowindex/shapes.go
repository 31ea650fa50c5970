package rowindex

import (
	"cmp"
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
// read twice. Warm reads every page that lookups may read in parts once
// (by default only of files on local stores) and keeps the shapes in a set
// of their own, within Options.ShapeBytes, which lookups never evict
// (knownShape looks there first).

// DefaultShapeBytes is the shape budget of a handle whose
// Options.ShapeBytes is 0. The shapes of a lake's pages take 0.8–2.7 % of
// their bytes (arrow-go's defaults 0.8 %, pyarrow's 2.7 %, stops 30 and
// 34), so this holds those of ≈4.7–16 GB of such pages, and a Warm that
// learns them on local disk reads at most that once.
const DefaultShapeBytes = 128 << 20

// shapeBudget resolves Options.ShapeBytes: 0 is DefaultShapeBytes, a
// negative budget none.
func shapeBudget(n int64) int64 {
	switch {
	case n == 0:
		return DefaultShapeBytes
	case n < 0:
		return 0
	}
	return n
}

// shapeReadBytes bounds one read of a column chunk's pages while learning
// (a larger chunk is read in several; a single larger page alone).
const shapeReadBytes = 16 << 20

// shapeEntryBytes is what a shape costs in the set beyond its own charge
// (the map's key, pointer and slot).
const shapeEntryBytes = 48

// shapeSet is the shapes Warm learnt, by page, within Options.ShapeBytes
// (each charged shapeEntryBytes beyond its own charge).
type shapeSet = budgetSet[pageKey, *pageShape]

// errShapeBudget stops learning when the set is full.
var errShapeBudget = errors.New("rowindex: page shape budget reached")

// LearntShapes reports the pages whose shapes Warm learnt and their bytes
// in memory (Options.ShapeBytes bounds them).
func (ri *RowIndex) LearntShapes() (pages int, bytes int64) {
	bytes, pages = ri.shapes.stats()
	return pages, bytes
}

// keepShape keeps a page's shape in the handle's set, or fails with
// errShapeBudget when it does not fit.
func (ri *RowIndex) keepShape(pk pageKey, sh *pageShape) error {
	if ri.shapes.add(pk, sh, sh.charge()+shapeEntryBytes) {
		return errShapeBudget
	}
	return nil
}

// learnShapes reads, for every data file of man, the pages lookups may read
// in parts and whose shape the handle does not hold yet (a shape a lookup
// learnt is taken from the metadata cache, not read again; with
// Options.ShapeBytes 0, only files on local stores), and keeps the shapes
// until they reach the budget (ShapeBudget); a file that cannot be read
// fails it (as it fails Warm), the shapes learnt until then still kept.
// Files are read on one worker per core (at least four, to overlap remote
// reads), a column chunk (up to shapeReadBytes) a request.
func (ri *RowIndex) learnShapes(ctx context.Context, m *meter, man *Manifest, rep *warmReporter) error {
	if ri.shapeBytes <= 0 {
		return nil
	}
	var (
		mu    sync.Mutex
		first error
	)
	failed := func() error {
		mu.Lock()
		defer mu.Unlock()
		return first
	}
	sizes := ri.shapeFiles(ctx, m) // saved shapes are read, not learnt again
	fileDone := rep.counter("shapes", len(man.Files))
	eachOnWorkers(len(man.Files), max(runtime.GOMAXPROCS(0), 4), func(i int) {
		defer fileDone()
		if failed() != nil {
			return
		}
		if err := ri.learnFileShapes(ctx, m, &man.Files[i], sizes); err != nil {
			mu.Lock()
			first = cmp.Or(first, err)
			mu.Unlock()
		}
	})
	if err := failed(); !errors.Is(err, errShapeBudget) {
		return err
	}
	return nil
}

// knownShapeOrTake reports whether the handle's set holds a page's shape,
// taking one a lookup learnt (the metadata cache) into it, which fails
// when it does not fit.
func (ri *RowIndex) knownShapeOrTake(pk pageKey) (bool, error) {
	if _, ok := ri.shapes.get(pk); ok {
		return true, nil
	}
	if v, ok := ri.cache.get(shapeKey(pk)); ok {
		return true, ri.keepShape(pk, v.(*pageShape))
	}
	return false, nil
}

// AdoptShapes takes the shapes Warm learnt on another handle — an earlier
// version of this row index (a refresh), or another row index over the
// same files — for the files this handle holds that are the same data:
// the same URI, size and footer checksum (what a lookup checks before it
// reads a file), within this handle's Options.ShapeBytes. A Warm after it
// reads only the pages of the other files. The shapes themselves are
// shared, not copied (each handle's budget still counts them).
func (ri *RowIndex) AdoptShapes(other *RowIndex) {
	if other == nil || other == ri || ri.shapeBytes <= 0 {
		return
	}
	_, theirs := other.snapshot()
	man, _ := ri.snapshot()
	ours := make(map[string]*FileEntry, len(man.Files))
	for i := range man.Files {
		ours[man.Files[i].URI] = &man.Files[i]
	}
	mapped := map[pageKey]*pageShape{}
	other.shapes.each(func(pk pageKey, sh *pageShape) {
		fe := theirs[pk.id]
		if fe == nil {
			return
		}
		mine := ours[fe.URI]
		if mine == nil || mine.Size != fe.Size || mine.FooterCRC != fe.FooterCRC {
			return
		}
		pk.id = mine.ID
		mapped[pk] = sh
	})
	for pk, sh := range mapped {
		if ri.keepShape(pk, sh) != nil {
			return // full
		}
	}
}

// learnFileShapes learns the shapes of one file's pages (learnShapes):
// from its shape file, when sizes lists one, then from the pages still
// without a shape.
func (ri *RowIndex) learnFileShapes(ctx context.Context, m *meter, fe *FileEntry, sizes map[string]int64) error {
	fm, o, err := ri.dataMeta(ctx, m, fe)
	if err != nil {
		return err
	}
	if fm.copies != nil {
		return nil // a prepared file's copied columns are read by their frames
	}
	fromFile, err := ri.loadWarmShapes(ctx, m, fm, fe, sizes)
	if err != nil {
		return err
	}
	if ri.opts.ShapeBytes == 0 && !localStore(o.st) {
		return nil // by default an object store's pages are not read for their shapes
	}
	ncol := fm.ncol()
	keyLeaf, _ := ri.indexedKeyLeaf(fm, ri.Manifest().Key) // its values come from the index: no page of it is read
	for rg := range fm.f.Metadata().RowGroups {
		for col := range ncol {
			if err := ctx.Err(); err != nil {
				return err
			}
			if col == keyLeaf || !fm.aligned[rg*ncol+col] || framedChunk(fm, rg, col) || !ri.subPageReads(fm, rg, col) {
				continue
			}
			ci, _ := directInfo(fm, rg, col)
			locs := fm.offsetIndex(rg, col)
			if !sanePages(locs, fm.size) {
				continue // a lying page index: the lookups of its pages say so
			}
			// The chunk's dictionary, unless decoded already (or without room
			// in the cache) and its shape known, or larger than a read, is
			// read with its first page (it lies just before it), or alone
			// when that page's shape came from a shape file (no page of the
			// chunk is read then). Shapes taken from another handle
			// (AdoptShapes) bring no dictionary: that handle decoded its
			// own, and lookups decode this one's when they need it.
			dict := fm.dictRange(rg, col)
			_, decoded := ri.cache.get(decodedDictKey{fe.ID, rg, col})
			shaped, err := ri.knownShapeOrTake(pageKey{fe.ID, rg, col, dictShapePage})
			if err != nil {
				return err
			}
			decodes := !decoded && ri.cache.room() >= dict.end-dict.off
			if !decodes && shaped || dict.off < 0 || dict.end <= dict.off || dict.end > locs[0].Offset || dict.end-dict.off > shapeReadBytes {
				dict = brange{}
			}
			if dict.end > dict.off {
				if ok, err := ri.knownShapeOrTake(pageKey{fe.ID, rg, col, 0}); err != nil {
					return err
				} else if ok && fromFile[[2]int{rg, col}] {
					if err := ri.learnDict(ctx, m, o, fe, rg, col, ci, dict); err != nil {
						return err
					}
					dict = brange{}
				}
			}
			for j := 0; j < len(locs); {
				// The next pages without a shape, up to shapeReadBytes.
				if ok, err := ri.knownShapeOrTake(pageKey{fe.ID, rg, col, j}); err != nil {
					return err
				} else if ok {
					j++
					continue
				}
				k := j + 1
				for k < len(locs) && byteEnd(locs[k])-locs[j].Offset <= shapeReadBytes {
					if ok, err := ri.knownShapeOrTake(pageKey{fe.ID, rg, col, k}); err != nil {
						return err
					} else if ok {
						break
					}
					k++
				}
				if j > 0 {
					dict = brange{} // read with page 0 only
				}
				if err := ri.learnPages(ctx, m, o, fe, rg, col, ci, locs, j, k, dict); err != nil {
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
func (ri *RowIndex) learnPages(ctx context.Context, m *meter, o object, fe *FileEntry, rg, col int, ci colInfo, locs []format.PageLocation, j, k int, dict brange) error {
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
	// A dictionary decodes to at least its page's bytes: none is kept
	// once the cache has no room for that. Its shape is kept with the
	// pages' (dictionaries read in parts, dictparts.go).
	if dict.end > dict.off {
		if err := ri.keepDict(fe, rg, col, ci, b[:dict.end-dict.off]); err != nil {
			return err
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
		if err := ri.keepShape(pageKey{fe.ID, rg, col, i}, sh); err != nil {
			return err
		}
	}
	return nil
}

// learnDict reads a chunk's dictionary page alone (learnFileShapes), to
// decode it and learn its shape as learnPages does.
func (ri *RowIndex) learnDict(ctx context.Context, m *meter, o object, fe *FileEntry, rg, col int, ci colInfo, dict brange) error {
	buf := bufpool.Get(int(dict.end - dict.off))
	defer ri.putBuf(buf)
	b, err := readRangeInto(ctx, m, o, dict.off, buf[:dict.end-dict.off])
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fileChanged(fe.URI, "truncated", err)
		}
		return err
	}
	return ri.keepDict(fe, rg, col, ci, b)
}

// keepDict decodes a chunk's dictionary page b into the metadata cache if
// it fits beside what the cache holds (it evicts nothing: fragment groups
// matter more), and keeps its shape with the pages'. A page that does not
// parse is left: the lookup that needs it reports it.
func (ri *RowIndex) keepDict(fe *FileEntry, rg, col int, ci colInfo, b []byte) error {
	d, err := parseDictionary(b, ci)
	if err != nil {
		return nil
	}
	if _, ok := ri.cache.get(decodedDictKey{fe.ID, rg, col}); !ok && ri.cache.room() >= int64(len(b)) {
		ri.cache.putIfRoom(decodedDictKey{fe.ID, rg, col}, d, d.size)
	}
	pk := pageKey{fe.ID, rg, col, dictShapePage}
	if _, ok := ri.knownShape(pk); !ok {
		if sh := measureDictShape(ci, b, d); sh != nil {
			return ri.keepShape(pk, sh)
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
