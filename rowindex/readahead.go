package rowindex

import "context"

// readAheadBatches is how many batches a RowIter that reads ahead keeps
// being read at once. Two: while one batch's serial parts run (planning
// its pages, assembling its rows) the other's reads and decoding use the
// remaining core; a hot key read one batch at a time kept 1.3 of 2 cores
// busy (stop 26).
const readAheadBatches = 2

// aheadRead is a batch being read while the batches before it are
// returned.
type aheadRead struct {
	done   chan struct{} // closed once rows, plan and err are set
	pieces []*piece
	rows   []Row
	plan   Plan // what readPieces adds to the lookup's plan
	err    error
}

// fillAhead is fill for a lookup that reads ahead: it keeps up to
// readAheadBatches batches being read, each on its own goroutine, and makes
// the oldest the current batch once read. A lookup of one batch (a light
// key) reads it on the calling goroutine, as fill does.
func (it *RowIter) fillAhead() error {
	var rows []Row
	var pieces []*piece
	if len(it.ahead) == 0 {
		// Nothing being read: a lookup of one batch (a light key's, or
		// the last) is read here.
		var err error
		if pieces, err = it.topUp(true); err != nil {
			return err
		}
		if pieces != nil {
			if rows, err = it.ri.readPieces(it.ctx, it.dm, it.man, it.ids, pieces, it.q.Columns, &it.plan); err != nil {
				return err
			}
		}
	}
	if pieces == nil {
		if len(it.ahead) == 0 {
			it.done = it.drained
			return nil
		}
		a := it.ahead[0]
		it.ahead = it.ahead[1:]
		<-a.done
		it.plan.addReads(&a.plan)
		if a.err != nil {
			return a.err
		}
		rows, pieces = a.rows, a.pieces
		it.readRows += int64(len(rows))
	}
	// The next batches are read while the caller consumes this one.
	if _, err := it.topUp(false); err != nil {
		return err
	}
	it.take(rows, pieces)
	it.plan.Rows += len(rows)
	it.done = it.drained && len(it.ahead) == 0
	return nil
}

// topUp selects batches and starts reading them until readAheadBatches are
// being read or the entry stream is drained. With inline set, it returns
// instead of starting it a batch that is the lookup's only one left (the
// stream drained once it is selected, nothing being read): the caller
// reads it on its goroutine.
func (it *RowIter) topUp(inline bool) ([]*piece, error) {
	for len(it.ahead) < readAheadBatches && !it.drained {
		pieces, _, _, err := it.selectBatch()
		if err != nil {
			return nil, err
		}
		if len(pieces) == 0 {
			continue
		}
		if inline && it.drained && len(it.ahead) == 0 {
			return pieces, nil
		}
		it.ahead = append(it.ahead, it.startRead(pieces))
	}
	return nil, nil
}

// startRead reads pieces on a new goroutine under the iterator's read
// context, which Close cancels.
func (it *RowIter) startRead(pieces []*piece) *aheadRead {
	if it.cancelReads == nil {
		it.readCtx, it.cancelReads = context.WithCancel(it.ctx)
	}
	a := &aheadRead{done: make(chan struct{}), pieces: pieces}
	go func() {
		defer close(a.done)
		a.rows, a.err = it.ri.readPieces(it.readCtx, it.dm, it.man, it.ids, pieces, it.q.Columns, &a.plan)
	}()
	return a
}

// stopReads cancels the batches being read ahead and waits for them: a
// closed or failed iterator leaves no read running.
func (it *RowIter) stopReads() {
	if it.cancelReads != nil {
		it.cancelReads()
	}
	for _, a := range it.ahead {
		<-a.done
	}
	it.ahead = nil
}

// addReads adds to p what readPieces added to q (its own plan, as a batch
// read ahead has).
func (p *Plan) addReads(q *Plan) {
	p.ByteRanges += q.ByteRanges
	p.BytesReturned += q.BytesReturned
	p.IndexPathBytes += q.IndexPathBytes
	p.IndexPathRanges += q.IndexPathRanges
	p.ScanBytes += q.ScanBytes
	p.ScanRanges += q.ScanRanges
	p.ScanFiles += q.ScanFiles
	p.ShapeRecords += q.ShapeRecords
	p.ShapeFilesIgnored += q.ShapeFilesIgnored
	if p.ShapeFileIgnoredReason == "" {
		p.ShapeFileIgnoredReason = q.ShapeFileIgnoredReason
	}
	p.DictEntries += q.DictEntries
	p.UnshapedPages += q.UnshapedPages
}
