package duck

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// Spark's casts, computed in Go from the value and its DuckDB type name
// (typeof), so that one registered function serves every source type
// (DuckDB binds a function to argument types before it knows which branch
// of a CASE applies, so no SQL expression can dispatch on a type). The
// rules are Spark 3.5's with spark.sql.ansi.enabled=false: a failed cast is
// NULL, never an error; fractions are truncated toward zero; doubles out of
// an integer's range saturate (to the int range, then wrap to short/byte);
// integers wrap; timestamps are seconds since the epoch (rounded down).

// sparkTrim drops leading and trailing white space and control characters
// (≤ U+0020), as Spark's UTF8String.trimAll does before parsing a number.
func sparkTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// parseSparkLong parses s as Spark's UTF8String.toLong (allowing a
// fraction, which is dropped) within [lo, hi]; ok false means NULL.
func parseSparkLong(s string, lo, hi int64) (int64, bool) {
	s = sparkTrim(s)
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	ip, frac, hasDot := strings.Cut(s, ".")
	if ip == "" && (!hasDot || frac == "") {
		return 0, false
	}
	for _, c := range frac {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	var v big.Int
	if ip != "" {
		for _, c := range ip {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		v.SetString(ip, 10)
	}
	if neg {
		v.Neg(&v)
	}
	if !v.IsInt64() || v.Int64() < lo || v.Int64() > hi {
		return 0, false
	}
	return v.Int64(), true
}

// parseSparkDouble parses s as Spark's cast of a string to double: Java's
// Double.parseDouble after trimming (a trailing d/f type suffix allowed),
// plus the special words inf, infinity and nan in any case.
func parseSparkDouble(s string) (float64, bool) {
	s = sparkTrim(s)
	switch strings.ToLower(strings.TrimPrefix(s, "+")) {
	case "inf", "infinity":
		return math.Inf(1), true
	case "-inf", "-infinity":
		return math.Inf(-1), true
	case "nan":
		return math.NaN(), true
	}
	if n := len(s); n > 1 && strings.ContainsRune("dDfF", rune(s[n-1])) {
		s = s[:n-1]
	}
	if s == "" || strings.ContainsAny(s, "_xXpP") || strings.EqualFold(s, "+nan") || strings.EqualFold(s, "-nan") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true // ±Inf or 0, as Java
		}
		return 0, false
	}
	return f, true
}

// javaDoubleToLong is Java's (long) d: NaN is 0, out of range saturates.
func javaDoubleToLong(d float64) int64 {
	switch {
	case math.IsNaN(d):
		return 0
	case d >= math.MaxInt64:
		return math.MaxInt64
	case d <= math.MinInt64:
		return math.MinInt64
	}
	return int64(d)
}

// javaDoubleToInt is Java's (int) d.
func javaDoubleToInt(d float64) int32 {
	switch {
	case math.IsNaN(d):
		return 0
	case d >= math.MaxInt32:
		return math.MaxInt32
	case d <= math.MinInt32:
		return math.MinInt32
	}
	return int32(d)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// sparkToIntegral is Spark's cast of v (DuckDB type typ) to an integral
// type of the given bits (8, 16, 32, 64); ok false means NULL.
func sparkToIntegral(v any, typ string, bits int) (int64, bool) {
	lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
	wrap := func(x int64) int64 {
		switch bits {
		case 8:
			return int64(int8(x))
		case 16:
			return int64(int16(x))
		case 32:
			return int64(int32(x))
		}
		return x
	}
	switch x := v.(type) {
	case string:
		return parseSparkLong(x, lo, hi)
	case []byte:
		return parseSparkLong(string(x), lo, hi)
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int8:
		return wrap(int64(x)), true
	case int16:
		return wrap(int64(x)), true
	case int32:
		return wrap(int64(x)), true
	case int64:
		return wrap(x), true
	case uint8, uint16, uint32, uint64:
		u, _ := strconv.ParseUint(fmt.Sprint(x), 10, 64)
		return wrap(int64(u)), true
	case float32:
		if bits == 64 {
			return javaDoubleToLong(float64(x)), true
		}
		return wrap(int64(javaDoubleToInt(float64(x)))), true
	case float64:
		if bits == 64 {
			return javaDoubleToLong(x), true
		}
		return wrap(int64(javaDoubleToInt(x))), true
	case duckdb.Decimal:
		q := new(big.Int).Quo(x.Value, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil))
		if !q.IsInt64() || q.Int64() < lo || q.Int64() > hi {
			return 0, false
		}
		return q.Int64(), true
	case time.Time:
		if typ == "DATE" {
			return 0, false // Spark: cast(date as int) is NULL
		}
		return wrap(floorDiv(x.UnixMicro(), 1_000_000)), true
	}
	return 0, false
}

// sparkToDouble is Spark's cast of v to double; ok false means NULL.
func sparkToDouble(v any, typ string) (float64, bool) {
	switch x := v.(type) {
	case string:
		return parseSparkDouble(x)
	case []byte:
		return parseSparkDouble(string(x))
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case duckdb.Decimal:
		f, _ := new(big.Rat).SetFrac(x.Value, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil)).Float64()
		return f, true
	case time.Time:
		if typ == "DATE" {
			return 0, false
		}
		return float64(x.UnixMicro()) / 1e6, true
	}
	return 0, false
}

// sparkToString is Spark's cast of v to string; ok false means NULL.
func sparkToString(v any, typ string) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	case bool:
		return strconv.FormatBool(x), true
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x), true
	case float32:
		return JavaDoubleString(float64(x), 32), true
	case float64:
		return JavaDoubleString(x, 64), true
	case duckdb.Decimal:
		return decimalString(x.Value, int(x.Scale)), true
	case *big.Int:
		return x.String(), true
	case time.Time:
		x = x.UTC()
		if typ == "DATE" {
			return x.Format("2006-01-02"), true
		}
		s := x.Format("2006-01-02 15:04:05")
		if us := x.Nanosecond() / 1000; us != 0 {
			s += strings.TrimRight(fmt.Sprintf(".%06d", us), "0")
		}
		return s, true
	}
	return "", false
}

func decimalString(u *big.Int, scale int) string {
	s := new(big.Int).Abs(u).String()
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if u.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// sparkRoundDouble is Spark's round (HALF_UP) or bround (HALF_EVEN) of a
// double to scale digits: Spark rounds the shortest decimal text of the
// double (Scala's BigDecimal(d)), not its binary value, so round(1.005, 2)
// is 1.01.
func sparkRoundDouble(d float64, scale int32, halfEven bool) float64 {
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return d
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(d, 'g', -1, 64))
	if !ok {
		return d
	}
	out, _ := roundRat(r, scale, halfEven).Float64()
	if out == 0 && math.Signbit(d) {
		return 0 // Spark's BigDecimal has no negative zero
	}
	return out
}

// roundRat rounds r to scale decimal digits, ties away from zero
// (HALF_UP) or to even (HALF_EVEN).
func roundRat(r *big.Rat, scale int32, halfEven bool) *big.Rat {
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(scale))), nil))
	x := new(big.Rat).Set(r)
	if scale >= 0 {
		x.Mul(x, p)
	} else {
		x.Quo(x, p)
	}
	neg := x.Sign() < 0
	x.Abs(x)
	q, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	twice := new(big.Int).Mul(m, big.NewInt(2))
	switch c := twice.Cmp(x.Denom()); {
	case c > 0, c == 0 && (!halfEven || q.Bit(0) == 1):
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	out := new(big.Rat).SetInt(q)
	if scale >= 0 {
		return out.Quo(out, p)
	}
	return out.Mul(out, p)
}

func abs32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}

// sparkRoundLong is Spark's round/bround of an integral value: a
// negative scale rounds to tens, hundreds, …; the result wraps to the
// type's width as Spark's does (round(2147483647, -1) is -2147483646).
func sparkRoundLong(v int64, scale int32, halfEven bool) int64 {
	if scale >= 0 {
		return v
	}
	q := roundRat(new(big.Rat).SetInt64(v), scale, halfEven).Num()
	// two's complement wrap: the low 64 bits of q
	return int64(new(big.Int).Mod(q, new(big.Int).Lsh(big.NewInt(1), 64)).Uint64())
}

// Java's String.toUpperCase/toLowerCase apply Unicode's full case
// mapping (ß → SS, İ → i̇), which DuckDB's upper and lower do not.
func sparkUpper(s string) string {
	if isASCII(s) {
		return strings.ToUpper(s)
	}
	return cases.Upper(language.Und).String(s)
}

func sparkLower(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	return cases.Lower(language.Und).String(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// sparkSHA2 is Spark's sha2(s, bits): hex of SHA-224/256/384/512 (0 means
// 256); any other bit length is NULL.
func sparkSHA2(b []byte, bits int32) (string, bool) {
	switch bits {
	case 0, 256:
		h := sha256.Sum256(b)
		return hex.EncodeToString(h[:]), true
	case 224:
		h := sha256.Sum224(b)
		return hex.EncodeToString(h[:]), true
	case 384:
		h := sha512.Sum384(b)
		return hex.EncodeToString(h[:]), true
	case 512:
		h := sha512.Sum512(b)
		return hex.EncodeToString(h[:]), true
	}
	return "", false
}
