package rowindex

import (
	"context"
	"errors"
	"time"
)

// batchRows is how many rows a RowIter selects before reading them: a
// batch's pages are fetched in one round of concurrent reads and decoded
// once, and a hot key's rows pass through memory a batch at a time.
const batchRows = 1 << 16

// RowIter streams the rows of one lookup in (key, file id, row group, row)
// order, a batch at a time, so that a key with millions of rows never
// holds them all in memory. It is not safe for concurrent use; the RowIndex
// it came from is.
//
//	it, err := ri.Iter(ctx, q)
//	if err != nil { ... }
//	defer it.Close()
//	for it.Next() {
//		row := it.Row()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
type RowIter struct {
	ri   *RowIndex
	ctx  context.Context
	q    Query
	man  *Manifest
	ids  map[int32]*FileEntry
	im   *meter // index reads
	dm   *meter // data reads
	plan Plan

	stream    *entryStream
	cur       *cursor
	coverIdx  map[string]int
	covered   bool
	needCover bool
	aggs      map[string]*aggState
	files     map[int32]bool // data files read so far
	columns   []string

	batch     []Row
	i         int
	total     int    // rows selected so far
	last      *piece // the last piece selected
	cursorOut string // Result.Cursor: set when the limit cut the rows
	// subSkipped: the rows of a cut block that the cursor's page returned
	// were dropped (cutBlocks does it once, on the first batch).
	subSkipped bool
	// prevEnd is the position of the last row of the batches returned so
	// far under a limit (cutBlocks): a limit the batches filled exactly
	// ends the page there.
	prevEnd *cursor
	// hit: the limit cut the selection (selectRows found a row past it).
	hit bool
	// pend is an entry of a co-grouped blob file whose selection stopped
	// at row pendFrom because the batch's block budget was spent
	// (blockBudget): the next batch resumes it there.
	pend     *entry
	pendFrom int64
	// blkStored and blkRows are the stored rows of block files read so far
	// under a limit and the rows they held: the rows per block that size
	// the next batch's budget.
	blkStored, blkRows int64
	drained            bool // the entry stream is exhausted
	done               bool
	// readsAhead: batches are read ahead of the caller (readahead.go);
	// ahead holds those being read, oldest first, under readCtx.
	readsAhead bool
	slab       []piece // newPiece's, of slabSize pieces
	slabSize   int
	lastBatch  int // batchSize's last answer
	// readRows is the rows of the batches read so far (readsAhead): with
	// the data meter's bytes, the bytes a row costs, which size the next
	// batch.
	readRows    int64
	ahead       []*aheadRead
	readCtx     context.Context
	cancelReads context.CancelFunc
	err         error
	start       time.Time
}

// Iter starts a lookup whose rows are read as the caller consumes them.
// Query.Limit and Query.Cursor work as in Lookup: the iterator stops after
// Limit rows, and Cursor (after the last row) continues it. Aggregates
// complete once Next has returned false.
func (ri *RowIndex) Iter(ctx context.Context, q Query) (*RowIter, error) {
	it, err := ri.iter(ctx, q)
	if errors.Is(err, errFragmentGone) {
		if rerr := ri.Refresh(ctx); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		it, err = ri.iter(ctx, q)
	}
	return it, err
}

func (ri *RowIndex) iter(ctx context.Context, q Query) (*RowIter, error) {
	man, ids, blockFiles := ri.filesSnapshot()
	it := &RowIter{ri: ri, ctx: ctx, q: q, man: man, ids: ids, im: new(meter), dm: new(meter),
		plan: Plan{Kind: man.Kind}, files: map[int32]bool{}, start: time.Now(), columns: q.Columns}
	if q.KeyColumn != "" && q.KeyColumn != man.Key {
		return nil, badQuery("row index %s is on column %q, not %q", man.Name, man.Key, q.KeyColumn)
	}
	if man.KeyClass == "" {
		// Nothing indexed yet (an index with no data files): no key can
		// match, and the key column's class, which parses KeyText, is
		// not known.
		it.drained, it.done = true, true
		return it, nil
	}
	lo, hi, isRange, err := q.keyBounds(man.KeyClass)
	if err != nil {
		return nil, err
	}
	if isRange && man.Kind != KindSorted {
		return nil, badQuery("row index %s is a hash index: range lookups need kind sorted", man.Name)
	}
	if q.Cursor != "" {
		if it.cur, err = decodeCursor(q.Cursor); err != nil {
			return nil, err
		}
	}
	if len(man.Cover) > 0 {
		it.coverIdx = make(map[string]int, len(man.Cover))
		for i, c := range man.Cover {
			it.coverIdx[c] = i
		}
	}
	for _, f := range q.Where {
		if _, ok := it.coverIdx[f.Column]; !ok {
			return nil, badQuery("filter on %q: only cover columns %v can be filtered", f.Column, man.Cover)
		}
	}
	// Covered: every requested column is a cover column or the key itself.
	it.covered = len(q.Columns) > 0
	for _, c := range q.Columns {
		if _, ok := it.coverIdx[c]; !ok && c != man.Key {
			it.covered = false
		}
	}
	it.needCover = it.covered && len(man.Cover) > 0 || len(q.Where) > 0
	// Batches are read ahead of the caller when every row of the keys is
	// read (no limit: a limit's batches are cut by what the ones before
	// returned), from the data files (not covered), none of them block
	// files (whose batches are sized by the rows the ones before held).
	it.readsAhead = q.Limit == 0 && !it.covered && !blockFiles
	// Every entry of the key is read when aggregates are kept (they sum
	// over all of them) or no limit cuts the rows: then decode all
	// candidate groups at once.
	all := q.Limit == 0 || len(man.Aggregates) > 0
	if !it.covered {
		// The shape files' listing, beside the fragment reads (shapefile.go).
		ri.startShapeListing(ctx, it.im)
	}
	if it.stream, err = ri.newEntryStream(ctx, it.im, man, lo, hi, isRange, all); err != nil {
		return nil, err
	}
	return it, nil
}

// Next advances to the next row, reading the next batch when the current
// one is used up. It returns false at the end or on an error (see Err).
func (it *RowIter) Next() bool {
	if it.err != nil {
		return false
	}
	it.i++
	for it.i >= len(it.batch) {
		if it.done {
			it.finish()
			return false
		}
		it.batch, it.i = nil, 0
		if err := it.fill(); err != nil {
			it.err = err
			it.batch = nil
			it.stopReads()
			return false
		}
	}
	return true
}

// Row returns the current row.
func (it *RowIter) Row() Row { return it.batch[it.i] }

// Err returns the error that stopped the iteration, if any.
func (it *RowIter) Err() error { return it.err }

// Close releases the iterator. It is safe to call more than once.
func (it *RowIter) Close() error {
	it.stopReads()
	it.batch, it.stream, it.done = nil, nil, true
	return nil
}

// Cursor continues after the last row returned when the limit cut the rows
// ("" when no row is left). It is final once Next has returned false.
func (it *RowIter) Cursor() string { return it.cursorOut }

// Columns returns the top-level columns of the rows (Query.Columns, or every
// column of the data files once a row was read).
func (it *RowIter) Columns() []string { return it.columns }

// Aggregates returns the key's aggregates, complete once Next has returned
// false.
func (it *RowIter) Aggregates() []KeyAggregates {
	var out []KeyAggregates
	for _, k := range slicesSortedKeys(it.aggs) {
		kv, _ := DecodeKey([]byte(k))
		out = append(out, KeyAggregates{Key: kv, Values: it.aggs[k].values(it.man.Aggregates)})
	}
	return out
}

// Plan returns what the lookup found and cost so far.
func (it *RowIter) Plan() Plan {
	p := it.plan
	p.Index, p.Data = it.im.cost(), it.dm.cost()
	p.Files = len(it.files)
	p.Elapsed = time.Since(it.start)
	return p
}

func (it *RowIter) finish() {
	it.stopReads() // none in flight: releases the read context
	if it.cursorOut != "" && it.total == 0 {
		it.cursorOut = ""
	}
}

// fill selects the next batch of rows from the entry stream and reads them.
// Under a limit, the stored rows of block files (FileEntry.Blocks) are
// selected a budget at a time (blockBudget): their rows are counted once
// read, so a key's first block, which may hold the whole page, is read
// before the rest are planned.
func (it *RowIter) fill() error {
	if it.readsAhead {
		return it.fillAhead()
	}
	pieces, blkSel, rows, err := it.selectBatch()
	if err != nil {
		return err
	}
	if it.drained {
		it.done = true
	}
	if len(pieces) == 0 {
		return nil
	}
	if it.covered && !it.anyBlocks(pieces) {
		it.plan.Covered = true
		batch, err := it.coveredRows(pieces)
		if err != nil {
			return err
		}
		it.batch = batch
	} else {
		batch, err := it.ri.readPieces(it.ctx, it.dm, it.man, it.ids, pieces, it.q.Columns, &it.plan)
		if err != nil {
			return err
		}
		if blkSel > 0 {
			// The batch's rows less the plain files' (a row per stored
			// row) are the blocks' rows.
			it.blkStored += blkSel
			it.blkRows += int64(len(batch)) - (int64(rows) - blkSel)
		}
		it.take(it.cutBlocks(batch, pieces), pieces)
	}
	it.plan.Rows += len(it.batch)
	if blkSel > 0 {
		// selectRows counted a block as one row: the rows returned are
		// known now, and the next batch's selection counts from them.
		it.total = it.plan.Rows
	}
	return nil
}

// take makes rows, read for pieces, the current batch.
func (it *RowIter) take(rows []Row, pieces []*piece) {
	it.batch = rows
	if it.columns == nil {
		if fm, ok := it.ri.cache.get(dataMetaKey{pieces[0].file}); ok {
			it.columns = dataColumns(fm.(*fileMeta))
		}
	}
}

// selectBatch selects the next batch's pieces from the entry stream: about
// batchRows rows (rows), blkSel of them stored rows of block files.
func (it *RowIter) selectBatch() (pieces []*piece, blkSel int64, rows int, err error) {
	man := it.man
	budget := it.blockBudget()
	size := it.batchSize()
	for n := 0; !it.drained && rows < size; n++ {
		if n%4096 == 0 {
			if err := it.ctx.Err(); err != nil {
				return nil, 0, 0, err // a hot key's entries are millions: stop when asked
			}
		}
		e, from, ok, err := it.nextEntry()
		if err != nil {
			return nil, 0, 0, err
		}
		if !ok {
			it.drained = true
			break
		}
		if it.q.NoRows || it.hit {
			if it.hit && len(man.Aggregates) == 0 {
				it.drained = true // nothing more to learn from the entries
			}
			continue
		}
		fe, ok := it.ids[e.File]
		if !ok {
			return nil, 0, 0, corrupt("entry names unknown file id %d", e.File)
		}
		most := int64(-1)
		if budget >= 0 && fe.Blocks {
			most = budget - blkSel
		}
		n, next, hit, err := it.selectRows(&e, from, most, &pieces)
		if err != nil {
			return nil, 0, 0, err
		}
		rows += n
		if fe.Blocks {
			blkSel += int64(n)
		}
		if hit {
			it.hit = true
			if len(man.Aggregates) == 0 {
				it.drained = true
			}
		} else if next < e.N {
			// The budget is spent: read this batch first.
			it.pend, it.pendFrom = &e, next
			break
		}
	}
	for _, p := range pieces {
		it.files[p.file] = true
	}
	it.plan.RowRanges += len(pieces)
	return pieces, blkSel, rows, nil
}

// nextEntry returns the next entry with rows to select and the row of it to
// start at: the entry a spent budget stopped (pend), else the stream's next,
// merging the aggregate entries it passes.
func (it *RowIter) nextEntry() (entry, int64, bool, error) {
	if e := it.pend; e != nil {
		it.pend = nil
		return *e, it.pendFrom, true, nil
	}
	man := it.man
	for {
		e, ok, err := it.stream.next()
		if err != nil || !ok {
			return entry{}, 0, false, err
		}
		if e.isStale() {
			kv, _ := DecodeKey(e.Key)
			return entry{}, 0, false, &StaleAggregatesError{Index: man.Name, Key: kv}
		}
		if !e.isAggregate() {
			it.plan.Entries++
			return e, 0, true, nil
		}
		s, err := decodeAggState(man.Aggregates, e.Cover)
		if err != nil {
			return entry{}, 0, false, err
		}
		if acc, ok := it.aggs[string(e.Key)]; ok {
			acc.merge(man.Aggregates, s)
		} else {
			if it.aggs == nil {
				it.aggs = map[string]*aggState{}
			}
			it.aggs[string(e.Key)] = s
		}
	}
}

// blockBudget is how many stored rows of block files the next batch may
// select: -1 (no bound) without a limit; under one, a single block until
// one was read, then as many as the rows still wanted take at the rows per
// block seen so far, and one more (blocks differ: one short block should
// not cost another round of reads).
func (it *RowIter) blockBudget() int64 {
	if it.q.Limit <= 0 || it.q.NoRows {
		return -1
	}
	if it.blkStored == 0 || it.blkRows <= 0 {
		return 1
	}
	need := max(int64(it.q.Limit-it.plan.Rows), 1)
	return (need*it.blkStored+it.blkRows-1)/it.blkRows + 1
}

// anyBlocks reports whether a piece is in a file whose stored rows hold
// several rows (FileEntry.Blocks): the index's entries count stored rows,
// so even a lookup of the key alone reads such a file.
func (it *RowIter) anyBlocks(pieces []*piece) bool {
	for _, p := range pieces {
		if fe := it.ids[p.file]; fe != nil && fe.Blocks {
			return true
		}
	}
	return false
}

// cutBlocks applies the cursor and the limit to the rows of co-grouped
// blocks, where a stored row holds a block of rows and the selection counted
// stored rows: the rows of the cursor's stored row returned on the previous
// page are dropped, and rows past the limit are cut, the cursor then naming
// the last row's stored row and how many of its rows are out. pieces are
// the batch's selected pieces: a batch without blocks has a row per piece
// row, and its rows no position of their own (Row.blk).
func (it *RowIter) cutBlocks(batch []Row, pieces []*piece) []Row {
	if c := it.cur; c != nil && c.Sub > 0 && !it.subSkipped {
		it.subSkipped = true
		n := 0
		for n < len(batch) && batch[n].blk != nil && batch[n].bi < c.Sub && cmpPos(batch[n].blk.pos.Key, batch[n].blk.pos.File, batch[n].blk.pos.RG, batch[n].blk.pos.Row, c) == 0 {
			n++
		}
		batch = batch[n:]
	}
	l := it.q.Limit
	if l <= 0 || it.plan.Rows+len(batch) <= l {
		if l > 0 && len(batch) > 0 {
			c := rowCursor(batch, len(batch)-1, pieces)
			it.prevEnd = &c
		}
		return batch
	}
	cut := max(l-it.plan.Rows, 0)
	batch = batch[:cut]
	// Rows past the cut exist: the page ends here.
	it.drained, it.done = true, true
	if cut == 0 {
		// The batches before filled the limit exactly (they counted
		// more rows than stored rows were selected, so this batch was
		// selected): the page ends after their last row, not after
		// this batch's selection (selectRows' cursor, if any).
		if it.prevEnd != nil {
			it.cursorOut = it.prevEnd.encode()
		}
		return batch
	}
	it.cursorOut = rowCursor(batch, cut-1, pieces).encode()
	return batch
}

// rowCursor is the cursor after row i of batch: its stored row's position
// and, for a row of a co-grouped block, how many of the block's rows are
// out. A batch whose rows have no position (no file of it has blocks)
// holds its pieces' rows in order.
func rowCursor(batch []Row, i int, pieces []*piece) cursor {
	if r := batch[i]; r.blk != nil {
		c := r.blk.pos
		if r.bi+1 < r.blk.n {
			c.Sub = r.bi + 1
		}
		return c
	}
	for _, p := range pieces {
		if int64(i) < p.n {
			return cursor{Key: p.key, File: p.file, RG: p.rg, Row: p.row + int64(i)}
		}
		i -= int(p.n)
	}
	// Not reached: the rows are the pieces'.
	p := pieces[len(pieces)-1]
	return cursor{Key: p.key, File: p.file, RG: p.rg, Row: p.row + p.n - 1}
}

// selectRows appends the rows of run e from row from on that pass the
// cursor, the filters and the limit to pieces, at most most of them (-1: no
// bound). It returns how many it selected, the row it stopped before (e.N
// when it went through), and whether the limit cut the rows (a further row
// exists: the cursor is set).
func (it *RowIter) selectRows(e *entry, from, most int64, pieces *[]*piece) (int, int64, bool, error) {
	man := it.man
	var cov [][]any
	// Without filters, the covered path decodes a piece's cover values
	// when it builds the piece's rows (coveredRows), straight into the
	// rows' slices: only the rows kept, no per-entry slices.
	lazy := it.needCover && len(it.q.Where) == 0
	if it.needCover && !lazy {
		vals, err := decodeValues(e.Cover)
		if err != nil {
			return 0, 0, false, err
		}
		w := len(man.Cover)
		if int64(len(vals)) != e.N*int64(w) {
			return 0, 0, false, corrupt("cover of %d values for %d rows × %d columns", len(vals), e.N, w)
		}
		cov = make([][]any, e.N)
		for i := range cov {
			cov[i] = vals[i*w : (i+1)*w]
		}
	}
	// A run entirely at or before the cursor is skipped whole.
	if c := it.cur; c != nil && len(it.q.Where) == 0 && !pastCursor(e.Key, e.File, e.RG, e.Row+e.N-1, c) {
		return 0, e.N, false, nil
	}
	var p *piece
	n := 0
	for i := from; i < e.N; i++ {
		row := e.Row + i
		keep := it.cur == nil || pastCursor(e.Key, e.File, e.RG, row, it.cur)
		if keep && len(it.q.Where) > 0 {
			var err error
			if keep, err = match(it.q.Where, it.coverIdx, cov[i]); err != nil {
				return n, i, false, err
			}
		}
		if !keep {
			p = nil
			continue
		}
		if it.q.Limit > 0 && it.total >= it.q.Limit {
			if l := it.last; l != nil {
				it.cursorOut = cursor{Key: l.key, File: l.file, RG: l.rg, Row: l.row + l.n - 1}.encode()
			}
			return n, i, true, nil
		}
		if most >= 0 && int64(n) >= most {
			return n, i, false, nil
		}
		if p == nil {
			p = it.newPiece()
			*p = piece{key: e.Key, file: e.File, rg: e.RG, row: row}
			if lazy {
				p.raw, p.skip, p.entryRows = e.Cover, i, e.N
			}
			*pieces = append(*pieces, p)
			it.last = p
		}
		p.n++
		if cov != nil {
			p.cover = append(p.cover, cov[i])
		}
		it.total++
		n++
	}
	return n, e.N, false, nil
}

// batchSize returns the rows the next batch selects: batchRows, or for a
// lookup that reads ahead batchMinRows at first, doubling per batch up to
// batchRows, and no more than batchBytes' worth at the bytes per row its
// batches have read so far. A key of a few thousand rows is then read as
// two or three batches at once instead of one whose planning and assembly
// run alone; the top key's batches soon reach the full size where its rows
// lie together (few pages hold rows of two batches, and are read by both);
// and a key whose rows are spread thin (a row in every page of a 1 MiB-page
// file) is read a few files at a time, not all of them at once. The first
// two batches (512 and 1,024 rows) are chosen before any is read; the
// bytes counted include those of batches still being read (their rows
// not yet), which errs towards smaller batches, so where batches end (and
// a Plan's range counts for keys of a few thousand rows) may vary from run
// to run, never the rows.
func (it *RowIter) batchSize() int {
	if it.ri.batchRows > 0 {
		return it.ri.batchRows
	}
	if !it.readsAhead {
		return batchRows
	}
	n := min(max(2*it.lastBatch, batchMinRows), batchRows)
	budget := int64(batchBytes)
	if it.ri.batchBytes > 0 {
		budget = it.ri.batchBytes
	}
	if read := it.dm.bytes.Load(); it.readRows > 0 && read > 0 {
		n = int(min(int64(n), max(budget*it.readRows/read, batchMinRows)))
	}
	it.lastBatch = n
	return n
}

// batchMinRows is the rows of a lookup's first batch read ahead, and the
// fewest of any: small enough that a key spread over a row a page plans
// fewer than learnMaxPages pages a batch, so its pages' shapes are learnt
// and later lookups read them in parts (batches of 2,048 rows planned
// ≈4,500 pages of the pyarrow lake: keys of 1k–10k rows took 216 ms, 56 ms
// at 512).
const batchMinRows = batchRows / 128

// batchBytes bounds the bytes a batch read ahead fetches (batchSize): with
// readAheadBatches of them in flight, what a lookup holds in fetched
// ranges. A 76k-row key of the pyarrow lake (a row in nearly every 1 MiB
// page of its 100 files) read batches of 290–580 MB, held two at a time.
const batchBytes = 64 << 20

// pieceSlab is the most pieces a RowIter allocates at once.
const pieceSlab = 256

// newPiece returns a piece from the iterator's slab: in arrival order a hot
// key's batch selects tens of thousands of one-row pieces, and allocating
// each was a third of its selection's CPU (stop 26). Slabs start at one
// piece and double: a light key's lookup selects a few.
func (it *RowIter) newPiece() *piece {
	if len(it.slab) == 0 {
		it.slabSize = min(max(2*it.slabSize, 1), pieceSlab)
		it.slab = make([]piece, it.slabSize)
	}
	p := &it.slab[0]
	it.slab = it.slab[1:]
	return p
}

// coveredRows answers pieces from the index alone. The rows' value slices
// share one backing array (one allocation per batch, not per row), and a
// piece selected without filters decodes its cover values here, only for
// its rows.
func (it *RowIter) coveredRows(pieces []*piece) ([]Row, error) {
	total := 0
	for _, p := range pieces {
		total += int(p.n)
	}
	w := len(it.q.Columns)
	rows := make([]Row, 0, total)
	slab := make([]any, total*w)
	ncover := len(it.man.Cover)
	var cov []any // one row's cover values (lazy pieces)
	if ncover > 0 {
		cov = make([]any, ncover)
	}
	for _, p := range pieces {
		fe := it.ids[p.file]
		kv, _ := DecodeKey(p.key)
		var rest []byte
		if p.raw != nil {
			var err error
			if rest, err = skipValues(p.raw, int(p.skip)*ncover); err != nil {
				return nil, err
			}
		}
		for i := range p.n {
			vals := slab[:w:w]
			slab = slab[w:]
			rowCover := cov
			if p.raw != nil {
				var err error
				if rest, err = decodeValuesInto(cov, rest); err != nil {
					return nil, err
				}
			} else if p.cover != nil {
				rowCover = p.cover[i]
			}
			for j, c := range it.q.Columns {
				if k, ok := it.coverIdx[c]; ok {
					vals[j] = rowCover[k]
				} else {
					vals[j] = kv // the key column
				}
				it.plan.BytesReturned += sizeOfValue(vals[j])
			}
			rows = append(rows, Row{Key: kv, File: fe.URI, RowGroup: int(p.rg), Row: rowInFile(fe, p.rg, p.row+i), Covered: vals})
		}
		if p.raw != nil {
			// The entry's remaining rows must hold exactly their values.
			left := int(p.entryRows-p.skip-p.n) * ncover
			if r, err := skipValues(rest, left); err != nil || len(r) != 0 {
				return nil, corrupt("cover of an entry of %d rows × %d columns has the wrong number of values", p.entryRows, ncover)
			}
		}
	}
	return rows, nil
}

// lookup collects an iterator's rows into a Result.
func (ri *RowIndex) lookup(ctx context.Context, q Query) (*Result, error) {
	it, err := ri.iter(ctx, q)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	res := &Result{}
	// Whole batches, copied once into a slice of the final size.
	var batches [][]Row
	n := 0
	for it.Next() {
		batches = append(batches, it.batch[it.i:])
		n += len(it.batch) - it.i
		it.i = len(it.batch) - 1
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	switch {
	case len(batches) == 1:
		res.Rows = batches[0] // a light key's one batch: nothing else holds it
	case n > 0:
		res.Rows = make([]Row, 0, n)
		for _, b := range batches {
			res.Rows = append(res.Rows, b...)
		}
	}
	res.Columns = it.Columns()
	res.Aggregates = it.Aggregates()
	res.Cursor = it.Cursor()
	res.Plan = it.Plan()
	return res, nil
}
