// Package sparkcases evaluates the computed-index function cases
// (internal/duck/testdata/spark_functions.json) through our translation of
// Spark SQL into DuckDB (duck.Translate, on a duck.DB, over rows loaded
// with duck.DB.Load: the code path of a build) and renders each value as
// canonical text (docs/interop.md "Canonical rows"), so that they can be
// compared with Spark's own values: the ones recorded in the file (unit
// tests of internal/duck, no Spark needed) and the ones a live Spark gives
// (interop TestSparkFunctions, which refreshes nothing and fails on any
// difference).
package sparkcases

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// File is the case file: input columns and rows, and the cases.
type File struct {
	About   string            `json:"about"`
	Columns []Column          `json:"columns"`
	Rows    [][]any           `json:"rows"`
	Cases   []Case            `json:"cases"`
	Extra   map[string]string `json:"-"`
}

// Column is one input column: its name and Spark type (simpleString).
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Case is one expression and Spark's answer on every row.
type Case struct {
	Expr string `json:"expr"`
	// SparkType is the result's Spark type; empty when Spark refused it.
	SparkType string `json:"spark_type,omitempty"`
	// Spark holds one canonical JSON fragment per row.
	Spark []string `json:"spark,omitempty"`
	// SparkError is Spark's error when the expression fails.
	SparkError string `json:"spark_error,omitempty"`
	// Ours is what Ariadne does: "" gives Spark's value (type and every
	// row), "refused" refuses the expression (duck.CheckFunctions), and
	// "differs: why" is a documented difference (docs/compatibility.md).
	Ours string `json:"ours,omitempty"`
}

// Load reads a case file.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("sparkcases: %s: %w", path, err)
	}
	return &f, nil
}

// Result is our answer for one case.
type Result struct {
	// Refused is the typed error of duck.CheckFunctions when the
	// expression uses a function we refuse; nothing else is set then.
	Refused error
	// Err is the engine's error when the translated expression fails.
	Err error
	// Type is the result's Spark type (simpleString).
	Type string
	// Values holds one canonical JSON fragment per row.
	Values []string
}

// Evaluate loads the rows into db as table name and evaluates every case.
func (f *File) Evaluate(ctx context.Context, db *duck.DB, table string) ([]Result, error) {
	st := &schema.Struct{}
	for _, c := range f.Columns {
		t, err := parseType(c.Type)
		if err != nil {
			return nil, err
		}
		st.Fields = append(st.Fields, schema.Field{Name: c.Name, Type: t, Nullable: true})
	}
	st.Fields = append(st.Fields, schema.Field{Name: "_i", Type: schema.Integer})
	rows := make([]pqrow.Row, len(f.Rows))
	for n, r := range f.Rows {
		if len(r) != len(f.Columns) {
			return nil, fmt.Errorf("sparkcases: row %d has %d values for %d columns", n, len(r), len(f.Columns))
		}
		row := make(pqrow.Row, len(r)+1)
		for k, v := range r {
			x, err := value(st.Fields[k].Type, v)
			if err != nil {
				return nil, fmt.Errorf("sparkcases: row %d column %s: %w", n, f.Columns[k].Name, err)
			}
			row[k] = x
		}
		row[len(r)] = int32(n)
		rows[n] = row
	}
	if _, err := db.Load(ctx, table, &source{st: st, rows: rows}); err != nil {
		return nil, err
	}
	out := make([]Result, len(f.Cases))
	for i, c := range f.Cases {
		if err := duck.CheckFunctions(c.Expr); err != nil {
			out[i].Refused = err
			continue
		}
		q := "SELECT (" + duck.Translate(c.Expr) + ") AS v FROM " + duck.Ident(table) + " ORDER BY _i"
		rst, got, err := db.QueryAll(ctx, q)
		if errors.Is(err, duck.ErrUnsupportedFunction) {
			// refused when DuckDB planned it (a decimal or map argument):
			// add-index plans every expression, so it is refused there
			out[i].Refused = err
			continue
		}
		if err != nil {
			out[i].Err = err
			continue
		}
		t := rst.Fields[0].Type
		out[i].Type = t.String()
		for _, r := range got {
			var b strings.Builder
			if err := render(&b, t, r[0]); err != nil {
				return nil, fmt.Errorf("sparkcases: %s: %w", c.Expr, err)
			}
			out[i].Values = append(out[i].Values, b.String())
		}
	}
	return out, nil
}

type source struct {
	st   *schema.Struct
	rows []pqrow.Row
	done bool
}

func (s *source) Schema() *schema.Struct { return s.st }
func (s *source) Next(context.Context) ([]pqrow.Row, error) {
	if s.done {
		return nil, io.EOF
	}
	s.done = true
	return s.rows, nil
}

func parseType(s string) (schema.Type, error) {
	switch s {
	case "string":
		return schema.String, nil
	case "int":
		return schema.Integer, nil
	case "bigint":
		return schema.Long, nil
	case "double":
		return schema.Double, nil
	case "date":
		return schema.Date, nil
	case "timestamp":
		return schema.Timestamp, nil
	case "boolean":
		return schema.Boolean, nil
	case "array<string>":
		return &schema.Array{Element: schema.String, ContainsNull: true}, nil
	case "map<string,string>":
		return &schema.Map{Key: schema.String, Value: schema.String, ValueContainsNull: true}, nil
	}
	return nil, fmt.Errorf("sparkcases: input type %q not supported", s)
}

// value converts a JSON input value to the pqrow value of type t.
func value(t schema.Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if m, ok := t.(*schema.Map); ok {
		// A list of [key, value] pairs: a JSON object would lose the
		// order, which map_keys and map_values show.
		l, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%v is not a list of [key, value] pairs", v)
		}
		out := make([]pqrow.KV, len(l))
		for i, e := range l {
			p, ok := e.([]any)
			if !ok || len(p) != 2 {
				return nil, fmt.Errorf("%v is not a [key, value] pair", e)
			}
			k, err := value(m.Key, p[0])
			if err != nil {
				return nil, err
			}
			x, err := value(m.Value, p[1])
			if err != nil {
				return nil, err
			}
			out[i] = pqrow.KV{Key: k, Value: x}
		}
		return out, nil
	}
	if a, ok := t.(*schema.Array); ok {
		l, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%v is not an array", v)
		}
		out := make([]any, len(l))
		for i, e := range l {
			x, err := value(a.Element, e)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	}
	switch t {
	case schema.String:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case schema.Boolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case schema.Integer:
		if f, ok := v.(float64); ok {
			return int32(f), nil
		}
	case schema.Long:
		// JSON numbers past 2^53 lose digits as float64: re-read them exactly.
		if f, ok := v.(float64); ok {
			if f >= 9.2e18 {
				return int64(math.MaxInt64), nil
			}
			if f <= -9.2e18 {
				return int64(math.MinInt64), nil
			}
			return int64(f), nil
		}
	case schema.Double:
		switch x := v.(type) {
		case float64:
			return x, nil
		case string:
			return strconv.ParseFloat(x, 64) // NaN, Infinity, -Infinity
		}
	case schema.Date:
		if s, ok := v.(string); ok {
			return time.Parse("2006-01-02", s)
		}
	case schema.Timestamp:
		if s, ok := v.(string); ok {
			return time.Parse("2006-01-02T15:04:05.999999", s)
		}
	}
	return nil, fmt.Errorf("%v (%T) is not a %s", v, v, t)
}

// render writes the canonical JSON fragment of v (type t): the rules of
// docs/interop.md "Canonical rows" for the types computed expressions give.
func render(b *strings.Builder, t schema.Type, v any) error {
	if v == nil {
		b.WriteString("null")
		return nil
	}
	switch t := t.(type) {
	case *schema.Array:
		l, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%T is not an array", v)
		}
		b.WriteByte('[')
		for i, e := range l {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := render(b, t.Element, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case *schema.Decimal:
		d, ok := v.(pqrow.Decimal)
		if !ok {
			return fmt.Errorf("%T is not a decimal", v)
		}
		jsonString(b, decimalText(d))
		return nil
	}
	switch x := v.(type) {
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int8, int16, int32, int64:
		fmt.Fprintf(b, "%d", x)
	case float64:
		b.WriteString(PythonFloat(x, 64))
	case float32:
		b.WriteString(PythonFloat(float64(x), 32))
	case string:
		jsonString(b, x)
	case []byte:
		jsonString(b, base64.StdEncoding.EncodeToString(x))
	case time.Time:
		x = x.UTC()
		if t == schema.Date {
			jsonString(b, yearText(x.Year())+x.Format("-01-02"))
		} else {
			s := yearText(x.Year()) + x.Format("-01-02T15:04:05.000000")
			if t == schema.Timestamp {
				s += "Z"
			}
			jsonString(b, s)
		}
	default:
		return fmt.Errorf("%T (type %s) cannot be rendered", v, t)
	}
	return nil
}

func yearText(y int) string {
	if y < 0 {
		return fmt.Sprintf("-%04d", -y)
	}
	return fmt.Sprintf("%04d", y)
}

func decimalText(d pqrow.Decimal) string {
	s := d.Unscaled.String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if d.Scale > 0 {
		for len(s) <= int(d.Scale) {
			s = "0" + s
		}
		s = s[:len(s)-int(d.Scale)] + "." + s[len(s)-int(d.Scale):]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// PythonFloat is the canonical text of a float: Python's repr of the
// shortest round-trip digits (of a float32 when bitSize is 32); NaN and
// infinities as the JSON strings "NaN", "Infinity", "-Infinity".
func PythonFloat(f float64, bitSize int) string {
	switch {
	case math.IsNaN(f):
		return `"NaN"`
	case math.IsInf(f, 1):
		return `"Infinity"`
	case math.IsInf(f, -1):
		return `"-Infinity"`
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	s := strconv.FormatFloat(math.Abs(f), 'e', -1, bitSize)
	mant, es, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(es)
	digits := strings.TrimRight(strings.Replace(mant, ".", "", 1), "0")
	if digits == "" {
		digits = "0"
	}
	sign := ""
	if f < 0 {
		sign = "-"
	}
	if exp >= -4 && exp < 16 {
		if exp >= 0 {
			ip := digits
			if len(ip) < exp+1 {
				ip += strings.Repeat("0", exp+1-len(ip))
			}
			frac := digits[min(len(digits), exp+1):]
			if frac == "" {
				frac = "0"
			}
			return sign + ip[:exp+1] + "." + frac
		}
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	es = fmt.Sprintf("%02d", abs(exp))
	if exp < 0 {
		return sign + m + "e-" + es
	}
	return sign + m + "e+" + es
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// jsonString writes s as Python's json.dumps(s, ensure_ascii=False).
func jsonString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
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
				b.WriteByte(hex[r>>4])
				b.WriteByte(hex[r&0xF])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// ErrMismatch is matched by the errors of Compare.
var ErrMismatch = errors.New("sparkcases: our value differs from Spark's")

// Compare checks our result r for case c against Spark's answer: where
// Spark fails, we must refuse or fail too; where we refuse, nothing more
// is checked (refusal is the documented answer); otherwise the type and
// every row's canonical text must equal Spark's. It returns nil or an
// error matching ErrMismatch that shows both sides.
func Compare(c Case, r Result) error {
	switch {
	case c.Ours == "refused" && r.Refused == nil:
		return fmt.Errorf("%w: %s: recorded as refused, but we translate it", ErrMismatch, c.Expr)
	case c.Ours == "refused":
		return nil
	case r.Refused != nil:
		return fmt.Errorf("%w: %s: we refuse it (%v) but the record expects Spark's value", ErrMismatch, c.Expr, r.Refused)
	case strings.HasPrefix(c.Ours, "differs"):
		// A documented difference must still be one.
		if r.Err == nil && r.Type == c.SparkType && slices.Equal(r.Values, c.Spark) {
			return fmt.Errorf("%w: %s: recorded as a difference (%s), but we give Spark's value", ErrMismatch, c.Expr, c.Ours)
		}
		return nil
	}
	if c.SparkError != "" {
		if r.Err != nil {
			return nil
		}
		return fmt.Errorf("%w: %s: Spark fails (%s), we give %s %v", ErrMismatch, c.Expr, c.SparkError, r.Type, r.Values)
	}
	if r.Err != nil {
		return fmt.Errorf("%w: %s: Spark gives %s %v, we fail: %v", ErrMismatch, c.Expr, c.SparkType, c.Spark, r.Err)
	}
	var diffs []string
	if r.Type != c.SparkType {
		diffs = append(diffs, fmt.Sprintf("type %s, Spark %s", r.Type, c.SparkType))
	}
	for i := range c.Spark {
		if i >= len(r.Values) || r.Values[i] != c.Spark[i] {
			got := "(missing)"
			if i < len(r.Values) {
				got = r.Values[i]
			}
			diffs = append(diffs, fmt.Sprintf("row %d: %s, Spark %s", i, got, c.Spark[i]))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: %s: %s", ErrMismatch, c.Expr, strings.Join(diffs, "; "))
	}
	return nil
}
