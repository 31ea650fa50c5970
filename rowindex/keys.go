package rowindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"
)

// KeyClass is the comparison class of a key column: every physical type of a
// class encodes to the same key space, so a key column stored as INT32 in one
// file and INT64 in another indexes as one column.
type KeyClass string

// The key classes.
const (
	KeyBool  KeyClass = "bool"
	KeyInt   KeyClass = "int"   // INT32, INT64 (and their logical types: dates, timestamps, decimals' unscaled value)
	KeyFloat KeyClass = "float" // FLOAT, DOUBLE
	KeyBytes KeyClass = "bytes" // BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY, INT96
)

// Tags of the order-preserving key encoding. Keys of different classes never
// compare equal; within a class, bytes.Compare on encodings orders like the
// values.
const (
	tagBool  = 0x01
	tagInt   = 0x02
	tagFloat = 0x03
	tagBytes = 0x04
)

// numBuckets is the size of the hash space of a hash row index: the top 16
// bits of the key's bucket hash (BucketHash). With a well-mixed hash
// (BucketFNV1aMix) 65,536 buckets keep a bucket of a 1e9-entry index at a
// mean of ~15,300 entries (≈250 KiB at ~16 bytes per compressed entry),
// i.e. one ranged read, and the fullest within a few percent of the mean
// when no key has many entries (a bucket holds all of its keys' entries: a
// hot key's bucket is as full as the key). FNV-1a's top bits alone
// (BucketFNV1a) leave dense int keys 0..1M in 7,799 buckets, up to 256 keys
// a bucket against a mean of 15. Fragment row groups group neighbouring
// buckets so a small index still has one row group.
const numBuckets = 1 << 16

// BucketHash names the hash that puts a key of a hash row index in its
// bucket (Manifest.BucketHash): readers must use the one the index was
// built with, so it is persisted.
type BucketHash string

// The bucket hashes.
const (
	// BucketFNV1a is the top 16 bits of the FNV-1a 64 hash of the encoded
	// key: hash row indexes of formats 1 and 2 (no bucketHash in the
	// manifest), kept by their Updates and Compacts. FNV-1a's last step
	// multiplies by 2^40+0x1b3, so the last bytes of a key (the low bytes
	// of a big-endian int) barely reach the top bits: dense int keys crowd
	// a few buckets.
	BucketFNV1a BucketHash = ""
	// BucketFNV1aMix is FNV-1a 64 followed by murmur3's 64-bit finalizer
	// (fmix64), top 16 bits: hash row indexes created since format 3.
	// fmix64 is a bijection, so it adds no collision to FNV-1a's 64 bits,
	// and every input bit reaches every output bit with probability ≈1/2.
	BucketFNV1aMix BucketHash = "fnv1a-fmix64"
)

// String names h as `describe` prints it: "fnv1a" for BucketFNV1a (whose
// persisted form is the empty string), else the persisted name.
func (h BucketHash) String() string {
	if h == BucketFNV1a {
		return "fnv1a"
	}
	return string(h)
}

// known reports whether this build knows the bucket hash h.
func (h BucketHash) known() bool { return h == BucketFNV1a || h == BucketFNV1aMix }

// bucket returns the hash bucket of an encoded key.
func (h BucketHash) bucket(key []byte) int32 {
	f := fnv.New64a()
	f.Write(key)
	return int32(h.finish(f.Sum64()) >> 48)
}

// finish is h's last step on a key's FNV-1a 64 hash.
func (h BucketHash) finish(x uint64) uint64 {
	if h == BucketFNV1a {
		return x
	}
	return fmix64(x)
}

// fmix64 is murmur3's 64-bit finalizer.
func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// classOfKind returns the key class of a Parquet physical kind.
func classOfKind(k parquet.Kind) (KeyClass, bool) {
	switch k {
	case parquet.Boolean:
		return KeyBool, true
	case parquet.Int32, parquet.Int64:
		return KeyInt, true
	case parquet.Float, parquet.Double:
		return KeyFloat, true
	case parquet.ByteArray, parquet.FixedLenByteArray, parquet.Int96:
		return KeyBytes, true
	}
	return "", false
}

// appendKeyValue appends the encoding of a non-null Parquet value.
func appendKeyValue(dst []byte, v parquet.Value) []byte {
	switch v.Kind() {
	case parquet.Boolean:
		return appendBoolKey(dst, v.Boolean())
	case parquet.Int32:
		return appendIntKey(dst, int64(v.Int32()))
	case parquet.Int64:
		return appendIntKey(dst, v.Int64())
	case parquet.Float:
		return appendFloatKey(dst, float64(v.Float()))
	case parquet.Double:
		return appendFloatKey(dst, v.Double())
	default:
		return append(append(dst, tagBytes), v.ByteArray()...)
	}
}

// exactKeyKind reports whether keys of columns of kind invert to the
// column's values (keyValue).
func exactKeyKind(kind parquet.Kind) bool {
	switch kind {
	case parquet.Boolean, parquet.Int32, parquet.Int64, parquet.ByteArray, parquet.FixedLenByteArray:
		return true
	}
	return false
}

// keyOfKind reports whether key, an index key, is a value of a column of
// kind (an exact kind): what keyValue inverts, checked without allocating.
func keyOfKind(key []byte, kind parquet.Kind) bool {
	if len(key) == 0 {
		return false
	}
	switch kind {
	case parquet.Boolean:
		return key[0] == tagBool && len(key) == 2 && key[1] <= 1
	case parquet.Int32, parquet.Int64:
		if key[0] != tagInt || len(key) != 9 {
			return false
		}
		i := int64(binary.BigEndian.Uint64(key[1:]) ^ (1 << 63))
		return kind == parquet.Int64 || i == int64(int32(i))
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return key[0] == tagBytes
	}
	return false
}

// keyValue is appendKeyValue's inverse for a column of kind: the value the
// key column holds in every row of key's entries (levels unset). It is
// false for a key not of the kind (keyOfKind): float keys lose bits (-0
// has +0's key) and INT96 keys are not distinguished. Byte arrays are
// copied out of the key (which may live in a fragment's buffers).
func keyValue(key []byte, kind parquet.Kind) (parquet.Value, bool) {
	if !keyOfKind(key, kind) {
		return parquet.Value{}, false
	}
	switch kind {
	case parquet.Boolean:
		return parquet.BooleanValue(key[1] == 1), true
	case parquet.Int32:
		return parquet.Int32Value(int32(binary.BigEndian.Uint64(key[1:]) ^ (1 << 63))), true
	case parquet.Int64:
		return parquet.Int64Value(int64(binary.BigEndian.Uint64(key[1:]) ^ (1 << 63))), true
	case parquet.ByteArray:
		return parquet.ByteArrayValue(bytes.Clone(key[1:])), true
	default: // FixedLenByteArray
		return parquet.FixedLenByteArrayValue(bytes.Clone(key[1:])), true
	}
}

func appendBoolKey(dst []byte, b bool) []byte {
	if b {
		return append(dst, tagBool, 1)
	}
	return append(dst, tagBool, 0)
}

func appendIntKey(dst []byte, i int64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, tagInt), uint64(i)^(1<<63))
}

func appendFloatKey(dst []byte, f float64) []byte {
	if f == 0 {
		f = 0 // -0 == +0
	}
	b := math.Float64bits(f)
	if b&(1<<63) != 0 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	return binary.BigEndian.AppendUint64(append(dst, tagFloat), b)
}

// EncodeKey encodes a Go value as a key: bool; any signed or unsigned
// integer; float32/float64; string or []byte; time.Time (as microseconds since
// the epoch, Parquet's TIMESTAMP(MICROS)).
func EncodeKey(v any) ([]byte, error) {
	switch x := v.(type) {
	case bool:
		return appendBoolKey(nil, x), nil
	case int:
		return appendIntKey(nil, int64(x)), nil
	case int8:
		return appendIntKey(nil, int64(x)), nil
	case int16:
		return appendIntKey(nil, int64(x)), nil
	case int32:
		return appendIntKey(nil, int64(x)), nil
	case int64:
		return appendIntKey(nil, x), nil
	case uint8:
		return appendIntKey(nil, int64(x)), nil
	case uint16:
		return appendIntKey(nil, int64(x)), nil
	case uint32:
		return appendIntKey(nil, int64(x)), nil
	case uint64:
		return appendIntKey(nil, int64(x)), nil
	case float32:
		return appendFloatKey(nil, float64(x)), nil
	case float64:
		return appendFloatKey(nil, x), nil
	case string:
		return append([]byte{tagBytes}, x...), nil
	case []byte:
		return append([]byte{tagBytes}, x...), nil
	case time.Time:
		return appendIntKey(nil, x.UnixMicro()), nil
	}
	return nil, badQuery("unsupported key type %T", v)
}

// ParseKey parses the text form of a key of class c (as given on a command
// line: "42", "3.5", "true", "abc").
func ParseKey(s string, c KeyClass) ([]byte, error) {
	switch c {
	case KeyBool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, badQuery("key %q is not a bool", s)
		}
		return appendBoolKey(nil, b), nil
	case KeyInt:
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			if t, terr := time.Parse(time.RFC3339Nano, s); terr == nil {
				return appendIntKey(nil, t.UnixMicro()), nil
			}
			return nil, badQuery("key %q is not an integer", s)
		}
		return appendIntKey(nil, i), nil
	case KeyFloat:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, badQuery("key %q is not a number", s)
		}
		return appendFloatKey(nil, f), nil
	case KeyBytes:
		return append([]byte{tagBytes}, s...), nil
	}
	return nil, badQuery("unknown key class %q", c)
}

// DecodeKey returns the Go value of an encoded key: bool, int64, float64 or
// string.
func DecodeKey(k []byte) (any, error) {
	if len(k) == 0 {
		return nil, corrupt("empty key")
	}
	switch k[0] {
	case tagBool:
		if len(k) != 2 {
			break
		}
		return k[1] == 1, nil
	case tagInt:
		if len(k) != 9 {
			break
		}
		return int64(binary.BigEndian.Uint64(k[1:]) ^ (1 << 63)), nil
	case tagFloat:
		if len(k) != 9 {
			break
		}
		b := binary.BigEndian.Uint64(k[1:])
		if b&(1<<63) != 0 {
			b &^= 1 << 63
		} else {
			b = ^b
		}
		return math.Float64frombits(b), nil
	case tagBytes:
		return string(k[1:]), nil
	}
	return nil, corrupt("bad key encoding %x", k)
}

// keyString renders an encoded key for messages.
func keyString(k []byte) string {
	v, err := DecodeKey(k)
	if err != nil {
		return fmt.Sprintf("%x", k)
	}
	return fmt.Sprint(v)
}

// compareKeys orders encoded keys.
func compareKeys(a, b []byte) int { return bytes.Compare(a, b) }
