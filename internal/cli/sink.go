package cli

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// rowSink receives result rows and writes them somewhere.
type rowSink interface {
	write(rows [][]any) error
	close() error
}

// newRowSink writes to path (by extension: .csv, .json for JSON lines,
// .parquet), or to w when path is "" (JSON lines with jsonLines, else CSV
// with a header).
//
// A join's result may repeat a column name (USING keeps both sides'
// non-join columns, as Spark does); CSV headers keep the repeats, but
// Parquet schemas and JSON objects cannot, so there later repeats are
// renamed name_2, name_3, ...
func newRowSink(w io.Writer, path string, jsonLines bool, st *schema.Struct) (rowSink, error) {
	unique := uniqueNames(st)
	if path == "" {
		if jsonLines {
			return &jsonSink{w: bufio.NewWriter(w), st: unique}, nil
		}
		return newCSVSink(w, st)
	}
	// Written to a temporary file beside path and renamed over it once
	// complete: a join that fails mid-stream (a stale row index, a read
	// error) leaves no partial file behind (abortSink).
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, err
	}
	var s rowSink
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		s, err = newCSVSink(f, st)
	case ".json", ".jsonl", ".ndjson":
		s = &jsonSink{w: bufio.NewWriter(f), st: unique}
	case ".parquet":
		s = &parquetSink{w: pqrow.NewWriter(f, unique, pqrow.WriterOptions{}), st: unique}
	default:
		err = usagef("--out %s: want a .csv, .json or .parquet file", path)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	return &fileSink{rowSink: s, f: f, path: path}, nil
}

type fileSink struct {
	rowSink
	f    *os.File // the temporary file
	path string   // where it goes once complete
}

func (s *fileSink) close() error {
	err := s.rowSink.close()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(s.f.Name(), s.path)
	}
	if err != nil {
		os.Remove(s.f.Name())
	}
	return err
}

// abortSink ends a sink after an error: a file's output is discarded (its
// temporary file removed, an existing file at its path kept); what went to
// a stream has gone, the rest is flushed.
func abortSink(s rowSink) {
	if fs, ok := s.(*fileSink); ok {
		fs.f.Close()
		os.Remove(fs.f.Name())
		return
	}
	s.close()
}

type csvSink struct {
	w  *csv.Writer
	st *schema.Struct
}

func newCSVSink(w io.Writer, st *schema.Struct) (*csvSink, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(st.Names()); err != nil {
		return nil, err
	}
	return &csvSink{w: cw, st: st}, nil
}

func (s *csvSink) write(rows [][]any) error {
	rec := make([]string, len(s.st.Fields))
	for _, r := range rows {
		for i, f := range s.st.Fields {
			rec[i] = csvValue(r[i], f.Type)
		}
		if err := s.w.Write(rec); err != nil {
			return err
		}
	}
	return nil
}

func (s *csvSink) close() error { s.w.Flush(); return s.w.Error() }

type jsonSink struct {
	w  *bufio.Writer
	st *schema.Struct
}

func (s *jsonSink) write(rows [][]any) error {
	var b bytes.Buffer
	for _, r := range rows {
		b.Reset()
		jsonRow(&b, r, s.st)
		b.WriteByte('\n')
		if _, err := s.w.Write(b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

func (s *jsonSink) close() error { return s.w.Flush() }

// parquetSink writes rows of the face's value model (a join's) to Parquet
// with the result's schema, bringing them back to the writer's row model.
type parquetSink struct {
	w  *pqrow.Writer
	st *schema.Struct
}

func (s *parquetSink) write(rows [][]any) error {
	for _, r := range rows {
		row := make([]any, len(r))
		for i, f := range s.st.Fields {
			v, err := rowModel(f.Type, r[i])
			if err != nil {
				return fmt.Errorf("parquet: column %s: %w", f.Name, err)
			}
			row[i] = v
		}
		if err := s.w.Write(row); err != nil {
			return fmt.Errorf("parquet: %w", err)
		}
	}
	return nil
}

// rowModel brings a value of the face's value model (structs and maps as
// objects, decimals as json.Number) back to the row model of package pqrow
// (structs positional, maps as key-value lists, decimals as pqrow.Decimal)
// for a column of type t; scalars pass as they are (the writer takes any Go
// integer that fits).
func rowModel(t schema.Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch tt := t.(type) {
	case *schema.Decimal:
		if n, ok := v.(json.Number); ok {
			return pqrow.ParseDecimal(string(n), int32(tt.Scale))
		}
	case *schema.Struct:
		if m, ok := v.(map[string]any); ok {
			out := make([]any, len(tt.Fields))
			for i, f := range tt.Fields {
				x, err := rowModel(f.Type, m[f.Name])
				if err != nil {
					return nil, err
				}
				out[i] = x
			}
			return out, nil
		}
	case *schema.Array:
		if xs, ok := v.([]any); ok {
			out := make([]any, len(xs))
			for i, x := range xs {
				y, err := rowModel(tt.Element, x)
				if err != nil {
					return nil, err
				}
				out[i] = y
			}
			return out, nil
		}
	case *schema.Map:
		if m, ok := v.(map[string]any); ok {
			kvs := make([]pqrow.KV, 0, len(m))
			for _, k := range slices.Sorted(maps.Keys(m)) {
				key, err := mapKey(tt.Key, k)
				if err != nil {
					return nil, err
				}
				val, err := rowModel(tt.Value, m[k])
				if err != nil {
					return nil, err
				}
				kvs = append(kvs, pqrow.KV{Key: key, Value: val})
			}
			return kvs, nil
		}
	}
	return v, nil
}

// mapKey parses a map key the face gives as text back to the key type.
func mapKey(t schema.Type, s string) (any, error) {
	switch t {
	case schema.String:
		return s, nil
	case schema.Binary:
		return []byte(s), nil
	case schema.Byte, schema.Short, schema.Integer, schema.Long:
		return strconv.ParseInt(s, 10, 64)
	case schema.Float:
		f, err := strconv.ParseFloat(s, 32)
		return float32(f), err
	case schema.Double:
		return strconv.ParseFloat(s, 64)
	case schema.Boolean:
		return strconv.ParseBool(s)
	case schema.Date, schema.Timestamp, schema.TimestampNTZ:
		return time.Parse(time.RFC3339Nano, s)
	}
	if d, ok := t.(*schema.Decimal); ok {
		return pqrow.ParseDecimal(s, int32(d.Scale))
	}
	return nil, fmt.Errorf("a map key of type %s cannot be written back from text", t)
}

func (s *parquetSink) close() error { _, err := s.w.Close(); return err }

// uniqueNames renames repeated top-level field names to name_2, name_3, …
// (skipping names already taken).
func uniqueNames(st *schema.Struct) *schema.Struct {
	seen := map[string]bool{}
	for _, f := range st.Fields {
		seen[f.Name] = false
	}
	out := &schema.Struct{Fields: append([]schema.Field(nil), st.Fields...)}
	for i, f := range out.Fields {
		if !seen[f.Name] {
			seen[f.Name] = true
			continue
		}
		for n := 2; ; n++ {
			name := fmt.Sprintf("%s_%d", f.Name, n)
			if _, taken := seen[name]; !taken {
				out.Fields[i].Name = name
				seen[name] = true
				break
			}
		}
	}
	return out
}
