package rowindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/prepared"
)

// footerReadAhead is how much of a file's tail the first metadata read
// fetches. Footers of lake files are typically 2–30 KiB (≈100 bytes per
// column chunk × columns × row groups, plus the schema), so 64 KiB gets the
// whole footer in one request for files up to a few hundred column chunks;
// longer footers cost a second request.
const footerReadAhead = 64 << 10

// headerWindow is the read size of the page-header scan for files without a
// page index. A page header is 20–60 bytes; pages are typically ≥ 8 KiB, so a
// 64 KiB window usually holds a header and the scan costs one request per
// page that does not start inside the previous window.
const headerWindow = 64 << 10

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fileMeta is the cached metadata of one Parquet file: its footer, parsed,
// with an offset index for every column chunk (read from the file, or built by
// scanning page headers when the file has none).
type fileMeta struct {
	f         *parquet.File
	size      int64 // of the real object
	footerCRC uint32
	// aligned[rg*ncol+col] reports that the chunk's page locations start at
	// row boundaries (a real offset index, or a scan of pages whose row counts
	// are known); otherwise the chunk has one location spanning all its data
	// pages and rows are found by decoding from its first page.
	aligned []bool
	// ois[rg*ncol+col] is every chunk's offset index (its page locations),
	// read from the file or built (offsetIndexes). f does not hold them;
	// a data file's seekable handle does (seek, made on first use).
	ois []format.OffsetIndex
	// seek is f with the offset indexes, made on first use (seekable); nil
	// in a fragment's.
	seek *seekHandle
	// tail is the length of the file's tail: from the first byte of its
	// offset indexes (or of its footer, if it has none) to its end. It is
	// recorded in the manifest (FileEntry.TailBytes) so a cold lookup
	// reads footer and offset indexes in one request.
	tail int64
	// footerBytes is the length of the footer with its length and magic;
	// indexRange the bytes of the offset indexes and frameRange those of
	// the frame table (empty when the file has none): the parts of the
	// tail a lookup reads (tailRanges).
	footerBytes            int64
	indexRange, frameRange brange
	// maxRep is each leaf column's maximum repetition level.
	maxRep []int
	// maxDef is each leaf column's maximum definition level, and typeLen
	// its FIXED_LEN_BYTE_ARRAY length (0 for other types).
	maxDef, typeLen []int
	charge          int64 // bytes charged to the cache
	// scanRequests and scanBytes are what building the page locations cost.
	scanRequests, scanBytes int64
	// scanned are the page locations built by scanning page headers.
	scanned []ChunkPages
	// chunks are the file's column chunk ranges in offset order: a page
	// guard over one chunk is armed from them (pqrow.GuardPages through a
	// pageReader), not by walking the footer.
	chunks *pqrow.ChunkSpans
	// frames is the frame table of a framed prepared file (frameread.go).
	frames *prepared.FrameTable
	// framePages[rg*ncol+col] numbers the chunk's first page among the
	// table's, and framesChecked has a page's bit set once its entry was
	// checked against the page (checkPageFrames).
	framePages    []int32
	framesChecked []atomic.Uint64
	// copies is the interleaved group of such a file (copyread.go).
	copies *copyGroup
	// blob is the blob column's description in a prepared file with one
	// (blobread.go), nil otherwise.
	blob      *prepared.Blob
	blobErr   error      // the blob marker's, when it does not decode
	blobReads *blobReads // per requested columns, how a lookup reads the blob
	// coGroup is the expansion of a nested co-grouped file (nestread.go),
	// nil otherwise; coGroupErr its marker's error.
	coGroup    *prepared.CoGroup
	coGroupErr error
}

func (fm *fileMeta) ncol() int {
	rgs := fm.f.Metadata().RowGroups
	if len(rgs) == 0 {
		return 0
	}
	return len(rgs[0].Columns)
}

// offsetIndex returns the page locations of one column chunk.
func (fm *fileMeta) offsetIndex(rg, col int) []format.PageLocation {
	return fm.ois[rg*fm.ncol()+col].PageLocations
}

// dictRange returns the byte range before the first data page of a chunk
// (its dictionary page, if any); empty when there is none.
func (fm *fileMeta) dictRange(rg, col int) brange {
	cc := &fm.f.Metadata().RowGroups[rg].Columns[col]
	start := cc.MetaData.DataPageOffset
	if d := cc.MetaData.DictionaryPageOffset; d > 0 && d < start {
		start = d
	}
	locs := fm.offsetIndex(rg, col)
	if len(locs) == 0 || locs[0].Offset <= start {
		return brange{start, start}
	}
	return brange{start, locs[0].Offset}
}

// maxDictRatio caps the compression ratio dictBytes assumes, and
// maxDictBytes its estimate of one file.
const (
	maxDictRatio = 16
	maxDictBytes = 1 << 40
)

// dictBytes estimates the file's dictionary pages decompressed
// (FileEntry.DictBytes): each chunk's dictionary range, as lookups read it,
// scaled by the chunk's compression ratio.
func (fm *fileMeta) dictBytes() int64 {
	var n int64
	for rg, g := range fm.f.Metadata().RowGroups {
		for col, c := range g.Columns {
			dr := fm.dictRange(rg, col)
			stored := dr.end - dr.off
			if stored <= 0 {
				continue
			}
			if md := &c.MetaData; md.TotalCompressedSize > 0 && md.TotalUncompressedSize > md.TotalCompressedSize {
				// A footer's sizes are the writer's word: the ratio is
				// capped at maxDictRatio, so a lying one cannot
				// overflow the estimate.
				stored = int64(float64(stored) * min(float64(md.TotalUncompressedSize)/float64(md.TotalCompressedSize), maxDictRatio))
			}
			n = min(n+stored, maxDictBytes)
		}
	}
	return n
}

// loadFileMeta reads and parses the metadata of the Parquet object o of the
// given size. wantCRC, when non-zero, is the footer checksum recorded at
// indexing time: a different footer is a *FileChangedError.
//
// known holds page locations built by an earlier scan (the manifest's
// ScannedPages) for chunks without an offset index; chunks neither in the
// file's page index nor in known are scanned now.
func loadFileMeta(ctx context.Context, m *meter, o object, size int64, wantCRC uint32, known []ChunkPages) (*fileMeta, error) {
	return loadFileMetaTail(ctx, m, o, size, wantCRC, known, 0, nil)
}

// loadFileMetaTail is loadFileMeta with the size of the file's tail (page
// index and footer, fileMeta.tail) known from the manifest: the first read
// fetches all of it, so footer and offset index cost one request, not a
// chain of two. ranges, when valid (FileEntry.TailRanges), replace that one
// read by parallel reads of only the ranges the lookup needs, skipping the
// bloom filters between them.
func loadFileMetaTail(ctx context.Context, m *meter, o object, size int64, wantCRC uint32, known []ChunkPages, tailHint int64, ranges []TailRange) (*fileMeta, error) {
	tail, footerTail, err := readFooter(ctx, m, o, size, tailHint, ranges)
	if err != nil {
		return nil, err
	}
	footer := footerTail[:len(footerTail)-8]
	crc := crc32.Checksum(footer, castagnoli)
	if wantCRC != 0 && crc != wantCRC {
		return nil, fileChanged(o.uri, "footer checksum", nil)
	}
	fm := &fileMeta{size: size, footerCRC: crc, tail: int64(len(footer)) + 8, footerBytes: int64(len(footer)) + 8, seek: new(seekHandle)}
	f, err := openFooter(o, size, footerTail)
	if err != nil {
		return nil, err
	}
	if fm.ois, fm.aligned, err = offsetIndexes(ctx, m, o, f.Metadata(), fm, known, tail); err != nil {
		return nil, err
	}
	fm.f = f
	fm.describe(int64(len(footer)))
	if err := loadFrames(ctx, m, o, fm, tail); err != nil {
		return nil, err
	}
	loadBlob(o, fm)
	loadCoGroup(o, fm)
	return fm, nil
}

// loadWalkedMeta is loadFileMetaTail for a file whose column chunks are only
// ever walked page by page from their start (a fragment: decodeGroup,
// coverPages), never sought by row through parquet-go: its footer is decoded
// once, by parquet-go, from the bytes read, without the page index (the
// offset indexes are decoded here into fileMeta.ois) and without the
// re-encoded footer of openVirtual. Decoding, re-encoding and decoding again
// the fragment footers a key needs (≈250 row groups, ≈120 KB each) was
// ≈6.8 ms of CPU in a fresh handle's first lookup (docs/rowindex-bench.md,
// stop 34).
func loadWalkedMeta(ctx context.Context, m *meter, o object, size int64, tailHint int64) (*fileMeta, error) {
	tail, footerTail, err := readFooter(ctx, m, o, size, tailHint, nil)
	if err != nil {
		return nil, err
	}
	footer := footerTail[:len(footerTail)-8]
	fm := &fileMeta{size: size, footerCRC: crc32.Checksum(footer, castagnoli), tail: int64(len(footerTail)), footerBytes: int64(len(footerTail))}
	f, err := openFooter(o, size, footerTail)
	if err != nil {
		return nil, err
	}
	md := f.Metadata()
	if fm.ois, fm.aligned, err = offsetIndexes(ctx, m, o, md, fm, nil, tail); err != nil {
		return nil, err
	}
	fm.f = f
	fm.describe(int64(len(footer)))
	return fm, nil
}

// openFooter opens a file of size bytes with parquet-go from its footer
// (footerTail: the footer, its length and magic), decoded once. parquet-go
// reads the footer and nothing else (no page index, no bloom filters): the
// reader holds the footer alone, and is emptied after (the handle keeps
// it; pages are read through other readers, and a data file's chunks that
// parquet-go must seek in by row through fileMeta.seekable).
func openFooter(o object, size int64, footerTail []byte) (*parquet.File, error) {
	pr := &pageReader{sp: spans{{size - int64(len(footerTail)), footerTail}}}
	f, err := parquet.OpenFile(pr, size,
		parquet.SkipMagicBytes(true), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.OptimisticRead(false))
	pr.sp = nil
	if err != nil {
		// parquet-go's words for a footer that does not decode (or
		// decodes short of its length: a "signed" footer's tail).
		if msg := err.Error(); strings.HasPrefix(msg, "reading parquet file metadata") || strings.Contains(msg, "signed footer") {
			return nil, fileChanged(o.uri, "unreadable footer", err)
		}
		// A footer that decodes but does not open (its schema).
		return nil, fileChanged(o.uri, corruptReason+"schema", err)
	}
	return f, nil
}

// seekable returns a parquet-go handle of the data file that holds its
// offset indexes (fileMeta.ois), so that parquet-go seeks in its chunks by
// row (the builder's reads, and the lookups' chunks the direct path
// leaves): the footer re-encoded with them (openVirtual), made on first
// use. A lookup that the direct path serves never makes it: re-encoding
// and decoding again the footers a fresh process's first lookup loads was
// ≈2 ms of its CPU (stop 35).
//
// It also returns the handle's chunk spans: a page guard uses spans made
// from the footer of the handle it guards (pqrow.GuardPages).
//
// The handle's memory is not charged beyond fm.charge, whose estimate (4×
// the footer) was made for the re-encoded footer every data file held
// before it was made on demand.
func (fm *fileMeta) seekable() (*parquet.File, *pqrow.ChunkSpans, error) {
	s := fm.seek
	if s == nil {
		return nil, nil, errors.New("rowindex: a fragment's chunks are walked, not sought")
	}
	s.once.Do(func() {
		md := *fm.f.Metadata() // openVirtual rewrites the chunks' index fields: a copy of them
		md.RowGroups = slices.Clone(md.RowGroups)
		for i := range md.RowGroups {
			md.RowGroups[i].Columns = slices.Clone(md.RowGroups[i].Columns)
		}
		if s.f, s.err = openVirtual(&md, fm.ois, fm.size); s.err == nil {
			s.chunks = pqrow.NewChunkSpans(s.f.Metadata())
		}
	})
	return s.f, s.chunks, s.err
}

// seekHandle is a data file's seekable parquet-go handle and its chunk
// spans, made once.
type seekHandle struct {
	once   sync.Once
	f      *parquet.File
	chunks *pqrow.ChunkSpans
	err    error
}

// readFooter reads a file's tail (readTail) and returns it with the
// footer's bytes followed by its length and magic (the file's last
// footerLen+8 bytes), checked for Parquet's magic and a length that fits.
func readFooter(ctx context.Context, m *meter, o object, size, tailHint int64, ranges []TailRange) (spans, []byte, error) {
	changed := func(reason string, err error) error {
		return fileChanged(o.uri, reason, err)
	}
	if size < 12 {
		return nil, nil, changed("too small for Parquet", nil)
	}
	tail, err := readTail(ctx, m, o, size, tailHint, ranges)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, nil, changed("truncated", err)
		}
		return nil, nil, err
	}
	last := tail[len(tail)-1].data // ends at size
	switch string(last[len(last)-4:]) {
	case "PAR1":
	case "PARE":
		return nil, nil, &ColumnError{URI: o.uri, Reason: "encrypted Parquet is not supported"}
	default:
		return nil, nil, changed("bad magic", nil)
	}
	footerLen := int64(binary.LittleEndian.Uint32(last[len(last)-8:]))
	if footerLen+8 > size-4 {
		return nil, nil, changed("bad footer length", nil)
	}
	lastLen := int64(len(last))
	if footerLen+8 <= lastLen {
		return tail, last[lastLen-8-footerLen:], nil
	}
	head, err := readRange(ctx, m, o, size-8-footerLen, footerLen+8-lastLen)
	if err != nil {
		return nil, nil, changed("truncated", err)
	}
	return tail, append(head, last...), nil
}

// describe sets what fm derives from its parquet-go handle and offset
// indexes: the leaves' levels, the chunk spans and the cache charge of a
// footer of footerLen bytes.
func (fm *fileMeta) describe(footerLen int64) {
	md := fm.f.Metadata()
	fm.maxRep = maxRepetitionLevels(md.Schema)
	fm.maxDef, fm.typeLen = leafDefinitions(md.Schema)
	fm.chunks = pqrow.NewChunkSpans(md)
	fm.charge = 4*footerLen + 64*int64(len(fm.aligned)) + 1024 + fm.chunks.Bytes()
	for _, oi := range fm.ois {
		fm.charge += 24 * int64(len(oi.PageLocations))
	}
}

// tailGapBytes is the smallest gap of unneeded bytes in a file's tail that
// FileEntry.TailRanges skip: a smaller gap costs less to read through than
// one more request (on an object store ≈10–30 ms of first-byte latency,
// though parallel, plus a request charge; locally a system call).
const tailGapBytes = 16 << 10

// tailRanges returns the ranges of the tail a lookup needs (offset indexes,
// frame table, footer), merged across gaps under tailGapBytes; nil when
// that leaves one range (TailBytes then says all).
func (fm *fileMeta) tailRanges() []TailRange {
	rs := []brange{{fm.size - fm.footerBytes, fm.size}}
	for _, r := range []brange{fm.indexRange, fm.frameRange} {
		if r.end > r.off {
			rs = append(rs, r)
		}
	}
	rs = coalesce(rs, tailGapBytes)
	if len(rs) < 2 {
		return nil
	}
	out := make([]TailRange, len(rs))
	for i, r := range rs {
		out[i] = TailRange{Offset: r.off, Length: r.end - r.off}
	}
	return out
}

// readTail reads the tail of a file for its metadata: the given ranges in
// parallel when they are usable (sorted, apart, the last ending at size),
// else the last hint bytes (TailBytes; footerReadAhead when unknown) in one
// read. The last span
// returned ends at size.
func readTail(ctx context.Context, m *meter, o object, size, hint int64, ranges []TailRange) (spans, error) {
	if validTailRanges(ranges, size) {
		out := make(spans, len(ranges))
		errs := make([]error, len(ranges))
		var wg sync.WaitGroup
		for i, r := range ranges {
			wg.Go(func() {
				b, err := readRange(ctx, m, o, r.Offset, r.Length)
				out[i], errs[i] = span{r.Offset, b}, err
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	n := int64(footerReadAhead)
	if hint > 0 {
		n = hint // the manifest's TailBytes: exactly what is needed
	}
	n = min(size, n)
	b, err := readRange(ctx, m, o, size-n, n)
	if err != nil {
		return nil, err
	}
	return spans{{size - n, b}}, nil
}

// validTailRanges reports whether ranges can replace the one tail read: at
// least one, sorted and apart, inside the file, the last ending at its end
// with room for the footer's length and magic. Anything else (a manifest
// edited by hand) falls back to the one read.
func validTailRanges(ranges []TailRange, size int64) bool {
	if len(ranges) == 0 || ranges[len(ranges)-1].Offset+ranges[len(ranges)-1].Length != size || ranges[len(ranges)-1].Length < 12 {
		return false
	}
	prev := int64(0)
	for _, r := range ranges {
		if r.Offset < prev || r.Length <= 0 || r.Length > size-r.Offset {
			return false
		}
		prev = r.Offset + r.Length
	}
	return true
}

// offsetIndexes returns an offset index for every column chunk of md, in
// row-group-major order: read from the file where it has one, built by
// scanning page headers where it has none.
func offsetIndexes(ctx context.Context, m *meter, o object, md *format.FileMetaData, fm *fileMeta, known []ChunkPages, tail spans) ([]format.OffsetIndex, []bool, error) {
	knownAt := map[[2]int]*ChunkPages{}
	for i := range known {
		knownAt[[2]int{known[i].RowGroup, known[i].Column}] = &known[i]
	}
	var n int
	lo, hi := int64(-1), int64(-1)
	for i := range md.RowGroups {
		for j := range md.RowGroups[i].Columns {
			n++
			c := &md.RowGroups[i].Columns[j]
			if c.OffsetIndexOffset > 0 && c.OffsetIndexLength > 0 {
				if lo < 0 || c.OffsetIndexOffset < lo {
					lo = c.OffsetIndexOffset
				}
				hi = max(hi, c.OffsetIndexOffset+int64(c.OffsetIndexLength))
			}
		}
	}
	ois := make([]format.OffsetIndex, 0, n)
	aligned := make([]bool, 0, n)
	var region []byte
	if lo >= 0 {
		fm.tail = max(fm.tail, fm.size-lo)
		fm.indexRange = brange{lo, hi}
		var ok bool
		if region, ok = tail.slice(lo, hi-lo); !ok { // else read with the footer
			var err error
			if region, err = readRange(ctx, m, o, lo, hi-lo); err != nil {
				return nil, nil, fileChanged(o.uri, "truncated", err)
			}
		}
	}
	schema := md.Schema
	maxRep := maxRepetitionLevels(schema)
	for i := range md.RowGroups {
		for j := range md.RowGroups[i].Columns {
			c := &md.RowGroups[i].Columns[j]
			var oi format.OffsetIndex
			if c.OffsetIndexOffset > 0 && c.OffsetIndexLength > 0 {
				b := region[c.OffsetIndexOffset-lo : c.OffsetIndexOffset-lo+int64(c.OffsetIndexLength)]
				if err := thrift.Unmarshal(new(thrift.CompactProtocol), b, &oi); err != nil {
					return nil, nil, fileChanged(o.uri, corruptReason+"offset index", err)
				}
				ois = append(ois, oi)
				aligned = append(aligned, true)
				continue
			}
			if kp := knownAt[[2]int{i, j}]; kp != nil && len(kp.Offsets) == len(kp.Sizes) && len(kp.Offsets) == len(kp.FirstRows) {
				for k := range kp.Offsets {
					oi.PageLocations = append(oi.PageLocations, format.PageLocation{Offset: kp.Offsets[k], CompressedPageSize: kp.Sizes[k], FirstRowIndex: kp.FirstRows[k]})
				}
				ois = append(ois, oi)
				aligned = append(aligned, kp.Aligned)
				continue
			}
			rep := 0
			if j < len(maxRep) {
				rep = maxRep[j]
			}
			locs, ok, err := scanPages(ctx, m, o, c, rep, fm)
			if err != nil {
				return nil, nil, err
			}
			oi.PageLocations = locs
			ois = append(ois, oi)
			aligned = append(aligned, ok)
			cp := ChunkPages{RowGroup: i, Column: j, Aligned: ok}
			for _, l := range locs {
				cp.Offsets = append(cp.Offsets, l.Offset)
				cp.Sizes = append(cp.Sizes, l.CompressedPageSize)
				cp.FirstRows = append(cp.FirstRows, l.FirstRowIndex)
			}
			fm.scanned = append(fm.scanned, cp)
		}
	}
	return ois, aligned, nil
}

// ChunkPages are the page locations of one column chunk of a file without a
// page index, built by the builder's scan of its page headers and kept in
// the manifest so lookups need not scan again.
type ChunkPages struct {
	RowGroup  int     `json:"rg"`
	Column    int     `json:"col"`
	Aligned   bool    `json:"aligned"` // pages start at row boundaries
	Offsets   []int64 `json:"offsets"`
	Sizes     []int32 `json:"sizes"` // including the page header
	FirstRows []int64 `json:"firstRows"`
}

// walkLeaves calls fn for every leaf column of a flattened Parquet schema,
// in leaf order, with its maximum repetition and definition levels. A
// schema whose child counts run past its end stops the walk there.
func walkLeaves(schema []format.SchemaElement, fn func(e *format.SchemaElement, rep, def int)) {
	var walk func(i, rep, def int) int
	walk = func(i, rep, def int) int {
		e := &schema[i]
		if e.RepetitionType.Valid {
			switch e.RepetitionType.V {
			case format.Repeated:
				rep++
				def++
			case format.Optional:
				def++
			}
		}
		if e.NumChildren.V == 0 {
			fn(e, rep, def)
			return i + 1
		}
		next := i + 1
		for range e.NumChildren.V {
			if next >= len(schema) {
				return next
			}
			next = walk(next, rep, def)
		}
		return next
	}
	if len(schema) > 0 {
		next := 1
		for range schema[0].NumChildren.V {
			if next >= len(schema) {
				break
			}
			next = walk(next, 0, 0)
		}
	}
}

// maxRepetitionLevels returns the maximum repetition level of every leaf
// column of a flattened Parquet schema, in leaf order.
func maxRepetitionLevels(schema []format.SchemaElement) []int {
	var out []int
	walkLeaves(schema, func(_ *format.SchemaElement, rep, _ int) { out = append(out, rep) })
	return out
}

// leafDefinitions returns the maximum definition level and the fixed length
// (FIXED_LEN_BYTE_ARRAY; 0 otherwise) of every leaf column of a flattened
// Parquet schema, in leaf order.
func leafDefinitions(schema []format.SchemaElement) (maxDef, typeLen []int) {
	walkLeaves(schema, func(e *format.SchemaElement, _, def int) {
		maxDef = append(maxDef, def)
		tl := 0
		if e.TypeLength.Valid {
			tl = int(e.TypeLength.V)
		}
		typeLen = append(typeLen, tl)
	})
	return maxDef, typeLen
}

// scanPages builds the page locations of a column chunk from its page
// headers. ok is false when the rows of the pages cannot be known from the
// headers (data page v1 of a repeated column): then the chunk gets one
// location spanning all its data pages.
func scanPages(ctx context.Context, m *meter, o object, c *format.ColumnChunk, maxRep int, fm *fileMeta) (locs []format.PageLocation, ok bool, err error) {
	md := &c.MetaData
	start := md.DataPageOffset
	if d := md.DictionaryPageOffset; d > 0 && d < start {
		start = d
	}
	end := start + md.TotalCompressedSize
	if md.NumValues == 0 || md.TotalCompressedSize <= 0 {
		return nil, true, nil
	}
	var win span
	before := m.requests.Load()
	beforeBytes := m.bytes.Load()
	defer func() {
		fm.scanRequests += m.requests.Load() - before
		fm.scanBytes += m.bytes.Load() - beforeBytes
	}()
	get := func(pos, n int64) ([]byte, error) {
		if pos >= win.off && pos+n <= win.end() {
			return win.data[pos-win.off:], nil
		}
		l := min(max(n, headerWindow), end-pos)
		b, err := readRange(ctx, m, o, pos, l)
		if err != nil {
			return nil, fileChanged(o.uri, "truncated", err)
		}
		win = span{pos, b}
		return b, nil
	}
	row := int64(0)
	firstData := int64(-1)
	for pos := start; pos < end; {
		var h format.PageHeader
		var hlen int64
		for probe := int64(256); ; probe *= 4 {
			b, err := get(pos, min(probe, end-pos))
			if err != nil {
				return nil, false, err
			}
			r := bytes.NewReader(b)
			h = format.PageHeader{}
			derr := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(r)).Decode(&h)
			if derr == nil {
				hlen = int64(len(b) - r.Len())
				break
			}
			if probe >= end-pos {
				return nil, false, fileChanged(o.uri, fmt.Sprintf("%spage header at byte %d", corruptReason, pos), derr)
			}
		}
		size := hlen + int64(h.CompressedPageSize)
		switch h.Type {
		case format.DataPage, format.DataPageV2:
			if firstData < 0 {
				firstData = pos
			}
			var rows int64
			switch {
			case h.Type == format.DataPageV2:
				rows = int64(h.DataPageHeaderV2.V.NumRows)
			case maxRep == 0:
				rows = int64(h.DataPageHeader.V.NumValues)
			default:
				return []format.PageLocation{{Offset: firstData, CompressedPageSize: int32(end - firstData)}}, false, nil
			}
			locs = append(locs, format.PageLocation{Offset: pos, CompressedPageSize: int32(size), FirstRowIndex: row})
			row += rows
		}
		pos += size
	}
	return locs, true, nil
}

// openVirtual opens md with parquet-go as if the file carried the given
// offset indexes: the footer is re-encoded with the offset indexes placed in
// a virtual region after the real end of the file (size), and parquet-go
// reads that region and the footer from memory. Data page offsets are
// unchanged, so page reads address the real object.
func openVirtual(md *format.FileMetaData, ois []format.OffsetIndex, size int64) (*parquet.File, error) {
	var blob []byte
	k := 0
	for i := range md.RowGroups {
		for j := range md.RowGroups[i].Columns {
			b, err := thrift.Marshal(new(thrift.CompactProtocol), &ois[k])
			if err != nil {
				return nil, err
			}
			c := &md.RowGroups[i].Columns[j]
			c.OffsetIndexOffset = size + int64(len(blob))
			c.OffsetIndexLength = int32(len(b))
			c.ColumnIndexOffset, c.ColumnIndexLength = 0, 0
			c.MetaData.BloomFilterOffset = 0
			blob = append(blob, b...)
			k++
		}
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), md)
	if err != nil {
		return nil, err
	}
	virt := append(blob, footer...)
	virt = binary.LittleEndian.AppendUint32(virt, uint32(len(footer)))
	virt = append(virt, "PAR1"...)
	r := &pageReader{sp: spans{{off: size, data: virt}}}
	f, err := parquet.OpenFile(r, size+int64(len(virt)),
		parquet.SkipMagicBytes(true), parquet.SkipBloomFilters(true), parquet.OptimisticRead(false))
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	return f, nil
}
