package pqrow

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
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
// The same reader checks every other page's header as parquet-go reads it
// (pagesize.go: sizes no sound page of its codec can have).

// PageError reports a page whose bytes contradict its header: an LZ4_RAW
// page that does not decode, or not to its header's size, or a page of any
// codec whose header's sizes no sound page can have. It matches
// ErrCorrupt; the reader of a file adds the file's name.
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
// size bytes, into dst's storage when it is large enough. LZ4_RAW is
// decoded here, into at most size bytes: a size beyond LZ4's expansion of
// src, or a body that does not decode to exactly size bytes, is a
// *PageError. Other codecs are parquet-go's, and size only a hint (callers
// that know it exactly check it first with CheckPageBody).
func DecompressPage(codec format.CompressionCodec, dst, src []byte, size int) ([]byte, error) {
	if codec != format.Lz4Raw {
		out, err := parquet.LookupCompressionCodec(codec).Decode(dst, src)
		if err != nil {
			return nil, fmt.Errorf("decompress %v: %w", codec, err)
		}
		return out, nil
	}
	if err := CheckPageBody(codec, src, size); err != nil {
		return nil, err
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

// CheckPageBody returns a *PageError when a compressed page body src
// cannot decode to the size its header gives under codec (beyond the
// codec's bound for len(src) bytes; see pageImplausible). Callers that allocate the output before decoding call
// it first.
func CheckPageBody(codec format.CompressionCodec, src []byte, size int) error {
	if size < 0 {
		return &PageError{Offset: -1, Reason: fmt.Sprintf("uncompressed size %d", size)}
	}
	if why := bodyImplausible(codec, src[:min(len(src), bodyPeek)], int64(len(src)), int64(size)); why != "" {
		return &PageError{Offset: -1, Reason: why}
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
	limit    int64          // chunkLimit of its footer's total uncompressed size
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
	watch  []*watched  // the other chunks, sorted by off
	reach  []int64     // reach[i]: the largest end of watch[:i+1]

	// While OpenParquet opens the file: its size, and where the footer
	// starts once the tail read has said (-1: not known yet).
	size, footerAt int64
}

// watched is a column chunk of another codec than LZ4_RAW. The guard
// decodes none of its pages: it follows parquet-go's reads through the
// chunk and checks each page header in the bytes a read returns, before
// parquet-go can parse it (see inspect), so a sound chunk costs no extra
// read and no second decode.
type watched struct {
	off, end int64
	limit    int64 // chunkLimit of its footer's total uncompressed size
	codec    format.CompressionCodec
	next     map[int64]nextHeader // where a returned read ended → the next page header
}

// nextHeader is where a stream of pages continues, and whether the stream
// began at its chunk's start (strict: every header in it is a page's) or
// at a seek (a header there may be bytes inside a page).
type nextHeader struct {
	pos    int64
	strict bool
}

// GuardReader returns r for a Parquet file whose footer is md, such that
// before any byte of an LZ4_RAW column chunk is returned, every page of
// that chunk has been decoded with a bounded decoder (DecompressPage): a
// corrupt page fails the read with a *PageError instead of reaching
// parquet-go's codec. Each chunk is walked once per returned reader, by
// reading it through r in page-sized reads; a read that starts inside a
// chunk where no page starts and no earlier read ended (a seek through an
// offset index that does not agree with the pages) is walked from there.
// Every other chunk's page headers are checked as parquet-go reads them
// (see inspect). A file without column chunks gets r itself.
func GuardReader(r io.ReaderAt, md *format.FileMetaData) io.ReaderAt {
	return guardRange(r, md, math.MinInt64, math.MaxInt64)
}

// guardRange is GuardReader for a reader whose reads all lie in [lo, hi):
// only the column chunks overlapping it are armed (the others could not
// see a read).
func guardRange(r io.ReaderAt, md *format.FileMetaData, lo, hi int64) io.ReaderAt {
	g := &guardedReader{r: r}
	if !g.arm(md, lo, hi) {
		return r
	}
	return g
}

// chunkRange is the byte range parquet-go reads a column chunk's pages
// from (FilePages: a section from the dictionary page, or the first data
// page, of the chunk's total compressed size).
func chunkRange(m *format.ColumnMetaData) (off, end int64) {
	off = m.DataPageOffset
	if m.DictionaryPageOffset != 0 {
		off = m.DictionaryPageOffset
	}
	return off, off + max(m.TotalCompressedSize, 0)
}

// arm records md's column chunks that overlap [lo, hi) (every chunk for
// the whole file) and reports whether there are any. A chunk's range is
// the one parquet-go reads its pages from.
func (g *guardedReader) arm(md *format.FileMetaData, lo, hi int64) bool {
	var ms []*format.ColumnMetaData
	for i := range md.RowGroups {
		for j := range md.RowGroups[i].Columns {
			m := &md.RowGroups[i].Columns[j].MetaData
			off, end := chunkRange(m)
			if end <= lo || off >= hi {
				continue // no read in [lo, hi) can touch it
			}
			ms = append(ms, m)
		}
	}
	return g.armChunks(ms)
}

// armChunks records the column chunks ms (arm's choice) and reports whether
// there are any.
func (g *guardedReader) armChunks(ms []*format.ColumnMetaData) bool {
	var cs []*lz4Chunk
	var ws []*watched
	for _, m := range ms {
		off, end := chunkRange(m)
		if m.Codec == format.Lz4Raw {
			cs = append(cs, &lz4Chunk{off: off, end: end, limit: chunkLimit(m.TotalUncompressedSize)})
		} else {
			ws = append(ws, &watched{off: off, end: end, limit: chunkLimit(m.TotalUncompressedSize), codec: m.Codec, next: map[int64]nextHeader{}})
		}
	}
	slices.SortFunc(cs, func(a, b *lz4Chunk) int { return cmp.Compare(a.off, b.off) })
	slices.SortFunc(ws, func(a, b *watched) int { return cmp.Compare(a.off, b.off) })
	reach := make([]int64, len(ws))
	for i, w := range ws {
		reach[i] = w.end
		if i > 0 {
			reach[i] = max(reach[i], reach[i-1])
		}
	}
	g.mu.Lock()
	g.chunks, g.watch, g.reach = cs, ws, reach
	g.mu.Unlock()
	return len(cs)+len(ws) > 0
}

func (g *guardedReader) ReadAt(p []byte, off int64) (int, error) {
	if err := g.check(off, off+int64(len(p))); err != nil {
		return 0, err
	}
	n, err := g.r.ReadAt(p, off)
	if n > 0 {
		if ferr := g.checkFooter(p[:n], off); ferr != nil {
			return 0, ferr
		}
		if perr := g.inspect(p[:n], off); perr != nil {
			return 0, perr
		}
	}
	return n, err
}

// inspect checks the page headers that b, just read at off, holds in the
// watched chunks it overlaps. A read continues a stream of pages when it
// starts at a chunk's start or where an earlier read ended (the next header
// is then known; several streams over one chunk share what they learn); a
// read starting anywhere else may be a seek to a page (an offset index's
// location): a header that parses there and is plausible starts a lenient
// stream, whose headers are followed while they are plausible and left
// alone when not, since bytes inside a page may parse as one (so a lying
// header reached by a seek is not refused: the seeking readers, row index
// lookups, read files that update read whole, through this guard, when it
// indexed them). Each header's
// sizes must be plausible for the chunk's codec (pageImplausible) and its
// page must fit the chunk; the checks look at the header and the first
// bytes of the body only. A header cut by the end of b, or whose body's
// first bytes are not in b, is read again with a small read of its own. A
// position that holds no page header is left alone: parquet-go fails there
// too, with its own error.
func (g *guardedReader) inspect(b []byte, off int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	end := off + int64(len(b))
	// The chunks overlapping [off, end): those starting before end, back
	// to the last whose reach passes off.
	i := sort.Search(len(g.watch), func(i int) bool { return g.watch[i].off >= end })
	var hbuf []byte
	for i--; i >= 0 && g.reach[i] > off; i-- {
		c := g.watch[i]
		if c.end <= off || c.end <= c.off {
			continue
		}
		pos, strict := c.off, true
		if off > c.off {
			if n, ok := c.next[off]; ok {
				pos, strict = n.pos, n.strict
			} else {
				pos, strict = off, false
			}
		}
		for pos < end && pos < c.end {
			h, hlen, head, err := g.headerAt(b, off, pos, c.end, &hbuf)
			if err != nil {
				return err
			}
			if hlen == 0 {
				pos = -1 // no page header: parquet-go refuses it itself
				break
			}
			why := pageImplausible(c.codec, &h, head, c.limit)
			if why == "" && pos+int64(hlen)+int64(h.CompressedPageSize) > c.end {
				why = fmt.Sprintf("page of %d bytes (%d uncompressed) does not fit its column chunk", h.CompressedPageSize, h.UncompressedPageSize)
			}
			if why != "" {
				if !strict {
					// Not known to be a page start: bytes inside a page
					// may parse as a header. Not followed further.
					pos = -1
					break
				}
				return &PageError{Offset: pos, Reason: why}
			}
			pos += int64(hlen) + int64(h.CompressedPageSize)
		}
		if pos >= end && pos < c.end {
			if len(c.next) >= maxReadEnds {
				clear(c.next)
			}
			c.next[end] = nextHeader{pos, strict}
		}
	}
	return nil
}

// maxHeadRead bounds the bytes read to see one page header and the first
// bytes of its body (a header with long statistics, a v2 page's levels).
const maxHeadRead = 64 << 10

// headerAt parses the page header at pos (in the chunk ending at cend)
// from b, read at off, and returns it with its length and the first bytes
// of the page's body (a v2 page's levels and bodyPeek more, fewer when the
// body is shorter). What b does not hold is read from g.r. A length of 0:
// no page header parses at pos.
func (g *guardedReader) headerAt(b []byte, off, pos, cend int64, buf *[]byte) (format.PageHeader, int, []byte, error) {
	avail := b[pos-off : min(int64(len(b)), cend-off)]
	cut := pos+int64(len(avail)) < cend // more of the chunk follows
	for want := int64(256); ; want *= 4 {
		h, hlen, err := ParsePageHeader(avail)
		if err == nil {
			need := int64(hlen) + bodyPeek
			if v := &h.DataPageHeaderV2; h.Type == format.DataPageV2 && v.Valid {
				need += max(int64(v.V.DefinitionLevelsByteLength)+int64(v.V.RepetitionLevelsByteLength), 0)
			}
			need = min(need, int64(hlen)+max(int64(h.CompressedPageSize), 0), cend-pos)
			if int64(len(avail)) >= need || !cut || need > maxHeadRead {
				return h, hlen, avail[hlen:min(int64(len(avail)), need)], nil
			}
			want = max(want, need)
		} else if !cut || want > maxHeadRead {
			return format.PageHeader{}, 0, nil, nil
		}
		n := min(want, cend-pos)
		if int64(cap(*buf)) < n {
			*buf = make([]byte, n)
		}
		k, rerr := g.r.ReadAt((*buf)[:n], pos)
		if k < int(n) && rerr != nil && rerr != io.EOF {
			return format.PageHeader{}, 0, nil, rerr
		}
		avail, cut = (*buf)[:k], int64(k) == n && n < cend-pos
	}
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
			if err != nil && !errors.As(err, &pe) && !errors.Is(err, ErrUnsupported) {
				return err // not the file's: checked again by a later read
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
		if why := pageImplausible(format.Lz4Raw, &h, nil, c.limit); why != "" {
			return &PageError{Offset: at, Reason: why}
		}
		compressed := true
		levels := 0
		switch h.Type {
		case format.DataPage, format.DictionaryPage:
		case format.DataPageV2:
			v := &h.DataPageHeaderV2.V
			levels = int(v.DefinitionLevelsByteLength) + int(v.RepetitionLevelsByteLength)
			compressed = !v.IsCompressed.Valid || v.IsCompressed.V
		default:
			compressed = false // index pages and unknown types: parquet-go decodes none
		}
		if compressed {
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
			if src := int(csize) - levels; 3*src > parquetGoBuffer(usize) {
				return fmt.Errorf("%w: LZ4_RAW page at offset %d (%d bytes decoding to %d): parquet-go v0.32.0 would read it as made-up values (upstream issue 608)",
					ErrUnsupported, at, src, usize)
			}
		}
		c.starts[at] = true
	}
	return nil
}

// parquet-go v0.32.0 misdecodes some sound LZ4_RAW pages (upstream issue
// 608, fix unmerged): Column.decompress hands the codec a buffer of the
// header's uncompressed size from its pool, the codec first reserves three
// times the compressed size and reallocates when the buffer is smaller,
// and decompress then keeps its own buffer, unwritten, when the returned
// length equals the header's. The guard refuses such pages
// (ErrUnsupported) instead of letting them be read as made-up values; see
// docs/architecture.md for why there is no clean workaround.

// parquetGoBuffer is the smallest capacity of the buffer parquet-go
// v0.32.0 decompresses a page of size bytes into: its pool's bucket (4 KiB,
// doubling up to 256 KiB, then growing by half). A buffer reused from the
// pool may be larger; a page that needs more is refused though it may
// read right by chance, so that whether it reads never depends on the
// pool's state.
func parquetGoBuffer(size int) int {
	b := 4096
	for b < size {
		if b < 256<<10 {
			b *= 2
		} else {
			b += b / 2
		}
	}
	return b
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
//
// The footer parquet-go decodes is checked first too (checkFooter): its
// Thrift decoder allocates the lengths a list or string claims, so a
// footer with a mutated length made it allocate gigabytes for a file of a
// few KB.
func OpenParquet(r io.ReaderAt, size int64, options ...parquet.FileOption) (*parquet.File, error) {
	g := &guardedReader{r: r, size: size, footerAt: -1} // no chunk known yet
	f, err := parquet.OpenFile(g, size, options...)
	g.mu.Lock()
	g.size = 0
	g.mu.Unlock()
	if err != nil {
		return nil, err
	}
	g.arm(f.Metadata(), math.MinInt64, math.MaxInt64)
	return f, nil
}

// FooterError reports a footer whose Thrift encoding is malformed (a
// length longer than the bytes left, a field of no Thrift type). It
// matches ErrCorrupt.
type FooterError struct{ Reason string }

func (e *FooterError) Error() string { return "corrupt footer: " + e.Reason }

// Unwrap makes a *FooterError match ErrCorrupt.
func (e *FooterError) Unwrap() error { return ErrCorrupt }

// checkFooter checks the footer in b, read at off, while the file is being
// opened: the read that ends at the file's end says where the footer
// starts (its last 8 bytes); the footer is checked in the read that holds
// it, that one or the next, before parquet-go decodes it. The check walks
// the Thrift encoding without building anything (compactReader.skip), so
// it allocates nothing; the footer is read no more times than parquet-go
// reads it.
func (g *guardedReader) checkFooter(b []byte, off int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.size <= 0 {
		return nil
	}
	end := off + int64(len(b))
	var footer []byte
	switch {
	case end == g.size && len(b) >= 8 && string(b[len(b)-4:]) == "PAR1":
		n := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
		if n > g.size-12 {
			// parquet-go would allocate it before finding the file short
			return &FooterError{Reason: fmt.Sprintf("a footer of %d bytes in a file of %d", n, g.size)}
		}
		g.footerAt = g.size - 8 - n
		if g.footerAt < off {
			return nil // not all here: parquet-go reads it next
		}
		footer = b[g.footerAt-off : len(b)-8]
	case g.footerAt >= 0 && off == g.footerAt && end == g.size-8:
		footer = b
	default:
		return nil
	}
	r := compactReader{b: footer}
	r.skip(ctStruct)
	if r.err != nil {
		return &FooterError{Reason: fmt.Sprintf("the %d-byte footer is no Thrift FileMetaData (%v at byte %d)", len(footer), r.err, r.pos)}
	}
	return nil
}

// GuardPages is fcc.PagesFrom(r) with r guarded for fcc's file (see
// GuardReader): the pages parquet-go reads through another reader than the
// file's own are checked too.
//
// Only the chunks overlapping fcc's own range are armed: every read of
// FilePages lies in that range, and arming all of a file's chunks (a map
// each) cost a row index lookup ≈11 % of its CPU, reading one fragment
// column at a time of a file of many row groups.
//
// When r is a ChunkSpanner holding the ChunkSpans of fcc's file, the chunks
// to arm are found by a binary search in them rather than a walk of the
// footer: a row index lookup reads five or six chunks of a fragment file of
// hundreds of row groups, and that walk was ≈5 % of its CPU.
func GuardPages(fcc *parquet.FileColumnChunk, r io.ReaderAt) *parquet.FilePages {
	md := fcc.File().Metadata()
	if m := chunkMeta(fcc); m != nil {
		off, end := chunkRange(m)
		if sp, ok := r.(ChunkSpanner); ok {
			if cs := sp.ChunkSpans(); cs != nil && cs.md == md {
				g := &guardedReader{r: r}
				if !g.armChunks(cs.overlapping(off, end)) {
					return fcc.PagesFrom(r)
				}
				return fcc.PagesFrom(g)
			}
		}
		return fcc.PagesFrom(guardRange(r, md, off, end))
	}
	return fcc.PagesFrom(GuardReader(r, md))
}

// ChunkSpans are a file's column chunk ranges (those parquet-go reads pages
// from) in offset order: built once per file, they find the chunks a read
// range overlaps by binary search (GuardPages).
type ChunkSpans struct {
	md    *format.FileMetaData
	spans []chunkSpan
	reach []int64 // reach[i]: the largest end of spans[:i+1]
}

type chunkSpan struct {
	off, end int64
	m        *format.ColumnMetaData
}

// NewChunkSpans indexes the column chunks of md, which must stay unchanged
// while the ChunkSpans are used.
func NewChunkSpans(md *format.FileMetaData) *ChunkSpans {
	cs := &ChunkSpans{md: md}
	for i := range md.RowGroups {
		for j := range md.RowGroups[i].Columns {
			m := &md.RowGroups[i].Columns[j].MetaData
			off, end := chunkRange(m)
			cs.spans = append(cs.spans, chunkSpan{off, end, m})
		}
	}
	slices.SortStableFunc(cs.spans, func(a, b chunkSpan) int { return cmp.Compare(a.off, b.off) })
	cs.reach = make([]int64, len(cs.spans))
	for i, s := range cs.spans {
		cs.reach[i] = s.end
		if i > 0 {
			cs.reach[i] = max(s.end, cs.reach[i-1])
		}
	}
	return cs
}

// Bytes is the memory the spans hold (for cache accounting).
func (cs *ChunkSpans) Bytes() int64 { return 32*int64(len(cs.spans)) + 48 }

// overlapping returns the chunks whose range overlaps [lo, hi): those that
// start before hi (a prefix, by offset) and end after lo (past the first
// whose reach passes lo).
func (cs *ChunkSpans) overlapping(lo, hi int64) []*format.ColumnMetaData {
	k, _ := slices.BinarySearchFunc(cs.spans, hi, func(s chunkSpan, hi int64) int { return cmp.Compare(s.off, hi) })
	j, _ := slices.BinarySearch(cs.reach[:k], lo+1)
	var out []*format.ColumnMetaData
	for _, s := range cs.spans[j:k] {
		if s.end > lo {
			out = append(out, s.m)
		}
	}
	return out
}

// ChunkSpanner is a reader that knows the ChunkSpans of the file it reads
// (nil if none): GuardPages uses them when they are the file's.
type ChunkSpanner interface {
	ChunkSpans() *ChunkSpans
}

// chunkMeta returns fcc's metadata in its file's footer (parquet-go does
// not export it), or nil if fcc is not one of its file's chunks.
func chunkMeta(fcc *parquet.FileColumnChunk) *format.ColumnMetaData {
	f := fcc.File()
	md := f.Metadata()
	col := fcc.Column()
	for i, g := range f.RowGroups() {
		if cs := g.ColumnChunks(); col < len(cs) && cs[col] == parquet.ColumnChunk(fcc) && i < len(md.RowGroups) && col < len(md.RowGroups[i].Columns) {
			return &md.RowGroups[i].Columns[col].MetaData
		}
	}
	return nil
}
