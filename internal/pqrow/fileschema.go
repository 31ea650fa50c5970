package pqrow

import (
	"fmt"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// pnode is one node of a file's Parquet schema, rebuilt from the footer's
// flattened schema elements with the levels a reader needs.
type pnode struct {
	el       *format.SchemaElement
	name     string
	children []*pnode
	col      int // leaf column index (DFS order), -1 for groups
	def, rep int // definition and repetition level of a present value at this node
	path     []string
}

func (n *pnode) leaf() bool { return n.children == nil && n.el.Type.Valid }

func (n *pnode) repetition() format.FieldRepetitionType {
	r, ok := n.el.RepetitionType.Get()
	if !ok {
		return format.Required
	}
	return r
}

func (n *pnode) optional() bool { return n.repetition() == format.Optional }
func (n *pnode) repeated() bool { return n.repetition() == format.Repeated }

func (n *pnode) converted() (deprecated.ConvertedType, bool) { return n.el.ConvertedType.Get() }

func (n *pnode) isList() bool {
	if _, ok := n.el.LogicalType.Value.(*format.ListType); ok {
		return true
	}
	c, ok := n.converted()
	return ok && c == deprecated.List
}

func (n *pnode) isMap() bool {
	if _, ok := n.el.LogicalType.Value.(*format.MapType); ok {
		return true
	}
	c, ok := n.converted()
	return ok && (c == deprecated.Map || c == deprecated.MapKeyValue)
}

// buildFileSchema rebuilds the tree of a file's schema elements.
func buildFileSchema(els []format.SchemaElement) (*pnode, error) {
	if len(els) == 0 {
		return nil, fmt.Errorf("%w: empty schema", ErrCorrupt)
	}
	pos, col := 0, 0
	var build func(def, rep int, path []string, depth int) (*pnode, error)
	build = func(def, rep int, path []string, depth int) (*pnode, error) {
		if pos >= len(els) {
			return nil, fmt.Errorf("%w: schema elements end early", ErrCorrupt)
		}
		if depth > maxSchemaDepth {
			return nil, fmt.Errorf("%w: schema nested deeper than %d", ErrCorrupt, maxSchemaDepth)
		}
		el := &els[pos]
		pos++
		n := &pnode{el: el, name: el.Name, col: -1}
		if depth > 0 {
			n.path = append(append([]string(nil), path...), el.Name)
			switch n.repetition() {
			case format.Optional:
				def++
			case format.Repeated:
				def++
				rep++
			}
		}
		n.def, n.rep = def, rep
		nc, isGroup := el.NumChildren.Get()
		if !isGroup || (nc == 0 && el.Type.Valid) {
			if !el.Type.Valid {
				return nil, fmt.Errorf("%w: schema element %q has neither type nor children", ErrCorrupt, el.Name)
			}
			n.col = col
			col++
			return n, nil
		}
		if nc < 0 || int(nc) > len(els)-pos {
			return nil, fmt.Errorf("%w: schema element %q claims %d children", ErrCorrupt, el.Name, nc)
		}
		n.children = make([]*pnode, 0, nc)
		for range nc {
			c, err := build(def, rep, n.path, depth+1)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, c)
		}
		return n, nil
	}
	root, err := build(0, 0, nil, 0)
	if err != nil {
		return nil, err
	}
	if pos != len(els) {
		return nil, fmt.Errorf("%w: %d schema elements after the root's children", ErrCorrupt, len(els)-pos)
	}
	return root, nil
}

// maxSchemaDepth bounds recursion on hostile footers; real schemas nest a
// few levels (Spark's deepest practical nesting is well under 100).
const maxSchemaDepth = 256

func (n *pnode) child(name string) *pnode {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

func (n *pnode) childByID(id int32) *pnode {
	for _, c := range n.children {
		if c.el.FieldID == id {
			return c
		}
	}
	return nil
}

// listElement resolves a LIST-annotated group to its repeated node and the
// node that holds one element, applying the backward-compatibility rules of
// the Parquet format (LogicalTypes.md) as Spark does. elem is rep itself
// for 2-level lists.
func (n *pnode) listElement() (rep, elem *pnode, err error) {
	if len(n.children) != 1 || !n.children[0].repeated() {
		return nil, nil, colErr(n.path, ErrUnsupported, "LIST group must have exactly one repeated child")
	}
	rep = n.children[0]
	switch {
	case rep.leaf():
		return rep, rep, nil
	case len(rep.children) > 1:
		return rep, rep, nil
	case rep.name == "array" || rep.name == n.name+"_tuple":
		return rep, rep, nil
	}
	return rep, rep.children[0], nil
}

// mapEntry resolves a MAP-annotated group to its repeated key_value node,
// key and value (value is nil for key-only maps).
func (n *pnode) mapEntry() (rep, key, value *pnode, err error) {
	if len(n.children) != 1 || !n.children[0].repeated() || n.children[0].leaf() {
		return nil, nil, nil, colErr(n.path, ErrUnsupported, "MAP group must have exactly one repeated group child")
	}
	rep = n.children[0]
	switch len(rep.children) {
	case 1:
		return rep, rep.children[0], nil, nil
	case 2:
		return rep, rep.children[0], rep.children[1], nil
	}
	return nil, nil, nil, colErr(n.path, ErrUnsupported, "MAP key_value group has %d children", len(rep.children))
}

// sparkType infers the Spark type of a file node as Spark's Parquet schema
// converter does. Repetition of n itself is not considered (the caller
// handles a repeated field as an array).
func (n *pnode) sparkType() (schema.Type, error) {
	if n.leaf() {
		return n.leafSparkType()
	}
	switch {
	case n.isList():
		rep, elem, err := n.listElement()
		if err != nil {
			return nil, err
		}
		var et schema.Type
		if elem == rep {
			et, err = rep.sparkType()
		} else {
			et, err = elem.fieldType()
		}
		if err != nil {
			return nil, err
		}
		return &schema.Array{Element: et, ContainsNull: elem != rep && elem.optional()}, nil
	case n.isMap():
		_, key, value, err := n.mapEntry()
		if err != nil {
			return nil, err
		}
		kt, err := key.fieldType()
		if err != nil {
			return nil, err
		}
		var vt schema.Type = schema.Null
		valueNull := true
		if value != nil {
			if vt, err = value.fieldType(); err != nil {
				return nil, err
			}
			valueNull = !value.required()
		}
		return &schema.Map{Key: kt, Value: vt, ValueContainsNull: valueNull}, nil
	}
	return n.structType()
}

func (n *pnode) required() bool { return n.repetition() == format.Required }

// fieldType is sparkType, wrapped in an array when n is repeated without a
// LIST annotation around it.
func (n *pnode) fieldType() (schema.Type, error) {
	t, err := n.sparkType()
	if err != nil {
		return nil, err
	}
	if n.repeated() {
		return &schema.Array{Element: t, ContainsNull: false}, nil
	}
	return t, nil
}

func (n *pnode) structType() (*schema.Struct, error) {
	st := &schema.Struct{Fields: make([]schema.Field, 0, len(n.children))}
	for _, c := range n.children {
		t, err := c.fieldType()
		if err != nil {
			return nil, err
		}
		st.Fields = append(st.Fields, schema.Field{Name: c.name, Type: t, Nullable: c.optional()})
	}
	return st, nil
}

func (n *pnode) leafSparkType() (schema.Type, error) {
	pt, _ := n.el.Type.Get()
	lt := n.el.LogicalType.Value
	ct, hasCT := n.converted()
	if d := n.decimal(); d != nil {
		return d, nil
	}
	switch lt := lt.(type) {
	case *format.StringType, *format.EnumType, *format.JsonType:
		return schema.String, nil
	case *format.DateType:
		return schema.Date, nil
	case *format.TimestampType:
		if pt == format.Int64 {
			if lt.IsAdjustedToUTC {
				return schema.Timestamp, nil
			}
			return schema.TimestampNTZ, nil
		}
	case *format.IntType:
		return intSparkType(int(lt.BitWidth), lt.IsSigned), nil
	case *format.Float16Type:
		if pt == format.FixedLenByteArray {
			return schema.Float, nil
		}
	case *format.UUIDType, *format.BsonType:
		return schema.Binary, nil
	case *format.TimeType, *format.VariantType:
		return nil, colErr(n.path, ErrUnsupported, "logical type %s", n.el.LogicalType.String())
	case *format.NullType:
		return schema.Null, nil
	case nil:
	default:
		if lt != nil {
			return nil, colErr(n.path, ErrUnsupported, "logical type %s", n.el.LogicalType.String())
		}
	}
	if hasCT {
		switch ct {
		case deprecated.UTF8, deprecated.Enum, deprecated.Json:
			return schema.String, nil
		case deprecated.Date:
			return schema.Date, nil
		case deprecated.TimestampMillis, deprecated.TimestampMicros:
			return schema.Timestamp, nil
		case deprecated.Int8:
			return schema.Byte, nil
		case deprecated.Int16:
			return schema.Short, nil
		case deprecated.Int32:
			return schema.Integer, nil
		case deprecated.Int64:
			return schema.Long, nil
		case deprecated.Uint8:
			return intSparkType(8, false), nil
		case deprecated.Uint16:
			return intSparkType(16, false), nil
		case deprecated.Uint32:
			return intSparkType(32, false), nil
		case deprecated.Uint64:
			return intSparkType(64, false), nil
		case deprecated.Bson:
			return schema.Binary, nil
		case deprecated.Interval, deprecated.TimeMillis, deprecated.TimeMicros:
			return nil, colErr(n.path, ErrUnsupported, "converted type %v", ct)
		}
	}
	switch pt {
	case format.Boolean:
		return schema.Boolean, nil
	case format.Int32:
		return schema.Integer, nil
	case format.Int64:
		return schema.Long, nil
	case format.Int96:
		return schema.Timestamp, nil
	case format.Float:
		return schema.Float, nil
	case format.Double:
		return schema.Double, nil
	case format.ByteArray, format.FixedLenByteArray:
		return schema.Binary, nil
	}
	return nil, colErr(n.path, ErrUnsupported, "physical type %v", pt)
}

// intSparkType maps Parquet INT(bits, signed) to the narrowest Spark type
// that holds every value, as Spark does (UINT_64 becomes decimal(20,0)).
func intSparkType(bits int, signed bool) schema.Type {
	switch {
	case signed && bits <= 8:
		return schema.Byte
	case signed && bits <= 16, !signed && bits <= 8:
		return schema.Short
	case signed && bits <= 32, !signed && bits <= 16:
		return schema.Integer
	case signed, bits <= 32:
		return schema.Long
	}
	return &schema.Decimal{Precision: 20, Scale: 0}
}

// decimal returns the decimal type of a DECIMAL-annotated leaf, or nil.
func (n *pnode) decimal() *schema.Decimal {
	if d, ok := n.el.LogicalType.Value.(*format.DecimalType); ok {
		return &schema.Decimal{Precision: int(d.Precision), Scale: int(d.Scale)}
	}
	if ct, ok := n.converted(); ok && ct == deprecated.Decimal {
		p, _ := n.el.Precision.Get()
		s, _ := n.el.Scale.Get()
		return &schema.Decimal{Precision: int(p), Scale: int(s)}
	}
	return nil
}
