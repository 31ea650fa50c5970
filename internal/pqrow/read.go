package pqrow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// File is an open Parquet file. Its methods may be called concurrently; each
// Rows iteration reads the file independently through the io.ReaderAt.
type File struct {
	pf      *parquet.File
	root    *pnode
	numRows int64
	check   *Checker // what the footer promises, checked as pages are read
	// r reads everything after the footer (pages, page indexes, bloom
	// filters): the file itself (its reader given to OpenFile), or a
	// call's own reader (WithReader).
	r io.ReaderAt
}

// supportedCodecs are the compression codecs parquet-go decodes (not the
// deprecated Hadoop-framed LZ4, nor LZO).
var supportedCodecs = map[format.CompressionCodec]bool{
	format.Uncompressed: true, format.Snappy: true, format.Gzip: true,
	format.Brotli: true, format.Zstd: true, format.Lz4Raw: true,
}

// OpenFile reads the footer of the Parquet file of the given size. Only the
// footer is read; pages are read lazily by Rows. A truncated or malformed
// file returns an error matching ErrCorrupt, an encrypted one ErrUnsupported.
func OpenFile(r io.ReaderAt, size int64) (f *File, err error) {
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, recovered(p)
		}
	}()
	pf, err := OpenParquet(r, size,
		parquet.SkipPageIndex(true),
		parquet.SkipBloomFilters(true),
		parquet.ReadBufferSize(readBufferSize))
	if err != nil {
		var hdr [4]byte
		if _, rerr := r.ReadAt(hdr[:], 0); rerr == nil && string(hdr[:]) == "PARE" {
			return nil, fmt.Errorf("%w: encrypted parquet file: %w", ErrUnsupported, err)
		}
		return nil, corrupt(err)
	}
	md := pf.Metadata()
	if md.EncryptionAlgorithm.Value != nil {
		return nil, fmt.Errorf("%w: encrypted parquet file", ErrUnsupported)
	}
	root, err := buildFileSchema(md.Schema)
	if err != nil {
		return nil, err
	}
	check, err := NewChecker(pf)
	if err != nil {
		return nil, err
	}
	// Some writers (old parquet-mr) leave the footer's num_rows at 0; the
	// row groups' counts are authoritative.
	var total int64
	for _, rg := range md.RowGroups {
		if rg.NumRows < 0 {
			return nil, fmt.Errorf("%w: row group with %d rows", ErrCorrupt, rg.NumRows)
		}
		if len(rg.Columns) != countLeaves(root) {
			return nil, fmt.Errorf("%w: row group has %d column chunks for %d columns", ErrCorrupt, len(rg.Columns), countLeaves(root))
		}
		for i, cc := range rg.Columns {
			if codec := cc.MetaData.Codec; !supportedCodecs[codec] {
				return nil, fmt.Errorf("%w: compression codec %v (column %d)", ErrUnsupported, codec, i)
			}
		}
		total += rg.NumRows
	}
	return &File{pf: pf, root: root, numRows: total, check: check, r: pf}, nil
}

// readBufferSize is the size of the buffered reads of pages and footer:
// 256 KiB keeps one object-store request per typical page run (Spark's
// pages are 1 MiB uncompressed, ~256 KiB compressed) without holding much
// memory per open column.
const readBufferSize = 256 << 10

func countLeaves(n *pnode) int {
	if n.leaf() {
		return 1
	}
	c := 0
	for _, ch := range n.children {
		c += countLeaves(ch)
	}
	return c
}

// NumRows returns the number of rows of the file (the sum of its row
// groups' counts, from the footer).
func (f *File) NumRows() int64 { return f.numRows }

// NumRowGroups returns the number of row groups.
func (f *File) NumRowGroups() int { return len(f.pf.RowGroups()) }

// Metadata returns the footer's key/value metadata entry for key.
func (f *File) Metadata(key string) (string, bool) { return f.pf.Lookup(key) }

// Schema infers the Spark schema of the file as Spark's Parquet reader does
// (nullability from repetition, legacy lists and maps resolved). Columns of
// types Spark cannot represent return ErrUnsupported.
func (f *File) Schema() (*schema.Struct, error) { return f.root.structType() }

// ReadOptions control how requested fields are matched to file columns.
type ReadOptions struct {
	// ByFieldID matches fields that carry a column-mapping id
	// (delta.columnMapping.id) by Parquet field id instead of by name.
	ByFieldID bool
	// RowGroups, when non-nil, restricts reading to these row groups (by
	// index, in the given order).
	RowGroups []int
}

// Rows reads the file's rows as values of the requested schema. Fields are
// matched by physical name (PhysicalName: the column-mapping physical name,
// else the field name) or by field id (see ReadOptions); fields missing
// from the file read as nil. Only the requested fields' columns are read.
//
// Rows are produced one at a time from one page per column, so memory is
// bounded by the pages of the requested columns, not the file size. Each
// yielded row is freshly allocated and owned by the caller. Iteration stops
// after the first error, which is yielded with a nil row; errors match
// ErrCorrupt, ErrSchemaMismatch or ErrUnsupported, or are ctx's error.
func (f *File) Rows(ctx context.Context, st *schema.Struct, opts ReadOptions) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		pl := &planner{byID: opts.ByFieldID}
		fields := make([]*rnode, len(st.Fields))
		for i, fd := range st.Fields {
			c := pl.findChild(f.root, fd)
			if c == nil {
				continue
			}
			r, err := pl.planField(fd.Type, c, []string{fd.Name})
			if err != nil {
				yield(nil, err)
				return
			}
			fields[i] = r
		}
		groups := f.pf.RowGroups()
		order := opts.RowGroups
		if order == nil {
			order = make([]int, len(groups))
			for i := range order {
				order[i] = i
			}
		}
		for _, gi := range order {
			if gi < 0 || gi >= len(groups) {
				yield(nil, fmt.Errorf("pqrow: row group %d out of range [0,%d)", gi, len(groups)))
				return
			}
			if !f.readGroup(ctx, gi, groups[gi], pl.cols, fields, yield) {
				return
			}
		}
	}
}

// rowsPerContextCheck: rows between checks of ctx (a check is an atomic
// load; 1024 rows keep the overhead well under 1% of decoding).
const rowsPerContextCheck = 1024

// readGroup yields the rows of one row group; it returns false when the
// iteration must stop.
func (f *File) readGroup(ctx context.Context, gi int, rg parquet.RowGroup, cols []column, fields []*rnode, yield func(Row, error) bool) bool {
	chunks := rg.ColumnChunks()
	curs := make([]*cursor, len(cols))
	defer func() {
		for _, c := range curs {
			if c != nil {
				c.close()
			}
		}
	}()
	for i, c := range cols {
		if c.node.col >= len(chunks) {
			yield(nil, fmt.Errorf("%w: missing column chunk %d", ErrCorrupt, c.node.col))
			return false
		}
		curs[i] = &cursor{chunk: chunks[c.node.col], reader: f.r, conv: c.conv, maxDef: c.node.def, path: c.node.path,
			check: f.check.Chunk(gi, c.node.col)}
	}
	entries := make([][]entry, len(cols))
	n := rg.NumRows()
	for i := int64(0); i < n; i++ {
		if i%rowsPerContextCheck == 0 {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return false
			}
		}
		row, err := assembleRow(curs, entries, fields)
		if err != nil {
			yield(nil, err)
			return false
		}
		if !yield(row, nil) {
			return false
		}
	}
	for _, c := range curs {
		if err := c.finish(); err != nil {
			yield(nil, err)
			return false
		}
	}
	return true
}

// assembleRow reads one row's entries from every cursor and rebuilds the
// requested values. Panics (from parquet-go on malformed pages, or from
// inconsistent levels) become ErrCorrupt.
func assembleRow(curs []*cursor, entries [][]entry, fields []*rnode) (row Row, err error) {
	defer func() {
		if p := recover(); p != nil {
			row, err = nil, recovered(p)
		}
	}()
	for i, c := range curs {
		if entries[i], err = c.nextRow(entries[i][:0]); err != nil {
			return nil, err
		}
	}
	row = make(Row, len(fields))
	for i, r := range fields {
		if r == nil {
			continue
		}
		if row[i], err = r.decode(entries[r.first:r.last]); err != nil {
			return nil, err
		}
	}
	return row, nil
}

// entry is one leaf value with its levels; v is nil unless the value is
// defined at the column's maximum definition level.
type entry struct {
	rep, def int32
	v        any
}

// convError stands in an entry for a value that failed to convert.
type convError struct{ err error }

// cursor reads one column chunk page by page, converting values as it goes
// so that no page memory is retained after the page is consumed.
type cursor struct {
	chunk  parquet.ColumnChunk
	reader io.ReaderAt // the File's r
	pages  parquet.Pages
	conv   leafConv
	maxDef int
	path   []string
	buf    []entry
	pos    int
	vals   []parquet.Value
	eof    bool
	read   int64       // values decoded so far
	check  *ChunkCheck // the footer's promises about this chunk
}

// valueBatch is the number of values decoded per ReadValues call: 1024 ×
// 24-byte parquet.Value = 24 KiB of scratch per column.
const valueBatch = 1024

// finish checks that the chunk holds no values beyond its row group's rows
// and as many values as its metadata says.
func (c *cursor) finish() error {
	for c.pos == len(c.buf) && !c.eof {
		if err := c.refill(); err != nil {
			return err
		}
	}
	if c.pos != len(c.buf) {
		return c.check.lie("pages hold more rows than the row group's %d", c.check.wantRows)
	}
	if want := c.chunk.NumValues(); c.read != want {
		return c.check.lie("pages hold %d values, the footer gives %d", c.read, want)
	}
	return c.check.Done()
}

func (c *cursor) close() {
	if c.pages != nil {
		c.pages.Close()
	}
}

// nextRow appends the entries of the next row (a run starting with
// repetition level 0) to dst.
func (c *cursor) nextRow(dst []entry) ([]entry, error) {
	for {
		if c.pos == len(c.buf) {
			if c.eof {
				if len(dst) == 0 {
					return nil, c.check.lie("pages hold fewer rows than the row group's %d", c.check.wantRows)
				}
				return dst, nil
			}
			if err := c.refill(); err != nil {
				return nil, err
			}
			continue
		}
		e := c.buf[c.pos]
		if e.rep == 0 && len(dst) > 0 {
			return dst, nil
		}
		if e.rep != 0 && len(dst) == 0 {
			return nil, colErr(c.path, ErrCorrupt, "row starts with repetition level %d", e.rep)
		}
		dst = append(dst, e)
		c.pos++
	}
}

func (c *cursor) refill() error {
	if c.pages == nil {
		c.pages = pagesOf(c.chunk, c.reader)
	}
	c.buf, c.pos = c.buf[:0], 0
	page, err := c.pages.ReadPage()
	if errors.Is(err, io.EOF) {
		c.eof = true
		return nil
	}
	if err != nil {
		return readErr(c.path, err)
	}
	defer parquet.Release(page)
	if err := c.check.Page(page); err != nil {
		return err
	}
	if c.vals == nil {
		c.vals = make([]parquet.Value, valueBatch)
	}
	vr := page.Values()
	for {
		n, err := vr.ReadValues(c.vals)
		c.read += int64(n)
		for _, v := range c.vals[:n] {
			e := entry{rep: int32(v.RepetitionLevel()), def: int32(v.DefinitionLevel())}
			if int(e.def) > c.maxDef || e.def < 0 {
				return colErr(c.path, ErrCorrupt, "definition level %d above maximum %d", e.def, c.maxDef)
			}
			if int(e.def) == c.maxDef && c.conv != nil && !v.IsNull() {
				var cerr error
				if e.v, cerr = c.conv(v); cerr != nil {
					// Reported when (and if) the row holding it is decoded.
					e.v = convError{cerr}
				}
			}
			c.buf = append(c.buf, e)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return readErr(c.path, err)
		}
		if n == 0 {
			return colErr(c.path, ErrCorrupt, "page yields no values")
		}
	}
}

// decode rebuilds the value of r from the entries of its columns (cols[i]
// holds the entries of column r.first+i for one instance of r).
func (r *rnode) decode(cols [][]entry) (any, error) {
	if len(cols) == 0 || len(cols[0]) == 0 {
		return nil, fmt.Errorf("%w: no values for a requested column", ErrCorrupt)
	}
	e0 := cols[0][0]
	if r.nullDef > 0 && int(e0.def) < r.nullDef {
		return nil, nil
	}
	switch r.kind {
	case kLeaf:
		if len(cols[0]) != 1 {
			return nil, fmt.Errorf("%w: %d values where one was expected", ErrCorrupt, len(cols[0]))
		}
		if ce, ok := e0.v.(convError); ok {
			return nil, ce.err
		}
		return e0.v, nil
	case kStruct:
		out := make([]any, len(r.fields))
		for i, c := range r.fields {
			if c == nil {
				continue
			}
			v, err := c.decode(cols[c.first-r.first : c.last-r.first])
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case kList, kMap:
		if int(e0.def) < r.elemDef {
			if r.kind == kMap {
				return []KV{}, nil
			}
			return []any{}, nil
		}
		elems, err := r.splitElements(cols)
		if err != nil {
			return nil, err
		}
		if r.kind == kList {
			out := make([]any, len(elems))
			for i, ec := range elems {
				if out[i], err = r.elem.decode(ec); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		out := make([]KV, len(elems))
		for i, ec := range elems {
			if out[i].Key, err = r.key.decode(ec[r.key.first-r.first : r.key.last-r.first]); err != nil {
				return nil, err
			}
			if out[i].Key == nil {
				return nil, fmt.Errorf("%w: null map key", ErrCorrupt)
			}
			if r.value != nil {
				if out[i].Value, err = r.value.decode(ec[r.value.first-r.first : r.value.last-r.first]); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("pqrow: unknown plan node kind %d", r.kind)
}

// splitElements cuts every column's entries into the runs of each element:
// a new element starts at every entry whose repetition level is at most
// r.rep. All columns must agree on the number of elements.
func (r *rnode) splitElements(cols [][]entry) ([][][]entry, error) {
	var elems [][][]entry
	for j, col := range cols {
		k, start := 0, 0
		cut := func(end int) {
			if j == 0 {
				elems = append(elems, make([][]entry, len(cols)))
			}
			if k < len(elems) {
				elems[k][j] = col[start:end]
			}
			k++
			start = end
		}
		for i := 1; i < len(col); i++ {
			if int(col[i].rep) <= r.rep {
				cut(i)
			}
		}
		cut(len(col))
		if k != len(elems) {
			return nil, fmt.Errorf("%w: columns of one list disagree on its length (%d vs %d)", ErrCorrupt, k, len(elems))
		}
	}
	return elems, nil
}
