package fileindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// The value model of the Go summaries (summarize.go). A summary must hold
// exactly what the engine's aggregates return for the same rows, so every
// value read is first made the value the engine would hand back (canonical:
// timestamps truncated to µs in UTC, dates at UTC midnight, decimals at
// the column's scale), equality is the engine's (-0.0 equals 0.0, every NaN
// equals every NaN; the first value seen represents its class, as
// list(DISTINCT) and min/max keep it), and the order of ranges is the
// engine's (strings and binaries bytewise, NaN greatest).

// valueOps are the per-type operations of one summarised value type.
type valueOps struct {
	typ schema.Type
	// canon makes a read value the engine's value of typ (nil stays nil).
	canon func(v any) (any, error)
	// intKey and strKey give the equality key of a canonical non-null
	// value: exactly one is set per type. Integer keys cover every type
	// that fits 64 bits (the fast path); strings and binaries, wide
	// decimals use string keys.
	intKey func(v any) int64
	strKey func(v any) string
	// cmp orders canonical non-null values as the engine's min and max do.
	cmp func(a, b any) int
	// rawKey, when set, distinguishes values that are equal but render
	// differently in a bloom filter (-0.0 and 0.0): the engine streams
	// every row's rendering into the filter, so both must be added.
	rawKey func(v any) int64
	// enc and dec are the spill codec of a canonical non-null value.
	enc func(b []byte, v any) []byte
	dec func(b []byte) (any, []byte, error)
	// fromKey, when set, is the value of an integer key: the key is the
	// value (integers, booleans, dates and timestamps), and enc writes the
	// key as a varint. Sets of such types keep keys, not boxed values.
	fromKey func(k int64) any
	// isString reports the string type, whose key is the value.
	isString bool
}

// goSummarizable reports whether values of t are summarised in Go. Nested
// values (arrays, structs, maps as index values), variant and the null type
// stay with the engine.
func goSummarizable(t schema.Type) bool {
	_, ok := opsFor(t)
	return ok
}

// errSpill reports a spill block that does not decode: only a bug or a
// damaged temporary file causes it.
var errSpill = fmt.Errorf("fileindex: damaged summary spill")

// opsFor returns the operations of type t, false when t is not summarised
// in Go.
func opsFor(t schema.Type) (*valueOps, bool) {
	o := &valueOps{typ: t, canon: func(v any) (any, error) { return v, nil }}
	if d, ok := t.(*schema.Decimal); ok {
		if d.Precision < 1 || d.Precision > 38 {
			return nil, false
		}
		scale := int32(d.Scale)
		o.canon = func(v any) (any, error) {
			if v == nil {
				return nil, nil
			}
			x, ok := v.(pqrow.Decimal)
			if !ok {
				return nil, fmt.Errorf("fileindex: %T is not a decimal", v)
			}
			if x.Scale == scale && x.Unscaled != nil {
				return x, nil
			}
			return x.Rescale(scale)
		}
		if d.Precision <= 18 {
			o.intKey = func(v any) int64 { return v.(pqrow.Decimal).Unscaled.Int64() }
		} else {
			o.strKey = func(v any) string { return v.(pqrow.Decimal).Unscaled.String() }
		}
		o.cmp = func(a, b any) int { return a.(pqrow.Decimal).Unscaled.Cmp(b.(pqrow.Decimal).Unscaled) }
		o.enc = func(b []byte, v any) []byte {
			u := v.(pqrow.Decimal).Unscaled
			sign := byte(0)
			if u.Sign() < 0 {
				sign = 1
			}
			mag := new(big.Int).Abs(u).Bytes()
			b = append(b, sign)
			b = binary.AppendUvarint(b, uint64(len(mag)))
			return append(b, mag...)
		}
		o.dec = func(b []byte) (any, []byte, error) {
			if len(b) < 1 {
				return nil, nil, errSpill
			}
			neg := b[0] == 1
			mag, rest, err := decBytes(b[1:])
			if err != nil {
				return nil, nil, err
			}
			u := new(big.Int).SetBytes(mag)
			if neg {
				u.Neg(u)
			}
			return pqrow.Decimal{Unscaled: u, Scale: scale}, rest, nil
		}
		return o, true
	}
	p, ok := t.(*schema.Primitive)
	if !ok {
		return nil, false
	}
	intCmp := func(a, b int64) int {
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
	varint := func(get func(any) int64, make func(int64) any) {
		o.intKey = get
		o.fromKey = make
		o.cmp = func(a, b any) int { return intCmp(get(a), get(b)) }
		o.enc = func(b []byte, v any) []byte { return binary.AppendVarint(b, get(v)) }
		o.dec = func(b []byte) (any, []byte, error) {
			x, n := binary.Varint(b)
			if n <= 0 {
				return nil, nil, errSpill
			}
			return make(x), b[n:], nil
		}
	}
	switch p.Name {
	case "string":
		o.isString = true
		o.strKey = func(v any) string { return v.(string) }
		o.cmp = func(a, b any) int { return strings.Compare(a.(string), b.(string)) }
		o.enc = func(b []byte, v any) []byte {
			s := v.(string)
			b = binary.AppendUvarint(b, uint64(len(s)))
			return append(b, s...)
		}
		o.dec = func(b []byte) (any, []byte, error) {
			s, rest, err := decBytes(b)
			return string(s), rest, err
		}
	case "binary":
		o.strKey = func(v any) string { return string(v.([]byte)) }
		o.cmp = func(a, b any) int { return bytes.Compare(a.([]byte), b.([]byte)) }
		o.enc = func(b []byte, v any) []byte {
			s := v.([]byte)
			b = binary.AppendUvarint(b, uint64(len(s)))
			return append(b, s...)
		}
		o.dec = func(b []byte) (any, []byte, error) {
			s, rest, err := decBytes(b)
			return bytes.Clone(s), rest, err
		}
	case "boolean":
		varint(func(v any) int64 {
			if v.(bool) {
				return 1
			}
			return 0
		}, func(x int64) any { return x != 0 })
	case "byte":
		varint(func(v any) int64 { return int64(v.(int8)) }, func(x int64) any { return int8(x) })
	case "short":
		varint(func(v any) int64 { return int64(v.(int16)) }, func(x int64) any { return int16(x) })
	case "integer":
		varint(func(v any) int64 { return int64(v.(int32)) }, func(x int64) any { return int32(x) })
	case "long":
		varint(func(v any) int64 { return v.(int64) }, func(x int64) any { return x })
	case "date", "timestamp", "timestamp_ntz":
		date := p.Name == "date"
		o.canon = func(v any) (any, error) {
			tm, ok := v.(time.Time)
			if !ok {
				return v, nil
			}
			// Our readers already produce the engine's value (UTC, µs;
			// dates at midnight): keep the boxed value, no allocation.
			if tm.Location() == time.UTC && tm.Nanosecond()%1000 == 0 &&
				(!date || tm.Hour() == 0 && tm.Minute() == 0 && tm.Second() == 0 && tm.Nanosecond() == 0) {
				return v, nil
			}
			tm = tm.UTC()
			if date {
				y, m, d := tm.Date()
				return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
			}
			return tm.Truncate(time.Microsecond), nil
		}
		varint(func(v any) int64 { return v.(time.Time).UnixMicro() }, func(x int64) any { return time.UnixMicro(x).UTC() })
	case "float":
		norm := func(f float32) uint32 {
			switch {
			case f != f:
				return 0x7fc00000
			case f == 0:
				return 0
			}
			return math.Float32bits(f)
		}
		o.intKey = func(v any) int64 { return int64(norm(v.(float32))) }
		o.rawKey = func(v any) int64 { return int64(math.Float32bits(v.(float32))) }
		o.cmp = func(a, b any) int { return floatCmp(float64(a.(float32)), float64(b.(float32))) }
		o.enc = func(b []byte, v any) []byte {
			return binary.LittleEndian.AppendUint32(b, math.Float32bits(v.(float32)))
		}
		o.dec = func(b []byte) (any, []byte, error) {
			if len(b) < 4 {
				return nil, nil, errSpill
			}
			return math.Float32frombits(binary.LittleEndian.Uint32(b)), b[4:], nil
		}
	case "double":
		norm := func(f float64) uint64 {
			switch {
			case f != f:
				return 0x7ff8000000000001
			case f == 0:
				return 0
			}
			return math.Float64bits(f)
		}
		o.intKey = func(v any) int64 { return int64(norm(v.(float64))) }
		o.rawKey = func(v any) int64 { return int64(math.Float64bits(v.(float64))) }
		o.cmp = func(a, b any) int { return floatCmp(a.(float64), b.(float64)) }
		o.enc = func(b []byte, v any) []byte {
			return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.(float64)))
		}
		o.dec = func(b []byte) (any, []byte, error) {
			if len(b) < 8 {
				return nil, nil, errSpill
			}
			return math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:], nil
		}
	default:
		return nil, false
	}
	return o, true
}

// floatCmp is the engine's float order: NaN greatest and equal to NaN,
// -0.0 equal to 0.0.
func floatCmp(a, b float64) int {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// decBytes decodes a length-prefixed byte string.
func decBytes(b []byte) ([]byte, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, nil, errSpill
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

// encNullable appends a presence byte and, for a non-null v, its encoding.
func (o *valueOps) encNullable(b []byte, v any) []byte {
	if v == nil {
		return append(b, 0)
	}
	return o.enc(append(b, 1), v)
}

// decNullable decodes what encNullable wrote.
func (o *valueOps) decNullable(b []byte) (any, []byte, error) {
	if len(b) < 1 {
		return nil, nil, errSpill
	}
	if b[0] == 0 {
		return nil, b[1:], nil
	}
	return o.dec(b[1:])
}
