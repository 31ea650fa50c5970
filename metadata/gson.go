package metadata

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ariadne-go/ariadne/internal/jvm"
)

// Marshal renders m as the Spark library's Gson writes metadata.json, byte
// for byte (§4.6):
//
//   - compact (no whitespace), fields in the order of the Metadata struct;
//   - absent version markers omitted (Gson omits null fields); collections
//     are always written, an empty one as [] or {};
//   - strings escaped as Gson's HTML-safe JsonWriter does: \" \\ \t \b \n \r
//     \f, other control characters and U+2028/U+2029 as \uXXXX (lowercase
//     hex), and < > & = ' as \u003c \u003e \u0026 \u003d \u0027; everything
//     else, including non-ASCII, as raw UTF-8 (invalid UTF-8 as U+FFFD);
//   - doubles as Java's Double.toString (FormatJavaDouble): 0.01, 0.001,
//     1.0E-4, 0.0 for a bloom entry loaded without fpr.
//
// Marshal fails only for a non-finite fpr, which JSON cannot represent (Gson
// throws IllegalArgumentException for it too).
func Marshal(m *Metadata) ([]byte, error) {
	w := &gsonWriter{}
	w.b.WriteByte('{')
	w.name(fieldFormat)
	w.str(m.Format)
	w.name(fieldSchema)
	w.str(m.Schema)

	w.name(fieldIndexes)
	w.strList(m.Indexes)

	w.name(fieldComputedIndexes)
	w.strMap(m.ComputedIndexes)

	w.name(fieldExplodedFieldIndexes)
	w.b.WriteByte('[')
	for i, e := range m.ExplodedFieldIndexes {
		w.sep(i)
		w.b.WriteByte('{')
		w.first = true
		w.name("array_column")
		w.str(e.ArrayColumn)
		w.name("field_path")
		w.str(e.FieldPath)
		w.name("as_column")
		w.str(e.AsColumn)
		w.b.WriteByte('}')
	}
	w.b.WriteByte(']')

	w.name(fieldBloomIndexes)
	w.b.WriteByte('[')
	for i, e := range m.BloomIndexes {
		if math.IsNaN(e.FPR) || math.IsInf(e.FPR, 0) {
			return nil, fmt.Errorf("metadata: bloom index %q: fpr %v is not a valid JSON number", e.Column, e.FPR)
		}
		w.sep(i)
		w.b.WriteByte('{')
		w.first = true
		w.name("column")
		w.str(e.Column)
		w.name("fpr")
		w.b.WriteString(FormatJavaDouble(e.FPR))
		w.b.WriteByte('}')
	}
	w.b.WriteByte(']')

	w.name(fieldTemporalIndexes)
	w.b.WriteByte('[')
	for i, e := range m.TemporalIndexes {
		w.sep(i)
		w.b.WriteByte('{')
		w.first = true
		w.name("column")
		w.str(e.Column)
		w.name("timestamp_column")
		w.str(e.TimestampColumn)
		w.b.WriteByte('}')
	}
	w.b.WriteByte(']')

	w.name(fieldReadOptions)
	w.strMap(m.ReadOptions)

	w.name(fieldRangeIndexes)
	w.b.WriteByte('[')
	for i, e := range m.RangeIndexes {
		w.sep(i)
		w.b.WriteByte('{')
		w.first = true
		w.name("column")
		w.str(e.Column)
		w.b.WriteByte('}')
	}
	w.b.WriteByte(']')

	w.name(fieldAutoBloomIndexes)
	w.strList(m.AutoBloomIndexes)

	w.name(fieldTotalIndexedFileSize)
	w.b.WriteString(strconv.FormatInt(m.TotalIndexedFileSize, 10))
	w.name(fieldBatchesSinceCompact)
	w.b.WriteString(strconv.Itoa(m.BatchesSinceCompact))
	if m.MetadataVersion != nil {
		w.name(fieldMetadataVersion)
		w.b.WriteString(strconv.Itoa(*m.MetadataVersion))
	}
	if m.StorageFormatVersion != nil {
		w.name(fieldStorageFormatVersion)
		w.b.WriteString(strconv.Itoa(*m.StorageFormatVersion))
	}
	w.b.WriteByte('}')
	return w.b.Bytes(), nil
}

// gsonWriter accumulates compact JSON. first is true right after an object
// opens, so that name knows whether a comma is due.
type gsonWriter struct {
	b     bytes.Buffer
	first bool
}

func (w *gsonWriter) name(n string) {
	if w.b.Len() > 1 && !w.first {
		w.b.WriteByte(',')
	}
	w.first = false
	w.str(n)
	w.b.WriteByte(':')
}

func (w *gsonWriter) sep(i int) {
	if i > 0 {
		w.b.WriteByte(',')
	}
}

func (w *gsonWriter) strList(s []string) {
	w.b.WriteByte('[')
	for i, v := range s {
		w.sep(i)
		w.str(v)
	}
	w.b.WriteByte(']')
}

func (w *gsonWriter) strMap(m StringMap) {
	w.b.WriteByte('{')
	w.first = true
	for k, v := range m.All() {
		w.name(k)
		w.str(v)
	}
	w.first = false
	w.b.WriteByte('}')
}

func (w *gsonWriter) str(s string) { w.b.WriteString(QuoteGson(s)) }

// QuoteGson returns s as a JSON string literal escaped exactly as Gson's
// HTML-safe JsonWriter escapes it (see Marshal).
func QuoteGson(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		case '<', '>', '&', '=', '\'', '\u2028', '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r) // RuneError for invalid UTF-8 renders U+FFFD
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FormatJavaDouble renders a finite f as Java's Double.toString does, which
// is what Gson writes for a double field ("0.01", "1.0E-4", "0.0"); see
// jvm.Double for the rules.
func FormatJavaDouble(f float64) string { return jvm.Double(f) }
