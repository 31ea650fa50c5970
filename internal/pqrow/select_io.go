package pqrow

import (
	"io"
	"slices"
	"sort"

	"github.com/ariadne-go/ariadne/internal/bufpool"
	"github.com/parquet-go/parquet-go"
)

// Selective reads know, from the page index, which bytes they need: the
// pages holding the wanted rows and the column's dictionary. Reading those
// ranges up front, coalesced, in one request each, replaces the page
// reader's buffered reads (256 KiB from each page on, most of which a
// selective read throws away) and its request per column.

// byteSpan is a range of the file's bytes.
type byteSpan struct{ off, end int64 }

// coalesceGap is the largest hole between two wanted ranges that is read
// rather than paid for with another request.
const coalesceGap = 32 << 10

// spanReader serves reads inside its prefetched spans from memory and any
// other read from the file. A read that starts inside a span and runs past
// its end is cut short with a nil error: the page reader reads through an
// io.SectionReader and a bufio.Reader, which both take short reads, and
// its next read, outside the span, goes to the file.
type spanReader struct {
	file   io.ReaderAt
	spans  []byteSpan // sorted, disjoint
	data   [][]byte
	pooled bool // data from spanPool: give back with release
}

func (r *spanReader) ReadAt(p []byte, off int64) (int, error) {
	i := sort.Search(len(r.spans), func(i int) bool { return r.spans[i].end > off })
	if i < len(r.spans) && r.spans[i].off <= off {
		return copy(p, r.data[i][off-r.spans[i].off:]), nil
	}
	if i < len(r.spans) && r.spans[i].off < off+int64(len(p)) {
		p = p[:r.spans[i].off-off]
	}
	return r.file.ReadAt(p, off)
}

// prefetch reads the wanted ranges, coalesced, one request each.
func prefetch(file io.ReaderAt, want []byteSpan) (*spanReader, error) {
	return prefetchInto(file, want, false)
}

// prefetchPooled is prefetch into pooled buffers: the caller must call
// release once nothing reads through the spanReader any more (the page
// reader copies what it reads, so no page or value points into them).
func prefetchPooled(file io.ReaderAt, want []byteSpan) (*spanReader, error) {
	return prefetchInto(file, want, true)
}

// release gives a pooled spanReader's buffers back.
func (r *spanReader) release() {
	if !r.pooled {
		return
	}
	for i, b := range r.data {
		bufpool.Put(b)
		r.data[i] = nil
	}
	r.pooled = false
}

// spanBuf is a buffer for a prefetched span of n bytes: pooled (bufpool:
// a one-key join reads ≈5 MB of pages into them; allocating them zeroed
// each time was ≈5 % of its CPU, and more in garbage collection) or not.
func spanBuf(n int64, pooled bool) []byte {
	if !pooled || n <= 0 || n > bufpool.MaxSize {
		return make([]byte, n)
	}
	return bufpool.Get(int(n))
}

func prefetchInto(file io.ReaderAt, want []byteSpan, pooled bool) (*spanReader, error) {
	slices.SortFunc(want, func(a, b byteSpan) int { return int(a.off - b.off) })
	r := &spanReader{file: file, pooled: pooled}
	for _, w := range want {
		if w.end <= w.off {
			continue
		}
		if k := len(r.spans); k > 0 && w.off <= r.spans[k-1].end+coalesceGap {
			r.spans[k-1].end = max(r.spans[k-1].end, w.end)
			continue
		}
		r.spans = append(r.spans, w)
	}
	r.data = make([][]byte, len(r.spans))
	for i, s := range r.spans {
		buf := spanBuf(s.end-s.off, pooled)
		r.data[i] = buf
		if _, err := file.ReadAt(buf, s.off); err != nil && !(err == io.EOF && len(buf) > 0) {
			r.release()
			return nil, err
		}
	}
	return r, nil
}

// pageSpans returns the bytes of the given pages of a chunk with an
// offset index, and of its dictionary (the bytes before its first data
// page).
func pageSpans(oi parquet.OffsetIndex, pages []int, chunkStart int64) []byteSpan {
	var out []byteSpan
	if len(pages) > 0 && chunkStart < oi.Offset(0) {
		out = append(out, byteSpan{chunkStart, oi.Offset(0)})
	}
	for _, p := range pages {
		out = append(out, byteSpan{oi.Offset(p), oi.Offset(p) + oi.CompressedPageSize(p)})
	}
	return out
}

// maxPageIndexBytes bounds the page-index region LoadPageIndex reads at
// once; a larger one (thousands of row groups × columns) is read per
// column chunk as needed.
const maxPageIndexBytes = 8 << 20

// LoadPageIndex reads the column and offset indexes of every column chunk
// in one request (they are contiguous, before the footer) and keeps them
// with the chunks, for MatchRows and ReadRowsAt. Without it they are read
// per column chunk as needed. A file without page indexes costs nothing.
func (f *File) LoadPageIndex() error {
	md := f.pf.Metadata()
	lo, hi := int64(-1), int64(-1)
	for _, rg := range md.RowGroups {
		for _, c := range rg.Columns {
			for _, s := range []byteSpan{{c.ColumnIndexOffset, c.ColumnIndexOffset + int64(c.ColumnIndexLength)},
				{c.OffsetIndexOffset, c.OffsetIndexOffset + int64(c.OffsetIndexLength)}} {
				if s.off <= 0 || s.end <= s.off {
					continue
				}
				if lo < 0 || s.off < lo {
					lo = s.off
				}
				hi = max(hi, s.end)
			}
		}
	}
	if lo < 0 || hi-lo > maxPageIndexBytes {
		return nil
	}
	r, err := prefetch(f.r, []byteSpan{{lo, hi}})
	if err != nil {
		return corrupt(err)
	}
	for _, g := range f.pf.RowGroups() {
		for _, cc := range g.ColumnChunks() {
			fcc, ok := cc.(*parquet.FileColumnChunk)
			if !ok {
				continue
			}
			// Errors (a chunk without an index, a malformed one) are
			// left to the reads, which then go without the index.
			fcc.ColumnIndexFrom(r)
			fcc.OffsetIndexFrom(r)
		}
	}
	return nil
}
