package rowindex

import (
	"encoding/binary"
	"math"

	"github.com/parquet-go/parquet-go"
)

// Hoisted values (cover columns, aggregate partials) are stored in a
// fragment's cover column as a compact self-describing sequence of values:
// a tag byte, then a payload. Integers are zig-zag varints, so small counts
// and ids cost 1–3 bytes.
const (
	valNull   = 0
	valFalse  = 1
	valTrue   = 2
	valInt    = 3 // zig-zag varint
	valFloat  = 4 // 8 bytes little-endian IEEE 754
	valString = 5 // uvarint length, bytes
)

// valueOf converts a Parquet leaf value to the Go value the row index hoists:
// nil, bool, int64, float64 or string.
func valueOf(v parquet.Value) any {
	if v.IsNull() {
		return nil
	}
	switch v.Kind() {
	case parquet.Boolean:
		return v.Boolean()
	case parquet.Int32:
		return int64(v.Int32())
	case parquet.Int64:
		return v.Int64()
	case parquet.Float:
		return float64(v.Float())
	case parquet.Double:
		return v.Double()
	default:
		return string(v.ByteArray())
	}
}

// appendValue appends one hoisted value. v must be nil, bool, int64, float64
// or string.
func appendValue(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, valNull)
	case bool:
		if x {
			return append(dst, valTrue)
		}
		return append(dst, valFalse)
	case int64:
		return binary.AppendVarint(append(dst, valInt), x)
	case float64:
		return binary.LittleEndian.AppendUint64(append(dst, valFloat), math.Float64bits(x))
	case string:
		return append(binary.AppendUvarint(append(dst, valString), uint64(len(x))), x...)
	}
	panic("rowindex: appendValue of unsupported type")
}

// decodeValues decodes every value of b.
func decodeValues(b []byte) ([]any, error) {
	var out []any
	for len(b) > 0 {
		tag := b[0]
		b = b[1:]
		switch tag {
		case valNull:
			out = append(out, nil)
		case valFalse:
			out = append(out, false)
		case valTrue:
			out = append(out, true)
		case valInt:
			i, n := binary.Varint(b)
			if n <= 0 {
				return nil, corrupt("bad varint in hoisted values")
			}
			out = append(out, i)
			b = b[n:]
		case valFloat:
			if len(b) < 8 {
				return nil, corrupt("short float in hoisted values")
			}
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(b)))
			b = b[8:]
		case valString:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return nil, corrupt("bad string in hoisted values")
			}
			out = append(out, string(b[n:n+int(l)]))
			b = b[n+int(l):]
		default:
			return nil, corrupt("bad tag %d in hoisted values", tag)
		}
	}
	return out, nil
}

// decodeValuesInto decodes len(dst) values from the start of b into dst
// and returns the rest of b. A value is boxed only where Go must (an int64
// outside the runtime's small-integer table, a float, a string).
func decodeValuesInto(dst []any, b []byte) ([]byte, error) {
	for k := range dst {
		if len(b) == 0 {
			return nil, corrupt("too few hoisted values")
		}
		tag := b[0]
		b = b[1:]
		switch tag {
		case valNull:
			dst[k] = nil
		case valFalse:
			dst[k] = false
		case valTrue:
			dst[k] = true
		case valInt:
			i, n := binary.Varint(b)
			if n <= 0 {
				return nil, corrupt("bad varint in hoisted values")
			}
			dst[k] = i
			b = b[n:]
		case valFloat:
			if len(b) < 8 {
				return nil, corrupt("short float in hoisted values")
			}
			dst[k] = math.Float64frombits(binary.LittleEndian.Uint64(b))
			b = b[8:]
		case valString:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return nil, corrupt("bad string in hoisted values")
			}
			dst[k] = string(b[n : n+int(l)])
			b = b[n+int(l):]
		default:
			return nil, corrupt("bad tag %d in hoisted values", tag)
		}
	}
	return b, nil
}

// skipValues returns b after its first k values, without decoding them.
func skipValues(b []byte, k int) ([]byte, error) {
	for range k {
		if len(b) == 0 {
			return nil, corrupt("too few hoisted values")
		}
		tag := b[0]
		b = b[1:]
		switch tag {
		case valNull, valFalse, valTrue:
		case valInt:
			_, n := binary.Varint(b)
			if n <= 0 {
				return nil, corrupt("bad varint in hoisted values")
			}
			b = b[n:]
		case valFloat:
			if len(b) < 8 {
				return nil, corrupt("short float in hoisted values")
			}
			b = b[8:]
		case valString:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return nil, corrupt("bad string in hoisted values")
			}
			b = b[n+int(l):]
		default:
			return nil, corrupt("bad tag %d in hoisted values", tag)
		}
	}
	return b, nil
}

// toFloat returns a numeric hoisted value as float64.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
