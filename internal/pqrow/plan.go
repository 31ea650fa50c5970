package pqrow

import (
	"encoding/json"

	"github.com/ariadne-go/ariadne/schema"
)

// Column-mapping metadata keys of Delta Lake, read from schema field
// metadata.
const (
	// MetaPhysicalName holds a field's physical (Parquet) column name.
	MetaPhysicalName = "delta.columnMapping.physicalName"
	// MetaFieldID holds a field's Parquet field id.
	MetaFieldID = "delta.columnMapping.id"
)

// PhysicalName returns the field's physical name from its column-mapping
// metadata, or its logical name when it has none.
func PhysicalName(f schema.Field) string {
	if len(f.Metadata) > 0 {
		var md map[string]json.RawMessage
		if json.Unmarshal(f.Metadata, &md) == nil {
			var s string
			if raw, ok := md[MetaPhysicalName]; ok && json.Unmarshal(raw, &s) == nil && s != "" {
				return s
			}
		}
	}
	return f.Name
}

// FieldID returns the field's column-mapping id, if its metadata has one.
func FieldID(f schema.Field) (int32, bool) {
	if len(f.Metadata) == 0 {
		return 0, false
	}
	var md map[string]json.RawMessage
	if json.Unmarshal(f.Metadata, &md) != nil {
		return 0, false
	}
	raw, ok := md[MetaFieldID]
	if !ok {
		return 0, false
	}
	var id int64
	if json.Unmarshal(raw, &id) != nil || id <= 0 || id > 1<<31-1 {
		return 0, false
	}
	return int32(id), true
}

// rnode kinds.
const (
	kLeaf = iota
	kStruct
	kList
	kMap
)

// rnode is one node of a read plan: how to rebuild the Go value of one
// requested Spark type from the levels and values of its leaf columns.
// Leaf columns of a node occupy the contiguous range [first, last) of the
// plan's selected columns.
type rnode struct {
	kind        int
	first, last int
	// nullDef: the value is null when the first entry's definition level is
	// below it (0: never null, a required node).
	nullDef int
	// struct
	fields []*rnode // nil entries are fields missing from the file
	// list and map
	elemDef int // at least one element when def >= elemDef
	rep     int // repetition level of the repeated node
	elem    *rnode
	key     *rnode
	value   *rnode // nil for key-only maps
}

// column is one selected leaf column of a plan.
type column struct {
	node *pnode
	conv leafConv // nil for a sentinel column read only for its levels
}

// planner builds read plans against one file.
type planner struct {
	byID bool
	cols []column
	// strings, when set, holds the bytes of the string values read (see
	// stringArena); nil: each value its own allocation.
	strings *stringArena
}

func (pl *planner) select_(n *pnode, conv leafConv) int {
	pl.cols = append(pl.cols, column{node: n, conv: conv})
	return len(pl.cols) - 1
}

// field matches a requested struct field among a group's children.
func (pl *planner) findChild(parent *pnode, f schema.Field) *pnode {
	if pl.byID {
		if id, ok := FieldID(f); ok {
			return parent.childByID(id)
		}
	}
	return parent.child(PhysicalName(f))
}

// planField plans a struct field's value from its file node, treating a
// repeated node without a LIST annotation as an array of required elements.
func (pl *planner) planField(t schema.Type, n *pnode, path []string) (*rnode, error) {
	if n.repeated() {
		at, ok := t.(*schema.Array)
		if !ok {
			return nil, colErr(path, ErrSchemaMismatch, "repeated column read as %s", t)
		}
		first := len(pl.cols)
		elem, err := pl.plan(at.Element, n, true, path)
		if err != nil {
			return nil, err
		}
		return &rnode{kind: kList, first: first, last: len(pl.cols), elemDef: n.def, rep: n.rep, elem: elem}, nil
	}
	return pl.plan(t, n, false, path)
}

// plan plans a value of type t stored at n. asElement means n is the
// repeated node of a list that is itself the element (2-level lists): its
// presence is decided by the enclosing list.
func (pl *planner) plan(t schema.Type, n *pnode, asElement bool, path []string) (*rnode, error) {
	r := &rnode{first: len(pl.cols)}
	if n.optional() && !asElement {
		r.nullDef = n.def
	}
	switch t := t.(type) {
	case *schema.Struct:
		if n.leaf() || n.isList() || n.isMap() {
			return nil, colErr(path, ErrSchemaMismatch, "cannot read %s column as %s", describe(n), t)
		}
		r.kind = kStruct
		r.fields = make([]*rnode, len(t.Fields))
		for i, f := range t.Fields {
			c := pl.findChild(n, f)
			if c == nil {
				continue
			}
			fp := append(path[:len(path):len(path)], f.Name)
			fr, err := pl.planField(f.Type, c, fp)
			if err != nil {
				return nil, err
			}
			r.fields[i] = fr
		}
		if len(pl.cols) == r.first {
			// No requested field is in the file: read one leaf for the
			// struct's own null-ness.
			pl.select_(firstLeaf(n), nil)
		}
	case *schema.Array:
		if !n.isList() {
			return nil, colErr(path, ErrSchemaMismatch, "cannot read %s column as %s", describe(n), t)
		}
		rep, elem, err := n.listElement()
		if err != nil {
			return nil, err
		}
		r.kind, r.elemDef, r.rep = kList, rep.def, rep.rep
		if elem == rep {
			r.elem, err = pl.plan(t.Element, rep, true, path)
		} else {
			r.elem, err = pl.planField(t.Element, elem, path)
		}
		if err != nil {
			return nil, err
		}
	case *schema.Map:
		if !n.isMap() {
			return nil, colErr(path, ErrSchemaMismatch, "cannot read %s column as %s", describe(n), t)
		}
		rep, key, value, err := n.mapEntry()
		if err != nil {
			return nil, err
		}
		r.kind, r.elemDef, r.rep = kMap, rep.def, rep.rep
		if r.key, err = pl.planField(t.Key, key, path); err != nil {
			return nil, err
		}
		if value != nil {
			if r.value, err = pl.planField(t.Value, value, path); err != nil {
				return nil, err
			}
		}
	default:
		if !n.leaf() {
			return nil, colErr(path, ErrSchemaMismatch, "cannot read %s column as %s", describe(n), t)
		}
		conv, err := leafConverter(t, n, path)
		if err != nil {
			return nil, err
		}
		if pl.strings != nil && t == schema.String {
			conv = pl.strings.conv(n, conv)
		}
		r.kind = kLeaf
		pl.select_(n, conv)
	}
	r.last = len(pl.cols)
	return r, nil
}

func firstLeaf(n *pnode) *pnode {
	for !n.leaf() && len(n.children) > 0 {
		n = n.children[0]
	}
	return n
}

func describe(n *pnode) string {
	switch {
	case n.leaf():
		t, _ := n.el.Type.Get()
		return "primitive " + t.String()
	case n.isList():
		return "LIST"
	case n.isMap():
		return "MAP"
	}
	return "group"
}
