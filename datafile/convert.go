package datafile

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// textConv converts one field's text to its value in the pqrow model.
type textConv func(s string) (any, error)

// textConverter returns the converter of a primitive or decimal type from
// text, as Spark's CSV reader converts (UnivocityParser.makeConverter).
// Complex types have no text form: ErrUnsupported.
func textConverter(t schema.Type, o *options) (textConv, error) {
	tp := timeParsers{o}
	switch t := t.(type) {
	case *schema.Decimal:
		return func(s string) (any, error) { return parseJavaDecimal(strings.ReplaceAll(s, ",", ""), t) }, nil
	case *schema.Primitive:
		switch t.Name {
		case "string":
			return func(s string) (any, error) { return s, nil }, nil
		case "binary":
			return func(s string) (any, error) { return []byte(s), nil }, nil
		case "boolean":
			return func(s string) (any, error) {
				switch {
				case strings.EqualFold(s, "true"):
					return true, nil
				case strings.EqualFold(s, "false"):
					return false, nil
				}
				return nil, fmt.Errorf("not a boolean: %q", s)
			}, nil
		case "byte", "short", "integer", "long":
			bits := map[string]int{"byte": 8, "short": 16, "integer": 32, "long": 64}[t.Name]
			return func(s string) (any, error) { return parseJavaInt(s, bits) }, nil
		case "float", "double":
			single := t.Name == "float"
			return func(s string) (any, error) {
				var f float64
				switch s {
				case o.nanValue:
					f = math.NaN()
				case o.positiveInf:
					f = math.Inf(1)
				case o.negativeInf:
					f = math.Inf(-1)
				default:
					var err error
					if f, err = parseJavaDouble(s, single); err != nil {
						return nil, err
					}
				}
				if single {
					return float32(f), nil
				}
				return f, nil
			}, nil
		case "date":
			return func(s string) (any, error) { return tp.date(s) }, nil
		case "timestamp":
			return func(s string) (any, error) { return tp.timestamp(s) }, nil
		case "timestamp_ntz":
			return func(s string) (any, error) { return tp.timestampNTZ(s) }, nil
		}
	}
	return nil, fmt.Errorf("%w: type %s", ErrUnsupported, t)
}

// parseJavaInt parses like Java's Integer.parseInt / Long.parseLong: an
// optional sign and decimal digits, nothing else (no spaces), in range.
func parseJavaInt(s string, bits int) (any, error) {
	if strings.HasPrefix(s, "+") && len(s) > 1 && s[1] != '-' && s[1] != '+' {
		s = s[1:]
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil || strings.Contains(s, "_") {
		return nil, fmt.Errorf("not a %d-bit integer: %q", bits, s)
	}
	switch bits {
	case 8:
		return int8(n), nil
	case 16:
		return int16(n), nil
	case 32:
		return int32(n), nil
	}
	return n, nil
}

// parseJavaDouble parses like Java's Double.parseDouble: surrounding
// whitespace is trimmed, a trailing d/D/f/F type suffix is allowed, and the
// only words are "NaN" and "Infinity" (with an optional sign). A float
// column rounds the double to float32 as Java's toFloat does.
func parseJavaDouble(s string, single bool) (float64, error) {
	t := strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	body := strings.TrimLeft(t, "+-")
	if len(t)-len(body) > 1 {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	switch body {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		if strings.HasPrefix(t, "-") {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	case "":
		return 0, fmt.Errorf("not a number: %q", s)
	}
	if c := t[len(t)-1]; c == 'd' || c == 'D' || c == 'f' || c == 'F' {
		t = t[:len(t)-1]
	}
	for _, c := range t {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return 0, fmt.Errorf("not a number: %q", s)
		}
	}
	bitSize := 64
	if single {
		bitSize = 32
	}
	f, err := strconv.ParseFloat(t, bitSize)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	return f, nil
}

// parseJavaDecimal parses java.math.BigDecimal text ([sign]digits[.digits]
// [e[sign]digits]) and fits it to decimal(p,s) as Spark does: rounded half
// up to the scale; a value needing more than p digits is an error.
func parseJavaDecimal(s string, d *schema.Decimal) (any, error) {
	bad := func() (any, error) { return nil, fmt.Errorf("not a decimal(%d,%d): %q", d.Precision, d.Scale, s) }
	t := s
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg, t = t[0] == '-', t[1:]
	}
	mant, expText, hasExp := strings.Cut(strings.ToLower(t), "e")
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(expText)
		if err != nil || e > 10000 || e < -10000 {
			return bad()
		}
		exp = e
	}
	ip, fp, _ := strings.Cut(mant, ".")
	if ip == "" && fp == "" {
		return bad()
	}
	digs := ip + fp
	for _, c := range digs {
		if c < '0' || c > '9' {
			return bad()
		}
	}
	u, _ := new(big.Int).SetString("0"+digs, 10)
	scale := len(fp) - exp // value = u × 10^-scale
	u, err := rescaleHalfUp(u, scale, d.Scale)
	if err != nil {
		return bad()
	}
	if neg {
		u.Neg(u)
	}
	dec := pqrow.Decimal{Unscaled: u, Scale: int32(d.Scale)}
	if u.Sign() != 0 && dec.Precision() > d.Precision {
		return nil, fmt.Errorf("decimal %q does not fit decimal(%d,%d)", s, d.Precision, d.Scale)
	}
	return dec, nil
}

// rescaleHalfUp converts the non-negative u×10^-from to an unscaled value
// at scale to, rounding half up.
func rescaleHalfUp(u *big.Int, from, to int) (*big.Int, error) {
	switch {
	case from == to:
		return u, nil
	case from < to:
		if to-from > 10000 {
			return nil, errors.New("exponent out of range")
		}
		return new(big.Int).Mul(u, pow10(to-from)), nil
	}
	q, r := new(big.Int).QuoRem(u, pow10(from-to), new(big.Int))
	if new(big.Int).Mul(r, big.NewInt(2)).Cmp(pow10(from-to)) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	return q, nil
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }
