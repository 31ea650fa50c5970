package rowindexbench

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/store"
)

// standardReader answers key lookups the way a well-behaved Parquet reader
// does without an external index, with parquet-go: for every file, read the
// footer and page index; skip row groups by the key column's statistics,
// then by its bloom filter; find candidate pages of the key column by the
// column index, read them to find the matching rows, then read those rows of
// every column by seeking through the offset index. Files are processed in
// parallel; inside a file each step depends on the previous one. Nothing is
// cached between lookups. It is the overview's baseline.
type standardReader struct {
	st     store.Store
	files  []string // keys of st
	sizes  []int64
	keyCol string
}

// standardConcurrency caps the files the standard reader reads at once.
const standardConcurrency = 256

// standardReadBuffer is the baseline's read size: a reader that knows the
// page it wants fetches it in one request (pages are ≤ 1 MiB here), instead
// of parquet-go's default 4 KiB reads.
const standardReadBuffer = 1 << 20

// lookup returns the rows whose key column equals key (an int64 column).
func (s *standardReader) lookup(ctx context.Context, key int64) ([]parquet.Row, error) {
	out := make([][]parquet.Row, len(s.files))
	errs := make([]error, len(s.files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, standardConcurrency)
	for i := range s.files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = s.lookupFile(ctx, i, key)
		}()
	}
	wg.Wait()
	var rows []parquet.Row
	for i := range out {
		if errs[i] != nil {
			return nil, errs[i]
		}
		rows = append(rows, out[i]...)
	}
	return rows, nil
}

func (s *standardReader) lookupFile(ctx context.Context, i int, key int64) ([]parquet.Row, error) {
	ra := store.NewReaderAt(ctx, s.st, s.files[i], s.sizes[i])
	f, err := parquet.OpenFile(ra, s.sizes[i], parquet.SkipMagicBytes(true), parquet.SkipBloomFilters(true),
		parquet.ReadBufferSize(standardReadBuffer))
	if err != nil {
		return nil, err
	}
	col := f.Root().Column(s.keyCol)
	if col == nil {
		return nil, fmt.Errorf("%s: no column %q", s.files[i], s.keyCol)
	}
	kc := col.Index()
	want := parquet.ValueOf(key)
	var rows []parquet.Row
	for _, g := range f.RowGroups() {
		cc := g.ColumnChunks()[kc]
		if lo, hi, ok := cc.(*parquet.FileColumnChunk).Bounds(); ok && (key < lo.Int64() || key > hi.Int64()) {
			continue // statistics
		}
		if bf := cc.BloomFilter(); bf != nil {
			if ok, err := bf.Check(want); err == nil && !ok {
				continue // bloom filter
			}
		}
		ci, err1 := cc.ColumnIndex()
		oi, err2 := cc.OffsetIndex()
		var firsts []int64 // candidate pages' first rows
		var ends []int64
		if err1 == nil && err2 == nil {
			for p := range ci.NumPages() {
				if ci.NullPage(p) || key < ci.MinValue(p).Int64() || key > ci.MaxValue(p).Int64() {
					continue // page index
				}
				end := g.NumRows()
				if p+1 < oi.NumPages() {
					end = oi.FirstRowIndex(p + 1)
				}
				firsts, ends = append(firsts, oi.FirstRowIndex(p)), append(ends, end)
			}
		} else {
			firsts, ends = []int64{0}, []int64{g.NumRows()}
		}
		// Matching rows: read the candidate pages of the key column.
		var match []int64
		for j := range firsts {
			pages := cc.Pages()
			if err := pages.SeekToRow(firsts[j]); err != nil {
				pages.Close()
				return nil, err
			}
			row := firsts[j]
			for row < ends[j] {
				page, err := pages.ReadPage()
				if err == io.EOF {
					break
				}
				if err != nil {
					pages.Close()
					return nil, err
				}
				vals := make([]parquet.Value, page.NumValues())
				n, _ := page.Values().ReadValues(vals)
				for _, v := range vals[:n] {
					if row < ends[j] && !v.IsNull() && v.Int64() == key {
						match = append(match, row)
					}
					row++
				}
				parquet.Release(page)
			}
			pages.Close()
		}
		// The matching rows of every column, run by run.
		rr := g.Rows()
		for k := 0; k < len(match); {
			n := 1
			for k+n < len(match) && match[k+n] == match[k]+int64(n) {
				n++
			}
			if err := rr.SeekToRow(match[k]); err != nil {
				rr.Close()
				return nil, err
			}
			buf := make([]parquet.Row, n)
			got, err := rr.ReadRows(buf)
			if err != nil && err != io.EOF || got != n {
				rr.Close()
				return nil, err
			}
			for _, r := range buf[:got] {
				rows = append(rows, r.Clone())
			}
			k += n
		}
		rr.Close()
	}
	return rows, nil
}
