package duck

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// Ident quotes an identifier for DuckDB: wrapped in double quotes, inner
// double quotes doubled. Every string, including one with quotes,
// semicolons, comment markers or newlines, becomes exactly one identifier.
// DuckDB cannot represent NUL in identifiers; NUL bytes are replaced by
// U+FFFD so the statement stays well-formed (and names nothing that exists).
func Ident(name string) string {
	name = strings.ReplaceAll(name, "\x00", "\uFFFD")
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// String quotes a string literal for DuckDB: wrapped in single quotes, inner
// single quotes doubled. DuckDB's standard strings take backslashes
// literally, so nothing else needs escaping. NUL bytes (which DuckDB
// strings cannot hold) are written with chr(0).
func String(s string) string {
	if strings.Contains(s, "\x00") {
		parts := strings.Split(s, "\x00")
		for i, p := range parts {
			parts[i] = String(p)
		}
		return "(" + strings.Join(parts, " || chr(0) || ") + ")"
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// Literal renders a value of the pqrow model as a DuckDB literal of the
// matching type (see DuckType): strings quoted, numbers typed, floats' NaN
// and infinities as casts, times as TIMESTAMP literals (UTC), decimals as
// DECIMAL casts, binaries as BLOB from hex, arrays as lists. When t is not
// nil the literal is cast to DuckType(t) (so a time.Time becomes a DATE
// for a date column); structs and maps need t.
func Literal(v any, t schema.Type) (string, error) {
	lit, err := literal(v)
	if err != nil || t == nil || v == nil {
		return lit, err
	}
	dt, err := DuckType(t)
	if err != nil {
		return "", err
	}
	return "CAST(" + lit + " AS " + dt + ")", nil
}

func literal(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "NULL", nil
	case string:
		return String(v), nil
	case bool:
		if v {
			return "TRUE", nil
		}
		return "FALSE", nil
	case int8:
		return fmt.Sprintf("CAST(%d AS TINYINT)", v), nil
	case int16:
		return fmt.Sprintf("CAST(%d AS SMALLINT)", v), nil
	case int32:
		return fmt.Sprintf("CAST(%d AS INTEGER)", v), nil
	case int64:
		return fmt.Sprintf("CAST(%d AS BIGINT)", v), nil
	case int:
		return fmt.Sprintf("CAST(%d AS BIGINT)", v), nil
	case float32:
		return floatLiteral(float64(v), "FLOAT"), nil
	case float64:
		return floatLiteral(v, "DOUBLE"), nil
	case pqrow.Decimal:
		p := v.Precision()
		if int(v.Scale) >= p {
			p = int(v.Scale) + 1
		}
		if v.Scale < 0 || p > 38 {
			return "", fmt.Errorf("%w: decimal %s outside DECIMAL(38)", ErrUnsupportedType, v)
		}
		return fmt.Sprintf("CAST(%s AS DECIMAL(%d,%d))", String(v.PlainString()), p, v.Scale), nil
	case time.Time:
		return "TIMESTAMP " + String(v.UTC().Format("2006-01-02 15:04:05.999999")), nil
	case []byte:
		return "unhex(" + String(hex.EncodeToString(v)) + ")", nil
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			s, err := literal(e)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case []pqrow.KV:
		keys := make([]string, len(v))
		vals := make([]string, len(v))
		for i, kv := range v {
			var err error
			if keys[i], err = literal(kv.Key); err != nil {
				return "", err
			}
			if vals[i], err = literal(kv.Value); err != nil {
				return "", err
			}
		}
		return "MAP([" + strings.Join(keys, ", ") + "], [" + strings.Join(vals, ", ") + "])", nil
	}
	return "", fmt.Errorf("%w: no literal for %T", ErrUnsupportedType, v)
}

func floatLiteral(f float64, typ string) string {
	switch {
	case math.IsNaN(f):
		return "CAST('NaN' AS " + typ + ")"
	case math.IsInf(f, 1):
		return "CAST('Infinity' AS " + typ + ")"
	case math.IsInf(f, -1):
		return "CAST('-Infinity' AS " + typ + ")"
	}
	bits := 64
	if typ == "FLOAT" {
		bits = 32
	}
	return "CAST(" + strconv.FormatFloat(f, 'g', -1, bits) + " AS " + typ + ")"
}
