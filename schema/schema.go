// Package schema owns the Spark schema model: the type vocabulary of the
// Spark library's persisted formats (metadata.json's "schema" field and Delta
// Lake's schemaString), parsed from and rendered to Spark's compact JSON byte
// for byte, so that schema equality can stay an exact string comparison
// (spec §4.6) and tables round-trip between Spark and Go.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Type is a Spark data type: *Primitive, *Decimal, *Array, *Map or *Struct.
type Type interface {
	// String renders the type in Spark's simple-string form ("int",
	// "array<string>", "struct<a:int>"), for messages.
	String() string
	isType()
}

// Primitive is an atomic type named as in Spark's JSON ("string",
// "integer", "long", "double", "float", "short", "byte", "boolean", "binary",
// "date", "timestamp", "timestamp_ntz", "variant", "null").
type Primitive struct{ Name string }

// Decimal is decimal(Precision, Scale).
type Decimal struct{ Precision, Scale int }

// Array is array<Element>.
type Array struct {
	Element      Type
	ContainsNull bool
}

// Map is map<Key, Value>.
type Map struct {
	Key, Value        Type
	ValueContainsNull bool
}

// Field is one field of a struct. Metadata is kept as raw JSON (compact) so it
// round-trips unchanged; Delta column mapping keeps its physical names there.
type Field struct {
	Name     string
	Type     Type
	Nullable bool
	Metadata json.RawMessage // nil renders as {}
}

// Struct is struct<fields...>.
type Struct struct{ Fields []Field }

func (*Primitive) isType() {}
func (*Decimal) isType()   {}
func (*Array) isType()     {}
func (*Map) isType()       {}
func (*Struct) isType()    {}

// The primitive types, shared.
var (
	String       = &Primitive{"string"}
	Integer      = &Primitive{"integer"}
	Long         = &Primitive{"long"}
	Double       = &Primitive{"double"}
	Float        = &Primitive{"float"}
	Short        = &Primitive{"short"}
	Byte         = &Primitive{"byte"}
	Boolean      = &Primitive{"boolean"}
	Binary       = &Primitive{"binary"}
	Date         = &Primitive{"date"}
	Timestamp    = &Primitive{"timestamp"}
	TimestampNTZ = &Primitive{"timestamp_ntz"}
	Variant      = &Primitive{"variant"}
	Null         = &Primitive{"null"}
)

var primitives = map[string]*Primitive{}

func init() {
	for _, p := range []*Primitive{String, Integer, Long, Double, Float, Short, Byte, Boolean, Binary, Date, Timestamp, TimestampNTZ, Variant, Null} {
		primitives[p.Name] = p
	}
}

var simpleNames = map[string]string{"integer": "int", "long": "bigint", "short": "smallint", "byte": "tinyint"}

func (p *Primitive) String() string {
	if s, ok := simpleNames[p.Name]; ok {
		return s
	}
	return p.Name
}
func (d *Decimal) String() string { return fmt.Sprintf("decimal(%d,%d)", d.Precision, d.Scale) }
func (a *Array) String() string   { return "array<" + a.Element.String() + ">" }
func (m *Map) String() string     { return "map<" + m.Key.String() + "," + m.Value.String() + ">" }
func (s *Struct) String() string {
	parts := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		parts[i] = f.Name + ":" + f.Type.String()
	}
	return "struct<" + strings.Join(parts, ",") + ">"
}

// TypeName is the name Spark uses for a type in messages ("ArrayType" etc.).
func TypeName(t Type) string {
	switch t := t.(type) {
	case *Array:
		return "ArrayType"
	case *Map:
		return "MapType"
	case *Struct:
		return "StructType"
	case *Decimal:
		return "DecimalType"
	case *Primitive:
		switch t.Name {
		case "timestamp_ntz":
			return "TimestampNTZType"
		}
		return strings.ToUpper(t.Name[:1]) + t.Name[1:] + "Type"
	}
	return fmt.Sprintf("%T", t)
}

// Field returns the top-level field with exactly this name.
func (s *Struct) Field(name string) (Field, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Resolve walks a dotted path (spec §2.7): every segment but the last must
// name a struct field; arrays are never descended. Names are case-sensitive.
func (s *Struct) Resolve(path string) (Field, bool) {
	cur := s
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		f, ok := cur.Field(seg)
		if !ok {
			return Field{}, false
		}
		if i == len(segs)-1 {
			return f, true
		}
		next, ok := f.Type.(*Struct)
		if !ok {
			return Field{}, false
		}
		cur = next
	}
	return Field{}, false
}

// Names returns the top-level field names in order.
func (s *Struct) Names() []string {
	out := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		out[i] = f.Name
	}
	return out
}

// Equal reports whether two types render to the same JSON.
func Equal(a, b Type) bool { return MarshalType(a) == MarshalType(b) }

// ---- JSON ----

var decimalRe = regexp.MustCompile(`^decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)$`)

// Parse parses a schema JSON string whose top level must be a struct.
func Parse(s string) (*Struct, error) {
	t, err := ParseType([]byte(s))
	if err != nil {
		return nil, err
	}
	st, ok := t.(*Struct)
	if !ok {
		return nil, fmt.Errorf("schema: top-level type is %s, not a struct", t)
	}
	return st, nil
}

// ParseType parses any Spark type JSON value.
func ParseType(data []byte) (Type, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return parseType(raw)
}

func parseType(raw json.RawMessage) (Type, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		if p, ok := primitives[name]; ok {
			return p, nil
		}
		if m := decimalRe.FindStringSubmatch(name); m != nil {
			p, _ := strconv.Atoi(m[1])
			sc, _ := strconv.Atoi(m[2])
			return &Decimal{Precision: p, Scale: sc}, nil
		}
		if name == "decimal" {
			return &Decimal{Precision: 10, Scale: 0}, nil
		}
		return nil, fmt.Errorf("schema: unknown type %q", name)
	}
	var obj struct {
		Type              string            `json:"type"`
		Fields            []json.RawMessage `json:"fields"`
		ElementType       json.RawMessage   `json:"elementType"`
		ContainsNull      *bool             `json:"containsNull"`
		KeyType           json.RawMessage   `json:"keyType"`
		ValueType         json.RawMessage   `json:"valueType"`
		ValueContainsNull *bool             `json:"valueContainsNull"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	switch obj.Type {
	case "struct":
		st := &Struct{Fields: make([]Field, 0, len(obj.Fields))}
		for _, fr := range obj.Fields {
			var f struct {
				Name     *string         `json:"name"`
				Type     json.RawMessage `json:"type"`
				Nullable *bool           `json:"nullable"`
				Metadata json.RawMessage `json:"metadata"`
			}
			if err := json.Unmarshal(fr, &f); err != nil {
				return nil, fmt.Errorf("schema: field: %w", err)
			}
			if f.Name == nil || f.Type == nil {
				return nil, fmt.Errorf("schema: field without name or type: %s", fr)
			}
			ft, err := parseType(f.Type)
			if err != nil {
				return nil, err
			}
			nullable := true
			if f.Nullable != nil {
				nullable = *f.Nullable
			}
			var md json.RawMessage
			if len(f.Metadata) > 0 && string(f.Metadata) != "null" {
				var buf bytes.Buffer
				if err := json.Compact(&buf, f.Metadata); err != nil {
					return nil, fmt.Errorf("schema: metadata: %w", err)
				}
				md = buf.Bytes()
			}
			st.Fields = append(st.Fields, Field{Name: *f.Name, Type: ft, Nullable: nullable, Metadata: md})
		}
		return st, nil
	case "array":
		if obj.ElementType == nil {
			return nil, fmt.Errorf("schema: array without elementType")
		}
		et, err := parseType(obj.ElementType)
		if err != nil {
			return nil, err
		}
		return &Array{Element: et, ContainsNull: obj.ContainsNull == nil || *obj.ContainsNull}, nil
	case "map":
		if obj.KeyType == nil || obj.ValueType == nil {
			return nil, fmt.Errorf("schema: map without keyType or valueType")
		}
		kt, err := parseType(obj.KeyType)
		if err != nil {
			return nil, err
		}
		vt, err := parseType(obj.ValueType)
		if err != nil {
			return nil, err
		}
		return &Map{Key: kt, Value: vt, ValueContainsNull: obj.ValueContainsNull == nil || *obj.ValueContainsNull}, nil
	case "udt":
		return nil, fmt.Errorf("schema: user-defined types are not supported")
	}
	return nil, fmt.Errorf("schema: unknown type object %q", obj.Type)
}

// Marshal renders a struct as Spark's compact schema JSON.
func (s *Struct) Marshal() string { return MarshalType(s) }

// MarshalType renders any type as Spark's compact JSON (the value of a
// "type" key: a quoted name for primitives, an object otherwise).
func MarshalType(t Type) string {
	var b strings.Builder
	writeType(&b, t)
	return b.String()
}

func writeString(b *strings.Builder, s string) {
	// Spark (json4s) escapes only what JSON requires; encoding/json would
	// also escape <, > and &, so escape by hand.
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

func writeType(b *strings.Builder, t Type) {
	switch t := t.(type) {
	case *Primitive:
		writeString(b, t.Name)
	case *Decimal:
		writeString(b, fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale))
	case *Array:
		b.WriteString(`{"type":"array","elementType":`)
		writeType(b, t.Element)
		fmt.Fprintf(b, `,"containsNull":%t}`, t.ContainsNull)
	case *Map:
		b.WriteString(`{"type":"map","keyType":`)
		writeType(b, t.Key)
		b.WriteString(`,"valueType":`)
		writeType(b, t.Value)
		fmt.Fprintf(b, `,"valueContainsNull":%t}`, t.ValueContainsNull)
	case *Struct:
		b.WriteString(`{"type":"struct","fields":[`)
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"name":`)
			writeString(b, f.Name)
			b.WriteString(`,"type":`)
			writeType(b, f.Type)
			fmt.Fprintf(b, `,"nullable":%t,"metadata":`, f.Nullable)
			if len(f.Metadata) == 0 {
				b.WriteString("{}")
			} else {
				b.Write(f.Metadata)
			}
			b.WriteByte('}')
		}
		b.WriteString("]}")
	}
}
