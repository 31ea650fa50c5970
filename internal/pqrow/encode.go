package pqrow

import (
	"math"
	"time"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go"
)

func typeErr(path []string, v any, want string) error {
	return colErr(path, ErrSchemaMismatch, "value of Go type %T where %s is expected", v, want)
}

func stringEnc(path []string) leafEnc {
	return func(v any) (parquet.Value, error) {
		switch s := v.(type) {
		case string:
			return parquet.ByteArrayValue([]byte(s)), nil
		case []byte:
			return parquet.ByteArrayValue(s), nil
		}
		return parquet.Value{}, typeErr(path, v, "string")
	}
}

func binaryEnc(path []string) leafEnc {
	return func(v any) (parquet.Value, error) {
		switch b := v.(type) {
		case []byte:
			return parquet.ByteArrayValue(b), nil
		case string:
			return parquet.ByteArrayValue([]byte(b)), nil
		}
		return parquet.Value{}, typeErr(path, v, "[]byte")
	}
}

func boolEnc(path []string) leafEnc {
	return func(v any) (parquet.Value, error) {
		if b, ok := v.(bool); ok {
			return parquet.BooleanValue(b), nil
		}
		return parquet.Value{}, typeErr(path, v, "bool")
	}
}

// AsInt64 returns a value of any Go integer type as an int64; ok is false
// for other types and for unsigned values above math.MaxInt64. It is the
// one integer conversion of the row model, shared by the writer, the Delta
// partition values and the file index's literal coercion.
func AsInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	case uint:
		if uint64(x) > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}

func intRange(name string) (lo, hi int64) {
	switch name {
	case "byte":
		return math.MinInt8, math.MaxInt8
	case "short":
		return math.MinInt16, math.MaxInt16
	case "integer":
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// intEnc accepts any Go integer whose value fits the Spark type.
func intEnc(p *schema.Primitive, path []string) leafEnc {
	lo, hi := intRange(p.Name)
	long := p.Name == "long"
	return func(v any) (parquet.Value, error) {
		x, ok := AsInt64(v)
		if !ok {
			return parquet.Value{}, typeErr(path, v, p.Name)
		}
		if x < lo || x > hi {
			return parquet.Value{}, colErr(path, ErrSchemaMismatch, "value %d out of range of %s", x, p.Name)
		}
		if long {
			return parquet.Int64Value(x), nil
		}
		return parquet.Int32Value(int32(x)), nil
	}
}

func floatEnc(path []string) leafEnc {
	return func(v any) (parquet.Value, error) {
		if f, ok := v.(float32); ok {
			return parquet.FloatValue(f), nil
		}
		return parquet.Value{}, typeErr(path, v, "float32")
	}
}

func doubleEnc(path []string) leafEnc {
	return func(v any) (parquet.Value, error) {
		switch f := v.(type) {
		case float64:
			return parquet.DoubleValue(f), nil
		case float32:
			return parquet.DoubleValue(float64(f)), nil
		}
		return parquet.Value{}, typeErr(path, v, "float64")
	}
}

func dateEnc(path []string) leafEnc {
	return func(v any) (parquet.Value, error) {
		if t, ok := v.(time.Time); ok {
			return parquet.Int32Value(DaysSinceEpoch(t)), nil
		}
		return parquet.Value{}, typeErr(path, v, "time.Time")
	}
}

// timestampEnc writes microseconds since the epoch: of the instant for
// timestamp, of the wall clock read as UTC for timestamp_ntz.
func timestampEnc(ntz bool, path []string) leafEnc {
	return func(v any) (parquet.Value, error) {
		t, ok := v.(time.Time)
		if !ok {
			return parquet.Value{}, typeErr(path, v, "time.Time")
		}
		return parquet.Int64Value(timestampMicros(t, ntz)), nil
	}
}

func timestampMicros(t time.Time, ntz bool) int64 {
	if ntz {
		y, m, d := t.Date()
		h, mi, s := t.Clock()
		t = time.Date(y, m, d, h, mi, s, t.Nanosecond(), time.UTC)
	}
	return t.Unix()*1_000_000 + int64(t.Nanosecond()/1000)
}

// toDecimal accepts a Decimal (any scale that rescales exactly) and checks
// the precision.
func toDecimal(v any, d *schema.Decimal, path []string) (Decimal, error) {
	dec, ok := v.(Decimal)
	if !ok {
		if dp, ok2 := v.(*Decimal); ok2 && dp != nil {
			dec, ok = *dp, true
		}
	}
	if !ok {
		return Decimal{}, typeErr(path, v, "pqrow.Decimal")
	}
	r, err := dec.Rescale(int32(d.Scale))
	if err != nil {
		return Decimal{}, colErr(path, ErrSchemaMismatch, "%v", err)
	}
	if r.unscaled().Sign() != 0 && r.Precision() > d.Precision {
		return Decimal{}, colErr(path, ErrSchemaMismatch, "%s does not fit %s", dec, d)
	}
	return r, nil
}

// decimalEnc encodes as INT32/INT64 (size 0) or a FIXED_LEN_BYTE_ARRAY of
// size bytes.
func decimalEnc(d *schema.Decimal, size int, path []string) leafEnc {
	return func(v any) (parquet.Value, error) {
		r, err := toDecimal(v, d, path)
		if err != nil {
			return parquet.Value{}, err
		}
		u := r.unscaled()
		switch {
		case size > 0:
			b, ok := toTwosComplement(u, size)
			if !ok {
				return parquet.Value{}, colErr(path, ErrSchemaMismatch, "%s does not fit %s", r, d)
			}
			return parquet.FixedLenByteArrayValue(b), nil
		case d.Precision <= maxInt32DecimalPrecision:
			return parquet.Int32Value(int32(u.Int64())), nil
		}
		return parquet.Int64Value(u.Int64()), nil
	}
}
