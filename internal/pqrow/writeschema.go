package pqrow

import (
	"fmt"
	"reflect"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// wnode is one node of a write plan: where a Spark value goes in the
// Parquet file and at which levels.
type wnode struct {
	kind     int
	name     string // Parquet name (physical name when asked)
	optional bool
	def, rep int // levels of a present value of this node
	col      int // leaf column
	first    int // leaf columns [first, last)
	last     int
	fields   []*wnode
	elem     *wnode
	key      *wnode
	value    *wnode
	enc      leafEnc
	typ      schema.Type
	path     []string // Spark names, for messages
}

// leafEnc converts one non-null Go value to a Parquet value.
type leafEnc func(v any) (parquet.Value, error)

// writePlanner builds the Parquet schema and write plan of a Spark schema.
type writePlanner struct {
	physical bool
	col      int
}

// buildWriteSchema maps a Spark struct to a Parquet schema as Spark writes
// it, returning the root plan node.
func buildWriteSchema(st *schema.Struct, physical bool) (*parquet.Schema, *wnode, error) {
	wp := &writePlanner{physical: physical}
	fields, root, err := wp.structFields(st, 0, 0, nil)
	if err != nil {
		return nil, nil, err
	}
	root.kind, root.first, root.last = kStruct, 0, wp.col
	return parquet.NewSchema("spark_schema", &groupNode{fields: fields}), root, nil
}

func (wp *writePlanner) structFields(st *schema.Struct, def, rep int, path []string) ([]parquet.Field, *wnode, error) {
	w := &wnode{kind: kStruct, first: wp.col, def: def, rep: rep}
	out := make([]parquet.Field, 0, len(st.Fields))
	seen := make(map[string]bool, len(st.Fields))
	for _, f := range st.Fields {
		name := f.Name
		if wp.physical {
			name = PhysicalName(f)
		}
		fp := append(path[:len(path):len(path)], f.Name)
		if seen[name] {
			return nil, nil, colErr(fp, ErrSchemaMismatch, "duplicate column name %q", name)
		}
		seen[name] = true
		node, cw, err := wp.node(f.Type, f.Nullable, def, rep, fp)
		if err != nil {
			return nil, nil, err
		}
		cw.name = name
		if id, ok := FieldID(f); ok {
			node = parquet.FieldID(node, int(id))
		}
		out = append(out, &field{Node: node, name: name})
		w.fields = append(w.fields, cw)
	}
	w.last = wp.col
	return out, w, nil
}

// node maps one Spark type to a Parquet node and its write plan; parent
// levels are def and rep.
func (wp *writePlanner) node(t schema.Type, nullable bool, def, rep int, path []string) (parquet.Node, *wnode, error) {
	if nullable {
		def++
	}
	var (
		node parquet.Node
		w    *wnode
	)
	switch t := t.(type) {
	case *schema.Struct:
		if len(t.Fields) == 0 {
			return nil, nil, colErr(path, ErrUnsupported, "empty struct")
		}
		fields, sw, err := wp.structFields(t, def, rep, path)
		if err != nil {
			return nil, nil, err
		}
		node, w = &groupNode{fields: fields}, sw
	case *schema.Array:
		w = &wnode{kind: kList, first: wp.col, def: def, rep: rep + 1}
		en, ew, err := wp.node(t.Element, t.ContainsNull, def+1, rep+1, path)
		if err != nil {
			return nil, nil, err
		}
		w.elem = ew
		node = &groupNode{typ: listType, fields: []parquet.Field{
			&field{name: "list", Node: parquet.Repeated(&groupNode{fields: []parquet.Field{&field{name: "element", Node: en}}})},
		}}
	case *schema.Map:
		w = &wnode{kind: kMap, first: wp.col, def: def, rep: rep + 1}
		kn, kw, err := wp.node(t.Key, false, def+1, rep+1, path)
		if err != nil {
			return nil, nil, err
		}
		vn, vw, err := wp.node(t.Value, t.ValueContainsNull, def+1, rep+1, path)
		if err != nil {
			return nil, nil, err
		}
		w.key, w.value = kw, vw
		node = &groupNode{typ: mapType, fields: []parquet.Field{
			&field{name: "key_value", Node: parquet.Repeated(&groupNode{fields: []parquet.Field{
				&field{name: "key", Node: kn}, &field{name: "value", Node: vn},
			}})},
		}}
	default:
		leaf, enc, err := leafNode(t, path)
		if err != nil {
			return nil, nil, err
		}
		w = &wnode{kind: kLeaf, col: wp.col, first: wp.col, def: def, rep: rep, enc: enc}
		wp.col++
		node = leaf
	}
	w.last = wp.col
	w.optional, w.typ, w.path = nullable, t, path
	if nullable {
		return parquet.Optional(node), w, nil
	}
	return parquet.Required(node), w, nil
}

// decimalBytes returns the FIXED_LEN_BYTE_ARRAY size Spark uses for a
// decimal precision: the fewest bytes whose signed range holds 10^p - 1
// (Spark's Decimal.minBytesForPrecision).
func decimalBytes(precision int) int {
	n := 1
	for {
		// largest magnitude of n signed bytes: 2^(8n-1) - 1
		if float64(8*n-1)*0.30102999566398120 >= float64(precision) {
			return n
		}
		n++
	}
}

// Spark's thresholds for decimal physical types: precision ≤ 9 fits INT32
// (10^9 - 1 < 2^31), ≤ 18 fits INT64 (10^18 - 1 < 2^63).
const (
	maxInt32DecimalPrecision = 9
	maxInt64DecimalPrecision = 18
)

func leafNode(t schema.Type, path []string) (parquet.Node, leafEnc, error) {
	if d, ok := t.(*schema.Decimal); ok {
		if d.Precision < 1 || d.Precision > 38 || d.Scale < 0 || d.Scale > d.Precision {
			return nil, nil, colErr(path, ErrUnsupported, "type %s", d)
		}
		switch {
		case d.Precision <= maxInt32DecimalPrecision:
			return parquet.Decimal(d.Scale, d.Precision, parquet.Int32Type), decimalEnc(d, 0, path), nil
		case d.Precision <= maxInt64DecimalPrecision:
			return parquet.Decimal(d.Scale, d.Precision, parquet.Int64Type), decimalEnc(d, 0, path), nil
		}
		n := decimalBytes(d.Precision)
		return parquet.Decimal(d.Scale, d.Precision, parquet.FixedLenByteArrayType(n)), decimalEnc(d, n, path), nil
	}
	p, ok := t.(*schema.Primitive)
	if !ok {
		return nil, nil, colErr(path, ErrUnsupported, "type %s", t)
	}
	switch p.Name {
	case "string":
		return parquet.String(), stringEnc(path), nil
	case "binary":
		return parquet.Leaf(parquet.ByteArrayType), binaryEnc(path), nil
	case "boolean":
		return parquet.Leaf(parquet.BooleanType), boolEnc(path), nil
	case "byte":
		return parquet.Int(8), intEnc(p, path), nil
	case "short":
		return parquet.Int(16), intEnc(p, path), nil
	case "integer":
		return parquet.Leaf(parquet.Int32Type), intEnc(p, path), nil
	case "long":
		return parquet.Leaf(parquet.Int64Type), intEnc(p, path), nil
	case "float":
		return parquet.Leaf(parquet.FloatType), floatEnc(path), nil
	case "double":
		return parquet.Leaf(parquet.DoubleType), doubleEnc(path), nil
	case "date":
		return parquet.Date(), dateEnc(path), nil
	case "timestamp":
		return parquet.TimestampAdjusted(parquet.Microsecond, true), timestampEnc(false, path), nil
	case "timestamp_ntz":
		return parquet.TimestampAdjusted(parquet.Microsecond, false), timestampEnc(true, path), nil
	}
	return nil, nil, colErr(path, ErrUnsupported, "type %s", p.Name)
}

// groupNode is a Parquet group whose fields keep the Spark schema's order
// (parquet.Group orders fields by name). typ carries the LIST or MAP
// annotation, nil for a plain group.
type groupNode struct {
	fields []parquet.Field
	typ    parquet.Type
}

var (
	plainGroupType = parquet.Group{}.Type()
	listType       = parquet.List(parquet.Leaf(parquet.Int32Type)).Type()
	mapType        = parquet.Map(parquet.String(), parquet.Leaf(parquet.Int32Type)).Type()
)

func (g *groupNode) ID() int { return 0 }
func (g *groupNode) String() string {
	return fmt.Sprintf("group(%d fields)", len(g.fields))
}
func (g *groupNode) Type() parquet.Type {
	if g.typ != nil {
		return g.typ
	}
	return plainGroupType
}
func (g *groupNode) Optional() bool              { return false }
func (g *groupNode) Repeated() bool              { return false }
func (g *groupNode) Required() bool              { return true }
func (g *groupNode) Leaf() bool                  { return false }
func (g *groupNode) Fields() []parquet.Field     { return g.fields }
func (g *groupNode) Encoding() encoding.Encoding { return nil }
func (g *groupNode) Compression() compress.Codec { return nil }
func (g *groupNode) GoType() reflect.Type        { return reflect.TypeFor[map[string]any]() }

// field names a node within its parent group.
type field struct {
	parquet.Node
	name string
}

func (f *field) Name() string { return f.name }

// Value is part of parquet.Field; rows are shredded by this package, never
// by reflection, so it is never called.
func (f *field) Value(base reflect.Value) reflect.Value { return reflect.Value{} }
