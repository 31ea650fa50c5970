package ariadne

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// This file is the face's value model: how keys and filter values given by
// callers become the row index's values, and how the values of returned
// rows (from cover columns or from data files) become one Go value per
// column type.

func isInt(t schema.Type) bool {
	return t == schema.Integer || t == schema.Long || t == schema.Short || t == schema.Byte
}

func isTime(t schema.Type) bool { return t == schema.Timestamp || t == schema.TimestampNTZ }

// timeLayouts are the ISO-8601 forms a timestamp may be given in; those
// without a zone are UTC.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999", "2006-01-02"}

func parseTime(s string) (time.Time, bool) {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

func parseDate(s string) (time.Time, bool) {
	t, err := time.Parse("2006-01-02", s)
	return t, err == nil
}

// daysOf returns the days since the epoch of t's UTC date.
func daysOf(t time.Time) int64 {
	return int64(math.Floor(float64(t.UTC().Unix()) / 86400))
}

// textOf returns the text form of v when it is one (a string, or a JSON
// number for non-string columns).
func textOf(v any, t schema.Type) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		if t != schema.String && t != schema.Binary {
			return string(x), true
		}
	}
	return "", false
}

func wrongType(what, col string, t schema.Type, v any) error {
	if s, ok := v.(string); ok {
		return aerr.Invalid("%s %q for column %s: not a %s", what, s, col, t)
	}
	return aerr.Invalid("%s %v (%T) for column %s: want a %s", what, v, v, col, t)
}

// keyValue converts a key given by a caller to the Go value the row index
// encodes for a column of type t (nil: unknown, then text is parsed by the
// row index's key class). It returns either the value or, for an unknown
// type, the text.
func keyValue(col string, t schema.Type, v any) (val any, text string, err error) {
	if v == nil {
		return nil, "", aerr.Invalid("key for column %s: null matches no row", col)
	}
	if t == nil {
		if s, ok := textOf(v, schema.Long); ok {
			return nil, s, nil
		}
		switch x := v.(type) {
		case time.Time, bool, float64:
			return x, "", nil
		case float32:
			return float64(x), "", nil
		case []byte:
			return string(x), "", nil
		}
		if i, ok := pqrow.AsInt64(v); ok {
			return i, "", nil
		}
		return nil, "", aerr.Invalid("key %v (%T) for column %s: want a string, number, boolean or time", v, v, col)
	}
	s, isText := textOf(v, t)
	switch {
	case t == schema.String:
		switch x := v.(type) {
		case string:
			return x, "", nil
		case []byte:
			return string(x), "", nil
		}
	case t == schema.Binary:
		switch x := v.(type) {
		case string:
			return x, "", nil
		case []byte:
			return string(x), "", nil
		}
	case isInt(t):
		if i, ok := pqrow.AsInt64(v); ok {
			return i, "", nil
		}
		if isText {
			if i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
				return i, "", nil
			}
		}
	case t == schema.Float || t == schema.Double:
		switch x := v.(type) {
		case float64:
			return x, "", nil
		case float32:
			return float64(x), "", nil
		}
		if i, ok := pqrow.AsInt64(v); ok {
			return float64(i), "", nil
		}
		if isText {
			if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
				return f, "", nil
			}
		}
	case t == schema.Boolean:
		if b, ok := v.(bool); ok {
			return b, "", nil
		}
		if isText {
			if b, err := strconv.ParseBool(s); err == nil {
				return b, "", nil
			}
		}
	case isTime(t):
		if x, ok := v.(time.Time); ok {
			return x, "", nil
		}
		if isText {
			if x, ok := parseTime(s); ok {
				return x, "", nil
			}
		}
	case t == schema.Date:
		if x, ok := v.(time.Time); ok {
			return daysOf(x), "", nil
		}
		if isText {
			if x, ok := parseDate(s); ok {
				return daysOf(x), "", nil
			}
		}
	default:
		return nil, "", aerr.Invalid("key column %s of type %s cannot be looked up", col, t)
	}
	return nil, "", wrongType("key", col, t, v)
}

// filterValue converts a filter value to the physical value the row index
// holds in a cover column of type t: timestamps as microseconds, dates as
// days, integers as int64, floats as float64.
func filterValue(col string, t schema.Type, v any) (any, error) {
	if v == nil {
		return nil, aerr.Invalid("filter on %s: null never matches; filter on another value", col)
	}
	k, text, err := keyValue(col, t, v)
	if err != nil {
		return nil, err
	}
	if t == nil && text != "" {
		// No schema: a number if it parses as one, else text.
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return i, nil
		}
		if f, err := strconv.ParseFloat(text, 64); err == nil {
			return f, nil
		}
		return text, nil
	}
	if x, ok := k.(time.Time); ok {
		return x.UnixMicro(), nil
	}
	return k, nil
}

// outValue brings a returned value of a column of type t to the face's
// value model, whether it came from a cover column (physical: int64, float64,
// string) or a data file (parquet-go's reconstruction).
func outValue(t schema.Type, v any) any {
	if v == nil {
		return nil
	}
	if d, ok := t.(*schema.Decimal); ok {
		if x, ok := decimalValue(d, v); ok {
			return x
		}
		return v
	}
	switch {
	case isInt(t):
		if _, ok := v.(int64); ok {
			return v // already the face's type: not boxed again
		}
		if i, ok := pqrow.AsInt64(v); ok {
			return i
		}
	case t == schema.Float:
		switch x := v.(type) {
		case float64:
			return float32(x)
		case float32:
			return x
		}
	case t == schema.Double:
		if x, ok := v.(float32); ok {
			return float64(x)
		}
	case t == schema.String:
		if b, ok := v.([]byte); ok {
			return string(b)
		}
	case t == schema.Binary:
		if s, ok := v.(string); ok {
			return []byte(s)
		}
	case isTime(t):
		switch x := v.(type) {
		case time.Time:
			if x == x.UTC() {
				return v // already UTC, without a monotonic reading: not boxed again
			}
			return x.UTC()
		case int64:
			return time.UnixMicro(x).UTC()
		}
	case t == schema.Date:
		switch x := v.(type) {
		case time.Time:
			return x.UTC()
		case int64:
			return time.Unix(x*86400, 0).UTC()
		case int32:
			return time.Unix(int64(x)*86400, 0).UTC()
		}
	case t == nil:
		if i, ok := pqrow.AsInt64(v); ok {
			return i
		}
	}
	return v
}

// faceValue brings a value of the data files' row model (package pqrow:
// structs positional, maps as key-value lists, decimals as pqrow.Decimal)
// of a column of type t to the face's value model, as a lookup returns it:
// structs and maps as map[string]any (map keys as text), lists as []any.
func faceValue(t schema.Type, v any) any {
	if v == nil {
		return nil
	}
	switch tt := t.(type) {
	case *schema.Struct:
		if xs, ok := v.([]any); ok {
			m := make(map[string]any, len(tt.Fields))
			for i, f := range tt.Fields {
				if i < len(xs) {
					m[f.Name] = faceValue(f.Type, xs[i])
				}
			}
			return m
		}
	case *schema.Array:
		if xs, ok := v.([]any); ok {
			out := make([]any, len(xs))
			for i, x := range xs {
				out[i] = faceValue(tt.Element, x)
			}
			return out
		}
	case *schema.Map:
		if kvs, ok := v.([]pqrow.KV); ok {
			m := make(map[string]any, len(kvs))
			for _, kv := range kvs {
				k := faceValue(tt.Key, kv.Key)
				ks, ok := k.(string)
				if !ok {
					ks = fmt.Sprint(jsonText(k))
				}
				m[ks] = faceValue(tt.Value, kv.Value)
			}
			return m
		}
	}
	return outValue(t, v)
}

// jsonText is how a non-text map key is named: times in RFC 3339, others
// as fmt prints them.
func jsonText(v any) any {
	if t, ok := v.(time.Time); ok {
		return t.Format(time.RFC3339Nano)
	}
	return v
}

// decimalValue is a decimal in the face's value model: a json.Number
// holding its exact text, which encoding/json writes as a number literal.
func decimalValue(d *schema.Decimal, v any) (any, bool) {
	var unscaled *big.Int
	switch x := v.(type) {
	case pqrow.Decimal:
		return json.Number(x.String()), true
	case json.Number:
		return x, true
	case int32:
		unscaled = big.NewInt(int64(x))
	case int64:
		unscaled = big.NewInt(x)
	case []byte: // big-endian two's complement
		unscaled = new(big.Int).SetBytes(x)
		if len(x) > 0 && x[0]&0x80 != 0 {
			unscaled.Sub(unscaled, new(big.Int).Lsh(big.NewInt(1), uint(8*len(x))))
		}
	case string:
		return decimalValue(d, []byte(x))
	default:
		return nil, false
	}
	return json.Number(pqrow.Decimal{Unscaled: unscaled, Scale: int32(d.Scale)}.String()), true
}
