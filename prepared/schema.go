package prepared

import (
	"reflect"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// layoutNode overrides the encoding and codec of a schema node (and of its
// fields, for a group). The schema of a file opened by parquet-go carries
// the codec and encoding of the file's column chunks, and a column's own
// codec and encoding win over the writer's options: without this, prepared
// files kept the sources' SNAPPY pages and dictionaries.
type layoutNode struct {
	parquet.Node
	enc    encoding.Encoding
	codec  compress.Codec
	fields []parquet.Field
}

func (n *layoutNode) Encoding() encoding.Encoding { return n.enc }
func (n *layoutNode) Compression() compress.Codec { return n.codec }
func (n *layoutNode) Fields() []parquet.Field {
	if n.Node.Leaf() {
		return nil
	}
	return n.fields
}

// layoutField is a field of a rewritten group: the field's name and Go
// value accessor over the rewritten node.
type layoutField struct {
	*layoutNode
	field parquet.Field
}

func (f *layoutField) Name() string                           { return f.field.Name() }
func (f *layoutField) Value(base reflect.Value) reflect.Value { return f.field.Value(base) }

// leafEncoding returns the encoding the output uses for a leaf column.
type leafEncoding func(path []string, leaf parquet.Node) encoding.Encoding

// relayout returns schema with every leaf compressed with codec and encoded
// as enc says, in the same column order.
func relayout(schema *parquet.Schema, codec compress.Codec, enc leafEncoding) *parquet.Schema {
	var walk func(path []string, n parquet.Node) *layoutNode
	walk = func(path []string, n parquet.Node) *layoutNode {
		if n.Leaf() {
			return &layoutNode{Node: n, enc: enc(path, n), codec: codec}
		}
		ln := &layoutNode{Node: n}
		for _, f := range n.Fields() {
			p := append(append([]string(nil), path...), f.Name())
			ln.fields = append(ln.fields, &layoutField{layoutNode: walk(p, f), field: f})
		}
		return ln
	}
	return parquet.NewSchema(schema.Name(), walk(nil, schema))
}

// isDictionary reports whether e is a dictionary encoding.
func isDictionary(e encoding.Encoding) bool {
	if e == nil {
		return false
	}
	k := e.Encoding()
	return k == parquet.RLEDictionary.Encoding() || k == parquet.PlainDictionary.Encoding()
}

// effectiveEncoding is the encoding parquet-go writes for a leaf of kind k
// with encoding e (nil: PLAIN, DELTA_LENGTH_BYTE_ARRAY for byte arrays).
func effectiveEncoding(k parquet.Kind, e encoding.Encoding) encoding.Encoding {
	switch {
	case e != nil:
		return e
	case k == parquet.ByteArray:
		return &parquet.DeltaLengthByteArray
	}
	return &parquet.Plain
}

// encodingNames renders the output encoding of every leaf column by its
// dotted path.
func (c *columns) encodingNames() map[string]string {
	out := map[string]string{}
	for _, path := range c.schema.Columns() {
		leaf, _ := c.schema.Lookup(path...)
		out[strings.Join(path, ".")] = effectiveEncoding(leaf.Node.Type().Kind(), leaf.Node.Encoding()).Encoding().String()
	}
	return out
}
