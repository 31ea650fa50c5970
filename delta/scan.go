package delta

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// ScanOptions select what a scan returns.
type ScanOptions struct {
	// Columns are the top-level logical column names to return, in this
	// order; nil returns every column of the schema in schema order.
	Columns []string
}

// Scan yields every live row of the snapshot: files in path order, rows in
// file order, partition values filled in, column mapping applied and rows
// deleted by deletion vectors skipped. Rows are aligned with opts.Columns
// (or the schema) and use the value model of package pqrow. Iteration stops
// at the first error, which is yielded with a nil row.
func (s *Snapshot) Scan(ctx context.Context, opts ScanOptions) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		for _, f := range s.files {
			for row, err := range s.ScanFile(ctx, f, opts) {
				if !yield(row, err) || err != nil {
					return
				}
			}
		}
	}
}

// ScanFile yields the live rows of one active file of the snapshot, as Scan
// does.
func (s *Snapshot) ScanFile(ctx context.Context, f AddFile, opts ScanOptions) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		fail := func(err error) { yield(nil, err) }
		fields, err := s.scanFields(opts.Columns)
		if err != nil {
			fail(err)
			return
		}
		part := make(map[string]bool, len(s.metadata.PartitionColumns))
		for _, c := range s.metadata.PartitionColumns {
			part[c] = true
		}
		// Partition values of the requested partition columns, and the
		// data fields to read from the file.
		out := make([]any, len(fields))
		var data schema.Struct
		var dataPos []int
		for i, fd := range fields {
			if part[fd.Name] {
				raw, ok := f.PartitionValues.Get(s.colmap.toPhys[fd.Name])
				if !ok {
					raw, ok = f.PartitionValues.Get(fd.Name)
				}
				if !ok {
					continue
				}
				v, err := parsePartitionValue(fd.Type, raw)
				if err != nil {
					fail(fmt.Errorf("delta: %s: partition column %q: %w", f.Path, fd.Name, err))
					return
				}
				out[i] = v
				continue
			}
			data.Fields = append(data.Fields, fd)
			dataPos = append(dataPos, i)
		}
		dv, err := LoadDeletionVector(ctx, s.st, f.DeletionVector)
		if err != nil {
			fail(err)
			return
		}
		name, err := DecodePath(f.Path)
		if err != nil {
			fail(corrupt(f.Path, 0, err))
			return
		}
		key, err := tableKey(s.st, name)
		if err != nil {
			fail(fmt.Errorf("delta: %w", err))
			return
		}
		size := f.Size
		if size <= 0 {
			info, err := s.st.Stat(ctx, key)
			if err != nil {
				fail(fmt.Errorf("delta: data file %s: %w", key, err))
				return
			}
			size = info.Size
		}
		pf, err := pqrow.OpenFile(store.NewReaderAt(ctx, s.st, key, size), size)
		if err != nil {
			fail(fmt.Errorf("delta: data file %s: %w", key, err))
			return
		}
		rowIndex := uint64(0)
		ro := pqrow.ReadOptions{ByFieldID: s.colmap.mode == MappingID}
		for r, err := range pf.Rows(ctx, &data, ro) {
			if err != nil {
				fail(fmt.Errorf("delta: data file %s: %w", key, err))
				return
			}
			idx := rowIndex
			rowIndex++
			if dv.Cardinality() > 0 && dv.Contains(idx) {
				continue
			}
			row := make([]any, len(fields))
			copy(row, out)
			for j, p := range dataPos {
				row[p] = r[j]
			}
			if !yield(row, nil) {
				return
			}
		}
	}
}

// scanFields resolves the requested columns against the logical schema.
func (s *Snapshot) scanFields(cols []string) ([]schema.Field, error) {
	if cols == nil {
		return s.schema.Fields, nil
	}
	out := make([]schema.Field, len(cols))
	for i, c := range cols {
		f, ok := s.schema.Field(c)
		if !ok {
			return nil, fmt.Errorf("delta: column %q is not in the table schema %s", c, s.schema)
		}
		out[i] = f
	}
	return out, nil
}

// parsePartitionValue parses a serialised partition value (PROTOCOL.md,
// "Partition Value Serialization") as a value of type t. An empty string is
// null, as Spark writes it.
func parsePartitionValue(t schema.Type, s string) (any, error) {
	if s == "" {
		return nil, nil
	}
	switch t := t.(type) {
	case *schema.Decimal:
		return pqrow.ParseDecimal(s, int32(t.Scale))
	case *schema.Primitive:
		switch t.Name {
		case "string":
			return s, nil
		case "binary":
			return []byte(s), nil
		case "boolean":
			return strconv.ParseBool(s)
		case "byte":
			v, err := strconv.ParseInt(s, 10, 8)
			return int8(v), err
		case "short":
			v, err := strconv.ParseInt(s, 10, 16)
			return int16(v), err
		case "integer":
			v, err := strconv.ParseInt(s, 10, 32)
			return int32(v), err
		case "long":
			return strconv.ParseInt(s, 10, 64)
		case "float":
			v, err := strconv.ParseFloat(s, 32)
			return float32(v), err
		case "double":
			return strconv.ParseFloat(s, 64)
		case "date":
			d, err := time.Parse("2006-01-02", s)
			return d, err
		case "timestamp", "timestamp_ntz":
			return parsePartitionTimestamp(s)
		}
	}
	return nil, fmt.Errorf("partition values of type %s are not supported", t)
}

// parsePartitionTimestamp accepts Spark's "2006-01-02 15:04:05[.ffffff]"
// and ISO-8601 forms ("2006-01-02T15:04:05.000000Z"), read as UTC, truncated
// to microseconds.
func parsePartitionTimestamp(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Truncate(time.Microsecond), nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp %q is not in a known partition value format", strings.TrimSpace(s))
}
