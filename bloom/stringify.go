package bloom

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/internal/jvm"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// Stringifier renders values to the strings bloom filters hash: the JVM
// toString of the Spark external value (spec §3.5), one function for build
// and probe (§12 item 4). The zero value renders timestamps in UTC and
// arrays as Scala 2.12's WrappedArray, matching the Spark 3.5 library run
// with a UTC JVM time zone.
type Stringifier struct {
	// Location is the JVM time zone timestamps render in; nil = UTC.
	Location *time.Location
	// Scala213 renders arrays as ArraySeq(...) (the Spark 4.1 library).
	Scala213 bool
}

// String renders v, a value of the pqrow value model of Spark type t.
// Query values (which the Spark library does not cast to the column type)
// go through the same function with their own Go type: int 1, int64 1 and
// string "1" all render "1"; float64 1.0 renders "1.0".
func (s Stringifier) String(v any, t schema.Type) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int8:
		return strconv.FormatInt(int64(v), 10)
	case int16:
		return strconv.FormatInt(int64(v), 10)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	case float32:
		return jvm.Float(v)
	case float64:
		return jvm.Double(v)
	case pqrow.Decimal:
		return jvm.BigDecimal(v.Unscaled, v.Scale)
	case *big.Int:
		return v.String()
	case time.Time:
		if p, ok := t.(*schema.Primitive); ok && p == schema.Date {
			return jvm.Date(v)
		}
		loc := s.Location
		if loc == nil {
			loc = time.UTC
		}
		if p, ok := t.(*schema.Primitive); ok && p == schema.TimestampNTZ {
			// LocalDateTime.toString: ISO with 'T', seconds kept.
			return v.Format("2006-01-02T15:04:05.999999999")
		}
		return jvm.Timestamp(v, loc)
	case []byte:
		// The JVM renders byte[] by identity ("[B@1b6d3586"), which no one
		// can reproduce (§9 item 8); we hash the bytes themselves, so our
		// own filters work and Spark-built binary filters never matched.
		return string(v)
	case []any:
		switch tt := t.(type) {
		case *schema.Struct:
			parts := make([]string, len(v))
			for i, e := range v {
				var ft schema.Type
				if i < len(tt.Fields) {
					ft = tt.Fields[i].Type
				}
				parts[i] = s.String(e, ft)
			}
			return "[" + strings.Join(parts, ",") + "]"
		default:
			var et schema.Type
			if a, ok := t.(*schema.Array); ok {
				et = a.Element
			}
			parts := make([]string, len(v))
			for i, e := range v {
				parts[i] = s.String(e, et)
			}
			prefix := "WrappedArray("
			if s.Scala213 {
				prefix = "ArraySeq("
			}
			return prefix + strings.Join(parts, ", ") + ")"
		}
	case []pqrow.KV:
		var kt, vt schema.Type
		if m, ok := t.(*schema.Map); ok {
			kt, vt = m.Key, m.Value
		}
		parts := make([]string, len(v))
		for i, kv := range v {
			parts[i] = s.String(kv.Key, kt) + " -> " + s.String(kv.Value, vt)
		}
		return "Map(" + strings.Join(parts, ", ") + ")"
	}
	return fmt.Sprint(v)
}
