package duck

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Spark functions DuckDB lacks or computes differently, registered as
// scalar functions on every DB (Open) so that translated computed-index
// expressions (Translate) give Spark's values: Spark's Murmur3 hash() and
// XXH64 xxhash64() with their per-type input encodings, crc32, and the text
// of a float or double as Java's Double.toString/Float.toString writes it
// (what Spark's cast to string gives: "1.0E20", "NaN", "Infinity" where
// DuckDB writes "1e+20", "nan", "inf"). Each is computed in Go because no
// DuckDB expression reproduces them; they are deterministic, so DuckDB may
// fold them over constants.

// sparkHashSeed is the seed of Spark's hash() and xxhash64().
const sparkHashSeed = 42

// murmur3 of Spark's Murmur3_x86_32 (org.apache.spark.unsafe.hash).
func mixK1(k1 uint32) uint32 {
	k1 *= 0xcc9e2d51
	k1 = bits.RotateLeft32(k1, 15)
	return k1 * 0x1b873593
}

func mixH1(h1, k1 uint32) uint32 {
	h1 ^= k1
	h1 = bits.RotateLeft32(h1, 13)
	return h1*5 + 0xe6546b64
}

func fmix32(h1 uint32, n uint32) uint32 {
	h1 ^= n
	h1 ^= h1 >> 16
	h1 *= 0x85ebca6b
	h1 ^= h1 >> 13
	h1 *= 0xc2b2ae35
	return h1 ^ h1>>16
}

func murmurInt(v int32, seed uint32) uint32 {
	return fmix32(mixH1(seed, mixK1(uint32(v))), 4)
}

func murmurLong(v int64, seed uint32) uint32 {
	h := mixH1(seed, mixK1(uint32(v)))
	h = mixH1(h, mixK1(uint32(uint64(v)>>32)))
	return fmix32(h, 8)
}

// murmurBytes is Spark's hashUnsafeBytes: whole little-endian words, then
// each remaining byte as a sign-extended int mixed like a word (not the
// reference MurmurHash3 tail).
func murmurBytes(b []byte, seed uint32) uint32 {
	h := seed
	n := len(b) - len(b)%4
	for i := 0; i < n; i += 4 {
		h = mixH1(h, mixK1(binary.LittleEndian.Uint32(b[i:])))
	}
	for i := n; i < len(b); i++ {
		h = mixH1(h, mixK1(uint32(int32(int8(b[i])))))
	}
	return fmix32(h, uint32(len(b)))
}

func xxhInt(v int32, seed uint64) uint64 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(v))
	return xxhBytes(b[:], seed)
}

func xxhLong(v int64, seed uint64) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	return xxhBytes(b[:], seed)
}

func xxhBytes(b []byte, seed uint64) uint64 {
	d := xxhash.NewWithSeed(seed)
	d.Write(b)
	return d.Sum64()
}

// sparkHashInput is a value as Spark's hash expressions see it: an int
// (int, short, byte, boolean 1/0, date days), a long (bigint, timestamp
// micros, double bits), or bytes (string, binary).
type sparkHashInput struct {
	kind  byte // 'i', 'l', 'b'
	i     int32
	l     int64
	bytes []byte
}

func hashInputOf(v any) (sparkHashInput, error) {
	switch v := v.(type) {
	case int8:
		return sparkHashInput{kind: 'i', i: int32(v)}, nil
	case int16:
		return sparkHashInput{kind: 'i', i: int32(v)}, nil
	case int32:
		return sparkHashInput{kind: 'i', i: v}, nil
	case bool:
		if v {
			return sparkHashInput{kind: 'i', i: 1}, nil
		}
		return sparkHashInput{kind: 'i', i: 0}, nil
	case int64:
		return sparkHashInput{kind: 'l', l: v}, nil
	case float64:
		if v == 0 {
			v = 0 // Spark hashes -0.0 as 0.0
		}
		if math.IsNaN(v) {
			v = math.Float64frombits(0x7ff8000000000000) // doubleToLongBits: one NaN
		}
		return sparkHashInput{kind: 'l', l: int64(math.Float64bits(v))}, nil
	case float32:
		if v == 0 {
			v = 0
		}
		bitsv := math.Float32bits(v)
		if v != v {
			bitsv = 0x7fc00000
		}
		return sparkHashInput{kind: 'i', i: int32(bitsv)}, nil
	case string:
		return sparkHashInput{kind: 'b', bytes: []byte(v)}, nil
	case []byte:
		return sparkHashInput{kind: 'b', bytes: v}, nil
	}
	return sparkHashInput{}, fmt.Errorf("duck: spark hash of %T is not supported", v)
}

func sparkMurmur(v any, seed int32) (int32, error) {
	if v == nil {
		return seed, nil // Spark skips nulls: the seed passes through
	}
	in, err := hashInputOf(v)
	if err != nil {
		return 0, err
	}
	s := uint32(seed)
	switch in.kind {
	case 'i':
		return int32(murmurInt(in.i, s)), nil
	case 'l':
		return int32(murmurLong(in.l, s)), nil
	}
	return int32(murmurBytes(in.bytes, s)), nil
}

func sparkXXH(v any, seed int64) (int64, error) {
	if v == nil {
		return seed, nil
	}
	in, err := hashInputOf(v)
	if err != nil {
		return 0, err
	}
	s := uint64(seed)
	switch in.kind {
	case 'i':
		return int64(xxhInt(in.i, s)), nil
	case 'l':
		return int64(xxhLong(in.l, s)), nil
	}
	return int64(xxhBytes(in.bytes, s)), nil
}

// JavaDoubleString is Java's Double.toString(v) (bits 64) or
// Float.toString (bits 32): the shortest digits that read back as v, in
// plain notation for 1e-3 ≤ |v| < 1e7 (at least one fraction digit), else
// as d.dddE±n; "NaN", "Infinity", "-Infinity".
func JavaDoubleString(v float64, bitSize int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	case v == 0:
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	a := math.Abs(v)
	if a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, bitSize)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'e', -1, bitSize) // d.ddde±XX
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// registerSparkFunctions registers the spark_* scalar functions on conn.
func registerSparkFunctions(conn *sql.Conn) error {
	ti := func(t duckdb.Type) duckdb.TypeInfo {
		info, err := duckdb.NewTypeInfo(t)
		if err != nil {
			panic(err) // primitive types always have a TypeInfo
		}
		return info
	}
	hashable := []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_BLOB, duckdb.TYPE_BOOLEAN, duckdb.TYPE_TINYINT,
		duckdb.TYPE_SMALLINT, duckdb.TYPE_INTEGER, duckdb.TYPE_BIGINT, duckdb.TYPE_FLOAT, duckdb.TYPE_DOUBLE,
		duckdb.TYPE_DATE, duckdb.TYPE_TIMESTAMP, duckdb.TYPE_TIMESTAMP_TZ}
	// hashValue turns DuckDB's Go value into Spark's hash input.
	hashValue := func(t duckdb.Type, v driver.Value) any {
		switch x := v.(type) {
		case time.Time:
			if t == duckdb.TYPE_DATE {
				return int32(x.Unix() / 86400)
			}
			return x.UnixMicro()
		}
		return v
	}
	var murmur, xxh []duckdb.ScalarFunc
	for _, t := range hashable {
		murmur = append(murmur, &scalarUDF{
			cfg: duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{ti(t), ti(duckdb.TYPE_INTEGER)},
				ResultTypeInfo: ti(duckdb.TYPE_INTEGER), SpecialNullHandling: true},
			fn: func(v []driver.Value) (any, error) {
				if v[1] == nil {
					return nil, nil
				}
				return sparkMurmur(hashValue(t, v[0]), v[1].(int32))
			}})
		xxh = append(xxh, &scalarUDF{
			cfg: duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{ti(t), ti(duckdb.TYPE_BIGINT)},
				ResultTypeInfo: ti(duckdb.TYPE_BIGINT), SpecialNullHandling: true},
			fn: func(v []driver.Value) (any, error) {
				if v[1] == nil {
					return nil, nil
				}
				return sparkXXH(hashValue(t, v[0]), v[1].(int64))
			}})
	}
	if err := duckdb.RegisterScalarUDFSet(conn, "spark_murmur3", murmur...); err != nil {
		return fmt.Errorf("duck: register spark_murmur3: %w", err)
	}
	if err := duckdb.RegisterScalarUDFSet(conn, "spark_xxhash64", xxh...); err != nil {
		return fmt.Errorf("duck: register spark_xxhash64: %w", err)
	}
	var crc []duckdb.ScalarFunc
	for _, t := range []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_BLOB} {
		crc = append(crc, &scalarUDF{
			cfg: duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{ti(t)}, ResultTypeInfo: ti(duckdb.TYPE_BIGINT)},
			fn: func(v []driver.Value) (any, error) {
				switch x := v[0].(type) {
				case string:
					return int64(crc32.ChecksumIEEE([]byte(x))), nil
				case []byte:
					return int64(crc32.ChecksumIEEE(x)), nil
				}
				return nil, fmt.Errorf("duck: crc32 of %T", v[0])
			}})
	}
	if err := duckdb.RegisterScalarUDFSet(conn, "spark_crc32", crc...); err != nil {
		return fmt.Errorf("duck: register spark_crc32: %w", err)
	}
	var str []duckdb.ScalarFunc
	for _, t := range []duckdb.Type{duckdb.TYPE_DOUBLE, duckdb.TYPE_FLOAT} {
		str = append(str, &scalarUDF{
			cfg: duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{ti(t)}, ResultTypeInfo: ti(duckdb.TYPE_VARCHAR)},
			fn: func(v []driver.Value) (any, error) {
				switch x := v[0].(type) {
				case float64:
					return JavaDoubleString(x, 64), nil
				case float32:
					return JavaDoubleString(float64(x), 32), nil
				}
				return nil, fmt.Errorf("duck: double text of %T", v[0])
			}})
	}
	if err := duckdb.RegisterScalarUDFSet(conn, "spark_double_string", str...); err != nil {
		return fmt.Errorf("duck: register spark_double_string: %w", err)
	}
	if err := duckdb.RegisterScalarUDF(conn, "spark_refuse", refuseUDF{}); err != nil {
		return fmt.Errorf("duck: register spark_refuse: %w", err)
	}
	if err := duckdb.RegisterScalarUDF(conn, "spark_arith_check", arithCheckUDF{}); err != nil {
		return fmt.Errorf("duck: register spark_arith_check: %w", err)
	}
	// Functions over any type: (value, typeof(value)[, …]).
	anyFn := func(name string, result duckdb.Type, nulls bool, fn func([]driver.Value) (any, error)) error {
		u := &scalarUDF{cfg: duckdb.ScalarFuncConfig{VariadicTypeInfo: ti(duckdb.TYPE_ANY),
			ResultTypeInfo: ti(result), SpecialNullHandling: nulls}, fn: fn}
		if err := duckdb.RegisterScalarUDF(conn, name, u); err != nil {
			return fmt.Errorf("duck: register %s: %w", name, err)
		}
		return nil
	}
	typeName := func(v []driver.Value) string {
		if len(v) > 1 {
			if s, ok := v[1].(string); ok {
				return s
			}
		}
		return ""
	}
	for _, c := range []struct {
		name string
		t    duckdb.Type
		bits int
	}{{"spark_to_tinyint", duckdb.TYPE_TINYINT, 8}, {"spark_to_smallint", duckdb.TYPE_SMALLINT, 16},
		{"spark_to_int", duckdb.TYPE_INTEGER, 32}, {"spark_to_bigint", duckdb.TYPE_BIGINT, 64}} {
		if err := anyFn(c.name, c.t, false, func(v []driver.Value) (any, error) {
			x, ok := sparkToIntegral(v[0], typeName(v), c.bits)
			if !ok {
				return nil, nil
			}
			switch c.bits {
			case 8:
				return int8(x), nil
			case 16:
				return int16(x), nil
			case 32:
				return int32(x), nil
			}
			return x, nil
		}); err != nil {
			return err
		}
	}
	// Spark casts a number to a timestamp as seconds since the epoch:
	// TimeUnit.SECONDS.toMicros for integers and (d * 1e6).toLong for
	// doubles (NaN and ±Infinity NULL), both saturating at Long.MIN_VALUE
	// and Long.MAX_VALUE µs. Those two lie outside what duckdb-go can pass
	// as a time.Time; they are DuckDB's ±infinity, which the translation
	// gives from spark_timestamp_saturates (and fromDuck reads -infinity as
	// Long.MIN_VALUE µs).
	if err := anyFn("spark_to_timestamp", duckdb.TYPE_TIMESTAMP, false, func(v []driver.Value) (any, error) {
		us, sat, ok := sparkSecondsToMicros(v[0])
		if !ok || sat != 0 {
			return nil, nil
		}
		return time.UnixMicro(us).UTC(), nil
	}); err != nil {
		return err
	}
	if err := anyFn("spark_timestamp_saturates", duckdb.TYPE_INTEGER, false, func(v []driver.Value) (any, error) {
		if _, sat, ok := sparkSecondsToMicros(v[0]); ok && sat != 0 {
			return int32(sat), nil
		}
		return nil, nil
	}); err != nil {
		return err
	}
	if err := anyFn("spark_to_double", duckdb.TYPE_DOUBLE, false, func(v []driver.Value) (any, error) {
		if x, ok := sparkToDouble(v[0], typeName(v)); ok {
			return x, nil
		}
		return nil, nil
	}); err != nil {
		return err
	}
	if err := anyFn("spark_to_float", duckdb.TYPE_FLOAT, false, func(v []driver.Value) (any, error) {
		if x, ok := sparkToDouble(v[0], typeName(v)); ok {
			return float32(x), nil
		}
		return nil, nil
	}); err != nil {
		return err
	}
	// Spark's text of a map, array or struct ({k -> v}, [a, b], {1, x})
	// is not translated: refused when the call is planned (add-index),
	// not when a row is read.
	toString := &scalarUDF{cfg: duckdb.ScalarFuncConfig{VariadicTypeInfo: ti(duckdb.TYPE_ANY),
		ResultTypeInfo: ti(duckdb.TYPE_VARCHAR)},
		fn: func(v []driver.Value) (any, error) {
			if x, ok := sparkToString(v[0], typeName(v)); ok {
				return x, nil
			}
			return nil, fmt.Errorf("duck: Spark's cast of %s to string is not supported", typeName(v))
		},
		bind: func(ctx context.Context, args []duckdb.ScalarUDFArg) (context.Context, error) {
			if len(args) < 2 || !args[1].Foldable {
				return ctx, nil
			}
			if typ, _ := args[1].Value.(string); nestedType(typ) {
				return ctx, fmt.Errorf("%scast to string\x1fof a map, array or struct (%s): Spark's text of it ({k -> v}, [a, b]) is not translated\x1f", unsupportedMarker, typ)
			}
			return ctx, nil
		}}
	if err := duckdb.RegisterScalarUDF(conn, "spark_to_string", toString); err != nil {
		return fmt.Errorf("duck: register spark_to_string: %w", err)
	}
	// spark_size(x, typeof(x)) is Spark's size of an array or a map (-1
	// for NULL, spark.sql.legacy.sizeOfNull): DuckDB has len for lists and
	// cardinality for maps, and the translation does not know which it has.
	if err := anyFn("spark_size", duckdb.TYPE_INTEGER, true, func(v []driver.Value) (any, error) {
		switch x := v[0].(type) {
		case nil:
			return int32(-1), nil
		case []any:
			return int32(len(x)), nil
		case duckdb.OrderedMap:
			return int32(x.Len()), nil
		case *duckdb.OrderedMap:
			return int32(x.Len()), nil
		case duckdb.Map:
			return int32(len(x)), nil
		}
		return nil, fmt.Errorf("duck: size of %s: not an array or a map", typeName(v))
	}); err != nil {
		return err
	}
	// spark_concat_ws(sep, x1, typeof(x1), x2, typeof(x2), …): Spark's
	// concat_ws skips NULL arguments and NULL array elements and flattens
	// arrays; a NULL separator gives NULL.
	if err := anyFn("spark_concat_ws", duckdb.TYPE_VARCHAR, true, func(v []driver.Value) (any, error) {
		sep, ok := v[0].(string)
		if !ok {
			return nil, nil
		}
		var parts []string
		for i := 1; i+1 < len(v); i += 2 {
			switch x := v[i].(type) {
			case nil:
			case []any:
				for _, e := range x {
					if s, ok := e.(string); ok {
						parts = append(parts, s)
					}
				}
			case string:
				parts = append(parts, x)
			default:
				return nil, fmt.Errorf("duck: concat_ws of %s (Spark accepts strings and arrays of strings)", v[i+1])
			}
		}
		return strings.Join(parts, sep), nil
	}); err != nil {
		return err
	}
	for name, f := range map[string]func(string) string{"spark_upper": sparkUpper, "spark_lower": sparkLower} {
		if err := duckdb.RegisterScalarUDF(conn, name, &scalarUDF{
			cfg: duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{ti(duckdb.TYPE_VARCHAR)}, ResultTypeInfo: ti(duckdb.TYPE_VARCHAR)},
			fn:  func(v []driver.Value) (any, error) { return f(v[0].(string)), nil }}); err != nil {
			return fmt.Errorf("duck: register %s: %w", name, err)
		}
	}
	var sha []duckdb.ScalarFunc
	for _, t := range []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_BLOB} {
		sha = append(sha, &scalarUDF{
			cfg: duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{ti(t), ti(duckdb.TYPE_INTEGER)}, ResultTypeInfo: ti(duckdb.TYPE_VARCHAR)},
			fn: func(v []driver.Value) (any, error) {
				var b []byte
				switch x := v[0].(type) {
				case string:
					b = []byte(x)
				case []byte:
					b = x
				}
				if h, ok := sparkSHA2(b, v[1].(int32)); ok {
					return h, nil
				}
				return nil, nil
			}})
	}
	if err := duckdb.RegisterScalarUDFSet(conn, "spark_sha2", sha...); err != nil {
		return fmt.Errorf("duck: register spark_sha2: %w", err)
	}
	for _, halfEven := range []bool{false, true} {
		name := "spark_round"
		if halfEven {
			name = "spark_bround"
		}
		var fs []duckdb.ScalarFunc
		for _, t := range []duckdb.Type{duckdb.TYPE_DOUBLE, duckdb.TYPE_BIGINT, duckdb.TYPE_INTEGER} {
			fs = append(fs, &scalarUDF{
				cfg: duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{ti(t), ti(duckdb.TYPE_INTEGER)}, ResultTypeInfo: ti(t)},
				fn: func(v []driver.Value) (any, error) {
					scale := v[1].(int32)
					switch x := v[0].(type) {
					case float64:
						return sparkRoundDouble(x, scale, halfEven), nil
					case int64:
						return sparkRoundLong(x, scale, halfEven), nil
					case int32:
						return int32(sparkRoundLong(int64(x), scale, halfEven)), nil
					}
					return nil, fmt.Errorf("duck: round of %T", v[0])
				}})
		}
		if err := duckdb.RegisterScalarUDFSet(conn, name, fs...); err != nil {
			return fmt.Errorf("duck: register %s: %w", name, err)
		}
	}
	return nil
}

// scalarUDF is one overload of a row-at-a-time scalar function.
type scalarUDF struct {
	cfg duckdb.ScalarFuncConfig
	fn  func([]driver.Value) (any, error)
	// bind, when set, checks the arguments when DuckDB plans the call.
	bind func(context.Context, []duckdb.ScalarUDFArg) (context.Context, error)
}

func (u *scalarUDF) Config() duckdb.ScalarFuncConfig { return u.cfg }
func (u *scalarUDF) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: u.fn, ScalarBinder: u.bind}
}

// refuseUDF is spark_refuse(function, reason, typeof(x), prefix): when the
// folded type name of x starts with prefix (DECIMAL, MAP), binding fails
// with the refusal of function, so the statement is refused when DuckDB
// plans it (add-index plans every computed expression over the stored
// schema, before anything is registered), not when a row is read. It
// returns NULL otherwise.
type refuseUDF struct{}

// unsupportedMarker opens a refusal's text inside DuckDB's bind error, so
// that sqlErr can turn it back into an *UnsupportedFunctionError.
const unsupportedMarker = "ariadne-unsupported-function:"

func (refuseUDF) Config() duckdb.ScalarFuncConfig {
	v, _ := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	b, _ := duckdb.NewTypeInfo(duckdb.TYPE_BOOLEAN)
	return duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{v, v, v, v}, ResultTypeInfo: b}
}

func (refuseUDF) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{
		RowExecutor: func([]driver.Value) (any, error) { return nil, nil },
		ScalarBinder: func(ctx context.Context, args []duckdb.ScalarUDFArg) (context.Context, error) {
			if len(args) != 4 || !args[2].Foldable || !args[3].Foldable {
				return ctx, nil
			}
			typ, _ := args[2].Value.(string)
			prefix, _ := args[3].Value.(string)
			if prefix != "" && strings.HasPrefix(typ, prefix) {
				fn, _ := args[0].Value.(string)
				why, _ := args[1].Value.(string)
				return ctx, fmt.Errorf("%s%s\x1f%s\x1f", unsupportedMarker, fn, why)
			}
			return ctx, nil
		},
	}
}

// refuseType wraps the translation e of a call to fn: planning fails with
// the refusal (fn, why) when the DuckDB type of x starts with prefix.
func refuseType(fn, why, x, prefix, e string) string {
	return "(CASE WHEN spark_refuse(" + String(fn) + ", " + String(why) + ", typeof(" + x + "), " + String(prefix) + ") THEN NULL ELSE " + e + " END)"
}

// nestedType reports whether a DuckDB type name (typeof) is a list, map,
// struct or union.
func nestedType(typ string) bool {
	return strings.HasSuffix(typ, "]") || strings.HasPrefix(typ, "MAP") || strings.HasPrefix(typ, "STRUCT") || strings.HasPrefix(typ, "UNION")
}

// sparkSecondsToMicros is Spark's cast of a number of seconds to a
// timestamp's microseconds; sat is +1 or -1 when it saturates at
// Long.MAX_VALUE or Long.MIN_VALUE, ok false when the value is NULL in
// Spark (NaN, ±Infinity, not a number).
func sparkSecondsToMicros(v any) (us int64, sat int, ok bool) {
	switch x := v.(type) {
	case int8, int16, int32, int64:
		n, _ := sparkToIntegral(x, "", 64)
		switch {
		case n > math.MaxInt64/1_000_000:
			return math.MaxInt64, 1, true
		case n < math.MinInt64/1_000_000:
			return math.MinInt64, -1, true
		}
		return n * 1_000_000, 0, true
	case float32, float64:
		d, _ := sparkToDouble(x, "")
		m := d * 1e6
		switch {
		case math.IsNaN(d) || math.IsInf(d, 0):
			return 0, 0, false
		case m >= math.MaxInt64:
			return math.MaxInt64, 1, true
		case m <= math.MinInt64:
			return math.MinInt64, -1, true
		}
		return int64(m), 0, true
	}
	return 0, 0, false
}
