package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/internal/jsonappend"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// jsonValue renders a value of the row model or of the face's value model
// as JSON, structs as objects in field order, timestamps as RFC 3339 UTC,
// dates as YYYY-MM-DD, decimals as exact strings (pqrow.Decimal) or numbers
// (the face's json.Number), binary as base64.
func jsonValue(b *bytes.Buffer, v any, t schema.Type) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case time.Time:
		if p, ok := t.(*schema.Primitive); ok && p == schema.Date {
			writeJSONString(b, v.Format("2006-01-02"))
		} else if ok && p == schema.TimestampNTZ {
			writeJSONString(b, v.Format("2006-01-02T15:04:05.999999"))
		} else {
			writeJSONString(b, v.UTC().Format(time.RFC3339Nano))
		}
	case pqrow.Decimal:
		writeJSONString(b, v.String())
	case []byte:
		writeJSONString(b, base64.StdEncoding.EncodeToString(v))
	case float32:
		pqrow.WriteJSONFloat(b, float64(v), 32)
	case float64:
		pqrow.WriteJSONFloat(b, v, 64)
	case []pqrow.KV:
		var kt, vt schema.Type
		if m, ok := t.(*schema.Map); ok {
			kt, vt = m.Key, m.Value
		}
		b.WriteByte('[')
		for i, kv := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('[')
			jsonValue(b, kv.Key, kt)
			b.WriteByte(',')
			jsonValue(b, kv.Value, vt)
			b.WriteByte(']')
		}
		b.WriteByte(']')
	case map[string]any:
		// A struct of the face's value model: its fields in schema order.
		if st, ok := t.(*schema.Struct); ok {
			row := make([]any, len(st.Fields))
			for i, f := range st.Fields {
				row[i] = v[f.Name]
			}
			jsonRow(b, row, st)
			return
		}
		var vt schema.Type
		if m, ok := t.(*schema.Map); ok {
			vt = m.Value
		}
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			jsonValue(b, v[k], vt)
		}
		b.WriteByte('}')
	case []any:
		if st, ok := t.(*schema.Struct); ok {
			jsonRow(b, v, st)
			return
		}
		var et schema.Type
		if a, ok := t.(*schema.Array); ok {
			et = a.Element
		}
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			jsonValue(b, e, et)
		}
		b.WriteByte(']')
	default:
		// json.Marshal's bytes (strings HTML-escaped), without its
		// reflection for the common scalars.
		data, err := jsonappend.Value(b.AvailableBuffer(), v, true)
		if err != nil {
			writeJSONString(b, fmt.Sprint(v))
			return
		}
		b.Write(data)
	}
}

// jsonRow renders a row as an object keyed by the schema's field names.
func jsonRow(b *bytes.Buffer, row []any, st *schema.Struct) {
	b.WriteByte('{')
	for i, f := range st.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(b, f.Name)
		b.WriteByte(':')
		var v any
		if i < len(row) {
			v = row[i]
		}
		jsonValue(b, v, f.Type)
	}
	b.WriteByte('}')
}

// writeJSONString writes s as an Encoder with SetEscapeHTML(false) does.
func writeJSONString(b *bytes.Buffer, s string) {
	b.Write(jsonappend.String(b.AvailableBuffer(), s, false))
}

// csvValue renders a value for a CSV cell: scalars as text (timestamps RFC
// 3339 UTC), nested values as JSON, null as the empty string.
func csvValue(v any, t schema.Type) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int8, int16, int32, int64, int:
		return fmt.Sprint(v)
	}
	var b bytes.Buffer
	jsonValue(&b, v, t)
	s := b.String()
	if len(s) >= 2 && s[0] == '"' {
		var unq string
		if json.Unmarshal([]byte(s), &unq) == nil {
			return unq
		}
	}
	return s
}

// shellWord returns s as one word of a POSIX shell command line: as it is
// when it holds only characters no shell treats specially (and does not
// start with '=', which zsh expands), else in single quotes (a single
// quote inside closed, escaped and reopened), so that a command a message
// suggests can be pasted whatever the table's name.
func shellWord(s string) string {
	if s != "" && s[0] != '=' && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.,:=@%+/", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// saveShapesCommand is the command that saves the shape files of table's
// row indexes, ready to paste: with the global flags given to this
// command that bear on it (the same store, without the URL's user info,
// which a message must not print; the config file; the row index keys
// set), and a name that starts with '-' after "--".
func (g *globals) saveShapesCommand(table string) string {
	cmd := []string{"ariadne"}
	if g.storeURL != "" {
		shown := g.storeURL
		if u, err := url.Parse(shown); err == nil && u.User != nil {
			u.User = nil
			shown = u.String()
		}
		cmd = append(cmd, "--store", shellWord(shown))
	}
	if g.configFile != "" {
		cmd = append(cmd, "--config", shellWord(g.configFile))
	}
	for _, kv := range g.set {
		if strings.HasPrefix(kv, "rowIndex") { // others (a Spark remote's token) stay out
			cmd = append(cmd, "--set", shellWord(kv))
		}
	}
	if strings.HasPrefix(table, "-") {
		cmd = append(cmd, "warm", "--save-shapes", "--", shellWord(table))
	} else {
		cmd = append(cmd, "warm", shellWord(table), "--save-shapes")
	}
	return strings.Join(cmd, " ")
}
