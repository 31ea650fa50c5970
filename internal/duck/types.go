package duck

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ariadne-go/ariadne/schema"
)

// DuckType returns the DuckDB type of a Spark type:
//
//	string VARCHAR · binary BLOB · boolean BOOLEAN · byte TINYINT
//	short SMALLINT · integer INTEGER · long BIGINT · float FLOAT
//	double DOUBLE · date DATE · decimal(p,s) DECIMAL(p,s)
//	timestamp TIMESTAMP (µs, the UTC wall clock) · timestamp_ntz TIMESTAMP
//	array<T> T[] · struct<a:T,…> STRUCT("a" T, …) · map<K,V> MAP(K, V)
//
// Spark's timestamp is an instant; it is stored as DuckDB's zone-less
// TIMESTAMP holding the UTC wall clock (not TIMESTAMPTZ, whose functions
// depend on the session time zone and the ICU extension), so extraction
// functions (hour, day, …) see UTC, as Spark does with
// spark.sql.session.timeZone=UTC. variant has no counterpart.
func DuckType(t schema.Type) (string, error) {
	switch t := t.(type) {
	case *schema.Primitive:
		switch t.Name {
		case "string":
			return "VARCHAR", nil
		case "binary":
			return "BLOB", nil
		case "boolean":
			return "BOOLEAN", nil
		case "byte":
			return "TINYINT", nil
		case "short":
			return "SMALLINT", nil
		case "integer":
			return "INTEGER", nil
		case "long":
			return "BIGINT", nil
		case "float":
			return "FLOAT", nil
		case "double":
			return "DOUBLE", nil
		case "date":
			return "DATE", nil
		case "timestamp", "timestamp_ntz":
			return "TIMESTAMP", nil
		case "null":
			return "INTEGER", nil // Spark's NullType column holds only nulls
		}
	case *schema.Decimal:
		if t.Precision < 1 || t.Precision > 38 || t.Scale < 0 || t.Scale > t.Precision {
			return "", fmt.Errorf("%w: %s", ErrUnsupportedType, t)
		}
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale), nil
	case *schema.Array:
		e, err := DuckType(t.Element)
		if err != nil {
			return "", err
		}
		return e + "[]", nil
	case *schema.Map:
		k, err := DuckType(t.Key)
		if err != nil {
			return "", err
		}
		v, err := DuckType(t.Value)
		if err != nil {
			return "", err
		}
		return "MAP(" + k + ", " + v + ")", nil
	case *schema.Struct:
		if len(t.Fields) == 0 {
			return "", fmt.Errorf("%w: empty struct", ErrUnsupportedType)
		}
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			ft, err := DuckType(f.Type)
			if err != nil {
				return "", err
			}
			parts[i] = Ident(f.Name) + " " + ft
		}
		return "STRUCT(" + strings.Join(parts, ", ") + ")", nil
	}
	return "", fmt.Errorf("%w: %s", ErrUnsupportedType, t)
}

// SparkType parses a DuckDB type name as database/sql reports it
// (DatabaseTypeName: "INTEGER", "DECIMAL(10,2)", "VARCHAR[]",
// `STRUCT("a" INTEGER, "b" VARCHAR[])`, "MAP(VARCHAR, BIGINT)") into the
// Spark type that holds its values:
//
//	VARCHAR, UUID, ENUM, JSON string · BLOB binary · BOOLEAN boolean
//	TINYINT byte · SMALLINT, UTINYINT short · INTEGER, USMALLINT integer
//	BIGINT, UINTEGER long · UBIGINT decimal(20,0) · HUGEINT decimal(38,0)
//	FLOAT float · DOUBLE double · DATE date · DECIMAL(p,s) decimal(p,s)
//	TIMESTAMP[_S|_MS|_NS], TIMESTAMPTZ timestamp · "NULL" null
//	T[] and T[n] array · STRUCT struct · MAP map
//
// INTERVAL, TIME, BIT, UNION and the like are ErrUnsupportedType.
func SparkType(duck string) (schema.Type, error) {
	p := &typeParser{s: duck}
	t, err := p.parse()
	if err == nil && p.i != len(p.s) {
		err = fmt.Errorf("trailing text")
	}
	if err != nil {
		if errors.Is(err, ErrUnsupportedType) {
			return nil, err
		}
		return nil, fmt.Errorf("duck: cannot parse type %q: %w", duck, err)
	}
	return t, nil
}

type typeParser struct {
	s string
	i int
}

func (p *typeParser) skip() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *typeParser) word() string {
	p.skip()
	j := p.i
	for j < len(p.s) && (p.s[j] == '_' || p.s[j] >= 'A' && p.s[j] <= 'Z' || p.s[j] >= 'a' && p.s[j] <= 'z' || p.s[j] >= '0' && p.s[j] <= '9') {
		j++
	}
	w := p.s[p.i:j]
	p.i = j
	return w
}

func (p *typeParser) expect(c byte) error {
	p.skip()
	if p.i >= len(p.s) || p.s[p.i] != c {
		return fmt.Errorf("expected %q at %d", c, p.i)
	}
	p.i++
	return nil
}

func (p *typeParser) peek(c byte) bool {
	p.skip()
	return p.i < len(p.s) && p.s[p.i] == c
}

// name reads a struct field name: "quoted" (doubled quotes inside) or bare.
func (p *typeParser) name() (string, error) {
	p.skip()
	if !p.peek('"') {
		w := p.word()
		if w == "" {
			return "", fmt.Errorf("expected a field name at %d", p.i)
		}
		return w, nil
	}
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '"' {
			if p.i+1 < len(p.s) && p.s[p.i+1] == '"' {
				b.WriteByte('"')
				p.i += 2
				continue
			}
			p.i++
			return b.String(), nil
		}
		b.WriteByte(c)
		p.i++
	}
	return "", fmt.Errorf("unterminated field name")
}

func (p *typeParser) parse() (schema.Type, error) {
	t, err := p.base()
	if err != nil {
		return nil, err
	}
	for p.peek('[') { // T[] or T[n]
		p.i++
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		if err := p.expect(']'); err != nil {
			return nil, err
		}
		t = &schema.Array{Element: t, ContainsNull: true}
	}
	return t, nil
}

func (p *typeParser) base() (schema.Type, error) {
	w := strings.ToUpper(p.word())
	switch w {
	case "VARCHAR", "UUID", "ENUM", "JSON":
		return schema.String, nil
	case "BLOB":
		return schema.Binary, nil
	case "BOOLEAN":
		return schema.Boolean, nil
	case "TINYINT":
		return schema.Byte, nil
	case "SMALLINT", "UTINYINT":
		return schema.Short, nil
	case "INTEGER", "USMALLINT":
		return schema.Integer, nil
	case "BIGINT", "UINTEGER":
		return schema.Long, nil
	case "UBIGINT":
		return &schema.Decimal{Precision: 20, Scale: 0}, nil
	case "HUGEINT":
		return &schema.Decimal{Precision: 38, Scale: 0}, nil
	case "FLOAT":
		return schema.Float, nil
	case "DOUBLE":
		return schema.Double, nil
	case "DATE":
		return schema.Date, nil
	case "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS", "TIMESTAMPTZ":
		if rest := strings.ToUpper(p.s[p.i:]); strings.HasPrefix(rest, " WITH TIME ZONE") {
			p.i += len(" WITH TIME ZONE")
		}
		return schema.Timestamp, nil
	case "NULL":
		return schema.Null, nil
	case "DECIMAL":
		if err := p.expect('('); err != nil {
			return nil, err
		}
		prec, err := strconv.Atoi(p.word())
		if err != nil {
			return nil, err
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
		scale, err := strconv.Atoi(p.word())
		if err != nil {
			return nil, err
		}
		if err := p.expect(')'); err != nil {
			return nil, err
		}
		return &schema.Decimal{Precision: prec, Scale: scale}, nil
	case "STRUCT":
		if err := p.expect('('); err != nil {
			return nil, err
		}
		st := &schema.Struct{}
		for {
			n, err := p.name()
			if err != nil {
				return nil, err
			}
			ft, err := p.parse()
			if err != nil {
				return nil, err
			}
			st.Fields = append(st.Fields, schema.Field{Name: n, Type: ft, Nullable: true})
			if p.peek(',') {
				p.i++
				continue
			}
			return st, p.expect(')')
		}
	case "MAP":
		if err := p.expect('('); err != nil {
			return nil, err
		}
		k, err := p.parse()
		if err != nil {
			return nil, err
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
		v, err := p.parse()
		if err != nil {
			return nil, err
		}
		return &schema.Map{Key: k, Value: v, ValueContainsNull: true}, p.expect(')')
	}
	return nil, fmt.Errorf("%w: DuckDB type %s", ErrUnsupportedType, w)
}
