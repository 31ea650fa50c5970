package pqrow

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// IntegrityError reports a Parquet file whose contents contradict what its
// own footer promises (row and value counts, null counts, statistics). A
// reader that trusted the footer, or decoded such pages as they come, would
// return made-up values (parquet-go pads a short PLAIN page with zeros, for
// one), so such a file is refused as a whole. It matches ErrCorrupt.
type IntegrityError struct {
	Column   string // dotted column path; "" when the lie is about the file
	RowGroup int    // row group index, -1 when the lie is about the file
	What     string // what lied, in words: "the footer counts 105 nulls in a required column"
}

func (e *IntegrityError) Error() string {
	var b strings.Builder
	b.WriteString("pqrow: file contradicts its footer: ")
	if e.Column != "" {
		fmt.Fprintf(&b, "column %s, ", e.Column)
	}
	if e.RowGroup >= 0 {
		fmt.Fprintf(&b, "row group %d: ", e.RowGroup)
	}
	b.WriteString(e.What)
	return b.String()
}

// Unwrap makes an *IntegrityError match ErrCorrupt.
func (e *IntegrityError) Unwrap() error { return ErrCorrupt }

// Checker holds what a file's footer promises, checked against itself
// when made (NewChecker) and against the decoded pages or values of each
// column chunk (Chunk). Building one reads nothing: the footer is already
// in memory.
type Checker struct {
	pf     *parquet.File
	leaves []*parquet.Column       // by column index
	elems  []*format.SchemaElement // the leaves' schema elements, by column index
}

// NewChecker checks the footer of pf against itself, without reading
// anything: per row group, a non-repeated column chunk holds one value per
// row, null counts fit the value count and are zero in required columns,
// chunk byte ranges lie inside the file, and the row groups' rows add up
// to the file's. It returns an *IntegrityError on the first lie.
func NewChecker(pf *parquet.File) (*Checker, error) {
	c := &Checker{pf: pf}
	var walk func(col *parquet.Column)
	walk = func(col *parquet.Column) {
		if col.Leaf() {
			c.leaves = append(c.leaves, col)
			return
		}
		for _, ch := range col.Columns() {
			walk(ch)
		}
	}
	walk(pf.Root())
	for i, l := range c.leaves {
		if l.Index() != i {
			return nil, &IntegrityError{RowGroup: -1, What: fmt.Sprintf("leaf column %d has index %d", i, l.Index())}
		}
	}
	md := pf.Metadata()
	for i := 1; i < len(md.Schema); i++ {
		if e := &md.Schema[i]; !e.NumChildren.Valid || e.NumChildren.V == 0 {
			c.elems = append(c.elems, e)
		}
	}
	if len(c.elems) != len(c.leaves) {
		return nil, &IntegrityError{RowGroup: -1, What: fmt.Sprintf("%d leaf schema elements for %d columns", len(c.elems), len(c.leaves))}
	}
	for i, e := range c.elems {
		if !e.Type.Valid || e.Type.V < format.Boolean || e.Type.V > format.FixedLenByteArray {
			return nil, &IntegrityError{Column: strings.Join(c.leaves[i].Path(), "."), RowGroup: -1,
				What: fmt.Sprintf("the footer gives physical type %d, which Parquet does not define", e.Type.V)}
		}
	}
	size := pf.Size()
	var rows int64
	for g := range md.RowGroups {
		rg := &md.RowGroups[g]
		if rg.NumRows < 0 {
			return nil, &IntegrityError{RowGroup: g, What: fmt.Sprintf("the footer gives %d rows", rg.NumRows)}
		}
		rows += rg.NumRows
		if len(rg.Columns) != len(c.leaves) {
			return nil, &IntegrityError{RowGroup: g, What: fmt.Sprintf("%d column chunks for %d columns", len(rg.Columns), len(c.leaves))}
		}
		for j := range rg.Columns {
			if err := c.checkChunkMeta(g, j, rg.NumRows, size); err != nil {
				return nil, err
			}
		}
	}
	// Old parquet-mr leaves the file's count at 0; the row groups' counts
	// are authoritative then.
	if md.NumRows != 0 && md.NumRows != rows {
		return nil, &IntegrityError{RowGroup: -1, What: fmt.Sprintf("the footer gives %d rows, its row groups %d", md.NumRows, rows)}
	}
	return c, nil
}

func (c *Checker) checkChunkMeta(g, j int, groupRows, size int64) error {
	l := c.leaves[j]
	cm := &c.pf.Metadata().RowGroups[g].Columns[j].MetaData
	lie := func(format string, args ...any) error {
		return &IntegrityError{Column: strings.Join(l.Path(), "."), RowGroup: g, What: fmt.Sprintf(format, args...)}
	}
	if cm.NumValues < 0 {
		return lie("the footer gives %d values", cm.NumValues)
	}
	if l.MaxRepetitionLevel() == 0 && cm.NumValues != groupRows {
		return lie("the footer gives %d values for %d rows of a non-repeated column", cm.NumValues, groupRows)
	}
	if cm.TotalCompressedSize < 0 || cm.DataPageOffset < 0 || cm.DictionaryPageOffset < 0 {
		return lie("negative byte offset or size in the footer")
	}
	start := cm.DataPageOffset
	if d := cm.DictionaryPageOffset; d > 0 && d < start {
		start = d
	}
	if groupRows > 0 && (start < 4 || start+cm.TotalCompressedSize > size) {
		return lie("the footer places the chunk at bytes [%d, %d) of a %d-byte file", start, start+cm.TotalCompressedSize, size)
	}
	nulls := cm.Statistics.NullCount
	if nulls < 0 || nulls > cm.NumValues {
		return lie("the footer counts %d nulls in %d values", nulls, cm.NumValues)
	}
	if l.MaxDefinitionLevel() == 0 && nulls > 0 {
		return lie("the footer counts %d nulls in a required column", nulls)
	}
	return nil
}

// Chunk returns the check of one column chunk, to be fed its pages (Page)
// or its values (Value) and finished with Done.
func (c *Checker) Chunk(rowGroup, column int) *ChunkCheck {
	l := c.leaves[column]
	rg := &c.pf.Metadata().RowGroups[rowGroup]
	cm := &rg.Columns[column].MetaData
	k := &ChunkCheck{
		path: strings.Join(l.Path(), "."), rowGroup: rowGroup,
		flat: l.MaxRepetitionLevel() == 0, maxDef: l.MaxDefinitionLevel(),
		wantValues: cm.NumValues, wantRows: rg.NumRows, wantNulls: cm.Statistics.NullCount,
		typ: l.Type(),
	}
	k.min, k.max, k.bounded = statsBounds(l.Type(), c.elems[column], &cm.Statistics)
	return k
}

// ChunkCheck tallies the decoded pages or values of one column chunk and
// compares them with the footer (see Checker.Chunk).
type ChunkCheck struct {
	path                 string
	rowGroup             int
	flat                 bool
	maxDef               int
	wantValues, wantRows int64
	wantNulls            int64
	typ                  parquet.Type
	min, max             parquet.Value
	bounded              bool
	values, nulls, rows  int64
	pageMin, pageMax     parquet.Value
	seen                 bool
	failed               error
}

func (k *ChunkCheck) lie(format string, args ...any) error {
	if k.failed == nil {
		k.failed = &IntegrityError{Column: k.path, RowGroup: k.rowGroup, What: fmt.Sprintf(format, args...)}
	}
	return k.failed
}

// Page tallies one decoded data page (a whole page, as Pages.ReadPage
// returns it) and checks its values against the footer's statistics.
func (k *ChunkCheck) Page(p parquet.Page) error {
	if k.failed != nil {
		return k.failed
	}
	k.values += p.NumValues()
	k.nulls += p.NumNulls()
	k.rows += p.NumRows()
	if k.maxDef == 0 && p.NumNulls() > 0 {
		return k.lie("a page holds %d nulls in a required column", p.NumNulls())
	}
	if k.values > k.wantValues {
		return k.lie("pages hold more than the %d values the footer gives", k.wantValues)
	}
	if k.bounded {
		if lo, hi, ok := p.Bounds(); ok {
			if err := k.within(lo, hi); err != nil {
				return err
			}
		}
	}
	return nil
}

// Value tallies one value of the chunk (for readers that see rows, not
// pages). Values must come in the chunk's order; a repeated column's
// values count one per level entry, as in the pages.
func (k *ChunkCheck) Value(v parquet.Value) error {
	if k.failed != nil {
		return k.failed
	}
	k.values++
	if v.RepetitionLevel() == 0 {
		k.rows++
	}
	if v.DefinitionLevel() < k.maxDef || v.IsNull() {
		k.nulls++
		if k.maxDef == 0 {
			return k.lie("a null value in a required column")
		}
		return nil
	}
	if k.bounded {
		return k.within(v, v)
	}
	return nil
}

func (k *ChunkCheck) within(lo, hi parquet.Value) error {
	if k.typ.Compare(lo, k.min) < 0 {
		return k.lie("a value below the footer's minimum (%s < %s)", show(lo), show(k.min))
	}
	if k.typ.Compare(hi, k.max) > 0 {
		return k.lie("a value above the footer's maximum (%s > %s)", show(hi), show(k.max))
	}
	return nil
}

// Done compares the chunk's totals with the footer: as many values as it
// gives, one row per value of a non-repeated column, and the null count of
// a non-repeated column when the footer gives a non-zero one (a zero may
// mean "not written").
func (k *ChunkCheck) Done() error {
	if k.failed != nil {
		return k.failed
	}
	if k.values != k.wantValues {
		return k.lie("pages hold %d values, the footer gives %d", k.values, k.wantValues)
	}
	if k.flat && k.rows != k.wantRows {
		return k.lie("pages hold %d rows, the row group %d", k.rows, k.wantRows)
	}
	if k.flat && k.wantNulls > 0 && k.nulls != k.wantNulls {
		return k.lie("pages hold %d nulls, the footer counts %d", k.nulls, k.wantNulls)
	}
	return nil
}

// statsBounds decodes the footer's min_value and max_value for the types
// whose order parquet-go's pages and types agree on (signed or unsigned
// integers, booleans, plain binaries and strings, fixed-length binaries
// without a logical type). Floating point (NaN), INT96, decimals stored as
// bytes and the deprecated min/max fields are not checked.
func statsBounds(t parquet.Type, e *format.SchemaElement, s *format.Statistics) (lo, hi parquet.Value, ok bool) {
	if len(s.MaxValue) == 0 && len(s.MinValue) == 0 {
		return lo, hi, false
	}
	logical := e.LogicalType.Value
	conv, hasConv := e.ConvertedType.V, e.ConvertedType.Valid
	switch t.Kind() {
	case parquet.Boolean:
		if len(s.MinValue) != 1 || len(s.MaxValue) != 1 {
			return lo, hi, false
		}
		return parquet.BooleanValue(s.MinValue[0] != 0), parquet.BooleanValue(s.MaxValue[0] != 0), true
	case parquet.Int32, parquet.Int64:
		// Unsigned integers order differently; not checked.
		if it, isInt := logical.(*format.IntType); isInt && !it.IsSigned {
			return lo, hi, false
		}
		if hasConv && conv >= deprecated.Uint8 && conv <= deprecated.Uint64 {
			return lo, hi, false
		}
		if t.Kind() == parquet.Int32 {
			if len(s.MinValue) != 4 || len(s.MaxValue) != 4 {
				return lo, hi, false
			}
			return parquet.Int32Value(int32(binary.LittleEndian.Uint32(s.MinValue))), parquet.Int32Value(int32(binary.LittleEndian.Uint32(s.MaxValue))), true
		}
		if len(s.MinValue) != 8 || len(s.MaxValue) != 8 {
			return lo, hi, false
		}
		return parquet.Int64Value(int64(binary.LittleEndian.Uint64(s.MinValue))), parquet.Int64Value(int64(binary.LittleEndian.Uint64(s.MaxValue))), true
	case parquet.ByteArray:
		if !byteOrdered(logical, conv, hasConv) || len(s.MaxValue) == 0 {
			return lo, hi, false
		}
		return parquet.ByteArrayValue(bytes.Clone(s.MinValue)), parquet.ByteArrayValue(bytes.Clone(s.MaxValue)), true
	case parquet.FixedLenByteArray:
		// Only plain fixed-length binaries: decimals, float16, UUIDs and
		// intervals have orders of their own.
		if logical != nil || hasConv {
			return lo, hi, false
		}
		n := t.Length()
		if len(s.MinValue) != n || len(s.MaxValue) != n {
			return lo, hi, false
		}
		return parquet.FixedLenByteArrayValue(bytes.Clone(s.MinValue)), parquet.FixedLenByteArrayValue(bytes.Clone(s.MaxValue)), true
	}
	return lo, hi, false
}

// byteOrdered reports whether a BYTE_ARRAY column's values order as
// unsigned bytes (plain binary, strings, enums, JSON), as page bounds do.
func byteOrdered(logical format.LogicalTypeValue, conv deprecated.ConvertedType, hasConv bool) bool {
	if logical != nil {
		switch logical.(type) {
		case *format.StringType, *format.EnumType, *format.JsonType:
			return true
		}
		return false
	}
	if hasConv {
		switch conv {
		case deprecated.UTF8, deprecated.Enum, deprecated.Json:
			return true
		}
		return false
	}
	return true
}

// show prints a value for an error message: bytes in hex when not
// printable text.
func show(v parquet.Value) string {
	switch v.Kind() {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		b := v.ByteArray()
		for _, c := range b {
			if c < 0x20 || c > 0x7e {
				return fmt.Sprintf("0x%x", b)
			}
		}
		return fmt.Sprintf("%q", b)
	}
	return v.String()
}
