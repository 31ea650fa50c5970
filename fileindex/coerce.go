package fileindex

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/jvm"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// This file holds the literal coercion of lookups: how a query value of some
// Go type is compared with index values of a Spark type, reproducing the
// implicit casts Spark 3.5 (non-ANSI) inserts into the library's queries
// (spec §5.5 step 3, §11):
//
//   - IN membership (regular, computed, exploded and temporal lookups):
//     Spark widens the column and all literals to one common type. A
//     string literal among non-string types makes it string, so everything
//     is compared as text: "3" matches integer 3, "4.50" does not match
//     double 4.5, and with a string present the number 4.0 (text "4.0") does
//     not match integer 4. Without strings, numbers are widened: int 4
//     matches double 4.0, double 4.0 matches int 4, double 0.1 does not
//     match float 0.1f (the float is widened to 0.10000000149…).
//   - Range comparisons: a string literal is cast to the column's type
//     (unparseable → null → never matches); numbers compare numerically.
//
// Index values are kept in the view under a canonical key of their own type
// (valueKey); coercion turns each literal into the key of the index value it
// equals, or into nothing when no value of the column's type can equal it.
// Bloom lookups do not coerce at all: their literals are rendered with their
// own Go type (§3.5, bloom.Stringifier).

// valueKey returns the canonical key of v, a value of Spark type t in the
// pqrow value model, under which the view indexes it: two values of type t
// have the same key exactly when Spark's equality holds between them (NaN
// equals NaN and -0.0 equals 0.0, as Spark normalises them; decimals compare
// numerically). ok is false for a value that does not fit t.
func valueKey(v any, t schema.Type) (string, bool) {
	if v == nil {
		return "", false
	}
	switch tt := t.(type) {
	case *schema.Primitive:
		switch tt {
		case schema.String:
			s, ok := v.(string)
			return s, ok
		case schema.Binary:
			b, ok := v.([]byte)
			return string(b), ok
		case schema.Boolean:
			b, ok := v.(bool)
			return strconv.FormatBool(b), ok
		case schema.Byte, schema.Short, schema.Integer, schema.Long:
			i, ok := pqrow.AsInt64(v)
			return strconv.FormatInt(i, 10), ok
		case schema.Float:
			f, ok := v.(float32)
			return floatKey(float64(f), 32), ok
		case schema.Double:
			f, ok := v.(float64)
			return floatKey(f, 64), ok
		case schema.Date:
			tm, ok := v.(time.Time)
			return tm.UTC().Format(time.DateOnly), ok
		case schema.Timestamp, schema.TimestampNTZ:
			tm, ok := v.(time.Time)
			return strconv.FormatInt(tm.UnixMicro(), 10), ok
		}
	case *schema.Decimal:
		d, ok := v.(pqrow.Decimal)
		if !ok || d.Unscaled == nil {
			return "", false
		}
		return decimalKey(d), true
	case *schema.Array:
		elems, ok := v.([]any)
		if !ok {
			return "", false
		}
		return compositeKey(len(elems), func(i int) (any, schema.Type) { return elems[i], tt.Element })
	case *schema.Struct:
		fields, ok := v.([]any)
		if !ok || len(fields) != len(tt.Fields) {
			return "", false
		}
		return compositeKey(len(fields), func(i int) (any, schema.Type) { return fields[i], tt.Fields[i].Type })
	case *schema.Map:
		kvs, ok := v.([]pqrow.KV)
		if !ok {
			return "", false
		}
		return compositeKey(2*len(kvs), func(i int) (any, schema.Type) {
			if i%2 == 0 {
				return kvs[i/2].Key, tt.Key
			}
			return kvs[i/2].Value, tt.Value
		})
	}
	return "", false
}

// compositeKey encodes n parts as length-prefixed keys ("-" for null), so
// that no two different part lists share an encoding.
func compositeKey(n int, part func(i int) (any, schema.Type)) (string, bool) {
	var b strings.Builder
	b.WriteByte('(')
	for i := range n {
		v, t := part(i)
		if v == nil {
			b.WriteString("-;")
			continue
		}
		k, ok := valueKey(v, t)
		if !ok {
			return "", false
		}
		b.WriteString(strconv.Itoa(len(k)))
		b.WriteByte(':')
		b.WriteString(k)
		b.WriteByte(';')
	}
	b.WriteByte(')')
	return b.String(), true
}

func floatKey(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case f == 0:
		return "0" // -0.0 = 0.0 in Spark
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// decimalKey is the decimal's value with trailing fraction zeros removed,
// so 1.50 (scale 2) and 1.5 (scale 1) share a key.
func decimalKey(d pqrow.Decimal) string {
	return new(big.Rat).SetFrac(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(d.Scale, 0))), nil)).RatString()
}

// intRange is the value range of a Spark integral type.
func intRange(t schema.Type) (lo, hi int64) {
	switch t {
	case schema.Byte:
		return math.MinInt8, math.MaxInt8
	case schema.Short:
		return math.MinInt16, math.MaxInt16
	case schema.Integer:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func isIntegral(t schema.Type) bool {
	return t == schema.Byte || t == schema.Short || t == schema.Integer || t == schema.Long
}

func isNumeric(t schema.Type) bool {
	if _, ok := t.(*schema.Decimal); ok {
		return true
	}
	return isIntegral(t) || t == schema.Float || t == schema.Double
}

// sparkText renders a literal as Spark's cast to string does: integers in
// decimal, floats and doubles as Java's toString ("4.0", "1.0E10"),
// decimals as BigDecimal.toString ("1.50"), dates as yyyy-MM-dd,
// timestamps as "yyyy-MM-dd HH:mm:ss[.fraction]" in UTC (the session zone
// the library runs with), booleans as true/false.
func sparkText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float32:
		return jvm.Float(x), true
	case float64:
		return jvm.Double(x), true
	case pqrow.Decimal:
		if x.Unscaled == nil {
			return "", false
		}
		return x.String(), true
	case time.Time:
		u := x.UTC()
		if u.Hour() == 0 && u.Minute() == 0 && u.Second() == 0 && u.Nanosecond() == 0 {
			return u.Format(time.DateOnly), true
		}
		return u.Format("2006-01-02 15:04:05.999999"), true
	}
	if i, ok := pqrow.AsInt64(v); ok {
		return strconv.FormatInt(i, 10), true
	}
	return "", false
}

// inKeys returns the view keys of a column of (element) type t that the
// literals match under IN semantics (see the top of this file), dropping
// nulls and literals no value of t can equal. A literal that Spark could not
// compare with t at all (a boolean against a number, a string against a
// boolean or binary column, a scalar against an array) is an
// ErrInvalidArgument error naming the column, where Spark fails the query
// with an analysis error.
//
// castStrings selects the join form (§5.6): a query column of strings
// joined with a numeric or date index column is cast to the index type (so
// "03" matches 3), as Spark's binary comparison does, instead of comparing
// text.
func inKeys(column string, t schema.Type, lits []any, castStrings bool) ([]string, error) {
	anyString := false
	for _, l := range lits {
		if _, ok := l.(string); ok {
			anyString = true
			break
		}
	}
	keys := make([]string, 0, len(lits))
	seen := make(map[string]struct{}, len(lits))
	for _, l := range lits {
		if l == nil {
			continue
		}
		k, ok, err := literalKey(l, t, anyString, castStrings)
		if err != nil {
			return nil, aerr.Invalid("cannot compare column '%s' of type %s with value %v (%T): %v", column, t, l, l, err)
		}
		if !ok {
			continue
		}
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			keys = append(keys, k)
		}
	}
	return keys, nil
}

var errIncomparable = fmt.Errorf("no common type")

// literalKey maps one non-null literal to the key of the value of type t it
// equals. ok is false when no value of t equals it.
func literalKey(l any, t schema.Type, textDomain, castStrings bool) (key string, ok bool, err error) {
	if t == schema.String {
		// String column: every literal is cast to string.
		s, ok := sparkText(l)
		if !ok {
			return "", false, errIncomparable
		}
		return s, true, nil
	}
	if s, isStr := l.(string); isStr || (textDomain && !castStrings) {
		if !isStr {
			if s, ok = sparkText(l); !ok {
				return "", false, errIncomparable
			}
		}
		if castStrings {
			v, ok, err := castString(s, t)
			if err != nil || !ok {
				return "", false, err
			}
			k, ok := valueKey(v, t)
			return k, ok, nil
		}
		return textKey(s, t)
	}
	return nativeKey(l, t)
}

// textKey maps text s to the key of the value of t whose cast to string is
// exactly s.
func textKey(s string, t schema.Type) (string, bool, error) {
	switch tt := t.(type) {
	case *schema.Decimal:
		d, err := pqrow.ParseDecimal(s, int32(tt.Scale))
		if err != nil || d.String() != s {
			return "", false, nil
		}
		return decimalKey(d), true, nil
	case *schema.Primitive:
		switch {
		case isIntegral(tt):
			lo, hi := intRange(tt)
			i, err := strconv.ParseInt(s, 10, 64)
			if err != nil || i < lo || i > hi || strconv.FormatInt(i, 10) != s {
				return "", false, nil
			}
			return strconv.FormatInt(i, 10), true, nil
		case tt == schema.Float:
			f, err := strconv.ParseFloat(s, 32)
			if err != nil && !math.IsInf(f, 0) || jvm.Float(float32(f)) != s {
				return "", false, nil
			}
			return floatKey(float64(float32(f)), 32), true, nil
		case tt == schema.Double:
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && !math.IsInf(f, 0) || jvm.Double(f) != s {
				return "", false, nil
			}
			return floatKey(f, 64), true, nil
		case tt == schema.Date:
			d, err := time.Parse(time.DateOnly, s)
			if err != nil || d.Format(time.DateOnly) != s {
				return "", false, nil
			}
			return d.Format(time.DateOnly), true, nil
		case tt == schema.Timestamp || tt == schema.TimestampNTZ:
			ts, err := time.Parse("2006-01-02 15:04:05.999999", s)
			if err != nil || ts.Format("2006-01-02 15:04:05.999999") != s {
				return "", false, nil
			}
			return strconv.FormatInt(ts.UnixMicro(), 10), true, nil
		}
	}
	return "", false, errIncomparable
}

// nativeKey maps a non-string literal to the key of the value of t it
// equals after numeric widening.
func nativeKey(l any, t schema.Type) (string, bool, error) {
	switch tt := t.(type) {
	case *schema.Decimal:
		r, ok := literalRat(l)
		if !ok {
			return "", false, errIncomparable
		}
		if r == nil {
			return "", false, nil // NaN or infinity
		}
		return r.RatString(), true, nil
	case *schema.Primitive:
		switch {
		case isIntegral(tt):
			lo, hi := intRange(tt)
			if i, ok := pqrow.AsInt64(l); ok {
				if i < lo || i > hi {
					return "", false, nil
				}
				return strconv.FormatInt(i, 10), true, nil
			}
			r, ok := literalRat(l)
			if !ok {
				return "", false, errIncomparable
			}
			if r == nil || !r.IsInt() || !r.Num().IsInt64() {
				return "", false, nil
			}
			i := r.Num().Int64()
			if i < lo || i > hi {
				return "", false, nil
			}
			return strconv.FormatInt(i, 10), true, nil
		case tt == schema.Float:
			switch x := l.(type) {
			case float32:
				return floatKey(float64(x), 32), true, nil
			case float64:
				if !math.IsNaN(x) && float64(float32(x)) != x {
					return "", false, nil
				}
				return floatKey(float64(float32(x)), 32), true, nil
			case pqrow.Decimal:
				f, _ := literalFloat(x)
				if float64(float32(f)) != f {
					return "", false, nil
				}
				return floatKey(f, 32), true, nil
			}
			if i, ok := pqrow.AsInt64(l); ok {
				return floatKey(float64(float32(i)), 32), true, nil
			}
		case tt == schema.Double:
			if f, ok := literalFloat(l); ok {
				return floatKey(f, 64), true, nil
			}
		case tt == schema.Date:
			if tm, ok := l.(time.Time); ok {
				u := tm.UTC()
				if u.Hour() != 0 || u.Minute() != 0 || u.Second() != 0 || u.Nanosecond() != 0 {
					return "", false, nil // a timestamp literal: the date widens to midnight
				}
				return u.Format(time.DateOnly), true, nil
			}
		case tt == schema.Timestamp || tt == schema.TimestampNTZ:
			if tm, ok := l.(time.Time); ok {
				return strconv.FormatInt(tm.UnixMicro(), 10), true, nil
			}
		case tt == schema.Boolean, tt == schema.Binary:
			if k, ok := valueKey(l, tt); ok {
				return k, true, nil
			}
		}
		return "", false, errIncomparable
	default:
		// Arrays, structs and maps: whole-value equality (§3.2) with each
		// element coerced to its field's type.
		v, ok, err := coerceComposite(l, t)
		if err != nil || !ok {
			return "", false, err
		}
		k, ok := valueKey(v, t)
		return k, ok, nil
	}
}

// coerceComposite converts the leaves of a composite literal to the Go types
// of t, so that valueKey can encode it.
func coerceComposite(l any, t schema.Type) (any, bool, error) {
	if l == nil {
		return nil, true, nil
	}
	switch tt := t.(type) {
	case *schema.Array:
		elems, ok := l.([]any)
		if !ok {
			return nil, false, errIncomparable
		}
		out := make([]any, len(elems))
		for i, e := range elems {
			v, ok, err := coerceComposite(e, tt.Element)
			if err != nil || !ok {
				return nil, ok, err
			}
			out[i] = v
		}
		return out, true, nil
	case *schema.Struct:
		fields, ok := l.([]any)
		if !ok || len(fields) != len(tt.Fields) {
			return nil, false, errIncomparable
		}
		out := make([]any, len(fields))
		for i, e := range fields {
			v, ok, err := coerceComposite(e, tt.Fields[i].Type)
			if err != nil || !ok {
				return nil, ok, err
			}
			out[i] = v
		}
		return out, true, nil
	case *schema.Map:
		kvs, ok := l.([]pqrow.KV)
		if !ok {
			return nil, false, errIncomparable
		}
		out := make([]pqrow.KV, len(kvs))
		for i, kv := range kvs {
			k, ok, err := coerceComposite(kv.Key, tt.Key)
			if err != nil || !ok {
				return nil, ok, err
			}
			v, ok, err := coerceComposite(kv.Value, tt.Value)
			if err != nil || !ok {
				return nil, ok, err
			}
			out[i] = pqrow.KV{Key: k, Value: v}
		}
		return out, true, nil
	}
	// A leaf: cast it to the leaf type through its key.
	if _, ok := valueKey(l, t); ok {
		return l, true, nil
	}
	v, ok, err := castLeaf(l, t)
	return v, ok, err
}

// castLeaf converts a numeric leaf literal to the Go type of numeric t when
// the value is exactly representable.
func castLeaf(l any, t schema.Type) (any, bool, error) {
	if !isNumeric(t) {
		return nil, false, errIncomparable
	}
	k, ok, err := nativeKey(l, t)
	if err != nil || !ok {
		return nil, ok, err
	}
	return castString(k, t)
}

// literalRat returns a numeric literal as an exact rational; nil for NaN
// and infinities. ok is false for a non-numeric literal.
func literalRat(l any) (*big.Rat, bool) {
	if i, ok := pqrow.AsInt64(l); ok {
		return new(big.Rat).SetInt64(i), true
	}
	switch x := l.(type) {
	case float32:
		return floatRat(float64(x)), true
	case float64:
		return floatRat(x), true
	case pqrow.Decimal:
		if x.Unscaled == nil {
			return nil, false
		}
		r, _ := new(big.Rat).SetString(decimalKey(x))
		return r, true
	}
	return nil, false
}

func floatRat(f float64) *big.Rat {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	// The shortest decimal that round-trips, as Spark's cast of a double to
	// decimal reads it (BigDecimal(d.toString)), not the binary expansion.
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'f', -1, 64))
	return r
}

// literalFloat returns a numeric literal widened to a double.
func literalFloat(l any) (float64, bool) {
	if i, ok := pqrow.AsInt64(l); ok {
		return float64(i), true
	}
	switch x := l.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case pqrow.Decimal:
		if x.Unscaled == nil {
			return 0, false
		}
		f, _ := strconv.ParseFloat(x.String(), 64)
		return f, true
	}
	return 0, false
}

// castString casts text to a value of type t as Spark's non-ANSI cast does
// for range and join comparisons: surrounding white space is trimmed;
// integral types accept a fraction and truncate it toward zero ("3.7" → 3);
// a value that does not parse or does not fit is null (ok false).
func castString(s string, t schema.Type) (any, bool, error) {
	s = strings.TrimSpace(s)
	switch tt := t.(type) {
	case *schema.Decimal:
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			return nil, false, nil
		}
		scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(tt.Scale)), nil)))
		if !scaled.IsInt() {
			// Round half up to the column's scale, as Spark's cast does.
			n, d := scaled.Num(), scaled.Denom()
			q, m := new(big.Int).QuoRem(n, d, new(big.Int))
			if new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2)).Cmp(d) >= 0 {
				if n.Sign() < 0 {
					q.Sub(q, big.NewInt(1))
				} else {
					q.Add(q, big.NewInt(1))
				}
			}
			return pqrow.Decimal{Unscaled: q, Scale: int32(tt.Scale)}, true, nil
		}
		return pqrow.Decimal{Unscaled: new(big.Int).Set(scaled.Num()), Scale: int32(tt.Scale)}, true, nil
	case *schema.Primitive:
		switch {
		case isIntegral(tt):
			lo, hi := intRange(tt)
			i, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				f, ferr := strconv.ParseFloat(s, 64)
				if ferr != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= 1<<63 {
					return nil, false, nil
				}
				i = int64(f)
			}
			if i < lo || i > hi {
				return nil, false, nil
			}
			switch tt {
			case schema.Byte:
				return int8(i), true, nil
			case schema.Short:
				return int16(i), true, nil
			case schema.Integer:
				return int32(i), true, nil
			}
			return i, true, nil
		case tt == schema.Float:
			f, err := strconv.ParseFloat(s, 32)
			if err != nil && !math.IsInf(f, 0) {
				return nil, false, nil
			}
			return float32(f), true, nil
		case tt == schema.Double:
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && !math.IsInf(f, 0) {
				return nil, false, nil
			}
			return f, true, nil
		case tt == schema.Date:
			if len(s) > 10 {
				s = s[:10] // a timestamp string casts to its date
			}
			d, err := time.Parse(time.DateOnly, s)
			if err != nil {
				return nil, false, nil
			}
			return d, true, nil
		case tt == schema.Timestamp || tt == schema.TimestampNTZ:
			for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999", time.DateOnly} {
				if ts, err := time.Parse(layout, s); err == nil {
					return ts.UTC().Truncate(time.Microsecond), true, nil
				}
			}
			return nil, false, nil
		case tt == schema.String:
			return s, true, nil
		case tt == schema.Boolean:
			switch strings.ToLower(s) {
			case "true", "t", "yes", "y", "1":
				return true, true, nil
			case "false", "f", "no", "n", "0":
				return false, true, nil
			}
			return nil, false, nil
		}
	}
	return nil, false, errIncomparable
}

// rangeLiteral converts a literal for a range comparison against a column of
// type t (§3.6): a string literal is cast to t (a literal that does not
// parse is null and never matches); other literals are kept and compared
// numerically or chronologically by compareValues. ok is false for a literal
// that can never match.
func rangeLiteral(l any, t schema.Type) (any, bool) {
	if l == nil {
		return nil, false
	}
	if s, ok := l.(string); ok && t != schema.String {
		v, ok, err := castString(s, t)
		return v, ok && err == nil
	}
	if t == schema.String {
		// A non-string literal against a string column is compared as text
		// (a documented simplification of Spark's promotion rules).
		s, ok := sparkText(l)
		return s, ok
	}
	return l, true
}

// compareValues orders two values: numbers numerically across Go types
// (NaN above every other number, as Spark orders it), strings by bytes (as
// Spark orders UTF8String), times chronologically, booleans false < true.
// ok is false when the two cannot be compared.
func compareValues(a, b any) (int, bool) {
	if sa, ok := a.(string); ok {
		sb, ok := b.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(sa, sb), true
	}
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		if !ok {
			return 0, false
		}
		return ta.Compare(tb), true
	}
	if ba, ok := a.(bool); ok {
		bb, ok := b.(bool)
		if !ok {
			return 0, false
		}
		switch {
		case ba == bb:
			return 0, true
		case !ba:
			return -1, true
		}
		return 1, true
	}
	ia, aInt := pqrow.AsInt64(a)
	ib, bInt := pqrow.AsInt64(b)
	if aInt && bInt {
		switch {
		case ia < ib:
			return -1, true
		case ia > ib:
			return 1, true
		}
		return 0, true
	}
	fa, aok := literalFloat(a)
	fb, bok := literalFloat(b)
	if !aok || !bok {
		return 0, false
	}
	an, bn := math.IsNaN(fa), math.IsNaN(fb)
	switch {
	case an && bn:
		return 0, true
	case an:
		return 1, true
	case bn:
		return -1, true
	}
	_, aDec := a.(pqrow.Decimal)
	_, bDec := b.(pqrow.Decimal)
	if aDec || bDec {
		// Exact comparison when a decimal is involved (doubles convert via
		// their shortest decimal text).
		ra, _ := literalRat(a)
		rb, _ := literalRat(b)
		if ra != nil && rb != nil {
			return ra.Cmp(rb), true
		}
	}
	switch {
	case fa < fb:
		return -1, true
	case fa > fb:
		return 1, true
	}
	return 0, true
}
