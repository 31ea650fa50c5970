// Package infer derives a Spark schema from a sample of a CSV or JSON data
// file, following Spark's inference rules closely enough that an index
// created with `--infer-from` matches what a Spark user would have passed:
// CSV columns widen integer → long → double → string (booleans and
// timestamps when every value parses as one), JSON numbers are long or
// double, objects are structs with fields sorted by name, arrays take the
// widened element type, and a column with only nulls is a string.
package infer

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/schema"
)

// MaxSampleRows bounds how many records are inspected; inference reads at
// most this many rows, so memory and time stay bounded on large files.
const MaxSampleRows = 10000

// ErrNoRows reports a file with no data rows to infer from.
var ErrNoRows = errors.New("infer: no rows to infer a schema from")

// CSVOptions are the Spark CSV reader options inference honours.
type CSVOptions struct {
	Header    bool
	Delimiter rune // 0 = ','
	Quote     rune // 0 = '"'
}

// CSVOptionsFrom reads header/delimiter/sep/quote from Spark-style read options.
func CSVOptionsFrom(opts map[string]string) CSVOptions {
	var o CSVOptions
	o.Header = strings.EqualFold(opts["header"], "true")
	for _, k := range []string{"delimiter", "sep"} {
		if d := opts[k]; d != "" {
			if d == `\t` {
				o.Delimiter = '\t'
			} else {
				o.Delimiter = []rune(d)[0]
			}
		}
	}
	if q := opts["quote"]; q != "" {
		o.Quote = []rune(q)[0]
	}
	return o
}

type csvKind int

const (
	kNull csvKind = iota
	kInt
	kLong
	kDouble
	kBool
	kTimestamp
	kString
)

func classify(s string) csvKind {
	if s == "" {
		return kNull
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n >= -1<<31 && n < 1<<31 {
			return kInt
		}
		return kLong
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return kDouble
	}
	if strings.EqualFold(s, "true") || strings.EqualFold(s, "false") {
		return kBool
	}
	if _, ok := ParseTimestamp(s); ok {
		return kTimestamp
	}
	return kString
}

// ParseTimestamp parses the timestamp forms Spark infers by default.
func ParseTimestamp(s string) (time.Time, bool) {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func widenCSV(a, b csvKind) csvKind {
	switch {
	case a == b:
		return a
	case a == kNull:
		return b
	case b == kNull:
		return a
	}
	num := func(k csvKind) bool { return k == kInt || k == kLong || k == kDouble }
	if num(a) && num(b) {
		return max(a, b)
	}
	return kString
}

// CSV infers a schema from CSV text.
func CSV(r io.Reader, o CSVOptions) (*schema.Struct, error) {
	cr := csv.NewReader(r)
	if o.Delimiter != 0 {
		cr.Comma = o.Delimiter
	}
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	var names []string
	var kinds []csvKind
	rows := 0
	for rows < MaxSampleRows {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("infer: csv: %w", err)
		}
		if names == nil {
			if o.Header {
				names = append([]string(nil), rec...)
				kinds = make([]csvKind, len(names))
				continue
			}
			for i := range rec {
				names = append(names, "_c"+strconv.Itoa(i))
			}
			kinds = make([]csvKind, len(names))
		}
		rows++
		for i := range names {
			v := ""
			if i < len(rec) {
				v = rec[i]
			}
			kinds[i] = widenCSV(kinds[i], classify(v))
		}
	}
	if rows == 0 {
		return nil, ErrNoRows
	}
	st := &schema.Struct{}
	for i, n := range names {
		var t schema.Type
		switch kinds[i] {
		case kInt:
			t = schema.Integer
		case kLong:
			t = schema.Long
		case kDouble:
			t = schema.Double
		case kBool:
			t = schema.Boolean
		case kTimestamp:
			t = schema.Timestamp
		default:
			t = schema.String
		}
		st.Fields = append(st.Fields, schema.Field{Name: n, Type: t, Nullable: true})
	}
	return st, nil
}

// JSON infers a schema from line-delimited JSON, or from one JSON array of
// objects when multiLine is set (Spark's multiLine option).
func JSON(r io.Reader, multiLine bool) (*schema.Struct, error) {
	var acc schema.Type
	rows := 0
	add := func(raw json.RawMessage) error {
		var v any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("infer: json: %w", err)
		}
		if _, ok := v.(map[string]any); !ok {
			return fmt.Errorf("infer: json: record %d is not an object", rows+1)
		}
		acc = widenJSON(acc, jsonType(v))
		rows++
		return nil
	}
	if multiLine {
		dec := json.NewDecoder(r)
		var top json.RawMessage
		if err := dec.Decode(&top); err != nil {
			return nil, fmt.Errorf("infer: json: %w", err)
		}
		top = bytes.TrimSpace(top)
		if len(top) > 0 && top[0] == '[' {
			var items []json.RawMessage
			if err := json.Unmarshal(top, &items); err != nil {
				return nil, fmt.Errorf("infer: json: %w", err)
			}
			for _, it := range items[:min(len(items), MaxSampleRows)] {
				if err := add(it); err != nil {
					return nil, err
				}
			}
		} else if err := add(top); err != nil {
			return nil, err
		}
	} else {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() && rows < MaxSampleRows {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			if err := add(append(json.RawMessage(nil), line...)); err != nil {
				return nil, err
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("infer: json: %w", err)
		}
	}
	if rows == 0 {
		return nil, ErrNoRows
	}
	st, _ := finalize(acc).(*schema.Struct)
	return st, nil
}

// jsonType returns the type of one JSON value; nil for JSON null.
func jsonType(v any) schema.Type {
	switch v := v.(type) {
	case nil:
		return nil
	case bool:
		return schema.Boolean
	case json.Number:
		if _, err := v.Int64(); err == nil && !strings.ContainsAny(v.String(), ".eE") {
			return schema.Long
		}
		return schema.Double
	case string:
		return schema.String
	case []any:
		var el schema.Type
		for _, e := range v {
			el = widenJSON(el, jsonType(e))
		}
		return &schema.Array{Element: el, ContainsNull: true}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		st := &schema.Struct{}
		for _, k := range keys {
			st.Fields = append(st.Fields, schema.Field{Name: k, Type: jsonType(v[k]), Nullable: true})
		}
		return st
	}
	return schema.String
}

func widenJSON(a, b schema.Type) schema.Type {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	if pa, ok := a.(*schema.Primitive); ok {
		if pb, ok := b.(*schema.Primitive); ok {
			if pa == pb {
				return pa
			}
			if (pa == schema.Long && pb == schema.Double) || (pa == schema.Double && pb == schema.Long) {
				return schema.Double
			}
			return schema.String
		}
		return schema.String
	}
	switch a := a.(type) {
	case *schema.Array:
		if b, ok := b.(*schema.Array); ok {
			return &schema.Array{Element: widenJSON(a.Element, b.Element), ContainsNull: true}
		}
	case *schema.Struct:
		if b, ok := b.(*schema.Struct); ok {
			merged := map[string]schema.Type{}
			var names []string
			for _, st := range []*schema.Struct{a, b} {
				for _, f := range st.Fields {
					if prev, seen := merged[f.Name]; seen {
						merged[f.Name] = widenJSON(prev, f.Type)
					} else {
						merged[f.Name] = f.Type
						names = append(names, f.Name)
					}
				}
			}
			slices.Sort(names)
			out := &schema.Struct{}
			for _, n := range names {
				out.Fields = append(out.Fields, schema.Field{Name: n, Type: merged[n], Nullable: true})
			}
			return out
		}
	}
	return schema.String
}

// finalize replaces unknown (all-null) types with string, as Spark does.
func finalize(t schema.Type) schema.Type {
	switch t := t.(type) {
	case nil:
		return schema.String
	case *schema.Array:
		return &schema.Array{Element: finalize(t.Element), ContainsNull: true}
	case *schema.Struct:
		out := &schema.Struct{}
		for _, f := range t.Fields {
			out.Fields = append(out.Fields, schema.Field{Name: f.Name, Type: finalize(f.Type), Nullable: true})
		}
		return out
	}
	return t
}
