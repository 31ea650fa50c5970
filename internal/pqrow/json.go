package pqrow

import (
	"io"
	"math"
	"strconv"
)

// WriteJSONFloat writes a FLOAT (bits 32) or DOUBLE (bits 64) row value as
// JSON: the shortest decimal that reads back to the same value, and NaN and
// the infinities, which JSON numbers cannot hold, as the strings "NaN",
// "Infinity" and "-Infinity" (Spark's to_json and Jackson write them so).
// b is a *bytes.Buffer or *strings.Builder, whose writes cannot fail.
func WriteJSONFloat(b io.StringWriter, f float64, bits int) {
	switch {
	case math.IsNaN(f):
		_, _ = b.WriteString(`"NaN"`)
	case math.IsInf(f, 1):
		_, _ = b.WriteString(`"Infinity"`)
	case math.IsInf(f, -1):
		_, _ = b.WriteString(`"-Infinity"`)
	default:
		_, _ = b.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
	}
}
