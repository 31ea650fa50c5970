package metadata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/ariadne-go/ariadne/aerr"
)

// JSON field names of metadata.json, in the order Marshal writes them (§4.6).
const (
	fieldFormat               = "format"
	fieldSchema               = "schema"
	fieldIndexes              = "indexes"
	fieldComputedIndexes      = "computed_indexes"
	fieldExplodedFieldIndexes = "exploded_field_indexes"
	fieldBloomIndexes         = "bloom_indexes"
	fieldTemporalIndexes      = "temporal_indexes"
	fieldReadOptions          = "read_options"
	fieldRangeIndexes         = "range_indexes"
	fieldAutoBloomIndexes     = "auto_bloom_indexes"
	fieldTotalIndexedFileSize = "total_indexed_file_size"
	fieldBatchesSinceCompact  = "batches_since_compact"
	fieldMetadataVersion      = "metadata_version"
	fieldStorageFormatVersion = "storage_format_version"
)

// Causes carried by the ErrMetadataMissingOrCorrupt errors of Parse.
var (
	// ErrBlank: the text is empty or only whitespace.
	ErrBlank = errors.New("metadata: empty or blank metadata")
	// ErrNull: the text is the JSON literal null.
	ErrNull = errors.New("metadata: metadata is JSON null")
	// ErrMissingRequired: format or schema is absent or null (the
	// original's IllegalStateException).
	ErrMissingRequired = errors.New("missing required field 'format' or 'schema'")
)

// FieldError is the cause of a parse failure in one field: a value of the
// wrong JSON type, an out-of-range number, a duplicate map key.
type FieldError struct {
	Field string // JSON field name, e.g. "bloom_indexes"
	Err   error
}

func (e *FieldError) Error() string { return "metadata: field " + e.Field + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }

// Parse reads metadata.json with the load rules of §4.6:
//
//   - empty or blank text, a JSON syntax error, the JSON literal null, a
//     value that is not an object, or a field of the wrong type fails with
//     aerr.ErrMetadataMissingOrCorrupt (the cause says which);
//   - an absent or null format or schema fails the same way, with cause
//     ErrMissingRequired;
//   - every absent or null collection becomes empty, total_indexed_file_size
//     −1 and batches_since_compact 0; the version markers stay nil when
//     absent;
//   - unknown fields are ignored (and so dropped by the next Marshal).
//
// Like Gson, string fields accept JSON numbers and booleans (kept as their
// literal text) and numeric fields accept numeric strings; integer fields
// accept integral values written as decimals ("10.0") and fail when out of
// range for their Java type (int for the counters and markers, long for the
// total size). Maps reject duplicate keys, like Gson's map adapter. Null
// entries inside lists and null values inside maps are rejected and dropped
// respectively (Gson would keep them and fail later).
func Parse(data []byte) (*Metadata, error) {
	if len(bytes.TrimFunc(data, isJavaWhitespace)) == 0 {
		return nil, aerr.MetadataMissingOrCorrupt(ErrBlank)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, aerr.MetadataMissingOrCorrupt(err)
	}
	if top == nil {
		return nil, aerr.MetadataMissingOrCorrupt(ErrNull)
	}
	m, err := fromFields(top)
	if err != nil {
		return nil, aerr.MetadataMissingOrCorrupt(err)
	}
	return m, nil
}

// isJavaWhitespace matches the characters String.trim removes.
func isJavaWhitespace(r rune) bool { return r <= ' ' }

func fromFields(top map[string]json.RawMessage) (*Metadata, error) {
	m := &Metadata{TotalIndexedFileSize: UnknownTotalIndexedFileSize}
	var (
		ok  bool
		err error
	)
	wrap := func(field string, err error) error {
		if err == nil {
			return nil
		}
		return &FieldError{Field: field, Err: err}
	}
	var hasFormat, hasSchema bool
	if m.Format, hasFormat, err = decodeString(top[fieldFormat]); err != nil {
		return nil, wrap(fieldFormat, err)
	}
	if m.Schema, hasSchema, err = decodeString(top[fieldSchema]); err != nil {
		return nil, wrap(fieldSchema, err)
	}
	if !hasFormat || !hasSchema {
		return nil, ErrMissingRequired
	}
	if m.Indexes, err = decodeStrings(top[fieldIndexes]); err != nil {
		return nil, wrap(fieldIndexes, err)
	}
	if m.ComputedIndexes, err = decodeStringMap(top[fieldComputedIndexes]); err != nil {
		return nil, wrap(fieldComputedIndexes, err)
	}
	if m.ExplodedFieldIndexes, err = decodeObjects(top[fieldExplodedFieldIndexes], func(o map[string]json.RawMessage) (e ExplodedFieldIndex, err error) {
		if e.ArrayColumn, _, err = decodeString(o["array_column"]); err != nil {
			return e, fmt.Errorf("array_column: %w", err)
		}
		if e.FieldPath, _, err = decodeString(o["field_path"]); err != nil {
			return e, fmt.Errorf("field_path: %w", err)
		}
		if e.AsColumn, _, err = decodeString(o["as_column"]); err != nil {
			return e, fmt.Errorf("as_column: %w", err)
		}
		return e, nil
	}); err != nil {
		return nil, wrap(fieldExplodedFieldIndexes, err)
	}
	if m.BloomIndexes, err = decodeObjects(top[fieldBloomIndexes], func(o map[string]json.RawMessage) (e BloomIndex, err error) {
		if e.Column, _, err = decodeString(o["column"]); err != nil {
			return e, fmt.Errorf("column: %w", err)
		}
		if e.FPR, _, err = decodeDouble(o["fpr"]); err != nil {
			return e, fmt.Errorf("fpr: %w", err)
		}
		return e, nil
	}); err != nil {
		return nil, wrap(fieldBloomIndexes, err)
	}
	if m.TemporalIndexes, err = decodeObjects(top[fieldTemporalIndexes], func(o map[string]json.RawMessage) (e TemporalIndex, err error) {
		if e.Column, _, err = decodeString(o["column"]); err != nil {
			return e, fmt.Errorf("column: %w", err)
		}
		if e.TimestampColumn, _, err = decodeString(o["timestamp_column"]); err != nil {
			return e, fmt.Errorf("timestamp_column: %w", err)
		}
		return e, nil
	}); err != nil {
		return nil, wrap(fieldTemporalIndexes, err)
	}
	if m.ReadOptions, err = decodeStringMap(top[fieldReadOptions]); err != nil {
		return nil, wrap(fieldReadOptions, err)
	}
	if m.RangeIndexes, err = decodeObjects(top[fieldRangeIndexes], func(o map[string]json.RawMessage) (e RangeIndex, err error) {
		if e.Column, _, err = decodeString(o["column"]); err != nil {
			return e, fmt.Errorf("column: %w", err)
		}
		return e, nil
	}); err != nil {
		return nil, wrap(fieldRangeIndexes, err)
	}
	if m.AutoBloomIndexes, err = decodeStrings(top[fieldAutoBloomIndexes]); err != nil {
		return nil, wrap(fieldAutoBloomIndexes, err)
	}
	var n int64
	if n, ok, err = decodeInteger(top[fieldTotalIndexedFileSize], math.MinInt64, math.MaxInt64); err != nil {
		return nil, wrap(fieldTotalIndexedFileSize, err)
	} else if ok {
		m.TotalIndexedFileSize = n
	}
	if n, ok, err = decodeInteger(top[fieldBatchesSinceCompact], math.MinInt32, math.MaxInt32); err != nil {
		return nil, wrap(fieldBatchesSinceCompact, err)
	} else if ok {
		m.BatchesSinceCompact = int(n)
	}
	if m.MetadataVersion, err = decodeIntMarker(top[fieldMetadataVersion]); err != nil {
		return nil, wrap(fieldMetadataVersion, err)
	}
	if m.StorageFormatVersion, err = decodeIntMarker(top[fieldStorageFormatVersion]); err != nil {
		return nil, wrap(fieldStorageFormatVersion, err)
	}
	m.setDefaults()
	return m, nil
}

// isNull reports whether raw is absent or the JSON literal null.
func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// decodeString decodes a string field the way Gson's String adapter does:
// strings as they are, numbers and booleans as their literal text, null (or
// absent) as not present.
func decodeString(raw json.RawMessage) (string, bool, error) {
	if isNull(raw) {
		return "", false, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false, err
		}
		return s, true, nil
	case 't', 'f', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return string(raw), true, nil
	}
	return "", false, fmt.Errorf("expected a string, found %s", jsonKind(raw))
}

// decodeStrings decodes a list of strings; null or absent is empty.
func decodeStrings(raw json.RawMessage) ([]string, error) {
	var elems []json.RawMessage
	if err := decodeList(raw, &elems); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(elems))
	for i, e := range elems {
		s, ok, err := decodeString(e)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		if !ok {
			return nil, fmt.Errorf("element %d is null", i)
		}
		out = append(out, s)
	}
	return out, nil
}

// decodeObjects decodes a list of objects with conv; null or absent is empty.
func decodeObjects[T any](raw json.RawMessage, conv func(map[string]json.RawMessage) (T, error)) ([]T, error) {
	var elems []json.RawMessage
	if err := decodeList(raw, &elems); err != nil {
		return nil, err
	}
	out := make([]T, 0, len(elems))
	for i, e := range elems {
		if isNull(e) {
			return nil, fmt.Errorf("element %d is null", i)
		}
		if e[0] != '{' {
			return nil, fmt.Errorf("element %d: expected an object, found %s", i, jsonKind(e))
		}
		var o map[string]json.RawMessage
		if err := json.Unmarshal(e, &o); err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		v, err := conv(o)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func decodeList(raw json.RawMessage, elems *[]json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	if raw[0] != '[' {
		return fmt.Errorf("expected a list, found %s", jsonKind(raw))
	}
	return json.Unmarshal(raw, elems)
}

// decodeStringMap decodes an object of strings keeping key order; null or
// absent is empty. Null values are dropped (Gson does not write them back);
// a duplicate key is an error (as in Gson's map adapter).
func decodeStringMap(raw json.RawMessage) (StringMap, error) {
	var m StringMap
	if isNull(raw) {
		return m, nil
	}
	if raw[0] != '{' {
		return m, fmt.Errorf("expected an object, found %s", jsonKind(raw))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return m, err
	}
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return m, err
		}
		key := tok.(string) // object keys are always strings
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return m, err
		}
		if seen[key] {
			return m, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		s, ok, err := decodeString(val)
		if err != nil {
			return m, fmt.Errorf("key %q: %w", key, err)
		}
		if ok {
			m.entries = append(m.entries, stringEntry{key, s})
		}
	}
	return m, nil
}

// numberText returns the text of a JSON number, or of a string holding one
// (Gson's numeric adapters accept both).
func numberText(raw json.RawMessage) (string, error) {
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return string(raw), nil
	}
	return "", fmt.Errorf("expected a number, found %s", jsonKind(raw))
}

// decodeInteger decodes an integer in [lo, hi]; null or absent is not
// present. Integral decimals ("10.0", "1e1") are accepted, as by Gson.
func decodeInteger(raw json.RawMessage, lo, hi int64) (int64, bool, error) {
	if isNull(raw) {
		return 0, false, nil
	}
	text, err := numberText(raw)
	if err != nil {
		return 0, false, err
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(text, 64)
		if ferr != nil || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
			return 0, false, fmt.Errorf("%s is not an integer", text)
		}
		n = int64(f)
	}
	if n < lo || n > hi {
		return 0, false, fmt.Errorf("%s is out of range [%d, %d]", text, lo, hi)
	}
	return n, true, nil
}

// decodeIntMarker decodes a nullable int version marker.
func decodeIntMarker(raw json.RawMessage) (*int, error) {
	n, ok, err := decodeInteger(raw, math.MinInt32, math.MaxInt32)
	if err != nil || !ok {
		return nil, err
	}
	v := int(n)
	return &v, nil
}

// decodeDouble decodes a finite double; null or absent is 0, not present.
func decodeDouble(raw json.RawMessage) (float64, bool, error) {
	if isNull(raw) {
		return 0, false, nil
	}
	text, err := numberText(raw)
	if err != nil {
		return 0, false, err
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false, fmt.Errorf("%s is not a finite number", text)
	}
	return f, true, nil
}

// jsonKind names the JSON type of a raw value, for messages.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
