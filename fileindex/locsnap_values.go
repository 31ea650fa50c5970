package fileindex

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
)

// Typed values in locate snapshots (range bounds, temporal max_ts): a tag
// per Go type of the pqrow value model, then the value, so that a view
// read from a snapshot holds the very types the scan gives and compares
// exactly as it does.

// Tags of encoded values, one per Go type of the pqrow value model that a
// range bound or a max_ts can have.
const (
	tagNull byte = iota
	tagFalse
	tagTrue
	tagInt8
	tagInt16
	tagInt32
	tagInt64
	tagFloat32
	tagFloat64
	tagString
	tagBytes
	tagTime
	tagDecimal
)

// appendTagged appends v with its type tag; ok is false for a type the
// snapshot does not encode.
func appendTagged(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, tagNull), true
	case bool:
		if x {
			return append(b, tagTrue), true
		}
		return append(b, tagFalse), true
	case int8:
		return binary.AppendVarint(append(b, tagInt8), int64(x)), true
	case int16:
		return binary.AppendVarint(append(b, tagInt16), int64(x)), true
	case int32:
		return binary.AppendVarint(append(b, tagInt32), int64(x)), true
	case int64:
		return binary.AppendVarint(append(b, tagInt64), x), true
	case float32:
		return binary.LittleEndian.AppendUint32(append(b, tagFloat32), math.Float32bits(x)), true
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, tagFloat64), math.Float64bits(x)), true
	case string:
		b = binary.AppendUvarint(append(b, tagString), uint64(len(x)))
		return append(b, x...), true
	case []byte:
		b = binary.AppendUvarint(append(b, tagBytes), uint64(len(x)))
		return append(b, x...), true
	case time.Time:
		t, err := x.MarshalBinary()
		if err != nil {
			return b, false
		}
		b = binary.AppendUvarint(append(b, tagTime), uint64(len(t)))
		return append(b, t...), true
	case pqrow.Decimal:
		if x.Unscaled == nil {
			return b, false
		}
		b = binary.AppendVarint(append(b, tagDecimal), int64(x.Scale))
		b = append(b, byte(x.Unscaled.Sign()+1))
		abs := x.Unscaled.Bytes()
		b = binary.AppendUvarint(b, uint64(len(abs)))
		return append(b, abs...), true
	}
	return b, false
}

// readTagged decodes one appendTagged value; n is the bytes consumed (0:
// corrupt).
func readTagged(b []byte) (any, int) {
	if len(b) == 0 {
		return nil, 0
	}
	tag, rest := b[0], b[1:]
	varint := func() (int64, int) {
		v, n := binary.Varint(rest)
		if n <= 0 {
			return 0, 0
		}
		return v, n + 1
	}
	bytesOf := func(r []byte) ([]byte, int) {
		l, n := binary.Uvarint(r)
		if n <= 0 || uint64(len(r)-n) < l {
			return nil, 0
		}
		return r[n : n+int(l)], n + int(l)
	}
	switch tag {
	case tagNull:
		return nil, 1
	case tagFalse:
		return false, 1
	case tagTrue:
		return true, 1
	case tagInt8:
		v, n := varint()
		return int8(v), n
	case tagInt16:
		v, n := varint()
		return int16(v), n
	case tagInt32:
		v, n := varint()
		return int32(v), n
	case tagInt64:
		return varint()
	case tagFloat32:
		if len(rest) < 4 {
			return nil, 0
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(rest)), 5
	case tagFloat64:
		if len(rest) < 8 {
			return nil, 0
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(rest)), 9
	case tagString:
		s, n := bytesOf(rest)
		if n == 0 {
			return nil, 0
		}
		return string(s), n + 1
	case tagBytes:
		s, n := bytesOf(rest)
		if n == 0 {
			return nil, 0
		}
		return bytes.Clone(s), n + 1
	case tagTime:
		s, n := bytesOf(rest)
		var t time.Time
		if n == 0 || t.UnmarshalBinary(s) != nil {
			return nil, 0
		}
		return t, n + 1
	case tagDecimal:
		scale, n := binary.Varint(rest)
		if n <= 0 || len(rest) <= n {
			return nil, 0
		}
		sign := int(rest[n]) - 1
		abs, m := bytesOf(rest[n+1:])
		if m == 0 || sign < -1 || sign > 1 {
			return nil, 0
		}
		u := new(big.Int).SetBytes(abs)
		if sign < 0 {
			u.Neg(u)
		}
		return pqrow.Decimal{Unscaled: u, Scale: int32(scale)}, 1 + n + 1 + m
	}
	return nil, 0
}
