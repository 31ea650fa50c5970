package datafile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// jsonSource streams a JSON file as Spark's JSON reader does: by default one
// record per line (a line holding a top-level array yields one row per
// element); with multiLine the file is one document, an object (one row)
// or an array of objects, streamed element by element.
type jsonSource struct {
	br      *bufio.Reader
	rc      io.Closer
	p       *Plan
	o       *options
	byName  map[string]int // projected field name → position
	rec     int64
	pending [][]byte // elements of a top-level array line not yet converted

	// multiLine state
	dec     *json.Decoder
	started bool
	inArray bool
	done    bool
}

func newJSONSource(br *bufio.Reader, rc io.Closer, p *Plan) *jsonSource {
	s := &jsonSource{br: br, rc: rc, p: p, o: p.opts, byName: map[string]int{}}
	for i, f := range p.proj.Fields {
		s.byName[f.Name] = i
	}
	return s
}

func (s *jsonSource) close() error { return s.rc.Close() }

func (s *jsonSource) next(ctx context.Context) (pqrow.Row, error) {
	for {
		if s.rec%rowsPerContextCheck == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		raw, err := s.nextRecord()
		if err != nil {
			return nil, err
		}
		s.rec++
		row, keep, err := s.convert(raw)
		if err != nil {
			return nil, err
		}
		if keep {
			return row, nil
		}
	}
}

// nextRecord returns the raw text of the next record (possibly malformed).
func (s *jsonSource) nextRecord() ([]byte, error) {
	if s.o.multiLine {
		return s.nextElement()
	}
	for {
		if len(s.pending) > 0 {
			raw := s.pending[0]
			s.pending = s.pending[1:]
			return raw, nil
		}
		line, err := s.br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, s.readErr(err)
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			if err == io.EOF {
				return nil, io.EOF
			}
			continue
		}
		if trimmed[0] == '[' && json.Valid(trimmed) {
			elems, _ := arrayElements(trimmed)
			s.pending = elems
			continue
		}
		return trimmed, nil
	}
}

func (s *jsonSource) readErr(err error) error {
	if errors.Is(err, ErrCorruptFile) {
		return err
	}
	return fmt.Errorf("read: %w", err)
}

// nextElement streams a multiLine document.
func (s *jsonSource) nextElement() ([]byte, error) {
	if s.done {
		return nil, io.EOF
	}
	if !s.started {
		s.started = true
		s.dec = json.NewDecoder(s.br)
		// Peek at the first significant byte: '[' streams elements, '{' is
		// one record, nothing is an empty file.
		for {
			b, err := s.br.Peek(1)
			if err == io.EOF {
				s.done = true
				return nil, io.EOF
			}
			if err != nil {
				return nil, s.readErr(err)
			}
			switch b[0] {
			case ' ', '\t', '\r', '\n':
				s.br.ReadByte()
				continue
			case '[':
				if _, err := s.dec.Token(); err != nil {
					return nil, s.corrupt(err)
				}
				s.inArray = true
			}
			break
		}
	}
	if !s.inArray {
		s.done = true
		var raw json.RawMessage
		if err := s.dec.Decode(&raw); err != nil {
			return nil, s.corrupt(err)
		}
		return raw, nil
	}
	if !s.dec.More() {
		s.done = true
		if _, err := s.dec.Token(); err != nil { // the closing ']'
			return nil, s.corrupt(err)
		}
		return nil, io.EOF
	}
	var raw json.RawMessage
	if err := s.dec.Decode(&raw); err != nil {
		return nil, s.corrupt(err)
	}
	return raw, nil
}

// corrupt reports a multiLine document that is not well-formed. Spark would
// return one all-null row for the whole file in PERMISSIVE mode; streaming
// element by element, we have already returned the earlier elements, so the
// file is reported as corrupt in every mode (docs/datafiles.md).
func (s *jsonSource) corrupt(err error) error {
	if errors.Is(err, ErrCorruptFile) {
		return err
	}
	if errors.Is(err, store.ErrStorage) {
		return s.readErr(err) // the connection's fault, not the document's
	}
	var se *json.SyntaxError
	if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
		return fmt.Errorf("%w: multiLine JSON: %w", ErrCorruptFile, err)
	}
	return s.readErr(err)
}

// convert turns one raw record into a projected row (partial results: a
// field that fails to convert is null). keep is false when DROPMALFORMED
// drops the record; FAILFAST returns a *RecordError.
func (s *jsonSource) convert(raw []byte) (pqrow.Row, bool, error) {
	row := make(pqrow.Row, len(s.p.proj.Fields))
	var bad error
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		bad = &RecordError{Record: s.rec, Err: errors.New("not a JSON object")}
	} else {
		err := eachField(raw, func(key string, val []byte) error {
			i, ok := s.byName[key]
			if !ok {
				return nil
			}
			v, err := jsonValue(val, s.p.proj.Fields[i].Type, s.o)
			if err != nil {
				row[i] = nil
				if bad == nil {
					bad = &RecordError{Record: s.rec, Column: key, Err: err}
				}
				return nil
			}
			row[i] = v
			return nil
		})
		if err != nil && bad == nil {
			bad = &RecordError{Record: s.rec, Err: err}
		}
	}
	if bad != nil {
		switch s.o.mode {
		case FailFast:
			return nil, false, bad
		case DropMalformed:
			return nil, false, nil
		}
		if re := (*RecordError)(nil); errors.As(bad, &re) && re.Column == "" {
			clear(row) // an unparsable record is a row of nulls
		}
	}
	return row, true, nil
}

// eachField calls fn for every member of a JSON object, in document order.
// raw must be valid JSON.
func eachField(raw []byte, fn func(key string, val []byte) error) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return err
		}
		if err := fn(key, val); err != nil {
			return err
		}
	}
	return nil
}

// arrayElements splits a valid JSON array into its elements' raw text.
func arrayElements(raw []byte) ([][]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var out [][]byte
	for dec.More() {
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		out = append(out, val)
	}
	return out, nil
}

// jsonSupported reports whether the JSON reader can produce type t: every
// type except maps with non-primitive keys, variant and null.
func jsonSupported(t schema.Type) error {
	switch t := t.(type) {
	case *schema.Array:
		return jsonSupported(t.Element)
	case *schema.Struct:
		for _, f := range t.Fields {
			if err := jsonSupported(f.Type); err != nil {
				return err
			}
		}
		return nil
	case *schema.Map:
		if _, err := textConverter(t.Key, &options{}); err != nil {
			return fmt.Errorf("%w: JSON map key type %s", ErrUnsupported, t.Key)
		}
		return jsonSupported(t.Value)
	case *schema.Decimal:
		return nil
	case *schema.Primitive:
		switch t.Name {
		case "variant", "null":
			return fmt.Errorf("%w: type %s", ErrUnsupported, t.Name)
		}
		return nil
	}
	return fmt.Errorf("%w: type %s", ErrUnsupported, t)
}

// jsonValue converts one valid JSON value to type t as Spark's JacksonParser
// does: integers only from integral numbers, floating types from any
// number or the strings NaN/Infinity/INF, strings from strings (any other
// value as its compact JSON text), dates and timestamps from strings (a
// timestamp also from an integral number of seconds), binary from base64.
func jsonValue(raw []byte, t schema.Type, o *options) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	c := raw[0]
	isNum := c == '-' || (c >= '0' && c <= '9')
	isInt := isNum && !bytes.ContainsAny(raw, ".eE")
	str := func() (string, bool) {
		if c != '"' {
			return "", false
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	}
	mismatch := func() (any, error) {
		return nil, fmt.Errorf("cannot convert JSON %s to %s", abbreviate(raw), t)
	}
	switch t := t.(type) {
	case *schema.Array:
		if c != '[' {
			return mismatch()
		}
		elems, err := arrayElements(raw)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(elems))
		for i, e := range elems {
			if out[i], err = jsonValue(e, t.Element, o); err != nil {
				return nil, err
			}
		}
		return out, nil
	case *schema.Struct:
		if c != '{' {
			return mismatch()
		}
		out := make([]any, len(t.Fields))
		err := eachField(raw, func(key string, val []byte) error {
			for i, f := range t.Fields {
				if f.Name == key {
					v, err := jsonValue(val, f.Type, o)
					if err != nil {
						return err
					}
					out[i] = v
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	case *schema.Map:
		if c != '{' {
			return mismatch()
		}
		keyConv, err := textConverter(t.Key, o)
		if err != nil {
			return nil, err
		}
		out := []pqrow.KV{}
		err = eachField(raw, func(key string, val []byte) error {
			k, err := keyConv(key)
			if err != nil {
				return err
			}
			v, err := jsonValue(val, t.Value, o)
			if err != nil {
				return err
			}
			out = append(out, pqrow.KV{Key: k, Value: v})
			return nil
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	case *schema.Decimal:
		if s, ok := str(); ok {
			return parseJavaDecimal(s, t)
		}
		if !isNum {
			return mismatch()
		}
		return parseJavaDecimal(string(raw), t)
	case *schema.Primitive:
		switch t.Name {
		case "string":
			if s, ok := str(); ok {
				return s, nil
			}
			var b bytes.Buffer
			if err := json.Compact(&b, raw); err != nil {
				return nil, err
			}
			return b.String(), nil
		case "boolean":
			switch string(raw) {
			case "true":
				return true, nil
			case "false":
				return false, nil
			}
			return mismatch()
		case "byte", "short", "integer", "long":
			if !isInt {
				return mismatch()
			}
			bits := map[string]int{"byte": 8, "short": 16, "integer": 32, "long": 64}[t.Name]
			return parseJavaInt(string(raw), bits)
		case "float", "double":
			var f float64
			if s, ok := str(); ok {
				switch s {
				case "NaN":
					f = math.NaN()
				case "Infinity", "+Infinity", "INF", "+INF":
					f = math.Inf(1)
				case "-Infinity", "-INF":
					f = math.Inf(-1)
				default:
					return mismatch()
				}
			} else if isNum {
				var err error
				bits := 64
				if t.Name == "float" {
					bits = 32
				}
				if f, err = strconv.ParseFloat(string(raw), bits); err != nil && !errors.Is(err, strconv.ErrRange) {
					return mismatch()
				}
			} else {
				return mismatch()
			}
			if t.Name == "float" {
				return float32(f), nil
			}
			return f, nil
		case "binary":
			s, ok := str()
			if !ok {
				return mismatch()
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				if b, err = base64.RawStdEncoding.DecodeString(s); err != nil {
					return nil, fmt.Errorf("binary is not base64: %w", err)
				}
			}
			return b, nil
		case "date":
			s, ok := str()
			if !ok {
				return mismatch()
			}
			return timeParsers{o}.date(s)
		case "timestamp":
			if isInt {
				secs, err := strconv.ParseInt(string(raw), 10, 64)
				if err != nil || secs > math.MaxInt64/1_000_000 || secs < math.MinInt64/1_000_000 {
					return mismatch()
				}
				return time.UnixMicro(secs * 1e6).UTC(), nil
			}
			s, ok := str()
			if !ok {
				return mismatch()
			}
			return timeParsers{o}.timestamp(s)
		case "timestamp_ntz":
			s, ok := str()
			if !ok {
				return mismatch()
			}
			return timeParsers{o}.timestampNTZ(s)
		}
	}
	return nil, fmt.Errorf("%w: type %s", ErrUnsupported, t)
}

// abbreviate shortens a value for an error message.
func abbreviate(raw []byte) string {
	const max = 40
	if len(raw) > max {
		return string(raw[:max]) + "…"
	}
	return string(raw)
}
