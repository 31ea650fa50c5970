package server

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/ariadne-go/ariadne"
)

// This file writes rows of the face's value model as JSON objects with
// their fields in column order, for lookup pages and join streams: the
// bytes encoding/json writes for each value, without the reflection and key
// sorting of encoding a map[string]any per row (a third of a covered
// lookup's CPU when measured).

// quoteNames returns each column name as a JSON string.
func quoteNames(cols []string) [][]byte {
	out := make([][]byte, len(cols))
	for i, c := range cols {
		out[i], _ = json.Marshal(c)
	}
	return out
}

// appendRow appends one row as a JSON object: for each column (names
// quoted by quoteNames) its value in vals, or, with vals nil, in rec.
func appendRow(b []byte, quoted [][]byte, cols []string, vals []any, rec map[string]any) ([]byte, error) {
	b = append(b, '{')
	for i, q := range quoted {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, q...)
		b = append(b, ':')
		var v any
		if vals != nil {
			v = vals[i]
		} else {
			v = rec[cols[i]]
		}
		var err error
		if b, err = appendValue(b, v); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendSource appends a lookup row's source as a JSON object: its key,
// data file URI, row group and row number in the file. The lookup answer
// carries the sources in "sources", beside "rows", one per row in the same
// order: the rows stay objects by column name, as the HTTP contract has
// them, and a column named like a source field cannot collide with it.
func appendSource(b []byte, row *ariadne.Row) ([]byte, error) {
	b = append(b, `{"key":`...)
	b, err := appendValue(b, row.Key)
	if err != nil {
		return b, err
	}
	b = append(b, `,"file":`...)
	if b, err = appendValue(b, row.File); err != nil {
		return b, err
	}
	b = append(b, `,"row_group":`...)
	b = strconv.AppendInt(b, int64(row.RowGroup), 10)
	b = append(b, `,"row":`...)
	b = strconv.AppendInt(b, row.Row, 10)
	return append(b, '}'), nil
}

// appendValue appends v as encoding/json writes it.
func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case string:
		// Plain text (file URIs, most strings) needs no escaping.
		if plainString(x) {
			b = append(b, '"')
			b = append(b, x...)
			return append(b, '"'), nil
		}
	case time.Time:
		// MarshalJSON's bytes: RFC 3339 with sub-second precision, quoted.
		if b, ok := appendUTC(b, x); ok {
			return b, nil
		}
		b = append(b, '"')
		b, err := x.AppendText(b)
		return append(b, '"'), err
	}
	j, err := json.Marshal(v)
	return append(b, j...), err
}

// appendUTC appends a UTC time of years 0–9999 as MarshalJSON does
// ("2006-01-02T15:04:05.999999999Z", trailing zeros of the fraction cut),
// without the general layout interpreter (every timestamp of a page goes
// through here); false for other times.
func appendUTC(b []byte, t time.Time) ([]byte, bool) {
	if t.Location() != time.UTC {
		return b, false
	}
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return b, false
	}
	h, mi, s := t.Clock()
	b = append(b, '"')
	b = appendDigits(b, y, 4)
	b = append(b, '-')
	b = appendDigits(b, int(mo), 2)
	b = append(b, '-')
	b = appendDigits(b, d, 2)
	b = append(b, 'T')
	b = appendDigits(b, h, 2)
	b = append(b, ':')
	b = appendDigits(b, mi, 2)
	b = append(b, ':')
	b = appendDigits(b, s, 2)
	if ns := t.Nanosecond(); ns != 0 {
		w := 9
		for ns%10 == 0 {
			ns /= 10
			w--
		}
		b = append(b, '.')
		b = appendDigits(b, ns, w)
	}
	return append(b, 'Z', '"'), true
}

// appendDigits appends v (≥ 0) zero-padded to w digits.
func appendDigits(b []byte, v, w int) []byte {
	var buf [9]byte
	for i := w - 1; i >= 0; i-- {
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, buf[:w]...)
}

// plainString reports whether encoding/json writes s as is between quotes:
// printable ASCII without '"', '\\' and the HTML characters it escapes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
