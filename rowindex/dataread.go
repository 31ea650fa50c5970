package rowindex

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/store"
)

// fileWork is the data reading of one file for one batch of a lookup.
type fileWork struct {
	fe      *FileEntry
	fm      *fileMeta
	o       object
	pieces  []*piece
	rgs     []*rgWork // row groups holding pieces, in order
	leaves  []int
	keyLeaf int
	ranges  []brange
	dicts   []dictKey
	// noShape are the pages planned whole only because their shape is
	// unknown (shape files may hold it: loadShapes); unshaped counts those
	// of them a shape would have read in parts (Plan.UnshapedPages).
	noShape  []pageKey
	unshaped int
	cols     []string // the columns planned
	// shapesAdded: loadShapes added shapes of noShape pages (the file is
	// planned again); shapeRecords counts them, shapeFileIgnored says why
	// its shape file, or a record it needed, was passed over (Plan; empty:
	// it was not).
	shapesAdded      bool
	shapeRecords     int
	shapeFileIgnored string
	// shapeDir and shapeHead: the shape file's directory and the bytes
	// read with it, when prefetchShapeDir read them with the footer.
	shapeDir  *shapeDir
	shapeHead []byte
	fetch     []*fetch
	sp        spans
	err       error
	blob      *blobRead // for a file with a blob column, how it is read
	nest      *nestRead // for a nested co-grouped file, how it is read
	// positions: rows carry their stored row's position (Row.blk), set
	// when the batch holds co-grouped blocks (RowIter.cutBlocks).
	positions bool
	// pending counts the fetches of the file not yet read; the read that
	// brings it to zero queues the file's chunks for decoding.
	pending atomic.Int32
}

// rgWork is the selected rows of one row group: runs in row order (one per
// piece), and one chunkRead per requested leaf column.
type rgWork struct {
	rg      int
	npieces int // pieces in the group (planFile sizes runs with it)
	runs    []selRun
	base    []int // base[k]: selected rows before run k
	chunks  []*chunkRead
}

// readPieces reads the selected rows from the data files: metadata first
// (cached), then every page range of every file at once, then each column
// chunk's selected rows, decoding every page once (decodeChunk), chunks in
// parallel. The rows come back in the pieces' order.
func (ri *RowIndex) readPieces(ctx context.Context, m *meter, man *Manifest, ids map[int32]*FileEntry, pieces []*piece, columns []string, plan *Plan) ([]Row, error) {
	byFile := map[int32]*fileWork{}
	var works []*fileWork
	total := 0
	for _, p := range pieces {
		w, ok := byFile[p.file]
		if !ok {
			w = &fileWork{fe: ids[p.file]}
			byFile[p.file] = w
			works = append(works, w)
		}
		w.pieces = append(w.pieces, p)
		p.at = total
		total += int(p.n)
	}
	// Metadata of every file: cached ones here, the others loaded
	// concurrently (a goroutine per cached file cost more than the lookup),
	// each with its shape file's directory.
	var wg sync.WaitGroup
	loading := 0
	for _, w := range works {
		if w.fm, w.o, w.err = ri.cachedDataMeta(ctx, m, w.fe); w.fm != nil || w.err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.fm, w.err = ri.loadDataMeta(ctx, m, w.fe, w.o) // w.o resolved above
		}()
		ri.prefetchShapeDir(ctx, m, w, &wg, loading)
		loading++
	}
	wg.Wait()
	for _, w := range works {
		if w.err != nil {
			return nil, w.err
		}
	}
	// Page ranges.
	var fetches []*fetch
	var chunks []*chunkRead
	blocks := false // a file of co-grouped blocks: rows are expanded
	for _, w := range works {
		cols := columns
		if w.fm.blobErr != nil {
			return nil, w.fm.blobErr
		}
		if w.fm.blob != nil { // a file with a blob column (blobread.go)
			var err error
			if w.blob, err = blobReadFor(w.fm, w.fe.URI, columns); err != nil {
				return nil, err
			}
			cols = w.blob.read
			blocks = blocks || w.fm.blob.Blocks()
		}
		if w.fm.coGroupErr != nil {
			return nil, w.fm.coGroupErr
		}
		if w.fm.coGroup != nil { // a nested co-grouped file (nestread.go)
			var err error
			if w.nest, err = nestColumns(w.fm.coGroup, w.fe.URI, columns); err != nil {
				return nil, err
			}
			cols, blocks = w.nest.read, true
		}
		if err := ri.planFile(w, man, cols); err != nil {
			return nil, err
		}
		w.cols = cols
	}
	// Pages planned whole for want of their shapes: from shape files
	// (shapefile.go) when the row index has them, and those files planned
	// again.
	ri.loadShapes(ctx, m, works)
	for _, w := range works {
		w.shapeDir, w.shapeHead = nil, nil // prefetched for nothing, or used
		plan.ShapeRecords += w.shapeRecords
		if w.shapeFileIgnored != "" {
			plan.ShapeFilesIgnored++
			if plan.ShapeFileIgnoredReason == "" {
				plan.ShapeFileIgnoredReason = w.shapeFileIgnored
			}
		}
		if w.shapesAdded {
			w.rgs, w.leaves, w.ranges, w.dicts, w.noShape, w.unshaped = nil, nil, nil, nil, nil, 0
			if err := ri.planFile(w, man, w.cols); err != nil {
				return nil, err
			}
		}
	}
	for _, w := range works {
		rs := ri.choosePath(w, plan)
		fs := make([]fetch, len(rs)) // one allocation for the file's fetches
		w.fetch = make([]*fetch, len(rs))
		for i, r := range rs {
			fs[i] = fetch{obj: w.o, r: r, pooled: true}
			w.fetch[i] = &fs[i]
		}
		fetches = append(fetches, w.fetch...)
		for _, g := range w.rgs {
			chunks = append(chunks, g.chunks...)
		}
	}
	plan.ByteRanges += len(fetches)
	// The page cache is filled only by lookups small enough not to flush
	// it: in pages (ranges are about one per page before coalescing) and
	// in bytes (a batch of a hot key's rows in files of 1 MiB pages, as
	// pyarrow writes them, plans few pages but many megabytes).
	planned, plannedBytes := 0, int64(0)
	for _, w := range works {
		planned += len(w.ranges)
		for _, r := range w.ranges {
			plannedBytes += r.end - r.off
		}
	}
	fill := ri.pages != nil && planned <= pageCacheMaxPages && plannedBytes <= ri.pages.budget/2
	for _, c := range chunks {
		c.m, c.pages = m, ri.pages
		c.fill = fill
		c.learn = planned <= learnMaxPages
		c.borrow = c.w.blob != nil && c.w.fm.blob.Blocks() && c.leaf == c.w.blob.blobLeaf
	}
	// Nothing kept from this batch points into the fetched ranges (values
	// are copied out, cached pages and dictionaries are copies): their
	// buffers go back to the pool once the rows are assembled.
	defer ri.releaseFetches(fetches)
	// Decode, chunks in parallel (CPU-bound), a file's chunks as soon as
	// its ranges are read (while other files are still being read): one
	// worker per core, this goroutine one of them, takes the next chunk
	// from a queue the reads fill. Not a goroutine per chunk: a light key
	// of an arrival-order lake has ≈100 chunks of one page each, and each
	// new goroutine grew its stack again for the decompressor.
	var fetchErr error
	if !ri.spreadReads && inlineRead(fetches) {
		// Small and local: each file read in one batch and its chunks
		// decoded, on this goroutine alone.
		ri.inlineBatches.Add(1)
		for _, w := range works {
			if len(w.fetch) > 0 {
				if fetchErr = readBatch(ctx, m, w.fetch); fetchErr != nil {
					break
				}
			}
			ri.addSpans(w)
			for _, g := range w.rgs {
				for _, c := range g.chunks {
					c.err = ri.decodeOne(ctx, m, c)
				}
			}
		}
	} else {
		queue := make(chan *chunkRead, len(chunks))
		ready := func(w *fileWork) { // every range of w is read
			ri.addSpans(w)
			for _, g := range w.rgs {
				for _, c := range g.chunks {
					queue <- c
				}
			}
		}
		owner := make(map[*fetch]*fileWork, len(fetches))
		for _, w := range works {
			w.pending.Store(int32(len(w.fetch)))
			for _, f := range w.fetch {
				owner[f] = w
			}
			if len(w.fetch) == 0 {
				ready(w)
			}
		}
		go func() {
			fetchErr = fetchEach(ctx, m, fetches, true, func(f *fetch) {
				if w := owner[f]; w.pending.Add(-1) == 0 {
					ready(w)
				}
			})
			close(queue) // after fetchErr is set: the workers see both
		}()
		work := func() {
			for c := range queue {
				c.err = ri.decodeOne(ctx, m, c)
			}
		}
		for range min(runtime.GOMAXPROCS(0), len(chunks)) - 1 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				work()
			}()
		}
		work() // this goroutine is one of the workers
		wg.Wait()
	}
	if err := fetchErr; err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, store.ErrStorage) {
			for _, w := range works {
				for _, f := range w.fetch {
					if f.data == nil && errors.Is(f.err, io.ErrUnexpectedEOF) {
						return nil, fileChanged(w.fe.URI, "truncated", err)
					}
				}
			}
		}
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ri.decodePicks(ctx, m, chunks, !ri.spreadReads && inlineRead(fetches))
	for _, c := range chunks {
		plan.DictEntries += c.dictEntries
	}
	for _, c := range chunks {
		if c.err != nil {
			return nil, fileChanged(c.w.fe.URI, "undecodable pages", c.err)
		}
	}
	rows := make([]Row, total)
	for _, w := range works {
		ri.cacheDicts(w)
		w.positions = blocks
		if err := w.assemble(rows, plan); err != nil {
			return nil, err
		}
	}
	// The rows hold copies of the chunks' values (assemble).
	for _, c := range chunks {
		ri.putVals(c.vals)
		c.vals = nil
	}
	if blocks {
		// A stored row of co-grouped blocks holds its rows (Row.block).
		n := 0
		for _, r := range rows {
			n += max(len(r.block), 1)
		}
		out := make([]Row, 0, n)
		for _, r := range rows {
			if r.block != nil {
				out = append(out, r.block...)
			} else {
				out = append(out, r)
			}
		}
		rows = out
	}
	return rows, nil
}

// addSpans makes w's fetched ranges and its cached dictionary pages the
// bytes its chunks decode from (every range of w is read).
func (ri *RowIndex) addSpans(w *fileWork) {
	for _, f := range w.fetch {
		w.sp.add(span{f.r.off, f.data})
	}
	for _, dk := range w.dicts {
		if b, ok := ri.cache.get(dk); ok {
			w.sp.add(span{w.fm.dictRange(dk.rg, dk.col).off, b.([]byte)})
		}
	}
}

// inlineMaxBytes bounds the bytes of a lookup's data reads that are read
// and decoded on the caller's goroutine alone: a light key's few KiB out of
// local files' page cache cost a few microseconds of copies and
// decompression, less than waking other threads to share them (a parked
// runtime thread's wake-up, after the process was idle, costs more than the
// whole of such a lookup).
const inlineMaxBytes = 256 << 10

// inlineRead reports whether fetches are read and decoded without other
// goroutines: every one from a store that reads a batch of ranges locally
// (store.BatchesRanges), at most inlineMaxBytes in all.
func inlineRead(fetches []*fetch) bool {
	var n int64
	for _, f := range fetches {
		if !store.BatchesRanges(f.obj.st) {
			return false
		}
		if n += f.r.end - f.r.off; n > inlineMaxBytes {
			return false
		}
	}
	return true
}

// decodeOne is decodeChunkRead, a panic of the decoder turned into the
// chunk's error: page bytes come from files the index does not control, and
// a decoder that indexes past a malformed page must fail the lookup, not the
// process.
func (ri *RowIndex) decodeOne(ctx context.Context, m *meter, c *chunkRead) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rowindex: decoding panicked: %v", r)
		}
	}()
	return ri.decodeChunkRead(ctx, m, c)
}

// decodeChunkRead decodes one chunk's selected rows. A read that falls
// outside the prefetched ranges (which happens only if the planned ranges
// missed a page) is retried reading through to storage.
func (ri *RowIndex) decodeChunkRead(ctx context.Context, m *meter, c *chunkRead) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.keyed {
		return nil // filled when planned
	}
	w := c.w
	fm := w.fm
	g := fm.f.RowGroups()[c.rg]
	aligned := fm.aligned[c.rg*fm.ncol()+c.leaf]
	locs := fm.offsetIndex(c.rg, c.leaf)
	repeated := c.leaf < len(fm.maxRep) && fm.maxRep[c.leaf] > 0
	if c.copies != nil {
		return c.decodeCopies()
	}
	if c.framed {
		ci, _ := frameInfo(fm, c.rg, c.leaf)
		return c.decodeFrames(ri, ci)
	}
	if ci, ok := directInfo(fm, c.rg, c.leaf); ok && aligned && len(locs) > 0 {
		// Any failure of the direct path (a page outside its scope, bytes
		// not prefetched) falls back to parquet-go's decoder, which also
		// judges a page that is really corrupt.
		c.keepWholeDict(ri)
		err := c.decodeDirect(ri, ci, locs, g.NumRows())
		if c.sparse != nil && c.sparse.picked.collect && err == nil && len(c.sparse.picked.keys) > 0 {
			// The values of the entries the rows select are placeholders:
			// readPieces reads the entries and decodes again (decodePicks).
			c.needPicks = true
			return nil
		}
		if err == nil || ctx.Err() != nil {
			return err
		}
		c.sparse = nil // parquet-go's decoder reads the dictionary whole
	}
	ri.slowChunks.Add(1)
	// parquet-go seeks in the chunk by row: through the handle that holds
	// the offset indexes.
	sf, chunkSpans, err := fm.seekable()
	if err != nil {
		return fileChanged(w.fe.URI, corruptReason+"schema", err)
	}
	cc := sf.RowGroups()[c.rg].ColumnChunks()[c.leaf]
	pr := &pageReader{ctx: ctx, m: m, obj: w.o, sp: w.sp, chunks: chunkSpans}
	err = c.decode(cc, pr, locs, aligned, repeated, g.NumRows())
	if err != nil && isOutside(err, pr) {
		pr = &pageReader{ctx: ctx, m: m, obj: w.o, sp: w.sp, fallThrough: true, chunks: chunkSpans}
		err = c.decode(cc, pr, locs, aligned, repeated, g.NumRows())
	}
	return err
}

// assemble writes each piece's rows into rows (at the piece's position),
// cut from one backing array per file, checking the key column where it was
// read.
func (w *fileWork) assemble(rows []Row, plan *Plan) error {
	f := w.fm.f
	keyAt := slices.Index(w.leaves, w.keyLeaf)
	nvals := 0
	for _, g := range w.rgs {
		for _, c := range g.chunks {
			nvals += len(c.vals)
		}
	}
	backing := make([]parquet.Value, 0, nvals)
	var returned int64
	var kbuf []byte
	br := w.blob
	var scratch, dec parquet.Row // a blob file's data file row, and its blob decoded
	for _, g := range w.rgs {
		for k, run := range g.runs {
			p := run.p
			kv, _ := DecodeKey(p.key)
			for i := range int(p.n) {
				sel := g.base[k] + i
				var r parquet.Row
				if br == nil {
					start := len(backing)
					for _, c := range g.chunks {
						backing = append(backing, c.row(sel)...)
					}
					r = parquet.Row(backing[start:len(backing):len(backing)])
				} else {
					// A blob file: the row read is scratch, the row
					// returned is the source's (blobread.go).
					scratch = scratch[:0]
					for _, c := range g.chunks {
						scratch = append(scratch, c.row(sel)...)
					}
				}
				rowNum := rowInFile(w.fe, p.rg, p.row+int64(i))
				if keyAt >= 0 && !g.chunks[keyAt].keyed {
					v := g.chunks[keyAt].row(sel)
					same := len(v) == 1 && !v[0].IsNull()
					if same {
						kbuf = appendKeyValue(kbuf[:0], v[0])
						same = bytes.Equal(kbuf, p.key)
					}
					if !same {
						return &FileChangedError{URI: w.fe.URI, Reason: fmt.Sprintf("row %d no longer holds key %s", rowNum, keyString(p.key))}
					}
				}
				row := Row{Key: kv, File: w.fe.URI, RowGroup: int(p.rg), Row: rowNum, file: f}
				if w.positions {
					row.blk = &blockPos{pos: cursor{Key: p.key, File: p.file, RG: p.rg, Row: p.row + int64(i)}, n: 1}
				}
				switch {
				case br != nil && br.b.Blocks():
					row.file = br.b.Schema
					var err error
					if row.block, err = br.block(nil, scratch, p.key, row); err != nil {
						return err
					}
					row.blk.n = int64(len(row.block))
					for _, b := range row.block {
						returned += returnedBytes(b.Values)
					}
				case w.nest != nil:
					var err error
					if row.block, err = w.nest.expand(nil, r, row); err != nil {
						return err
					}
					row.blk.n = int64(len(row.block))
					for _, b := range row.block {
						returned += returnedBytes(b.Values)
					}
				case br != nil:
					row.file = br.b.Schema
					start := len(backing)
					var err error
					if backing, dec, err = br.row(backing, dec, scratch, p.key, w.fe.URI, rowNum); err != nil {
						return err
					}
					row.Values = parquet.Row(backing[start:len(backing):len(backing)])
					returned += returnedBytes(row.Values)
				default:
					row.Values = r
					returned += returnedBytes(r)
				}
				rows[p.at+i] = row
			}
		}
	}
	plan.BytesReturned += returned
	return nil
}

// planFile computes the leaf columns, the row groups' runs and chunks, and
// the byte ranges of a file's pieces: per column chunk, the pages holding a
// selected row, each once.
func (ri *RowIndex) planFile(w *fileWork, man *Manifest, columns []string) error {
	f := w.fm.f
	w.keyLeaf = -1
	if c := f.Root().Column(man.Key); c != nil && c.Leaf() {
		w.keyLeaf = c.Index()
	}
	if columns == nil {
		for i := range w.fm.ncol() {
			w.leaves = append(w.leaves, i)
		}
	} else {
		for _, name := range columns {
			c := f.Root().Column(name)
			if c == nil {
				return badQuery("column %q is not in %s", name, w.fe.URI)
			}
			w.leaves = append(w.leaves, leavesOf(c)...)
		}
		slices.Sort(w.leaves)
		w.leaves = slices.Compact(w.leaves)
	}
	keyKind, keyed := ri.keyFromIndex(w, man.Key)
	// Runs per row group, counted first: a hot key's batch is tens of
	// thousands of one-row pieces in arrival order.
	byRG := map[int32]*rgWork{}
	for _, p := range w.pieces {
		if int(p.rg) >= len(f.RowGroups()) {
			return &FileChangedError{URI: w.fe.URI, Reason: "row group missing"}
		}
		g, ok := byRG[p.rg]
		if !ok {
			g = &rgWork{rg: int(p.rg)}
			byRG[p.rg] = g
			w.rgs = append(w.rgs, g)
		}
		g.npieces++
	}
	for _, p := range w.pieces {
		g := byRG[p.rg]
		if g.runs == nil {
			g.runs = make([]selRun, 0, g.npieces)
		}
		g.runs = append(g.runs, selRun{row: p.row, n: p.n, p: p})
	}
	slices.SortFunc(w.rgs, func(a, b *rgWork) int { return cmp.Compare(a.rg, b.rg) })
	ncol := w.fm.ncol()
	for _, g := range w.rgs {
		// A range lookup's keys interleave in the file: decode in row order.
		slices.SortFunc(g.runs, func(a, b selRun) int { return cmp.Compare(a.row, b.row) })
		g.base = make([]int, len(g.runs))
		sel := 0
		for k, r := range g.runs {
			g.base[k] = sel
			sel += int(r.n)
		}
		crs := make([]chunkRead, len(w.leaves)) // one allocation for the group's chunks
		g.chunks = make([]*chunkRead, 0, len(w.leaves))
		for at, c := range w.leaves {
			crs[at] = chunkRead{w: w, rg: g.rg, leaf: c, at: at, runs: g.runs, selected: sel}
			g.chunks = append(g.chunks, &crs[at])
			if keyed && c == w.keyLeaf {
				crs[at].fillKeys(keyKind, w.fm.maxDef[c])
				continue
			}
			locs := w.fm.offsetIndex(g.rg, c)
			if len(locs) == 0 {
				continue
			}
			if w.fm.copies != nil {
				if ok, err := planCopied(w, g, g.chunks[len(g.chunks)-1]); err != nil {
					return fileChanged(w.fe.URI, corruptReason+"frame table", err)
				} else if ok {
					continue
				}
			}
			if w.fm.aligned[g.rg*ncol+c] && framedChunk(w.fm, g.rg, c) {
				cr := g.chunks[len(g.chunks)-1]
				cr.framed = true
				var err error
				if cr.frames, err = planFrames(w, g.rg, c, g.runs); err != nil {
					return fileChanged(w.fe.URI, corruptReason+"frame table", err)
				}
				continue
			} else if !w.fm.aligned[g.rg*ncol+c] {
				// Rows are found by decoding from the chunk's first page.
				last := g.runs[len(g.runs)-1]
				i1 := max(sort.Search(len(locs), func(i int) bool { return locs[i].FirstRowIndex >= last.row+last.n })-1, 0)
				w.ranges = append(w.ranges, brange{locs[0].Offset, locs[i1].Offset + int64(locs[i1].CompressedPageSize)})
			} else {
				// The runs are in row order: walk the pages once, each page
				// with the rows selected in it.
				sub := ri.subPageReads(w.fm, g.rg, c)
				g.chunks[len(g.chunks)-1].sub = sub
				pi := 0
				var cur pageSegs
				cur.page = -1
				flush := func() {
					if cur.page >= 0 {
						ri.planPage(w, g.rg, c, locs, cur, sub)
					}
				}
				for _, r := range g.runs {
					pi = pageAt(locs, pi, r.row)
					for j := pi; j < len(locs) && locs[j].FirstRowIndex < r.row+r.n; j++ {
						if j != cur.page {
							flush()
							cur = pageSegs{page: j, segs: cur.segs[:0]} // planPage keeps none
						}
						cur.segs = append(cur.segs, [2]int64{max(r.row, locs[j].FirstRowIndex), r.row + r.n})
					}
				}
				flush()
			}
			if dr := w.fm.dictRange(g.rg, c); dr.end > dr.off {
				// The page is read unless the cache holds it as fetched
				// or decoded. With the decoded dictionary cached, the page
				// is neither read nor kept: only a chunk the direct path
				// hands to parquet-go (a page it does not cut) needs its
				// bytes, and reads them through (a miss). Keeping both
				// doubled the dictionaries' share of the cache (pyarrow's
				// files: 218 MB of pages beside 428 MB decoded, which
				// evicted the index's fragment groups).
				if _, ok := ri.cache.get(decodedDictKey{w.fe.ID, g.rg, c}); ok {
					continue
				}
				dk := dictKey{w.fe.ID, g.rg, c}
				_, held := ri.cache.get(dk)
				if !held && ri.planDictParts(w, g.chunks[len(g.chunks)-1]) {
					continue // read in parts once its indexes are cut
				}
				w.dicts = append(w.dicts, dk)
				if !held {
					w.ranges = append(w.ranges, dr)
				}
			}
		}
	}
	return nil
}

// keyFromIndex reports whether the key column's values of w's rows are
// taken from the index rather than read, and the column's kind: the
// column is requested, lookups take it from the index in this file
// (indexedKeyLeaf), and every piece's key is of its kind.
func (ri *RowIndex) keyFromIndex(w *fileWork, key string) (parquet.Kind, bool) {
	k, kind := ri.indexedKeyLeaf(w.fm, key)
	if k < 0 || !slices.Contains(w.leaves, k) {
		return 0, false
	}
	for _, p := range w.pieces {
		if !keyOfKind(p.key, kind) {
			return 0, false
		}
	}
	return kind, true
}

// indexedKeyLeaf is the leaf column of fm holding key whose values lookups
// take from the index rather than read (-1 if none: Options.VerifyKeys, a
// file of blocks or copies, a repeated or non-leaf key column, a kind
// whose keys are not exact), and its kind. Warm learns no shapes of its
// pages, and SaveShapes saves none.
func (ri *RowIndex) indexedKeyLeaf(fm *fileMeta, key string) (int, parquet.Kind) {
	if ri.opts.VerifyKeys || fm.blob != nil || fm.coGroup != nil || fm.copies != nil {
		return -1, 0
	}
	c := fm.f.Root().Column(key)
	if c == nil || !c.Leaf() || c.Index() >= len(fm.maxRep) || fm.maxRep[c.Index()] != 0 || !exactKeyKind(c.Type().Kind()) {
		return -1, 0
	}
	return c.Index(), c.Type().Kind()
}

// choosePath is the lookup planner, per data file: it prices the index
// path (the coalesced ranges of the pages, or parts of pages, that hold
// selected rows) against a projected scan of the same file (every column
// chunk of the requested columns and the key column, in the row groups
// holding the key, one range each) and returns the cheaper's ranges. The
// price is bytes + requests × the coalescing gap (the bytes one request is
// worth: latency × bandwidth). Coalescing leaves a gap unread only where
// that saves more than a request, so the index path is rarely dearer; the
// choice, both estimates and, for the index path, its pages read whole for
// want of their shapes are in the Plan (lookup --explain).
func (ri *RowIndex) choosePath(w *fileWork, plan *Plan) []brange {
	gap := ri.gapFor(w.o.st)
	idx := coalesce(w.ranges, gap)
	var scan, read []brange
	cols := w.leaves
	if w.keyLeaf >= 0 && !slices.Contains(cols, w.keyLeaf) {
		cols = append(slices.Clone(cols), w.keyLeaf)
	}
	md := w.fm.f.Metadata()
	for _, g := range w.rgs {
		// Group columns planned from interleaved copies (copyread.go)
		// are decoded from the key's chunk, which holds the copies: the
		// scan reads (and is priced by) that chunk for them, not theirs.
		gcols, need := cols, map[int]bool{}
		for _, cr := range g.chunks {
			need[cr.leaf] = cr.copies == nil && !cr.keyed
			if cr.copies != nil {
				need[w.fm.copies.host] = true
				if !slices.Contains(gcols, w.fm.copies.host) {
					gcols = append(slices.Clone(gcols), w.fm.copies.host)
				}
			}
		}
		for _, c := range gcols {
			cm := &md.RowGroups[g.rg].Columns[c].MetaData
			start := cm.DataPageOffset
			if d := cm.DictionaryPageOffset; d > 0 && d < start {
				start = d
			}
			r := brange{start, start + cm.TotalCompressedSize}
			if need[c] || !slices.Contains(w.leaves, c) || c == w.keyLeaf {
				scan = append(scan, r) // a scan reads the key column to filter
			}
			if need[c] {
				read = append(read, r)
			}
		}
	}
	scan = coalesce(scan, gap)
	price := func(rs []brange) (bytes int64) {
		for _, r := range rs {
			bytes += r.end - r.off
		}
		return bytes
	}
	ib, sb := price(idx), price(scan)
	plan.IndexPathBytes += ib
	plan.IndexPathRanges += len(idx)
	plan.ScanBytes += sb
	plan.ScanRanges += len(scan)
	if sb+int64(len(scan))*gap < ib+int64(len(idx))*gap {
		plan.ScanFiles++
		return coalesce(read, gap)
	}
	plan.UnshapedPages += w.unshaped // the pages as planned are read
	return idx
}

// leavesOf returns the leaf column indexes under c.
func leavesOf(c *parquet.Column) []int {
	if c.Leaf() {
		return []int{c.Index()}
	}
	var out []int
	for _, k := range c.Columns() {
		out = append(out, leavesOf(k)...)
	}
	return out
}

// cacheDicts keeps the dictionary pages a lookup fetched, those the lookup
// did not decode (a decoded dictionary is kept instead: planFile).
func (ri *RowIndex) cacheDicts(w *fileWork) {
	for _, dk := range w.dicts {
		if _, ok := ri.cache.get(dk); ok {
			continue
		}
		if _, ok := ri.cache.get(decodedDictKey(dk)); ok {
			continue
		}
		dr := w.fm.dictRange(dk.rg, dk.col)
		b := make([]byte, dr.end-dr.off)
		if w.sp.serve(b, dr.off) == len(b) {
			ri.cache.put(dk, b, int64(len(b))+64)
		}
	}
}
