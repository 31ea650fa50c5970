package pqrow

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ariadne-go/ariadne/schema"
)

// DefaultStatsColumns is Delta's default number of leading leaf columns
// with statistics (delta.dataSkippingNumIndexedCols = 32).
const DefaultStatsColumns = 32

// StringPrefixLength is the number of characters Delta keeps of string
// minimum and maximum values (delta.dataSkippingStringPrefixLength = 32).
const StringPrefixLength = 32

// maxStringSuffix is appended to a truncated maximum so it stays an upper
// bound: U+10FFFF sorts after every character in UTF-8 byte order (Delta
// appends the same tie-breaker).
const maxStringSuffix = "\U0010FFFF"

// FileStats are the per-file statistics Delta keeps in an add action's
// "stats": the row count and, for the leading leaf columns, null counts and
// (for numbers, strings, dates, timestamps and decimals) minimum and
// maximum.
type FileStats struct {
	NumRecords int64
	Columns    []ColumnStats
}

// ColumnStats are the statistics of one leaf column. Path holds the Parquet
// (physical) names from the top-level field down. Min and Max are nil when
// not collected (ineligible type, no non-null value, or NaN/±Inf present);
// strings are truncated to StringPrefixLength characters (Max then ends
// with U+10FFFF).
type ColumnStats struct {
	Path      []string
	Type      schema.Type
	NullCount int64
	Min, Max  any
}

// statLeaf accumulates one column's statistics.
type statLeaf struct {
	path     []string
	idx      []int
	typ      schema.Type
	eligible bool
	poisoned bool
	min, max any
	nulls    int64
}

// statsCollector gathers FileStats while rows are written.
type statsCollector struct {
	rows   int64
	leaves []*statLeaf
}

// newStatsCollector selects the first limit leaf columns of st (limit < 0:
// all); arrays and maps count as one leaf and get only a null count.
func newStatsCollector(st *schema.Struct, limit int, physical bool) *statsCollector {
	c := &statsCollector{}
	var walk func(st *schema.Struct, path []string, idx []int)
	walk = func(st *schema.Struct, path []string, idx []int) {
		for i, f := range st.Fields {
			if limit >= 0 && len(c.leaves) >= limit {
				return
			}
			name := f.Name
			if physical {
				name = PhysicalName(f)
			}
			p := append(path[:len(path):len(path)], name)
			ix := append(idx[:len(idx):len(idx)], i)
			if sub, ok := f.Type.(*schema.Struct); ok {
				walk(sub, p, ix)
				continue
			}
			c.leaves = append(c.leaves, &statLeaf{path: p, idx: ix, typ: f.Type, eligible: statsEligible(f.Type)})
		}
	}
	walk(st, nil, nil)
	return c
}

func statsEligible(t schema.Type) bool {
	switch t := t.(type) {
	case *schema.Decimal:
		return true
	case *schema.Primitive:
		switch t.Name {
		case "byte", "short", "integer", "long", "float", "double", "string", "date", "timestamp", "timestamp_ntz":
			return true
		}
	}
	return false
}

// add records one (already validated) row.
func (c *statsCollector) add(row Row) {
	c.rows++
	for _, l := range c.leaves {
		var v any = row
		for _, i := range l.idx {
			s, ok := v.([]any)
			if !ok || i >= len(s) {
				v = nil
				break
			}
			v = s[i]
		}
		if v == nil {
			l.nulls++
			continue
		}
		if !l.eligible || l.poisoned {
			continue
		}
		v = normalizeStat(l.typ, v)
		if v == nil {
			l.poisoned = true
			l.min, l.max = nil, nil
			continue
		}
		if l.min == nil || compareStat(v, l.min) < 0 {
			l.min = v
		}
		if l.max == nil || compareStat(v, l.max) > 0 {
			l.max = v
		}
	}
}

// normalizeStat converts a value to the comparable form kept in stats
// (int64, float64, string, time.Time, Decimal); nil poisons the column
// (NaN and infinities have no JSON form).
func normalizeStat(t schema.Type, v any) any {
	if d, ok := t.(*schema.Decimal); ok {
		dec, err := toDecimal(v, d, nil)
		if err != nil {
			return nil
		}
		return dec
	}
	switch x := v.(type) {
	case float32:
		return finite(float64(x))
	case float64:
		return finite(x)
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		switch t.(*schema.Primitive).Name {
		case "date":
			return DateFromDays(DaysSinceEpoch(x))
		case "timestamp_ntz":
			return time.UnixMicro(timestampMicros(x, true)).UTC()
		}
		return time.UnixMicro(timestampMicros(x, false)).UTC()
	}
	if i, ok := AsInt64(v); ok {
		return i
	}
	return nil
}

func finite(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return f
}

func compareStat(a, b any) int {
	switch a := a.(type) {
	case int64:
		b := b.(int64)
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	case float64:
		b := b.(float64)
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	case string:
		return strings.Compare(a, b.(string))
	case time.Time:
		return a.Compare(b.(time.Time))
	case Decimal:
		return a.Cmp(b.(Decimal))
	}
	return 0
}

// truncateMin keeps the first n characters (a prefix sorts before the
// string).
func truncateMin(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// truncateMax keeps the first n characters and appends U+10FFFF, which
// keeps it above the original in UTF-8 byte order.
func truncateMax(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return truncateMin(s, n) + maxStringSuffix
}

// result returns the collected statistics.
func (c *statsCollector) result() FileStats {
	fs := FileStats{NumRecords: c.rows, Columns: make([]ColumnStats, len(c.leaves))}
	for i, l := range c.leaves {
		cs := ColumnStats{Path: l.path, Type: l.typ, NullCount: l.nulls}
		if l.eligible && !l.poisoned && l.min != nil {
			cs.Min, cs.Max = l.min, l.max
			if s, ok := l.min.(string); ok {
				cs.Min = truncateMin(s, StringPrefixLength)
				cs.Max = truncateMax(l.max.(string), StringPrefixLength)
			}
		}
		fs.Columns[i] = cs
	}
	return fs
}

// JSON renders the statistics as Delta's stats JSON:
// {"numRecords":N,"minValues":{...},"maxValues":{...},"nullCount":{...}},
// nested by struct, with dates as "yyyy-MM-dd", timestamps as ISO-8601 with
// milliseconds ("...T12:00:00.123Z"; timestamp_ntz without "Z") and
// decimals as JSON numbers, as Spark writes them.
func (s FileStats) JSON() string {
	var b bytes.Buffer
	b.WriteString(`{"numRecords":`)
	b.WriteString(strconv.FormatInt(s.NumRecords, 10))
	for _, sec := range []struct {
		key string
		get func(ColumnStats) (any, bool)
	}{
		{"minValues", func(c ColumnStats) (any, bool) { return c.Min, c.Min != nil }},
		{"maxValues", func(c ColumnStats) (any, bool) { return c.Max, c.Max != nil }},
		{"nullCount", func(c ColumnStats) (any, bool) { return c.NullCount, true }},
	} {
		var obj bytes.Buffer
		writeStatsObject(&obj, s.Columns, 0, sec.get)
		if obj.Len() > 2 || sec.key == "nullCount" {
			b.WriteString(`,"` + sec.key + `":`)
			b.Write(obj.Bytes())
		}
	}
	b.WriteByte('}')
	return b.String()
}

// writeStatsObject renders the columns whose paths share a prefix of
// length depth as one JSON object, grouping consecutive columns under their
// struct name.
func writeStatsObject(b *bytes.Buffer, cols []ColumnStats, depth int, get func(ColumnStats) (any, bool)) {
	b.WriteByte('{')
	first := true
	for i := 0; i < len(cols); {
		name := cols[i].Path[depth]
		j := i + 1
		if len(cols[i].Path) > depth+1 {
			for j < len(cols) && len(cols[j].Path) > depth+1 && cols[j].Path[depth] == name {
				j++
			}
			var sub bytes.Buffer
			writeStatsObject(&sub, cols[i:j], depth+1, get)
			if sub.Len() > 2 {
				if !first {
					b.WriteByte(',')
				}
				first = false
				writeJSONString(b, name)
				b.WriteByte(':')
				b.Write(sub.Bytes())
			}
			i = j
			continue
		}
		if v, ok := get(cols[i]); ok {
			if !first {
				b.WriteByte(',')
			}
			first = false
			writeJSONString(b, name)
			b.WriteByte(':')
			writeStatValue(b, cols[i].Type, v)
		}
		i = j
	}
	b.WriteByte('}')
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // strings always encode
	b.Truncate(b.Len() - 1) // Encode's newline
}

// writeStatValue renders one statistic of a column of type t.
func writeStatValue(b *bytes.Buffer, t schema.Type, v any) {
	switch x := v.(type) {
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		bits := 64
		if p, ok := t.(*schema.Primitive); ok && p.Name == "float" {
			bits = 32
		}
		b.WriteString(strconv.FormatFloat(x, 'g', -1, bits))
	case string:
		writeJSONString(b, x)
	case Decimal:
		b.WriteString(x.PlainString())
	case time.Time:
		name := ""
		if p, ok := t.(*schema.Primitive); ok {
			name = p.Name
		}
		switch name {
		case "date":
			b.WriteString(`"` + x.Format("2006-01-02") + `"`)
		case "timestamp_ntz":
			b.WriteString(`"` + x.Format("2006-01-02T15:04:05.000") + `"`)
		default:
			b.WriteString(`"` + x.UTC().Format("2006-01-02T15:04:05.000Z") + `"`)
		}
	default:
		b.WriteString("null")
	}
}
