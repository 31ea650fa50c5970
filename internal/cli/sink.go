package cli

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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
	f, err := os.Create(path)
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
		s = &parquetSink{w: pqrow.NewWriter(f, unique, pqrow.WriterOptions{})}
	default:
		err = usagef("--out %s: want a .csv, .json or .parquet file", path)
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return &fileSink{rowSink: s, f: f}, nil
}

type fileSink struct {
	rowSink
	f *os.File
}

func (s *fileSink) close() error {
	err := s.rowSink.close()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
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

type parquetSink struct{ w *pqrow.Writer }

func (s *parquetSink) write(rows [][]any) error {
	for _, r := range rows {
		if err := s.w.Write(r); err != nil {
			return fmt.Errorf("parquet: %w", err)
		}
	}
	return nil
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
