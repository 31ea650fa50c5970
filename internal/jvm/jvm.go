// Package jvm renders values the way the JVM's toString methods do, for the
// places where Ariadne must agree byte for byte with the Spark library:
// bloom filter keys (spec §3.5: values are hashed as their JVM string) and
// Gson's rendering of doubles in metadata.json.
package jvm

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Double renders f as Java's Double.toString.
func Double(f float64) string { return format(f, 64) }

// Float renders f as Java's Float.toString (shortest digits that
// round-trip through float32).
func Float(f float32) string { return format(float64(f), 32) }

// format implements Double/Float.toString:
//   - NaN, Infinity, -Infinity; zero as "0.0" or "-0.0";
//   - 10⁻³ ≤ |f| < 10⁷: plain decimal with at least one fraction digit;
//   - otherwise computerized scientific notation ("1.0E-4", "1.2345E10").
//
// Digits are the shortest that round-trip (JDK 19+; older JDKs occasionally
// printed one more digit, which parses back to the same value).
func format(f float64, bitSize int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	sci := strconv.FormatFloat(f, 'e', -1, bitSize)
	mant, expText, _ := strings.Cut(sci, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expText)
	if len(digits) == 1 {
		// Java also considers two-digit decimals and takes the closest one
		// that reads back as f ("4.9E-324", not "5.0E-324").
		two := strconv.FormatFloat(f, 'e', 1, bitSize)
		if back, err := strconv.ParseFloat(two, bitSize); err == nil && back == f {
			m2, e2, _ := strings.Cut(two, "e")
			if d2 := strings.Replace(m2, ".", "", 1); d2[1] != '0' {
				digits = d2
				exp, _ = strconv.Atoi(e2)
			}
		}
	}
	if f >= 1e-3 && f < 1e7 {
		var intPart, frac string
		if exp >= 0 {
			if len(digits) <= exp+1 {
				intPart = digits + strings.Repeat("0", exp+1-len(digits))
			} else {
				intPart, frac = digits[:exp+1], digits[exp+1:]
			}
		} else {
			intPart, frac = "0", strings.Repeat("0", -exp-1)+digits
		}
		if frac == "" {
			frac = "0"
		}
		return sign + intPart + "." + frac
	}
	frac := digits[1:]
	if frac == "" {
		frac = "0"
	}
	return sign + digits[:1] + "." + frac + "E" + strconv.Itoa(exp)
}

// BigDecimal renders unscaled × 10^-scale as java.math.BigDecimal.toString:
// plain notation when scale ≥ 0 and the adjusted exponent ≥ −6 ("1.50",
// "0.000001"), scientific otherwise ("1E-7", "1.5E+3" for negative scales).
func BigDecimal(unscaled *big.Int, scale int32) string {
	s := new(big.Int).Abs(unscaled).String()
	sign := ""
	if unscaled.Sign() < 0 {
		sign = "-"
	}
	adjusted := -int64(scale) + int64(len(s)) - 1
	if scale >= 0 && adjusted >= -6 {
		if scale == 0 {
			return sign + s
		}
		if int(scale) >= len(s) {
			return sign + "0." + strings.Repeat("0", int(scale)-len(s)) + s
		}
		return sign + s[:len(s)-int(scale)] + "." + s[len(s)-int(scale):]
	}
	out := s[:1]
	if len(s) > 1 {
		out += "." + s[1:]
	}
	out += "E"
	if adjusted >= 0 {
		out += "+"
	}
	return sign + out + strconv.FormatInt(adjusted, 10)
}

// Timestamp renders t as java.sql.Timestamp.toString in loc:
// "yyyy-mm-dd hh:mm:ss.f…" with the fraction's trailing zeros removed but at
// least one digit ("2024-01-15 10:00:00.0", "… 10:00:00.123").
func Timestamp(t time.Time, loc *time.Location) string {
	t = t.In(loc)
	frac := "0"
	if ns := t.Nanosecond(); ns != 0 {
		frac = strings.TrimRight(strconv.Itoa(1_000_000_000 + ns)[1:], "0")
	}
	return t.Format("2006-01-02 15:04:05") + "." + frac
}

// Date renders a date as java.sql.Date.toString ("yyyy-mm-dd").
func Date(t time.Time) string { return t.Format("2006-01-02") }
