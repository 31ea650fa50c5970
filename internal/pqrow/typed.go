package pqrow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"
)

// This file is the typed side of the reader: whole pages of top-level
// primitive columns delivered as typed slices (int64 or byte strings),
// straight from the pages' buffers, without a parquet.Value or an interface
// value per row and without assembling rows. A consumer that looks at each
// column on its own (a per-file summary: distinct values, min and max)
// needs nothing more; dictionary-encoded pages come as the dictionary
// (converted once per column chunk) and an index per value, so such a
// consumer can work per distinct entry instead of per row.

// TypedKind is the form in which ScanTyped delivers a column's values.
type TypedKind uint8

// The typed forms.
const (
	// TypedInt: int64 values. Integers are themselves (unsigned 32-bit
	// values widened), dates are days since 1970-01-01, timestamps are
	// microseconds since the epoch (UTC; nanoseconds truncated toward the
	// past, as Rows converts them).
	TypedInt TypedKind = iota + 1
	// TypedBytes: byte strings (string columns).
	TypedBytes
)

// TypedValues is a run of non-null values of one column: Ints for
// TypedInt, Data and Offsets for TypedBytes (value i is
// Data[Offsets[i]:Offsets[i+1]]).
type TypedValues struct {
	Ints    []int64
	Data    []byte
	Offsets []uint32
}

// Len returns the number of values.
func (v *TypedValues) Len() int {
	if v.Offsets != nil {
		return len(v.Offsets) - 1
	}
	return len(v.Ints)
}

// Bytes returns byte-string value i.
func (v *TypedValues) Bytes(i int) []byte { return v.Data[v.Offsets[i]:v.Offsets[i+1]] }

// TypedPage is one page of one column: its rows, in order, nulls left
// out. A dictionary-encoded page has Dict (the column chunk's dictionary,
// the same pointer and DictID for every page of the chunk) and Index (each
// non-null value's dictionary entry, checked in range); a plain page has
// Values. The slices are valid only during the callback.
type TypedPage struct {
	Rows   int
	Nulls  int
	Dict   *TypedValues
	DictID int
	Index  []int32
	Values *TypedValues
}

// TypedColumn is a field planned for ScanTyped.
type TypedColumn struct {
	Kind TypedKind
	name string // the field's Spark type name (primitive)
	node *pnode // nil: the field is missing from the file (all null)
	conv intConv
	path []string
}

// intConv says how a physical integer becomes a TypedInt value.
type intConv struct {
	phys     format.Type
	unsigned bool  // INT32 read as uint32
	lo, hi   int64 // range check of INT32 values (lo == hi: none)
	unit     int   // INT64 timestamps: unitMillis, unitMicros, unitNanos; -1 otherwise
}

// PlanTyped plans fields (top-level fields of the file, matched as Rows
// matches them) for ScanTyped. It returns false when some field cannot be
// delivered in a typed form (nested or repeated, or a type other than
// byte, short, integer, long, date and timestamp from INT32/INT64, and
// string from BYTE_ARRAY): the caller reads rows instead, which also
// reports any mismatch between the field and the file.
func (f *File) PlanTyped(fields []schema.Field, opts ReadOptions) ([]TypedColumn, bool) {
	pl := &planner{byID: opts.ByFieldID}
	out := make([]TypedColumn, len(fields))
	for i, fd := range fields {
		tc, ok := planTyped(pl, f.root, fd)
		if !ok {
			return nil, false
		}
		out[i] = tc
	}
	return out, true
}

func planTyped(pl *planner, root *pnode, fd schema.Field) (TypedColumn, bool) {
	tc := TypedColumn{path: []string{fd.Name}, conv: intConv{unit: -1}}
	p, ok := fd.Type.(*schema.Primitive)
	if !ok {
		return tc, false
	}
	switch p.Name {
	case "string":
		tc.Kind = TypedBytes
	case "byte", "short", "integer", "long", "date", "timestamp", "timestamp_ntz":
		tc.Kind = TypedInt
	default:
		return tc, false
	}
	tc.name = p.Name
	n := pl.findChild(root, fd)
	if n == nil {
		return tc, true
	}
	if !n.leaf() || n.repeated() || n.def > 1 {
		return tc, false
	}
	// The row reader's converter decides what the pair means (and refuses
	// what it refuses); the typed forms below reproduce it.
	if _, err := leafConverter(fd.Type, n, tc.path); err != nil {
		return tc, false
	}
	tc.node = n
	pt, _ := n.el.Type.Get()
	tc.conv.phys = pt
	switch p.Name {
	case "string":
		return tc, pt == format.ByteArray
	case "byte", "short", "integer":
		tc.conv.unsigned = isUnsigned(n)
		tc.conv.lo, tc.conv.hi = math.MinInt32, math.MaxInt32
		switch p.Name {
		case "byte":
			tc.conv.lo, tc.conv.hi = math.MinInt8, math.MaxInt8
		case "short":
			tc.conv.lo, tc.conv.hi = math.MinInt16, math.MaxInt16
		}
		return tc, pt == format.Int32
	case "long":
		tc.conv.unsigned = pt == format.Int32 && isUnsigned(n)
		return tc, pt == format.Int32 || pt == format.Int64
	case "date":
		return tc, pt == format.Int32
	default: // timestamps
		if pt != format.Int64 {
			return tc, false // INT96
		}
		tc.conv.unit = timeUnit(n)
		return tc, true
	}
}

// typedScratch holds one column's conversion buffers, reused page to page.
type typedScratch struct {
	dictInts, plainInts []int64
	dict                TypedValues
	plain               TypedValues
	dictID              int
	cur                 parquet.Dictionary
}

// maxWholeChunk is the largest column chunk ScanTyped reads in one
// request; a larger one is read through the page reader's buffer.
const maxWholeChunk = 32 << 20

// ScanTyped calls fn with every page of the planned columns, row group by
// row group and, within one, column by column (col is the index in cols).
// A column missing from the file yields one all-null page per row group.
// Each column chunk is read in one request (up to maxWholeChunk). Errors
// match ErrCorrupt or ErrSchemaMismatch (a value outside its type), or are
// fn's or ctx's.
func (f *File) ScanTyped(ctx context.Context, cols []TypedColumn, fn func(col int, p *TypedPage) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = recovered(p)
		}
	}()
	scratch := make([]typedScratch, len(cols))
	id := 0
	for gi, g := range f.pf.RowGroups() {
		chunks := g.ColumnChunks()
		n := g.NumRows()
		for ci := range cols {
			if err := ctx.Err(); err != nil {
				return err
			}
			c := &cols[ci]
			if c.node == nil {
				if n > 0 {
					if err := fn(ci, &TypedPage{Rows: int(n), Nulls: int(n)}); err != nil {
						return err
					}
				}
				continue
			}
			if c.node.col >= len(chunks) {
				return fmt.Errorf("%w: missing column chunk %d", ErrCorrupt, c.node.col)
			}
			id++
			if err := f.scanChunk(gi, chunks[c.node.col], c, n, &scratch[ci], id, func(p *TypedPage) error { return fn(ci, p) }); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *File) scanChunk(gi int, cc parquet.ColumnChunk, c *TypedColumn, numRows int64, s *typedScratch, id int, fn func(p *TypedPage) error) error {
	var pages parquet.Pages
	if fcc, ok := cc.(*parquet.FileColumnChunk); ok {
		md := f.pf.Metadata().RowGroups[gi].Columns[c.node.col].MetaData
		start := f.chunkStart(gi, c.node.col)
		if size := md.TotalCompressedSize; size > 0 && size <= maxWholeChunk {
			sr, err := prefetch(f.r, []byteSpan{{start, start + size}})
			if err != nil {
				return readErr(c.path, err)
			}
			pages = GuardPages(fcc, sr)
		}
	}
	if pages == nil {
		pages = pagesOf(cc, f.r)
	}
	defer pages.Close()
	s.cur = nil
	maxDef := byte(c.node.def)
	var rows int64
	for rows < numRows {
		page, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return readErr(c.path, err)
		}
		tp, err := s.page(c, page, maxDef, id)
		if err == nil {
			rows += int64(tp.Rows)
			err = fn(tp)
		}
		parquet.Release(page)
		if err != nil {
			return err
		}
	}
	if rows != numRows {
		return colErr(c.path, ErrCorrupt, "column chunk has %d rows, its row group %d", rows, numRows)
	}
	if want := cc.NumValues(); rows != want {
		return colErr(c.path, ErrCorrupt, "column chunk holds %d values, its metadata says %d", rows, want)
	}
	return nil
}

// page converts one page.
func (s *typedScratch) page(c *TypedColumn, page parquet.Page, maxDef byte, id int) (*TypedPage, error) {
	nv := int(page.NumValues())
	defs := page.DefinitionLevels()
	if len(defs) > 0 && len(defs) != nv {
		return nil, colErr(c.path, ErrCorrupt, "page has %d definition levels for %d values", len(defs), nv)
	}
	present := nv
	if len(defs) > 0 {
		present = 0
		for _, d := range defs {
			if d == maxDef {
				present++
			}
		}
	} else if maxDef > 0 {
		return nil, colErr(c.path, ErrCorrupt, "page of an optional column without definition levels")
	}
	tp := &TypedPage{Rows: nv, Nulls: nv - present}
	if dict := page.Dictionary(); dict != nil {
		if dict != s.cur {
			s.cur = dict
			s.dictID = id
			dv := dict.Page().Data()
			if err := s.convert(c, &dv, &s.dict, &s.dictInts); err != nil {
				return nil, err
			}
		}
		data := page.Data()
		idx := data.Int32()
		if len(idx) != present {
			return nil, colErr(c.path, ErrCorrupt, "page has %d values for %d defined rows", len(idx), present)
		}
		n := int32(s.dict.Len())
		for _, i := range idx {
			if i < 0 || i >= n {
				return nil, colErr(c.path, ErrCorrupt, "dictionary index %d out of range [0,%d)", i, n)
			}
		}
		tp.Dict, tp.DictID, tp.Index = &s.dict, s.dictID, idx
		return tp, nil
	}
	pv := page.Data()
	if err := s.convert(c, &pv, &s.plain, &s.plainInts); err != nil {
		return nil, err
	}
	if s.plain.Len() != present {
		return nil, colErr(c.path, ErrCorrupt, "page has %d values for %d defined rows", s.plain.Len(), present)
	}
	tp.Values = &s.plain
	return tp, nil
}

// convert fills out with the typed form of a page's (or dictionary's)
// values. INT64 integers and microsecond timestamps are used in place.
func (s *typedScratch) convert(c *TypedColumn, vals *encoding.Values, out *TypedValues, buf *[]int64) error {
	*out = TypedValues{}
	if c.Kind == TypedBytes {
		if vals.Kind() != encoding.ByteArray {
			return colErr(c.path, ErrCorrupt, "byte-array column with %v values", vals.Kind())
		}
		out.Data, out.Offsets = vals.ByteArray()
		if len(out.Offsets) == 0 {
			out.Offsets = []uint32{0}
		}
		return nil
	}
	cv := &c.conv
	switch cv.phys {
	case format.Int64:
		if vals.Kind() != encoding.Int64 {
			return colErr(c.path, ErrCorrupt, "INT64 column with %v values", vals.Kind())
		}
		src := vals.Int64()
		switch cv.unit {
		case -1, unitMicros:
			out.Ints = src
			return nil
		}
		dst := grow(buf, len(src))
		for i, x := range src {
			if cv.unit == unitNanos {
				dst[i] = floorDiv(x, 1000)
			} else if x > math.MaxInt64/1000 || x < math.MinInt64/1000 {
				dst[i] = unixTime(x, unitMillis).UnixMicro()
			} else {
				dst[i] = x * 1000
			}
		}
		out.Ints = dst
		return nil
	case format.Int32:
		if vals.Kind() != encoding.Int32 {
			return colErr(c.path, ErrCorrupt, "INT32 column with %v values", vals.Kind())
		}
		src := vals.Int32()
		dst := grow(buf, len(src))
		check := cv.lo != cv.hi
		for i, v := range src {
			x := int64(v)
			if cv.unsigned {
				x = int64(uint32(v))
			}
			if check && (x < cv.lo || x > cv.hi) {
				return colErr(c.path, ErrSchemaMismatch, "value %d does not fit the column's type", x)
			}
			dst[i] = x
		}
		out.Ints = dst
		return nil
	}
	return colErr(c.path, ErrCorrupt, "unexpected physical type %v", cv.phys)
}

func grow(buf *[]int64, n int) []int64 {
	if cap(*buf) < n {
		*buf = make([]int64, n)
	}
	return (*buf)[:n]
}
