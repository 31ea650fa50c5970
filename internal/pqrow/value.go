package pqrow

import (
	"fmt"
	"math/big"
	"strings"
	"time"
)

// Row is one row of a table: values aligned with the fields of a top-level
// *schema.Struct, nil meaning null.
//
// The Go value of each Spark type:
//
//	string        string
//	binary        []byte
//	boolean       bool
//	byte          int8
//	short         int16
//	integer       int32
//	long          int64
//	float         float32
//	double        float64
//	date          time.Time (UTC midnight)
//	timestamp     time.Time (UTC, microsecond precision)
//	timestamp_ntz time.Time (wall clock in the UTC location)
//	decimal(p,s)  Decimal
//	array<T>      []any
//	struct<...>   []any (positional, aligned with the struct's fields)
//	map<K,V>      []KV (in file order)
//
// variant and other types are refused with an error.
type Row = []any

// KV is one entry of a map value.
type KV struct {
	Key   any
	Value any
}

// Decimal is a decimal(p,s) value: Unscaled × 10^-Scale, as Java's
// BigDecimal. Unscaled is never nil in values produced by this package.
type Decimal struct {
	Unscaled *big.Int
	Scale    int32
}

// NewDecimal returns the decimal unscaled × 10^-scale.
func NewDecimal(unscaled int64, scale int32) Decimal {
	return Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
}

// ParseDecimal parses plain decimal text ("-12.50", "3", "1e-3" is refused)
// into a Decimal with exactly the given scale. It fails if the text has more
// fraction digits than scale (no rounding).
func ParseDecimal(s string, scale int32) (Decimal, error) {
	orig := s
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return Decimal{}, fmt.Errorf("pqrow: invalid decimal %q", orig)
	}
	frac = strings.TrimRight(frac, "0")
	if int32(len(frac)) > scale {
		return Decimal{}, fmt.Errorf("pqrow: decimal %q has more than %d fraction digits", orig, scale)
	}
	digits := intPart + frac + strings.Repeat("0", int(scale)-len(frac))
	for _, c := range digits {
		if c < '0' || c > '9' {
			return Decimal{}, fmt.Errorf("pqrow: invalid decimal %q", orig)
		}
	}
	if digits == "" {
		digits = "0"
	}
	u, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return Decimal{}, fmt.Errorf("pqrow: invalid decimal %q", orig)
	}
	if neg {
		u.Neg(u)
	}
	return Decimal{Unscaled: u, Scale: scale}, nil
}

func (d Decimal) unscaled() *big.Int {
	if d.Unscaled == nil {
		return new(big.Int)
	}
	return d.Unscaled
}

// String renders d as Java's BigDecimal.toString does: plain notation
// ("1.50", "-0.001", "42") unless the scale is negative or the adjusted
// exponent is below -6, where it uses scientific notation ("1.5E-7").
func (d Decimal) String() string {
	u := d.unscaled()
	digits := new(big.Int).Abs(u).String()
	sign := ""
	if u.Sign() < 0 {
		sign = "-"
	}
	scale := int64(d.Scale)
	adjusted := -scale + int64(len(digits)-1)
	if scale >= 0 && adjusted >= -6 {
		return sign + plain(digits, scale)
	}
	var b strings.Builder
	b.WriteString(sign)
	b.WriteString(digits[:1])
	if len(digits) > 1 {
		b.WriteByte('.')
		b.WriteString(digits[1:])
	}
	b.WriteByte('E')
	if adjusted >= 0 {
		b.WriteByte('+')
	}
	fmt.Fprintf(&b, "%d", adjusted)
	return b.String()
}

// PlainString renders d without an exponent (Java's toPlainString), keeping
// exactly Scale fraction digits when Scale > 0.
func (d Decimal) PlainString() string {
	u := d.unscaled()
	digits := new(big.Int).Abs(u).String()
	sign := ""
	if u.Sign() < 0 {
		sign = "-"
	}
	if d.Scale < 0 {
		if u.Sign() == 0 {
			return "0"
		}
		return sign + digits + strings.Repeat("0", int(-d.Scale))
	}
	return sign + plain(digits, int64(d.Scale))
}

// plain places a decimal point scale digits from the right of digits.
func plain(digits string, scale int64) string {
	if scale == 0 {
		return digits
	}
	if int64(len(digits)) <= scale {
		return "0." + strings.Repeat("0", int(scale)-len(digits)) + digits
	}
	p := len(digits) - int(scale)
	return digits[:p] + "." + digits[p:]
}

// Cmp compares two decimals numerically (scales may differ): -1, 0 or +1.
func (d Decimal) Cmp(o Decimal) int {
	a, b := d.unscaled(), o.unscaled()
	switch {
	case d.Scale == o.Scale:
		return a.Cmp(b)
	case d.Scale < o.Scale:
		a = new(big.Int).Mul(a, pow10(int(o.Scale-d.Scale)))
	default:
		b = new(big.Int).Mul(b, pow10(int(d.Scale-o.Scale)))
	}
	return a.Cmp(b)
}

// Rescale returns d with the given scale, failing if that would drop
// non-zero digits.
func (d Decimal) Rescale(scale int32) (Decimal, error) {
	u := d.unscaled()
	switch {
	case scale == d.Scale:
		return Decimal{Unscaled: new(big.Int).Set(u), Scale: scale}, nil
	case scale > d.Scale:
		return Decimal{Unscaled: new(big.Int).Mul(u, pow10(int(scale-d.Scale))), Scale: scale}, nil
	}
	q, r := new(big.Int).QuoRem(u, pow10(int(d.Scale-scale)), new(big.Int))
	if r.Sign() != 0 {
		return Decimal{}, fmt.Errorf("pqrow: decimal %s does not fit scale %d", d, scale)
	}
	return Decimal{Unscaled: q, Scale: scale}, nil
}

// Precision returns the number of decimal digits of the unscaled value (1
// for zero).
func (d Decimal) Precision() int {
	u := d.unscaled()
	if u.Sign() == 0 {
		return 1
	}
	return len(new(big.Int).Abs(u).String())
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// Date returns the date value (UTC midnight) for a calendar day.
func Date(year int, month time.Month, day int) time.Time {
	return time.Date(year, month, day, 0, 0, 0, 0, time.UTC)
}

// DaysSinceEpoch returns the number of days from 1970-01-01 to the date of t
// (taken in t's location), as Parquet's DATE stores it.
func DaysSinceEpoch(t time.Time) int32 {
	y, m, d := t.Date()
	u := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()
	return int32(floorDiv(u, secondsPerDay))
}

// DateFromDays returns the date value for days since 1970-01-01.
func DateFromDays(days int32) time.Time {
	return time.Unix(int64(days)*secondsPerDay, 0).UTC()
}

// secondsPerDay = 24 h × 3600 s.
const secondsPerDay = 24 * 3600

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// Equal reports whether two row values are equal: deep for arrays, structs
// and maps, numeric for decimals, instant for times, bitwise-identical
// semantics of == for floats (so NaN != NaN).
func Equal(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case []any:
		bb, ok := b.([]any)
		if !ok || len(a) != len(bb) {
			return false
		}
		for i := range a {
			if !Equal(a[i], bb[i]) {
				return false
			}
		}
		return true
	case []KV:
		bb, ok := b.([]KV)
		if !ok || len(a) != len(bb) {
			return false
		}
		for i := range a {
			if !Equal(a[i].Key, bb[i].Key) || !Equal(a[i].Value, bb[i].Value) {
				return false
			}
		}
		return true
	case []byte:
		bb, ok := b.([]byte)
		return ok && string(a) == string(bb)
	case Decimal:
		bb, ok := b.(Decimal)
		return ok && a.Cmp(bb) == 0
	case time.Time:
		bb, ok := b.(time.Time)
		return ok && a.Equal(bb)
	}
	return a == b
}
