package fileindex

import (
	"context"
	"sync"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// loadPrefetchBatches bounds the row batches read ahead of the engine's
// appender. Decoding the data files (Go) and appending (DuckDB's appender,
// mostly cgo) each take about half of a load on their own, so one batch
// ahead already lets them overlap on two cores; 8 batches of
// datafile.DefaultBatchRows (1024) rows of ~100 B are ~800 KiB in flight
// and absorb the readers' burstiness (a Parquet page or row group decoded
// at once).
const loadPrefetchBatches = 8

// prefetched is one batch (or the terminal error) from the reading goroutine.
type prefetched struct {
	rows []pqrow.Row
	err  error
}

// prefetchSource reads a duck.Source in its own goroutine, up to
// loadPrefetchBatches batches ahead of its consumer, so that reading and
// loading overlap. Batches come out in the source's order, and the source's
// first error (io.EOF at the end) is returned after the batches before it
// and then forever after.
//
// The wrapped source is used by the reading goroutine only, until close
// returns; close must be called before the source is closed. A
// prefetchSource is not safe for concurrent use.
type prefetchSource struct {
	schema *schema.Struct
	ch     chan prefetched
	cancel context.CancelFunc
	wg     sync.WaitGroup
	err    error // sticky, once the terminal item was received
}

// newPrefetch starts reading src. The goroutine stops at the source's end,
// its first error, or when close cancels it.
func newPrefetch(ctx context.Context, src duck.Source) *prefetchSource {
	ctx, cancel := context.WithCancel(ctx)
	p := &prefetchSource{schema: src.Schema(), ch: make(chan prefetched, loadPrefetchBatches), cancel: cancel}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(p.ch)
		for {
			rows, err := src.Next(ctx)
			select {
			case p.ch <- prefetched{rows: rows, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

// Schema returns the source's schema.
func (p *prefetchSource) Schema() *schema.Struct { return p.schema }

// Next returns the next batch read ahead, or the source's error.
func (p *prefetchSource) Next(ctx context.Context) ([]pqrow.Row, error) {
	if p.err != nil {
		return nil, p.err
	}
	select {
	case it, ok := <-p.ch:
		if !ok {
			// Only after close cancelled the reader.
			p.err = context.Canceled
			return nil, p.err
		}
		if it.err != nil {
			p.err = it.err
			return nil, it.err
		}
		return it.rows, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// close stops the reading goroutine and waits for it, so the wrapped
// source may then be closed.
func (p *prefetchSource) close() {
	p.cancel()
	p.wg.Wait()
}
