package pqrow

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// leafConv converts one non-null Parquet value to its Go value.
type leafConv func(v parquet.Value) (any, error)

// leafConverter returns the conversion from leaf column n to Spark type t,
// or an ErrSchemaMismatch / ErrUnsupported error when t cannot be read from
// n.
func leafConverter(t schema.Type, n *pnode, path []string) (leafConv, error) {
	pt, _ := n.el.Type.Get()
	mismatch := func() (leafConv, error) {
		return nil, colErr(path, ErrSchemaMismatch, "cannot read %s as %s", describeLeaf(n), t)
	}
	if d, ok := t.(*schema.Decimal); ok {
		return decimalConverter(d, n, pt, path)
	}
	p, ok := t.(*schema.Primitive)
	if !ok {
		return mismatch()
	}
	unsigned := isUnsigned(n)
	switch p.Name {
	case "string":
		if pt == format.ByteArray || pt == format.FixedLenByteArray {
			return func(v parquet.Value) (any, error) { return string(v.ByteArray()), nil }, nil
		}
	case "binary":
		if pt == format.ByteArray || pt == format.FixedLenByteArray {
			return func(v parquet.Value) (any, error) { return bytes.Clone(v.ByteArray()), nil }, nil
		}
	case "boolean":
		if pt == format.Boolean {
			return func(v parquet.Value) (any, error) { return v.Boolean(), nil }, nil
		}
	case "byte", "short", "integer":
		if pt != format.Int32 || (unsigned && p.Name == "integer" && bitWidth(n) > 16) {
			break
		}
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		switch p.Name {
		case "byte":
			lo, hi = math.MinInt8, math.MaxInt8
		case "short":
			lo, hi = math.MinInt16, math.MaxInt16
		}
		return func(v parquet.Value) (any, error) {
			x := int64(v.Int32())
			if unsigned {
				x = int64(uint32(v.Int32()))
			}
			if x < lo || x > hi {
				return nil, colErr(path, ErrSchemaMismatch, "value %d does not fit %s", x, p)
			}
			switch p.Name {
			case "byte":
				return int8(x), nil
			case "short":
				return int16(x), nil
			}
			return int32(x), nil
		}, nil
	case "long":
		switch {
		case pt == format.Int32 && unsigned:
			return func(v parquet.Value) (any, error) { return int64(uint32(v.Int32())), nil }, nil
		case pt == format.Int32:
			return func(v parquet.Value) (any, error) { return int64(v.Int32()), nil }, nil
		case pt == format.Int64 && !unsigned:
			return func(v parquet.Value) (any, error) { return v.Int64(), nil }, nil
		}
	case "float":
		switch {
		case pt == format.Float:
			return func(v parquet.Value) (any, error) { return v.Float(), nil }, nil
		case pt == format.FixedLenByteArray && isFloat16(n):
			return func(v parquet.Value) (any, error) {
				b := v.ByteArray()
				if len(b) != 2 {
					return nil, colErr(path, ErrCorrupt, "FLOAT16 value of %d bytes", len(b))
				}
				return float16ToFloat32(binary.LittleEndian.Uint16(b)), nil
			}, nil
		}
	case "double":
		switch pt {
		case format.Double:
			return func(v parquet.Value) (any, error) { return v.Double(), nil }, nil
		case format.Float:
			return func(v parquet.Value) (any, error) { return float64(v.Float()), nil }, nil
		}
	case "date":
		if pt == format.Int32 {
			return func(v parquet.Value) (any, error) { return DateFromDays(v.Int32()), nil }, nil
		}
	case "timestamp", "timestamp_ntz":
		switch pt {
		case format.Int96:
			return func(v parquet.Value) (any, error) {
				t, ok := int96Time(v.Int96())
				if !ok {
					return nil, colErr(path, ErrUnsupported, "INT96 timestamp %v is outside the range of timestamps", v.Int96())
				}
				return t, nil
			}, nil
		case format.Int64:
			unit := timeUnit(n)
			return func(v parquet.Value) (any, error) { return unixTime(v.Int64(), unit), nil }, nil
		}
	case "null":
		return func(parquet.Value) (any, error) { return nil, nil }, nil
	case "variant":
		return nil, colErr(path, ErrUnsupported, "type variant")
	}
	return mismatch()
}

func describeLeaf(n *pnode) string {
	pt, _ := n.el.Type.Get()
	if lt := n.el.LogicalType.Value; lt != nil {
		return fmt.Sprintf("%v (%s)", pt, lt)
	}
	if ct, ok := n.converted(); ok {
		return fmt.Sprintf("%v (%v)", pt, ct)
	}
	return pt.String()
}

func isUnsigned(n *pnode) bool {
	if it, ok := n.el.LogicalType.Value.(*format.IntType); ok {
		return !it.IsSigned
	}
	ct, ok := n.converted()
	return ok && ct >= deprecated.Uint8 && ct <= deprecated.Uint64
}

func bitWidth(n *pnode) int {
	if it, ok := n.el.LogicalType.Value.(*format.IntType); ok {
		return int(it.BitWidth)
	}
	if ct, ok := n.converted(); ok {
		switch ct {
		case deprecated.Uint8, deprecated.Int8:
			return 8
		case deprecated.Uint16, deprecated.Int16:
			return 16
		case deprecated.Uint32, deprecated.Int32:
			return 32
		}
	}
	return 64
}

func isFloat16(n *pnode) bool {
	_, ok := n.el.LogicalType.Value.(*format.Float16Type)
	return ok
}

// Time units of INT64 timestamps.
const (
	unitMillis = iota
	unitMicros
	unitNanos
)

func timeUnit(n *pnode) int {
	if ts, ok := n.el.LogicalType.Value.(*format.TimestampType); ok {
		switch ts.Unit.Value.(type) {
		case *format.MilliSeconds:
			return unitMillis
		case *format.NanoSeconds:
			return unitNanos
		}
		return unitMicros
	}
	if ct, ok := n.converted(); ok && ct == deprecated.TimestampMillis {
		return unitMillis
	}
	return unitMicros
}

// unixTime converts an INT64 timestamp to a UTC time at microsecond
// precision (nanosecond values are truncated toward the past, as Spark
// does).
func unixTime(x int64, unit int) time.Time {
	switch unit {
	case unitMillis:
		return time.UnixMilli(x).UTC()
	case unitNanos:
		return time.UnixMicro(floorDiv(x, 1000)).UTC()
	}
	return time.UnixMicro(x).UTC()
}

// julianUnixEpoch is the Julian day number of 1970-01-01, the epoch of
// INT96 timestamps' day field.
const julianUnixEpoch = 2440588

// microsPerDay = 86 400 s × 10^6.
const microsPerDay = secondsPerDay * 1_000_000

// int96Time decodes an INT96 timestamp (8 bytes little-endian signed
// nanoseconds of the day, then a 4-byte signed Julian day), truncated to
// microseconds. Like Spark, it refuses values whose microseconds since the
// epoch overflow int64.
func int96Time(i deprecated.Int96) (time.Time, bool) {
	nanos := int64(uint64(i[0]) | uint64(i[1])<<32)
	days := int64(int32(i[2])) - julianUnixEpoch
	if days > math.MaxInt64/microsPerDay || days < math.MinInt64/microsPerDay {
		return time.Time{}, false
	}
	base := days * microsPerDay
	frac := floorDiv(nanos, 1000)
	if (frac > 0 && base > math.MaxInt64-frac) || (frac < 0 && base < math.MinInt64-frac) {
		return time.Time{}, false
	}
	return time.UnixMicro(base + frac).UTC(), true
}

func float16ToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp == 0:
		if frac == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: frac × 2^-24
		f := float32(frac) / (1 << 24)
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

func decimalConverter(d *schema.Decimal, n *pnode, pt format.Type, path []string) (leafConv, error) {
	fileScale := int32(0)
	if fd := n.decimal(); fd != nil {
		fileScale = int32(fd.Scale)
	} else if pt != format.Int32 && pt != format.Int64 {
		return nil, colErr(path, ErrSchemaMismatch, "cannot read %s as %s", describeLeaf(n), d)
	}
	scale := int32(d.Scale)
	finish := func(u *big.Int) (any, error) {
		dec := Decimal{Unscaled: u, Scale: fileScale}
		if fileScale != scale {
			var err error
			if dec, err = dec.Rescale(scale); err != nil {
				return nil, colErr(path, ErrSchemaMismatch, "%v", err)
			}
		}
		return dec, nil
	}
	switch pt {
	case format.Int32:
		return func(v parquet.Value) (any, error) { return finish(big.NewInt(int64(v.Int32()))) }, nil
	case format.Int64:
		return func(v parquet.Value) (any, error) { return finish(big.NewInt(v.Int64())) }, nil
	case format.ByteArray, format.FixedLenByteArray:
		return func(v parquet.Value) (any, error) { return finish(fromTwosComplement(v.ByteArray())) }, nil
	}
	return nil, colErr(path, ErrSchemaMismatch, "cannot read %s as %s", describeLeaf(n), d)
}

// fromTwosComplement decodes a big-endian two's-complement integer.
func fromTwosComplement(b []byte) *big.Int {
	u := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return u
}

// toTwosComplement encodes u as a big-endian two's-complement integer of
// exactly n bytes; ok is false when it does not fit.
func toTwosComplement(u *big.Int, n int) ([]byte, bool) {
	out := make([]byte, n)
	if u.Sign() >= 0 {
		if u.BitLen() > 8*n-1 {
			return nil, false
		}
		u.FillBytes(out)
		return out, true
	}
	// -x = 2^(8n) - x
	m := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	m.Add(m, u)
	if m.BitLen() != 8*n { // |u| > 2^(8n-1)
		return nil, false
	}
	m.FillBytes(out)
	return out, true
}
