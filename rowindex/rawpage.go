package rowindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/ariadne-go/ariadne/internal/bufpool"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// The direct page path: for flat columns (no repetition, at most one
// definition level) of the common physical types, the selected rows of a
// data page are cut straight out of the page's bytes, without parquet-go
// materializing every value of the page. A PLAIN page of fixed-width values
// costs O(selected rows); a PLAIN page of byte arrays walks the length
// prefixes up to the last selected row; a dictionary page walks the run
// headers of its RLE/bit-packed indexes, skipping whole runs. Pages written
// by other writers (arrow-go, pyarrow: one page of ≈1 MiB per column chunk)
// are where this matters: a few rows of such a page used to cost the decode
// of all its values, in every column.

// errNotDirect reports that a page or chunk is outside the direct path's
// scope (an encoding, type or level layout it does not decode); the caller
// falls back to parquet-go's decoder.
var errNotDirect = errors.New("rowindex: not a direct page")

// colInfo is what the direct path needs to know of a leaf column.
type colInfo struct {
	typ    format.Type
	width  int // bytes per value of fixed-width PLAIN; 0 for byte arrays
	maxDef int
	codec  format.CompressionCodec
	leaf   int
}

// directInfo returns the direct path's view of leaf column col of fm, or
// false when the column is outside its scope.
func directInfo(fm *fileMeta, rg, col int) (colInfo, bool) {
	if col >= len(fm.maxRep) || col >= len(fm.maxDef) || fm.maxRep[col] != 0 || fm.maxDef[col] > 1 {
		return colInfo{}, false
	}
	md := &fm.f.Metadata().RowGroups[rg].Columns[col].MetaData
	ci := colInfo{typ: md.Type, maxDef: fm.maxDef[col], codec: md.Codec, leaf: col}
	switch md.Type {
	case format.Int32, format.Float:
		ci.width = 4
	case format.Int64, format.Double:
		ci.width = 8
	case format.ByteArray:
	case format.FixedLenByteArray:
		ci.width = fm.typeLen[col]
		if ci.width <= 0 {
			return colInfo{}, false
		}
	default:
		return colInfo{}, false
	}
	return ci, true
}

// rawPage is a data page ready for direct reads: its definition levels (nil
// for a required column or a page without nulls) and its values section,
// decompressed. Its bytes are the direct path's own (never parquet-go's
// pooled buffers), so values may point into them.
type rawPage struct {
	rows   int
	levels []byte // RLE/bit-packed hybrid, bit width 1; nil: no nulls
	enc    format.Encoding
	values []byte
	// buf is the pooled buffer a compressed page was decompressed into
	// (values, and levels of a v1 page, point into it): released
	// (releasePage) once its rows are cut; the page cache keeps a copy.
	// (A v2 page's levels are never compressed: they point into the
	// fetched range.)
	buf []byte
	// The page as stored (parseRawPage; not in the page cache's copies):
	// its header's length, its body's stored and uncompressed sizes, and
	// whether it is a v1 data page (learnShape).
	hlen, stored, size int
	v1                 bool
}

// compactCopy returns a copy of the page in one allocation of its levels
// and values, owning its bytes (for the page cache).
func (p *rawPage) compactCopy() *rawPage {
	b := make([]byte, len(p.levels)+len(p.values))
	nl := copy(b, p.levels)
	copy(b[nl:], p.values)
	cp := &rawPage{rows: p.rows, enc: p.enc, values: b[nl:]}
	if p.levels != nil {
		cp.levels = b[:nl:nl]
	}
	return cp
}

// charge is the page's cost in the page cache.
func (p *rawPage) charge() int64 { return int64(len(p.levels)+len(p.values)) + 96 }

// parseRawPage parses the data page whose header starts b (b holds at least
// the whole page), decompressing its values when the chunk is compressed.
// own reports whether the returned page's bytes are freshly allocated (a
// decompressed page) rather than sub-slices of b.
func parseRawPage(b []byte, ci colInfo) (p *rawPage, own bool, err error) {
	h, hlen, err := parsePageHeader(b)
	if err != nil {
		return nil, false, fmt.Errorf("page header: %w", err)
	}
	if h.CompressedPageSize < 0 || hlen+int(h.CompressedPageSize) > len(b) {
		return nil, false, fmt.Errorf("page of %d bytes past its range", h.CompressedPageSize)
	}
	body := b[hlen : hlen+int(h.CompressedPageSize)]
	p = &rawPage{hlen: hlen, stored: int(h.CompressedPageSize), size: int(h.UncompressedPageSize), v1: h.Type == format.DataPage}
	// The encoding is judged before any decompression: a page outside
	// the direct path is decoded by parquet-go, which decompresses it
	// again.
	var enc format.Encoding
	switch h.Type {
	case format.DataPage:
		enc = h.DataPageHeader.V.Encoding
	case format.DataPageV2:
		enc = h.DataPageHeaderV2.V.Encoding
	default:
		return nil, false, errNotDirect
	}
	if !directEncoding(enc, ci) {
		return nil, false, errNotDirect
	}
	switch h.Type {
	case format.DataPage:
		dh := h.DataPageHeader.V
		p.rows, p.enc = int(dh.NumValues), dh.Encoding
		if ci.codec != format.Uncompressed {
			if body, own, err = inflatePage(ci.codec, body, int(h.UncompressedPageSize)); err != nil {
				return nil, false, err
			}
			if own {
				p.buf = body
			}
		}
		if ci.maxDef > 0 {
			if dh.DefinitionLevelEncoding != format.RLE || len(body) < 4 {
				return nil, false, errNotDirect
			}
			n := int(binary.LittleEndian.Uint32(body))
			if 4+n > len(body) {
				return nil, false, fmt.Errorf("definition levels of %d bytes past the page", n)
			}
			p.levels = body[4 : 4+n]
			body = body[4+n:]
		}
		p.values = body
	case format.DataPageV2:
		dh := h.DataPageHeaderV2.V
		p.rows, p.enc = int(dh.NumRows), dh.Encoding
		if int(dh.NumValues) != p.rows || dh.RepetitionLevelsByteLength != 0 {
			return nil, false, errNotDirect
		}
		nd := int(dh.DefinitionLevelsByteLength)
		if nd < 0 || nd > len(body) {
			return nil, false, fmt.Errorf("definition levels of %d bytes past the page", nd)
		}
		if ci.maxDef > 0 && dh.NumNulls > 0 {
			p.levels = body[:nd]
		}
		body = body[nd:]
		compressed := !dh.IsCompressed.Valid || dh.IsCompressed.V
		if compressed && ci.codec != format.Uncompressed {
			if body, own, err = inflatePage(ci.codec, body, int(h.UncompressedPageSize)-nd); err != nil {
				return nil, false, err
			}
			if own {
				p.buf = body
			}
		}
		p.values = body
	}
	if p.levels != nil && allDefined(p.levels, p.rows) {
		p.levels = nil
	}
	return p, own, nil
}

// directEncoding reports whether the direct path cuts values of encoding
// enc out of a page of column ci: PLAIN, dictionary indexes, and
// DELTA_LENGTH_BYTE_ARRAY (parquet-go's default for byte arrays without a
// dictionary).
func directEncoding(enc format.Encoding, ci colInfo) bool {
	switch enc {
	case format.Plain, format.RLEDictionary, format.PlainDictionary:
		return true
	case format.DeltaLengthByteArray:
		return ci.typ == format.ByteArray
	}
	return false
}

// decompress decodes a compressed page body of the given uncompressed size
// (pqrow.DecompressPage: LZ4_RAW with a bounded decoder).
func decompress(codec format.CompressionCodec, src []byte, size int) ([]byte, error) {
	if size < 0 {
		return nil, fmt.Errorf("uncompressed size %d", size)
	}
	return pqrow.DecompressPage(codec, make([]byte, 0, size), src, size)
}

// zstdOverAlloc is the spare capacity a ZSTD frame's output buffer needs
// past its content size for klauspost's decoder to take its fast sequence
// loop (compressedBlockOverAlloc there is 16): a page of exactly 16 KiB
// decompressed into a 16 KiB buffer took the bounds-checked loop.
const zstdOverAlloc = 64

// decompressPooled is decompress into a pooled buffer, of a page body whose
// header gives size exactly.
func decompressPooled(codec format.CompressionCodec, src []byte, size int) ([]byte, error) {
	// Its callers give a page header's exact size: one no body of src's
	// length can have is refused before a buffer is allocated for it.
	if err := pqrow.CheckPageBody(codec, src, size); err != nil {
		return nil, err
	}
	if size+zstdOverAlloc > bufpool.MaxSize {
		return decompress(codec, src, size)
	}
	buf := bufpool.Get(size + zstdOverAlloc)[:0]
	out, err := pqrow.DecompressPage(codec, buf, src, size)
	if err != nil {
		bufpool.Put(buf)
		return nil, err
	}
	return out, nil
}

// inflatePage returns a compressed page body's content of size bytes:
// the body itself when it is a ZSTD frame that stores its content
// (zstdStored), else decompressed into a pooled buffer (pooled true).
func inflatePage(codec format.CompressionCodec, body []byte, size int) (out []byte, pooled bool, err error) {
	if codec == format.Zstd {
		if b, ok := zstdStored(body, size); ok {
			return b, false, nil
		}
	}
	if out, err = decompressPooled(codec, body, size); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// zstdStored returns the content of a ZSTD frame that holds it stored:
// one raw block of exactly size bytes, the whole of src, without checksum
// or dictionary. An encoder stores a block it cannot compress, as a
// page of random 32-bit values (the benchmark lake's duration_ms: 48,216
// bytes of ZSTD pages for 48,186 of values): its values are then cut
// straight out of the fetched bytes, without a decoder, a buffer or a
// copy of the page. ok is false for any other frame (the decoder reads
// it, and judges a damaged one).
func zstdStored(src []byte, size int) ([]byte, bool) {
	const magic = 0xFD2FB528
	if len(src) < 6 || binary.LittleEndian.Uint32(src) != magic {
		return nil, false
	}
	fhd := src[4]
	// Reserved bit, content checksum or dictionary ID: the decoder's.
	if fhd&0x08 != 0 || fhd&0x04 != 0 || fhd&0x03 != 0 {
		return nil, false
	}
	at := 5
	single := fhd&0x20 != 0
	// A block holds at most min(window, 128 KiB) (RFC 8878 3.1.1.2.4):
	// a larger one is a damaged frame, for the decoder to refuse.
	maxBlock := 128 << 10
	if !single {
		wd := src[at]
		wb := 1 << (10 + wd>>3)
		maxBlock = min(maxBlock, wb+wb/8*int(wd&7))
		at++ // window descriptor
	}
	fcsLen := [4]int{0, 2, 4, 8}[fhd>>6]
	if fhd>>6 == 0 && single {
		fcsLen = 1
	}
	if len(src) < at+fcsLen+3 {
		return nil, false
	}
	if fcsLen > 0 {
		var fcs uint64
		for i := range fcsLen {
			fcs |= uint64(src[at+i]) << (8 * i)
		}
		if fcsLen == 2 {
			fcs += 256
		}
		if fcs != uint64(size) {
			return nil, false
		}
	}
	at += fcsLen
	bh := uint32(src[at]) | uint32(src[at+1])<<8 | uint32(src[at+2])<<16
	at += 3
	last, typ, n := bh&1, bh>>1&3, int(bh>>3)
	if last != 1 || typ != 0 || n != size || n > maxBlock || at+n != len(src) {
		return nil, false
	}
	return src[at:len(src):len(src)], true
}

// releasePage returns a cut page's buffer to its pool; p must not be used
// after.
func (ri *RowIndex) releasePage(p *rawPage) {
	b := p.buf
	p.buf, p.levels, p.values = nil, nil, nil
	ri.putBuf(b)
}

// putBuf is bufpool.Put, overwriting the buffer first when the index poisons
// freed buffers (tests).
func (ri *RowIndex) putBuf(b []byte) {
	if ri.poisonFreed {
		full := b[:cap(b)]
		for i := range full {
			full[i] = 0xA5
		}
	}
	bufpool.Put(b)
}

// allDefined reports whether the bit-width-1 levels hold n ones (no null):
// the common case of an optional column without nulls, one RLE run.
func allDefined(levels []byte, n int) bool {
	h := hybrid{data: levels, bw: 1}
	for got := 0; got < n; {
		if !h.next() {
			return false
		}
		if !h.rle || h.val != 1 {
			return false
		}
		got += h.n
	}
	return true
}

// hybrid walks the runs of an RLE/bit-packed hybrid encoding (Parquet's
// levels and dictionary indexes) without decoding the runs it skips.
type hybrid struct {
	data  []byte
	bw    int
	pos   int // next run header
	start int // index of the current run's first value
	n     int // values in the current run
	rle   bool
	val   uint32 // the RLE run's value
	bits  []byte // the bit-packed run's bytes
	// ones counts the values equal to 1 in runs before the current one,
	// under bit width 1 (levels: the defined values) only. Counted for
	// dictionary indexes, value by value, it made a seek through a page of
	// ≈56,000 indexes (pyarrow's defaults) cost as many bit extractions:
	// a fifth of a light lookup's CPU on such files.
	ones int
}

// next moves to the following run; false at the end of the data.
func (h *hybrid) next() bool {
	if h.n > 0 || h.start > 0 {
		if h.bw == 1 {
			if h.rle {
				if h.val == 1 {
					h.ones += h.n
				}
			} else {
				h.ones += popcountBits(h.bits, h.n)
			}
		}
		h.start += h.n
		h.n = 0
	}
	if h.pos >= len(h.data) {
		return false
	}
	hdr, k := binary.Uvarint(h.data[h.pos:])
	if k <= 0 {
		return false
	}
	h.pos += k
	if hdr&1 == 0 {
		vb := (h.bw + 7) / 8
		if h.pos+vb > len(h.data) {
			return false
		}
		var v uint32
		for i := range vb {
			v |= uint32(h.data[h.pos+i]) << (8 * i)
		}
		h.pos += vb
		h.rle, h.val, h.n = true, v, int(hdr>>1)
		return true
	}
	groups := int(hdr >> 1)
	nb := groups * h.bw
	if nb > len(h.data)-h.pos {
		// A last run may be cut short of its groups' padding.
		nb = len(h.data) - h.pos
	}
	h.rle, h.bits, h.n = false, h.data[h.pos:h.pos+nb], min(groups*8, nb*8/max(h.bw, 1))
	h.pos += nb
	return true
}

// bitAt returns value i of the current bit-packed run.
func (h *hybrid) bitAt(i int) uint32 {
	bit := i * h.bw
	var v uint64
	for k := 0; k < 8 && bit/8+k < len(h.bits); k++ {
		v |= uint64(h.bits[bit/8+k]) << (8 * k)
	}
	return uint32(v>>(bit%8)) & (1<<h.bw - 1)
}

// seek moves to the run holding value i (i never decreases between calls).
func (h *hybrid) seek(i int) bool {
	for i >= h.start+h.n {
		if !h.next() {
			return false
		}
	}
	return true
}

// at returns value i (after seek(i)).
func (h *hybrid) at(i int) uint32 {
	if h.rle {
		return h.val
	}
	return h.bitAt(i - h.start)
}

// onesBefore returns the values equal to 1 before value i (after seek(i))
// of levels (bit width 1); -1 under any other width.
func (h *hybrid) onesBefore(i int) int {
	if h.bw != 1 {
		return -1
	}
	n := h.ones
	if h.rle {
		if h.val == 1 {
			n += i - h.start
		}
		return n
	}
	return n + popcountBits(h.bits, i-h.start)
}

// popcountBits counts the set bits among the first n bits of b.
func popcountBits(b []byte, n int) int {
	c := 0
	full := n / 8
	for _, x := range b[:min(full, len(b))] {
		c += int(popcount8[x])
	}
	if r := n % 8; r > 0 && full < len(b) {
		c += int(popcount8[b[full]&(1<<r-1)])
	}
	return c
}

var popcount8 = func() (t [256]uint8) {
	for i := range t {
		for x := i; x > 0; x &= x - 1 {
			t[i]++
		}
	}
	return t
}()

// dictionary is a dictionary page's values, PLAIN as the page holds them
// (decompressed, the handle's own bytes), and for byte arrays where each
// starts. Values are made on demand (value): a lookup takes a few of a
// dictionary's entries, and making a parquet.Value of each (24 bytes and a
// pointer apiece) was most of a light lookup's CPU and garbage on files
// written by pyarrow with its defaults (a dictionary of ≈56,000 entries per
// column chunk, parsed again whenever the cache had let it go), and
// crowded the cache.
type dictionary struct {
	data []byte
	ci   colInfo
	n    int
	// ends (byte arrays): the offset past each value; value i is
	// data[start+4 : ends[i]], start being ends[i-1] (0 for the first).
	ends []int32
	size int64
	// picked, when not nil, is a dictionary read in parts: its entries
	// (dictparts.go), data and ends unused.
	picked *dictPicks
}

// value returns value i (0 ≤ i < n); byte arrays point into the
// dictionary's own bytes.
func (d *dictionary) value(i int) parquet.Value {
	if w := d.ci.width; w > 0 {
		return fixedValue(d.data[i*w:i*w+w], d.ci.typ)
	}
	start := int32(0)
	if i > 0 {
		start = d.ends[i-1]
	}
	return parquet.ByteArrayValue(d.data[start+4 : d.ends[i]])
}

// index returns the value that dictionary index vi of a page's indexes
// idx selects (bit width 0: every index is 0).
func (d *dictionary) index(idx *hybrid, vi int) (parquet.Value, error) {
	k := 0
	if idx.bw != 0 {
		if !idx.seek(vi) {
			return parquet.Value{}, fmt.Errorf("dictionary indexes end before value %d", vi)
		}
		k = int(idx.at(vi))
	}
	if k >= d.n {
		return parquet.Value{}, fmt.Errorf("dictionary index %d of %d", k, d.n)
	}
	if d.picked != nil {
		return d.picked.value(k, d.ci)
	}
	return d.value(k), nil
}

// parseDictionary decodes the dictionary page whose header starts b: its
// values are checked to lie within the page, not made (dictionary.value).
func parseDictionary(b []byte, ci colInfo) (*dictionary, error) {
	h, hlen, err := parsePageHeader(b)
	if err != nil {
		return nil, fmt.Errorf("dictionary page header: %w", err)
	}
	if h.Type != format.DictionaryPage {
		return nil, errNotDirect
	}
	if h.CompressedPageSize < 0 || hlen+int(h.CompressedPageSize) > len(b) {
		return nil, fmt.Errorf("dictionary page of %d bytes past its range", h.CompressedPageSize)
	}
	dh := h.DictionaryPageHeader.V
	if dh.Encoding != format.Plain && dh.Encoding != format.PlainDictionary {
		return nil, errNotDirect
	}
	n := int(dh.NumValues)
	if n < 0 {
		return nil, fmt.Errorf("dictionary of %d values", n)
	}
	body := b[hlen : hlen+int(h.CompressedPageSize)]
	if ci.codec != format.Uncompressed {
		var err error
		// The header's size is exact: one no body of its length can
		// have is refused before a buffer is allocated for it.
		if err := pqrow.CheckPageBody(ci.codec, body, int(h.UncompressedPageSize)); err != nil {
			return nil, err
		}
		if body, err = decompress(ci.codec, body, int(h.UncompressedPageSize)); err != nil {
			return nil, err
		}
	} else {
		body = bytes.Clone(body)
	}
	d := &dictionary{data: body, ci: ci, n: n}
	if w := ci.width; w > 0 {
		if n > len(body)/w {
			return nil, fmt.Errorf("dictionary of %d values of %d bytes in %d bytes", n, w, len(body))
		}
	} else {
		if len(body) > math.MaxInt32 {
			return nil, fmt.Errorf("dictionary page of %d bytes", len(body))
		}
		// Each value has a 4-byte length: a header claiming more values
		// than that is refused before its ends are allocated.
		if n > len(body)/4 {
			return nil, fmt.Errorf("dictionary of %d byte arrays in %d bytes", n, len(body))
		}
		d.ends = make([]int32, n)
		pr := plainReader{data: body, ci: ci}
		for i := range n {
			if _, err := pr.value(i); err != nil {
				return nil, err
			}
			d.ends[i] = int32(pr.off)
		}
	}
	d.size = int64(len(body)) + 4*int64(len(d.ends)) + 96
	return d, nil
}

// plainReader reads PLAIN values by index, in increasing order for byte
// arrays (their offsets are found by walking the length prefixes).
type plainReader struct {
	data []byte
	ci   colInfo
	// byte arrays: the next unread value and its offset
	idx, off int
}

// value returns PLAIN value i, pointing into the data for byte arrays.
func (p *plainReader) value(i int) (parquet.Value, error) {
	if w := p.ci.width; w > 0 {
		o := i * w
		if o+w > len(p.data) || o < 0 {
			return parquet.Value{}, fmt.Errorf("value %d past the page's %d bytes", i, len(p.data))
		}
		return fixedValue(p.data[o:o+w], p.ci.typ), nil
	}
	b, err := p.bytes(i)
	if err != nil {
		return parquet.Value{}, err
	}
	return parquet.ByteArrayValue(b), nil
}

// bytes returns byte array i (i no less than the last one read), pointing
// into the data.
func (p *plainReader) bytes(i int) ([]byte, error) {
	if i < p.idx {
		return nil, fmt.Errorf("byte array %d read after %d", i, p.idx)
	}
	for p.idx < i {
		if p.off+4 > len(p.data) {
			return nil, fmt.Errorf("byte array %d past the page", p.idx)
		}
		p.off += 4 + int(binary.LittleEndian.Uint32(p.data[p.off:]))
		p.idx++
	}
	if p.off+4 > len(p.data) {
		return nil, fmt.Errorf("byte array %d past the page", i)
	}
	n := int(binary.LittleEndian.Uint32(p.data[p.off:]))
	if n < 0 || p.off+4+n > len(p.data) {
		return nil, fmt.Errorf("byte array %d of %d bytes past the page", i, n)
	}
	b := p.data[p.off+4 : p.off+4+n]
	p.off += 4 + n
	p.idx++
	return b, nil
}

// fixedValue is the PLAIN value b of a fixed-width physical type.
func fixedValue(b []byte, typ format.Type) parquet.Value {
	switch typ {
	case format.Int32:
		return parquet.Int32Value(int32(binary.LittleEndian.Uint32(b)))
	case format.Int64:
		return parquet.Int64Value(int64(binary.LittleEndian.Uint64(b)))
	case format.Float:
		return parquet.FloatValue(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case format.Double:
		return parquet.DoubleValue(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	default:
		return parquet.FixedLenByteArrayValue(b)
	}
}

// pageCutter cuts selected rows, in increasing order, out of a rawPage.
type pageCutter struct {
	p      *rawPage
	ci     colInfo
	dict   *dictionary
	levels hybrid
	idx    hybrid // dictionary indexes
	plain  plainReader
	delta  deltaLengthReader
}

// newPageCutter returns a cutter of page p. lens is storage the lengths
// of a DELTA_LENGTH_BYTE_ARRAY page are decoded into (its length is
// ignored; nil allocates): the cutter's lens field, kept by the caller for
// the next page.
func newPageCutter(p *rawPage, ci colInfo, dict *dictionary, lens []int32) (pageCutter, error) {
	c := pageCutter{p: p, ci: ci, dict: dict}
	if p.levels != nil {
		c.levels = hybrid{data: p.levels, bw: 1}
	}
	switch p.enc {
	case format.Plain:
		c.plain = plainReader{data: p.values, ci: ci}
	case format.DeltaLengthByteArray:
		lens, data, err := deltaLengths(lens, p.values)
		if err != nil {
			return c, err
		}
		c.delta = deltaLengthReader{lens: lens, data: data}
	default:
		if dict == nil {
			return c, errNotDirect
		}
		if len(p.values) < 1 {
			return c, fmt.Errorf("dictionary page without bit width")
		}
		bw := int(p.values[0])
		if bw > 32 {
			return c, fmt.Errorf("dictionary index bit width %d", bw)
		}
		c.idx = hybrid{data: p.values[1:], bw: bw}
	}
	return c, nil
}

// row returns the value of row r of the page, with its levels set.
func (c *pageCutter) row(r int) (parquet.Value, error) {
	if r < 0 || r >= c.p.rows {
		return parquet.Value{}, fmt.Errorf("row %d of a page of %d", r, c.p.rows)
	}
	vi := r
	if c.p.levels != nil {
		if !c.levels.seek(r) {
			return parquet.Value{}, fmt.Errorf("definition levels end before row %d", r)
		}
		if c.levels.at(r) == 0 {
			return parquet.Value{}.Level(0, 0, c.ci.leaf), nil
		}
		vi = c.levels.onesBefore(r)
	}
	var v parquet.Value
	switch c.p.enc {
	case format.Plain:
		var err error
		if v, err = c.plain.value(vi); err != nil {
			return v, err
		}
	case format.DeltaLengthByteArray:
		var err error
		if v, err = c.delta.value(vi); err != nil {
			return v, err
		}
	default:
		var err error
		if v, err = c.dict.index(&c.idx, vi); err != nil {
			return v, err
		}
	}
	return v.Level(0, c.ci.maxDef, c.ci.leaf), nil
}

// appendRows appends the values of rows [lo, hi) of the page to dst, with
// their levels set, as row returns them one by one; values pointing into
// the page are copied into arena unless owned (a dictionary's). A page
// without nulls, PLAIN or of dictionary indexes, is cut in one loop per
// encoding: a hot key's batch cuts millions of values, and row's dispatch
// and arena's per-value checks were a fifth of its CPU (stop 26).
func (c *pageCutter) appendRows(dst []parquet.Value, lo, hi int, arena *valueArena, owned bool) ([]parquet.Value, error) {
	if lo < 0 || hi > c.p.rows || lo > hi {
		return dst, fmt.Errorf("rows %d to %d of a page of %d", lo, hi, c.p.rows)
	}
	if c.p.levels != nil || c.p.enc != format.Plain && !isDictEnc(c.p.enc) {
		for r := lo; r < hi; r++ {
			v, err := c.row(r)
			if err != nil {
				return dst, err
			}
			if !owned {
				v = arena.keep(v)
			}
			dst = append(dst, v)
		}
		return dst, nil
	}
	maxDef, leaf := c.ci.maxDef, c.ci.leaf
	switch w := c.ci.width; {
	case isDictEnc(c.p.enc):
		for r := lo; r < hi; r++ {
			v, err := c.dict.index(&c.idx, r)
			if err != nil {
				return dst, err
			}
			dst = append(dst, v.Level(0, maxDef, leaf))
		}
	case w > 0:
		data, typ := c.plain.data, c.ci.typ
		if hi*w > len(data) {
			return dst, fmt.Errorf("value %d past the page's %d bytes", hi-1, len(data))
		}
		for r := lo; r < hi; r++ {
			b := data[r*w : r*w+w]
			if typ == format.FixedLenByteArray && !owned {
				b = arena.copy(b)
			}
			dst = append(dst, fixedValue(b, typ).Level(0, maxDef, leaf))
		}
	default:
		for r := lo; r < hi; r++ {
			b, err := c.plain.bytes(r)
			if err != nil {
				return dst, err
			}
			if !owned {
				b = arena.copy(b)
			}
			dst = append(dst, parquet.ByteArrayValue(b).Level(0, maxDef, leaf))
		}
	}
	return dst, nil
}

// deltaLengthReader reads DELTA_LENGTH_BYTE_ARRAY values by index, in
// increasing order: the lengths were decoded up front (deltaLengths), the
// bytes follow each other in data.
type deltaLengthReader struct {
	lens []int32
	data []byte
	// the next unread value and its offset in data
	idx, off int
}

// value returns value i, pointing into the page.
func (d *deltaLengthReader) value(i int) (parquet.Value, error) {
	if i < d.idx {
		return parquet.Value{}, fmt.Errorf("byte array %d read after %d", i, d.idx)
	}
	if i >= len(d.lens) {
		return parquet.Value{}, fmt.Errorf("byte array %d of %d", i, len(d.lens))
	}
	for ; d.idx < i; d.idx++ {
		d.off += int(d.lens[d.idx])
	}
	n := int(d.lens[i])
	if n < 0 || d.off+n > len(d.data) {
		return parquet.Value{}, fmt.Errorf("byte array %d of %d bytes past the page", i, n)
	}
	v := parquet.ByteArrayValue(d.data[d.off : d.off+n])
	d.off += n
	d.idx++
	return v, nil
}

// deltaLengths decodes the DELTA_BINARY_PACKED lengths that start a
// DELTA_LENGTH_BYTE_ARRAY page and returns them with the bytes after them
// (the values, back to back). A page of a few thousand values costs a few
// microseconds, far less than parquet-go materializing every value.
func deltaLengths(dst []int32, src []byte) ([]int32, []byte, error) {
	bad := func(what string) ([]int32, []byte, error) {
		return nil, nil, fmt.Errorf("delta lengths: bad %s", what)
	}
	uv := func() (uint64, bool) {
		v, k := binary.Uvarint(src)
		if k <= 0 {
			return 0, false
		}
		src = src[k:]
		return v, true
	}
	blockSize, ok1 := uv()
	miniBlocks, ok2 := uv()
	total, ok3 := uv()
	first, ok4 := uv()
	if !ok1 || !ok2 || !ok3 || !ok4 || miniBlocks == 0 || blockSize%miniBlocks != 0 || (blockSize/miniBlocks)%8 != 0 || total > uint64(len(src))*8+1 {
		return bad("header")
	}
	perMini := int(blockSize / miniBlocks)
	out := dst[:0]
	if cap(out) < int(total) {
		out = make([]int32, 0, total)
	}
	if total == 0 {
		return out, src, nil
	}
	last := int64(first>>1) ^ -int64(first&1) // zigzag
	out = append(out, int32(last))
	for len(out) < int(total) {
		zz, ok := uv()
		if !ok {
			return bad("block header")
		}
		minDelta := int64(zz>>1) ^ -int64(zz&1)
		if uint64(len(src)) < miniBlocks {
			return bad("bit widths")
		}
		widths := src[:miniBlocks]
		src = src[miniBlocks:]
		for _, bw := range widths {
			if len(out) == int(total) {
				break // the last block's unused miniblocks are absent
			}
			if bw > 64 {
				return bad("bit width")
			}
			size := perMini * int(bw) / 8
			if size > len(src) {
				return bad("miniblock")
			}
			mb := src[:size]
			src = src[size:]
			n := min(perMini, int(total)-len(out))
			for k := range n {
				var d uint64
				if bw > 0 {
					d = unpackBits(mb, k*int(bw), int(bw))
				}
				last += minDelta + int64(d)
				out = append(out, int32(last))
			}
		}
	}
	return out, src, nil
}

// unpackBits returns the bw-bit little-endian value at bit offset bit of b
// (Parquet's bit packing; bw ≤ 64).
func unpackBits(b []byte, bit, bw int) uint64 {
	var v uint64
	got := 0
	i, shift := bit/8, bit%8
	for got < bw && i < len(b) {
		v |= uint64(b[i]>>shift) << got
		got += 8 - shift
		shift = 0
		i++
	}
	if bw < 64 {
		v &= 1<<bw - 1
	}
	return v
}
