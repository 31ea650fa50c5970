package pqrow

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// parquet-go v0.32.0's LZ4_RAW codec (compress/lz4 Codec.Decode) retries a
// failed block decode with a buffer twice as large, forever: a corrupt
// LZ4_RAW page allocates until the process dies (a fatal out-of-memory, not
// a panic anyone can recover). No newer release fixes it and parquet-go
// has no codec registry to replace the codec, so every page parquet-go
// decodes comes through a reader that first decodes each LZ4_RAW page with
// a bounded decoder (GuardReader, OpenParquet), and the row index's own
// page path decompresses with DecompressPage. A page that does not decode
// to exactly its header's uncompressed size is a *PageError (ErrCorrupt).

// PageError reports a page whose bytes contradict its header: an LZ4_RAW
// page that does not decode, or not to its header's size. It matches
// ErrCorrupt.
type PageError struct {
	Offset int64  // the page header's offset in the file (-1: unknown)
	Reason string // what is wrong
}

func (e *PageError) Error() string {
	if e.Offset < 0 {
		return "corrupt page: " + e.Reason
	}
	return fmt.Sprintf("corrupt page at offset %d: %s", e.Offset, e.Reason)
}

// Unwrap makes a *PageError match ErrCorrupt.
func (e *PageError) Unwrap() error { return ErrCorrupt }

// maxLZ4Ratio bounds how much an LZ4 block can expand: a match token of
// ≥ 19 bytes costs 3 bytes plus one per 255 more, so no block decodes to
// more than 255 times its size (plus a few bytes). A header claiming more is
// refused before anything is allocated for it.
const maxLZ4Ratio = 255

// DecompressPage decodes a compressed page body src whose header promises
// size bytes, into dst's storage when it is large enough. LZ4_RAW is decoded
// here, into at most size bytes; a body that does not decode to exactly
// size bytes is a *PageError. Other codecs are parquet-go's.
func DecompressPage(codec format.CompressionCodec, dst, src []byte, size int) ([]byte, error) {
	if size < 0 {
		return nil, &PageError{Offset: -1, Reason: fmt.Sprintf("uncompressed size %d", size)}
	}
	if codec != format.Lz4Raw {
		out, err := parquet.LookupCompressionCodec(codec).Decode(dst, src)
		if err != nil {
			return nil, fmt.Errorf("decompress %v: %w", codec, err)
		}
		return out, nil
	}
	if err := checkLZ4Size(len(src), size); err != nil {
		return nil, &PageError{Offset: -1, Reason: err.Error()}
	}
	if cap(dst) < size {
		dst = make([]byte, size)
	}
	dst = dst[:size]
	n, err := lz4.UncompressBlock(src, dst)
	if err != nil || n != size {
		return nil, &PageError{Offset: -1, Reason: lz4Reason(len(src), size, n, err)}
	}
	return dst, nil
}

func checkLZ4Size(compressed, size int) error {
	if int64(size) > int64(compressed)*maxLZ4Ratio+64 {
		return fmt.Errorf("LZ4_RAW body of %d bytes cannot decode to the %d bytes its header claims", compressed, size)
	}
	return nil
}

func lz4Reason(compressed, size, n int, err error) string {
	if err != nil {
		return fmt.Sprintf("LZ4_RAW body of %d bytes does not decode into the %d bytes its header gives: %v", compressed, size, err)
	}
	return fmt.Sprintf("LZ4_RAW body of %d bytes decodes to %d bytes, its header gives %d", compressed, n, size)
}

// lz4Chunk is the byte range of one LZ4_RAW column chunk (its pages,
// headers included) and what the guard knows of it.
type lz4Chunk struct {
	off, end int64
	done     bool           // walked from its start
	err      error          // what the walk found (nil: every page sound)
	starts   map[int64]bool // offsets of pages found sound
	ends     map[int64]bool // where reads returned in the chunk ended
}

// maxReadEnds bounds the read ends remembered per chunk.
const maxReadEnds = 1 << 14

// guardedReader is an io.ReaderAt over a Parquet file that checks every
// LZ4_RAW column chunk a read touches before returning its bytes (see
// GuardReader).
type guardedReader struct {
	r io.ReaderAt

	mu     sync.Mutex
	chunks []*lz4Chunk // sorted by off; nil until armed
}

// GuardReader returns r for a Parquet file whose footer is md, such that
// before any byte of an LZ4_RAW column chunk is returned, every page of
// that chunk has been decoded with a bounded decoder (DecompressPage): a
// corrupt page fails the read with a *PageError instead of reaching
// parquet-go's codec. Each chunk is walked once per returned reader, by
// reading it through r in page-sized reads; a read that starts inside a
// chunk where no page starts and no earlier read ended (a seek through an
// offset index that does not agree with the pages) is walked from there.
// A file without LZ4_RAW chunks gets r itself.
func GuardReader(r io.ReaderAt, md *format.FileMetaData) io.ReaderAt {
	g := &guardedReader{r: r}
	if !g.arm(md) {
		return r
	}
	return g
}

// arm records md's LZ4_RAW chunks and reports whether there are any. A
// chunk's range is the one parquet-go reads its pages from.
func (g *guardedReader) arm(md *format.FileMetaData) bool {
	var cs []*lz4Chunk
	for i := range md.RowGroups {
		for j := range md.RowGroups[i].Columns {
			m := &md.RowGroups[i].Columns[j].MetaData
			if m.Codec != format.Lz4Raw {
				continue
			}
			off := m.DataPageOffset
			if m.DictionaryPageOffset != 0 {
				off = m.DictionaryPageOffset
			}
			cs = append(cs, &lz4Chunk{off: off, end: off + max(m.TotalCompressedSize, 0)})
		}
	}
	slices.SortFunc(cs, func(a, b *lz4Chunk) int { return cmp.Compare(a.off, b.off) })
	g.mu.Lock()
	g.chunks = cs
	g.mu.Unlock()
	return len(cs) > 0
}

func (g *guardedReader) ReadAt(p []byte, off int64) (int, error) {
	if err := g.check(off, off+int64(len(p))); err != nil {
		return 0, err
	}
	return g.r.ReadAt(p, off)
}

// check checks every chunk overlapping [off, end). A read failure
// (storage, a reader that serves only some ranges) is returned without
// being remembered, so a later read checks the chunk again.
func (g *guardedReader) check(off, end int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.chunks {
		if c.off >= end {
			break
		}
		if c.end <= off || c.end <= c.off {
			continue
		}
		if !c.done {
			c.starts = map[int64]bool{}
			err := c.walk(g.r, c.off, false)
			var pe *PageError
			if err != nil && !errors.As(err, &pe) {
				return err
			}
			c.done, c.err, c.ends = true, err, map[int64]bool{}
		}
		if c.err != nil {
			return c.err
		}
		if off > c.off && off < c.end && !c.starts[off] && !c.ends[off] {
			if err := c.walk(g.r, off, true); err != nil {
				return err
			}
		}
		if end < c.end {
			if len(c.ends) >= maxReadEnds {
				clear(c.ends)
			}
			c.ends[end] = true
		}
	}
	return nil
}

// walk decodes every data and dictionary page of the chunk from pos on with
// the bounded decoder, recording their offsets; memory is one page's
// compressed and uncompressed bytes. Headers or sizes that leave the chunk
// are a *PageError. From an offset where no page is known to start
// (fromRead), the walk stops at the first page found before, and only a
// page body that does not decode is an error: bytes that are no page
// header, or a page that does not fit, parquet-go refuses itself.
func (c *lz4Chunk) walk(r io.ReaderAt, pos int64, fromRead bool) error {
	var hbuf, body, out []byte
	for first := true; pos < c.end; first = false {
		if fromRead && !first && c.starts[pos] {
			return nil
		}
		h, hlen, err := readPageHeader(r, pos, c.end, &hbuf)
		if err != nil {
			var pe *PageError
			if fromRead && errors.As(err, &pe) {
				return nil // no page parquet-go could decode either
			}
			return err
		}
		csize, usize := int64(h.CompressedPageSize), int(h.UncompressedPageSize)
		if csize < 0 || usize < 0 || pos+int64(hlen)+csize > c.end {
			if fromRead {
				return nil
			}
			return &PageError{Offset: pos, Reason: fmt.Sprintf("page of %d bytes (%d uncompressed) does not fit its column chunk", csize, usize)}
		}
		at, start := pos, pos+int64(hlen)
		pos = start + csize
		compressed := true
		levels := 0
		switch h.Type {
		case format.DataPage, format.DictionaryPage:
		case format.DataPageV2:
			v := &h.DataPageHeaderV2.V
			levels = int(v.DefinitionLevelsByteLength) + int(v.RepetitionLevelsByteLength)
			if v.DefinitionLevelsByteLength < 0 || v.RepetitionLevelsByteLength < 0 || int64(levels) > csize || levels > usize {
				return &PageError{Offset: at, Reason: fmt.Sprintf("levels of %d bytes in a page of %d", levels, csize)}
			}
			compressed = !v.IsCompressed.Valid || v.IsCompressed.V
		default:
			compressed = false // index pages and unknown types: parquet-go decodes none
		}
		if compressed {
			if err := checkLZ4Size(int(csize)-levels, usize-levels); err != nil {
				return &PageError{Offset: at, Reason: err.Error()}
			}
			if int64(cap(body)) < csize {
				body = make([]byte, csize)
			}
			body = body[:csize]
			if n, err := r.ReadAt(body, start); n < len(body) {
				if err == nil || err == io.EOF {
					return &PageError{Offset: at, Reason: "page body ends past the end of the file"}
				}
				return err
			}
			if out, err = DecompressPage(format.Lz4Raw, out, body[levels:], usize-levels); err != nil {
				var pe *PageError
				if errors.As(err, &pe) {
					pe.Offset = at
				}
				return err
			}
		}
		c.starts[at] = true
	}
	return nil
}

// readPageHeader reads and parses the page header at pos (before end),
// reading 256 bytes first and more while the header is cut short.
func readPageHeader(r io.ReaderAt, pos, end int64, buf *[]byte) (format.PageHeader, int, error) {
	for want := int64(256); ; want *= 4 {
		n := min(want, end-pos)
		if int64(cap(*buf)) < n {
			*buf = make([]byte, n)
		}
		b := (*buf)[:n]
		k, err := r.ReadAt(b, pos)
		if k < len(b) && err != nil && err != io.EOF {
			return format.PageHeader{}, 0, err
		}
		h, hlen, perr := ParsePageHeader(b[:k])
		if perr == nil {
			return h, hlen, nil
		}
		if int64(k) < n || n == end-pos {
			return format.PageHeader{}, 0, &PageError{Offset: pos, Reason: fmt.Sprintf("page header: %v", perr)}
		}
	}
}

// OpenParquet is parquet.OpenFile over a reader guarded as GuardReader
// guards it: every page the returned file decodes has been checked first.
// Everything that hands a Parquet file of unknown bytes to parquet-go opens
// it here.
func OpenParquet(r io.ReaderAt, size int64, options ...parquet.FileOption) (*parquet.File, error) {
	g := &guardedReader{r: r} // no chunk known yet: the footer is read as is
	f, err := parquet.OpenFile(g, size, options...)
	if err != nil {
		return nil, err
	}
	g.arm(f.Metadata())
	return f, nil
}

// GuardPages is fcc.PagesFrom(r) with r guarded for fcc's file (see
// GuardReader): the pages parquet-go reads through another reader than the
// file's own are checked too.
func GuardPages(fcc *parquet.FileColumnChunk, r io.ReaderAt) *parquet.FilePages {
	return fcc.PagesFrom(GuardReader(r, fcc.File().Metadata()))
}
