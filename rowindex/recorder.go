package rowindex

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/internal/pqrow"
)

// A Recorder turns rows read from data files into their top-level columns'
// Go values, the values Result.Record gives, at a fraction of its cost: what
// Record works out for every row (each column's leaves, a schema to
// reconstruct it with) is worked out once per data file and kept, and a
// top-level primitive column, the common case, is converted straight from
// its one leaf value without parquet-go's reconstruction. A stream of a hot
// key's rows spent most of its time in Record's per-row work. The values
// it returns share allocations (strings' bytes, boxed numbers and times, a
// few hundred values each): a value kept keeps its share alive.
//
// A Recorder is not safe for concurrent use, and must not be copied once
// used (two copies would append into the same slabs); its zero value is
// ready.
type Recorder struct {
	_ noCopy

	// Values are boxed into slabs, and strings' bytes copied into a shared
	// buffer: a few allocations per hundreds of rows, not one per value.
	i32   pqrow.Slab[int32]
	i64   pqrow.Slab[int64]
	f32   pqrow.Slab[float32]
	f64   pqrow.Slab[float64]
	strs  pqrow.Slab[string]
	times pqrow.Slab[time.Time]
	text  []byte

	last   *parquet.File
	shape  *recordShape
	shapes map[*parquet.File]*recordShape
	// present marks, per column of the current shape, whether the row has
	// values for it; names are the present columns' names (reused while
	// the pattern repeats, as it does for every row of one projection).
	present []bool
	names   []string
	namesOf *recordShape
}

// maxRecordShapes bounds the files a Recorder keeps shapes of.
const maxRecordShapes = 64

// noCopy makes go vet's copylocks check report copies of a Recorder.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// recordShape is what converting a data file's rows needs, per top-level
// column of its schema (in schema order).
type recordShape struct {
	cols   []recordColumn
	byLeaf []int // leaf column index → its top-level column
}

// recordColumn is one top-level column of a data file.
type recordColumn struct {
	node parquet.Node
	name string
	// flat: a primitive column that is not repeated, one value per row,
	// converted as kind says; nullable when it is optional.
	flat     bool
	nullable bool
	kind     leafKind
	// Otherwise the column is reconstructed: its leaves' values, renumbered
	// by pos, through a schema of the column alone (built once).
	schema *parquet.Schema
	pos    map[int]int
}

// shapeOf returns f's shape, working it out on f's first row.
func (rc *Recorder) shapeOf(f *parquet.File) *recordShape {
	if f == rc.last {
		return rc.shape
	}
	s, ok := rc.shapes[f]
	if !ok {
		s = newRecordShape(f)
		if rc.shapes == nil || len(rc.shapes) >= maxRecordShapes {
			// Bounded: the map keeps its files alive (a stream over
			// thousands of files would hold every footer the handle's
			// cache let go); a shape is cheap to work out again.
			rc.shapes = map[*parquet.File]*recordShape{}
		}
		rc.shapes[f] = s
	}
	rc.last, rc.shape = f, s
	return s
}

func newRecordShape(f *parquet.File) *recordShape {
	s := &recordShape{}
	for _, c := range f.Root().Columns() {
		rcol := recordColumn{node: c, name: c.Name()}
		leaves := leavesOf(c)
		for _, l := range leaves {
			for len(s.byLeaf) <= l {
				s.byLeaf = append(s.byLeaf, -1)
			}
			s.byLeaf[l] = len(s.cols)
		}
		if c.Leaf() && c.MaxRepetitionLevel() == 0 {
			rcol.flat, rcol.nullable = true, c.MaxDefinitionLevel() > 0
			rcol.kind = leafKindOf(c.Type())
		} else {
			rcol.schema = parquet.NewSchema("r", parquet.Group{c.Name(): c})
			rcol.pos = make(map[int]int, len(leaves))
			for k, l := range leaves {
				rcol.pos[l] = k
			}
		}
		s.cols = append(s.cols, rcol)
	}
	return s
}

// leafKind says how a flat column's values become Go values: what
// parquet-go's AssignValue stores in an interface, then logicalValue.
type leafKind uint8

const (
	leafAssign leafKind = iota // through AssignValue and logicalValue
	leafBool
	leafInt32
	leafInt64
	leafFloat
	leafDouble
	leafString // BYTE_ARRAY, plain or UTF8
	leafDate   // INT32 days → time.Time
	leafMillis // INT64 timestamps → time.Time
	leafMicros
	leafNanos
)

// leafKindOf returns the direct conversion of a primitive type's values,
// for the types whose AssignValue is known to store the physical value as
// is (matched by their Go type, not by annotations, which several types
// share); leafAssign for the others.
func leafKindOf(t parquet.Type) leafKind {
	var lt format.LogicalTypeValue
	if l := t.LogicalType(); l != nil {
		lt = l.Value
	}
	signedInt := func(bits int8) bool {
		it, ok := lt.(*format.IntType)
		return ok && it.IsSigned && it.BitWidth == bits
	}
	rt := reflect.TypeOf(t)
	switch {
	case t == parquet.BooleanType:
		return leafBool
	case t == parquet.Int32Type, rt == reflect.TypeOf(parquet.Int(32).Type()) && t.Kind() == parquet.Int32 && signedInt(32):
		return leafInt32
	case rt == reflect.TypeOf(parquet.Date().Type()):
		// (Without its logical type, as logicalValue needs it: AssignValue,
		// below the switch.)
		if _, ok := lt.(*format.DateType); ok && t.Kind() == parquet.Int32 {
			return leafDate
		}
	case t == parquet.Int64Type, rt == reflect.TypeOf(parquet.Int(64).Type()) && t.Kind() == parquet.Int64 && signedInt(64):
		return leafInt64
	case rt == reflect.TypeOf(parquet.Timestamp(parquet.Microsecond).Type()):
		if ts, ok := lt.(*format.TimestampType); ok && t.Kind() == parquet.Int64 {
			switch ts.Unit.Value.(type) {
			case *format.MilliSeconds:
				return leafMillis
			case *format.NanoSeconds:
				return leafNanos
			default:
				return leafMicros
			}
		}
	case t == parquet.FloatType:
		return leafFloat
	case t == parquet.DoubleType:
		return leafDouble
	case t == parquet.ByteArrayType, rt == reflect.TypeOf(parquet.String().Type()):
		return leafString
	}
	return leafAssign
}

// leaf converts a flat column's (non-null) value.
func (rc *Recorder) leaf(col *recordColumn, v parquet.Value) (any, error) {
	switch col.kind {
	case leafBool:
		return v.Boolean(), nil // booleans box without allocating
	case leafInt32:
		return rc.i32.Box(v.Int32()), nil
	case leafInt64:
		return rc.i64.Box(v.Int64()), nil
	case leafFloat:
		return rc.f32.Box(v.Float()), nil
	case leafDouble:
		return rc.f64.Box(v.Double()), nil
	case leafString:
		return rc.strs.Box(rc.string(v.ByteArray())), nil
	case leafDate:
		return rc.times.Box(dateTime(v.Int32())), nil
	case leafMillis:
		return rc.times.Box(time.UnixMilli(v.Int64()).UTC()), nil
	case leafMicros:
		return rc.times.Box(time.UnixMicro(v.Int64()).UTC()), nil
	case leafNanos:
		return rc.times.Box(time.Unix(0, v.Int64()).UTC()), nil
	}
	var x any
	if err := col.node.Type().AssignValue(reflect.ValueOf(&x).Elem(), v); err != nil {
		return nil, fmt.Errorf("rowindex: column %s: %w", col.name, err)
	}
	return logicalValue(col.node, x), nil
}

// textSlab is the largest buffer strings' bytes are copied into; buffers
// start at 256 bytes and double (a single row's conversion costs little).
const textSlab = 64 << 10

// string returns b as a string whose bytes lie in the Recorder's text
// buffer. The buffer is only appended to, never written again, so the
// string is immutable as Go requires; it keeps its buffer alive.
func (rc *Recorder) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(rc.text)-len(rc.text) < len(b) {
		rc.text = make([]byte, 0, max(min(2*cap(rc.text), textSlab), 256, len(b)))
	}
	off := len(rc.text)
	rc.text = append(rc.text, b...)
	return unsafe.String(&rc.text[off], len(b))
}

// Fields appends to vals the Go values of row's top-level columns that it
// has values for, in the data file's schema order, and returns their
// names: the same names and values as Record's map without building it.
// The names slice is the Recorder's, valid until its next call: read it,
// do not keep it.
func (rc *Recorder) Fields(row *Row, vals []any) (names []string, out []any, err error) {
	f := row.file
	if f == nil {
		return nil, vals, fmt.Errorf("rowindex: row has no schema")
	}
	s := rc.shapeOf(f)
	if cap(rc.present) < len(s.cols) {
		rc.present = make([]bool, len(s.cols))
	}
	present := rc.present[:len(s.cols)]
	clear(present)
	vs, prev, ordered := row.Values, -1, true
	for _, v := range vs {
		c := v.Column()
		if c < 0 || c >= len(s.byLeaf) || s.byLeaf[c] < 0 {
			return nil, vals, fmt.Errorf("rowindex: row has a value of column %d, not in its file's schema", c)
		}
		present[s.byLeaf[c]] = true
		ordered = ordered && c >= prev
		prev = c
	}
	if !ordered {
		// A column's values are taken as a run below: put them in leaf
		// order (a stable sort keeps a repeated column's values in order).
		vs = slices.SortedStableFunc(slices.Values(vs), func(a, b parquet.Value) int { return cmp.Compare(a.Column(), b.Column()) })
	}
	if rc.namesOf != s || !samePresence(s, present, rc.names) {
		rc.names = rc.names[:0]
		for i, ok := range present {
			if ok {
				rc.names = append(rc.names, s.cols[i].name)
			}
		}
		rc.namesOf = s
	}
	for i := range s.cols {
		if !present[i] {
			continue
		}
		col := &s.cols[i]
		// The row's values are in leaf order, so a column's values are the
		// next ones.
		j := 0
		for j < len(vs) && s.byLeaf[vs[j].Column()] == i {
			j++
		}
		var x any
		if x, err = rc.value(col, vs[:j]); err != nil {
			return nil, vals, err
		}
		vals = append(vals, x)
		vs = vs[j:]
	}
	return rc.names, vals, nil
}

// samePresence reports whether names are the names of the present columns.
func samePresence(s *recordShape, present []bool, names []string) bool {
	k := 0
	for i, ok := range present {
		if !ok {
			continue
		}
		if k >= len(names) || names[k] != s.cols[i].name {
			return false
		}
		k++
	}
	return k == len(names)
}

// value converts the column's values of one row.
func (rc *Recorder) value(col *recordColumn, vs []parquet.Value) (any, error) {
	if col.flat && len(vs) == 1 {
		v := vs[0]
		if col.nullable && v.DefinitionLevel() < 1 {
			return nil, nil
		}
		return rc.leaf(col, v)
	}
	if col.schema == nil {
		// A flat column with other than one value: a malformed row, which
		// reconstruction reports.
		col.schema = parquet.NewSchema("r", parquet.Group{col.name: col.node})
		col.pos = map[int]int{col.node.(*parquet.Column).Index(): 0}
	}
	sub := make(parquet.Row, len(vs))
	for k, v := range vs {
		sub[k] = v.Level(v.RepetitionLevel(), v.DefinitionLevel(), col.pos[v.Column()])
	}
	m := map[string]any{}
	if err := col.schema.Reconstruct(&m, sub); err != nil {
		return nil, fmt.Errorf("rowindex: column %s: %w", col.name, err)
	}
	return logicalValue(col.node, m[col.name]), nil
}

// Record returns row's values as Result.Record does: a map from each
// top-level column the row has values for to its Go value. Covered rows are
// not records of a data file: use their Covered values.
func (rc *Recorder) Record(row *Row) (map[string]any, error) {
	var buf [16]any
	names, vals, err := rc.Fields(row, buf[:0])
	if err != nil {
		return nil, err
	}
	m := make(map[string]any, len(names))
	for i, n := range names {
		m[n] = vals[i]
	}
	return m, nil
}
