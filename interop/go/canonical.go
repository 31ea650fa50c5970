package interop

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// UnsupportedValueError reports a value the canonical rendering cannot
// render: a Spark type outside the rendering's table (variant, interval, …)
// or a Go value that does not match its column's type in the row model.
type UnsupportedValueError struct {
	Type  string // Spark type name
	Value string // the Go type of the value (%T)
}

func (e *UnsupportedValueError) Error() string {
	return fmt.Sprintf("interop: canonical rendering: %s value of Go type %s not supported", e.Type, e.Value)
}

// RenderRow renders one row (aligned with st, in the value model of
// internal/pqrow) as its canonical line: a compact JSON object whose keys are
// st's field names in order (docs/interop.md, "Canonical rows").
func RenderRow(st *schema.Struct, row []any) (string, error) {
	if len(row) != len(st.Fields) {
		return "", fmt.Errorf("interop: row has %d values for %d columns", len(row), len(st.Fields))
	}
	var b strings.Builder
	if err := renderStruct(&b, st, row); err != nil {
		return "", err
	}
	return b.String(), nil
}

// RenderRows renders rows and returns the lines sorted by their UTF-8 bytes,
// duplicates kept: the canonical form of a table.
func RenderRows(st *schema.Struct, rows [][]any) ([]string, error) {
	lines := make([]string, 0, len(rows))
	for _, r := range rows {
		l, err := RenderRow(st, r)
		if err != nil {
			return nil, err
		}
		lines = append(lines, l)
	}
	slices.Sort(lines) // Go strings compare by bytes
	return lines, nil
}

// RowsSHA256 is the hex SHA-256 of the lines joined by "\n" (no trailing
// newline), the golden files' rows_sha256.
func RowsSHA256(lines []string) string {
	h := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(h[:])
}

func renderStruct(b *strings.Builder, st *schema.Struct, vals []any) error {
	b.WriteByte('{')
	for i, f := range st.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		JSONString(b, f.Name)
		b.WriteByte(':')
		if err := renderValue(b, f.Type, vals[i]); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func unsupported(t schema.Type, v any) error {
	return &UnsupportedValueError{Type: schema.TypeName(t), Value: fmt.Sprintf("%T", v)}
}

func renderValue(b *strings.Builder, t schema.Type, v any) error {
	if v == nil {
		b.WriteString("null")
		return nil
	}
	switch t := t.(type) {
	case *schema.Struct:
		vals, ok := v.([]any)
		if !ok || len(vals) != len(t.Fields) {
			return unsupported(t, v)
		}
		return renderStruct(b, t, vals)
	case *schema.Array:
		vals, ok := v.([]any)
		if !ok {
			return unsupported(t, v)
		}
		b.WriteByte('[')
		for i, e := range vals {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := renderValue(b, t.Element, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case *schema.Map:
		return renderMap(b, t, v)
	case *schema.Decimal:
		d, ok := v.(pqrow.Decimal)
		if !ok || d.Scale != int32(t.Scale) {
			return unsupported(t, v)
		}
		JSONString(b, FormatDecimal(d.Unscaled, int(d.Scale)))
		return nil
	case *schema.Primitive:
		return renderPrimitive(b, t, v)
	}
	return unsupported(t, v)
}

func renderMap(b *strings.Builder, t *schema.Map, v any) error {
	kvs, ok := v.([]pqrow.KV)
	if !ok {
		return unsupported(t, v)
	}
	pairs := make([][2]string, len(kvs))
	for i, kv := range kvs {
		var kb, vb strings.Builder
		if err := renderValue(&kb, t.Key, kv.Key); err != nil {
			return err
		}
		if err := renderValue(&vb, t.Value, kv.Value); err != nil {
			return err
		}
		pairs[i] = [2]string{kb.String(), vb.String()}
	}
	slices.SortStableFunc(pairs, func(x, y [2]string) int { return strings.Compare(x[0], y[0]) })
	b.WriteByte('[')
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		b.WriteString(p[0])
		b.WriteByte(',')
		b.WriteString(p[1])
		b.WriteByte(']')
	}
	b.WriteByte(']')
	return nil
}

func renderPrimitive(b *strings.Builder, t *schema.Primitive, v any) error {
	ok := true
	switch t.Name {
	case "boolean":
		var x bool
		if x, ok = v.(bool); ok {
			b.WriteString(strconv.FormatBool(x))
		}
	case "byte", "short", "integer", "long":
		switch x := v.(type) {
		case int8:
			ok = t.Name == "byte"
			b.WriteString(strconv.FormatInt(int64(x), 10))
		case int16:
			ok = t.Name == "short"
			b.WriteString(strconv.FormatInt(int64(x), 10))
		case int32:
			ok = t.Name == "integer"
			b.WriteString(strconv.FormatInt(int64(x), 10))
		case int64:
			ok = t.Name == "long"
			b.WriteString(strconv.FormatInt(x, 10))
		default:
			ok = false
		}
	case "float":
		var x float32
		if x, ok = v.(float32); ok {
			b.WriteString(FormatFloat(float64(x), 32))
		}
	case "double":
		var x float64
		if x, ok = v.(float64); ok {
			b.WriteString(FormatFloat(x, 64))
		}
	case "string":
		var x string
		if x, ok = v.(string); ok {
			JSONString(b, x)
		}
	case "binary":
		var x []byte
		if x, ok = v.([]byte); ok {
			JSONString(b, base64.StdEncoding.EncodeToString(x))
		}
	case "date", "timestamp", "timestamp_ntz":
		var x time.Time
		if x, ok = v.(time.Time); ok {
			JSONString(b, formatTime(t.Name, x))
		}
	default:
		ok = false
	}
	if !ok {
		return unsupported(t, v)
	}
	return nil
}

// formatTime renders a date ("YYYY-MM-DD"), timestamp (UTC, 6 fraction
// digits, "Z") or timestamp_ntz (wall clock, no zone) in the proleptic
// Gregorian calendar with year 0 and negative years written "-YYYY", as
// canonical.py does.
func formatTime(kind string, t time.Time) string {
	if kind == "timestamp" {
		t = t.UTC()
	}
	y, m, d := t.Date()
	date := fmt.Sprintf("%s-%02d-%02d", formatYear(y), int(m), d)
	if kind == "date" {
		return date
	}
	hh, mm, ss := t.Clock()
	s := fmt.Sprintf("%sT%02d:%02d:%02d.%06d", date, hh, mm, ss, t.Nanosecond()/1000)
	if kind == "timestamp" {
		s += "Z"
	}
	return s
}

func formatYear(y int) string {
	if y < 0 {
		return fmt.Sprintf("-%04d", -y)
	}
	return fmt.Sprintf("%04d", y)
}

// FormatDecimal renders unscaled × 10^-scale as plain decimal text with
// exactly scale fraction digits ("-5.67800", "0.000", "123"); a negative
// scale appends zeros. "-" only for non-zero values; never an exponent.
func FormatDecimal(unscaled *big.Int, scale int) string {
	if unscaled == nil {
		unscaled = new(big.Int)
	}
	sign := ""
	if unscaled.Sign() < 0 {
		sign = "-"
	}
	digits := new(big.Int).Abs(unscaled).String()
	if scale <= 0 {
		return sign + digits + strings.Repeat("0", -scale)
	}
	if len(digits) < scale+1 {
		digits = strings.Repeat("0", scale+1-len(digits)) + digits
	}
	return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
}

// FormatFloat renders v (a float32 when bits is 32) as the canonical JSON
// fragment: Python's repr layout of the shortest round-trip digits, and the
// JSON strings "NaN", "Infinity", "-Infinity" for the specials.
func FormatFloat(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		return `"NaN"`
	case math.IsInf(v, 1):
		return `"Infinity"`
	case math.IsInf(v, -1):
		return `"-Infinity"`
	case v == 0:
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	// 'e' with precision -1 gives the shortest digits that round-trip at
	// this bit size: d[.ddd]e±XX.
	s := strconv.FormatFloat(math.Abs(v), 'e', -1, bits)
	mant, exps, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(exps)
	digits := strings.TrimRight(strings.Replace(mant, ".", "", 1), "0")
	if digits == "" {
		digits = "0"
	}
	sign := ""
	if v < 0 {
		sign = "-"
	}
	// Python's float_repr_style 'short': fixed for -4 <= exp < 16.
	if -4 <= exp && exp < 16 {
		var intPart, frac string
		if exp >= 0 {
			if len(digits) > exp+1 {
				intPart, frac = digits[:exp+1], digits[exp+1:]
			} else {
				intPart, frac = digits+strings.Repeat("0", exp+1-len(digits)), "0"
			}
		} else {
			intPart, frac = "0", strings.Repeat("0", -exp-1)+digits
		}
		return sign + intPart + "." + frac
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	es := "+"
	if exp < 0 {
		es, exp = "-", -exp
	}
	return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
}

// JSONString writes s as Python's json.dumps(s, ensure_ascii=False) does:
// `"` and `\` escaped, \b \t \n \f \r, other code points below U+0020 as
// \u00XX, everything else (non-ASCII included, and invalid UTF-8 as U+FFFD)
// verbatim.
func JSONString(b *strings.Builder, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[r>>4])
				b.WriteByte(hexDigits[r&0xF])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
