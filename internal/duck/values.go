package duck

import (
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/duckdb/duckdb-go/v2"
)

// toDuck returns the converter from a pqrow value of type t to the value
// duckdb-go's appender takes for DuckType(t).
func toDuck(t schema.Type) func(any) (any, error) {
	switch t := t.(type) {
	case *schema.Decimal:
		return func(v any) (any, error) {
			if v == nil {
				return nil, nil
			}
			d, ok := v.(pqrow.Decimal)
			if !ok {
				return nil, fmt.Errorf("%T is not a decimal", v)
			}
			d, err := d.Rescale(int32(t.Scale))
			if err != nil {
				return nil, err
			}
			return duckdb.Decimal{Width: uint8(t.Precision), Scale: uint8(t.Scale), Value: d.Unscaled}, nil
		}
	case *schema.Array:
		return mapList(toDuck(t.Element), func(v any) (any, error) { return nil, fmt.Errorf("%T is not an array", v) })
	case *schema.Struct:
		fields := make([]func(any) (any, error), len(t.Fields))
		for i, f := range t.Fields {
			fields[i] = toDuck(f.Type)
		}
		return func(v any) (any, error) {
			if v == nil {
				return nil, nil
			}
			s, ok := v.([]any)
			if !ok || len(s) != len(t.Fields) {
				return nil, fmt.Errorf("%T is not a struct of %d fields", v, len(t.Fields))
			}
			m := make(map[string]any, len(s))
			for i, e := range s {
				c, err := fields[i](e)
				if err != nil {
					return nil, err
				}
				m[t.Fields[i].Name] = c
			}
			return m, nil
		}
	case *schema.Map:
		key, val := toDuck(t.Key), toDuck(t.Value)
		return func(v any) (any, error) {
			if v == nil {
				return nil, nil
			}
			kvs, ok := v.([]pqrow.KV)
			if !ok {
				return nil, fmt.Errorf("%T is not a map", v)
			}
			var m duckdb.OrderedMap
			for _, kv := range kvs {
				k, err := key(kv.Key)
				if err != nil {
					return nil, err
				}
				x, err := val(kv.Value)
				if err != nil {
					return nil, err
				}
				m.Set(k, x)
			}
			return m, nil
		}
	case *schema.Primitive:
		if t.Name == "timestamp" || t.Name == "timestamp_ntz" || t.Name == "date" {
			return func(v any) (any, error) {
				if tm, ok := v.(time.Time); ok {
					return tm.UTC(), nil
				}
				return v, nil
			}
		}
	}
	return func(v any) (any, error) { return v, nil }
}

// fromDuck returns the converter from a value duckdb-go scans for a column
// of Spark type t (see SparkType) to the pqrow value model.
func fromDuck(t schema.Type) func(any) (any, error) {
	bad := func(v any) (any, error) { return nil, fmt.Errorf("unexpected %T for %s", v, t) }
	switch t := t.(type) {
	case *schema.Decimal:
		return func(v any) (any, error) {
			switch v := v.(type) {
			case nil:
				return nil, nil
			case duckdb.Decimal:
				return pqrow.Decimal{Unscaled: new(big.Int).Set(v.Value), Scale: int32(v.Scale)}, nil
			case *big.Int:
				return pqrow.Decimal{Unscaled: v, Scale: 0}, nil
			case uint64:
				return pqrow.Decimal{Unscaled: new(big.Int).SetUint64(v), Scale: 0}, nil
			}
			return bad(v)
		}
	case *schema.Array:
		return mapList(fromDuck(t.Element), bad)
	case *schema.Struct:
		fields := make([]func(any) (any, error), len(t.Fields))
		for i, f := range t.Fields {
			fields[i] = fromDuck(f.Type)
		}
		return func(v any) (any, error) {
			if v == nil {
				return nil, nil
			}
			m, ok := v.(map[string]any)
			if !ok {
				return bad(v)
			}
			out := make([]any, len(t.Fields))
			for i, f := range t.Fields {
				var err error
				if out[i], err = fields[i](m[f.Name]); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
	case *schema.Map:
		key, val := fromDuck(t.Key), fromDuck(t.Value)
		return func(v any) (any, error) {
			var keys, vals []any
			switch m := v.(type) {
			case nil:
				return nil, nil
			case duckdb.OrderedMap:
				keys, vals = m.Keys(), m.Values()
			case *duckdb.OrderedMap:
				keys, vals = m.Keys(), m.Values()
			case duckdb.Map:
				for k, x := range m {
					keys, vals = append(keys, k), append(vals, x)
				}
			default:
				return bad(v)
			}
			out := make([]pqrow.KV, len(keys))
			for i := range keys {
				k, err := key(keys[i])
				if err != nil {
					return nil, err
				}
				x, err := val(vals[i])
				if err != nil {
					return nil, err
				}
				out[i] = pqrow.KV{Key: k, Value: x}
			}
			return out, nil
		}
	case *schema.Primitive:
		switch t.Name {
		case "string":
			return func(v any) (any, error) {
				switch v := v.(type) {
				case nil, string:
					return v, nil
				case []byte:
					return string(v), nil
				case fmt.Stringer: // UUID
					return v.String(), nil
				}
				return bad(v)
			}
		case "short":
			return func(v any) (any, error) {
				if u, ok := v.(uint8); ok {
					return int16(u), nil
				}
				return v, nil
			}
		case "integer":
			return func(v any) (any, error) {
				if u, ok := v.(uint16); ok {
					return int32(u), nil
				}
				return v, nil
			}
		case "long":
			return func(v any) (any, error) {
				if u, ok := v.(uint32); ok {
					return int64(u), nil
				}
				return v, nil
			}
		case "date":
			return func(v any) (any, error) {
				if tm, ok := v.(time.Time); ok {
					y, m, d := tm.Date()
					return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
				}
				return v, nil
			}
		case "timestamp", "timestamp_ntz":
			return func(v any) (any, error) {
				if tm, ok := v.(time.Time); ok {
					if tm.UnixMicro() == -math.MaxInt64 {
						// DuckDB's -infinity: the only way a value reaches
						// it is Spark's saturated minimum (a cast of seconds
						// below -2^63 µs), which is Long.MIN_VALUE µs, one
						// less than DuckDB can hold as a finite timestamp.
						return time.UnixMicro(math.MinInt64).UTC(), nil
					}
					return tm.UTC().Truncate(time.Microsecond), nil
				}
				return v, nil
			}
		case "null":
			return func(any) (any, error) { return nil, nil }
		}
	}
	return func(v any) (any, error) { return v, nil }
}

// mapList converts a list value element by element (nil stays nil); values
// that are not lists go to notList.
func mapList(elem, notList func(any) (any, error)) func(any) (any, error) {
	return func(v any) (any, error) {
		if v == nil {
			return nil, nil
		}
		a, ok := v.([]any)
		if !ok {
			return notList(v)
		}
		out := make([]any, len(a))
		for i, e := range a {
			var err error
			if out[i], err = elem(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
}
