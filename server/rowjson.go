package server

import (
	"encoding/json"
	"strconv"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/internal/jsonappend"
)

// This file writes rows of the face's value model as JSON objects with
// their fields in column order, for lookup pages and join streams: the
// bytes encoding/json writes for each value (internal/jsonappend), without
// the reflection and key sorting of encoding a map[string]any per row (a
// third of a covered lookup's CPU when measured).

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

// appendValue appends v as json.Marshal writes it (HTML characters
// escaped, as the rest of the answer is written).
func appendValue(b []byte, v any) ([]byte, error) { return jsonappend.Value(b, v, true) }
