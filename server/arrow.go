package server

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ariadne-go/ariadne/schema"
)

// This file is the server's only contact with arrow-go: it writes rows of
// the face's value model as an Arrow IPC stream (Accept:
// application/vnd.apache.arrow.stream). The Arrow types follow the face's
// value model, so a value reads the same from Arrow as from JSON: every
// integer column is int64, float float32, double float64, dates date32,
// timestamps timestamp[us, UTC] (timestamp_ntz without a zone), decimals
// decimal128(p, s), arrays lists, structs structs; a map (whose face value
// is an object keyed by text) and any other type travel as their JSON text.

// arrowMIME is the media type of an Arrow IPC stream.
const arrowMIME = "application/vnd.apache.arrow.stream"

// arrowBatchRows is the number of rows per record batch.
const arrowBatchRows = 4096

func arrowType(t schema.Type) arrow.DataType {
	switch tt := t.(type) {
	case *schema.Primitive:
		switch tt {
		case schema.String:
			return arrow.BinaryTypes.String
		case schema.Binary:
			return arrow.BinaryTypes.Binary
		case schema.Boolean:
			return arrow.FixedWidthTypes.Boolean
		case schema.Byte, schema.Short, schema.Integer, schema.Long:
			return arrow.PrimitiveTypes.Int64
		case schema.Float:
			return arrow.PrimitiveTypes.Float32
		case schema.Double:
			return arrow.PrimitiveTypes.Float64
		case schema.Date:
			return arrow.FixedWidthTypes.Date32
		case schema.Timestamp:
			return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
		case schema.TimestampNTZ:
			return &arrow.TimestampType{Unit: arrow.Microsecond}
		}
	case *schema.Decimal:
		if tt.Precision >= 1 && tt.Precision <= 38 {
			return &arrow.Decimal128Type{Precision: int32(tt.Precision), Scale: int32(tt.Scale)}
		}
	case *schema.Array:
		return arrow.ListOf(arrowType(tt.Element))
	case *schema.Struct:
		fs := make([]arrow.Field, len(tt.Fields))
		for i, f := range tt.Fields {
			fs[i] = arrow.Field{Name: f.Name, Type: arrowType(f.Type), Nullable: true}
		}
		return arrow.StructOf(fs...)
	}
	return arrow.BinaryTypes.String // JSON text
}

// arrowSchema is the Arrow schema of rows with the fields of st.
func arrowSchema(st *schema.Struct) *arrow.Schema {
	fs := make([]arrow.Field, len(st.Fields))
	for i, f := range st.Fields {
		fs[i] = arrow.Field{Name: f.Name, Type: arrowType(f.Type), Nullable: true}
	}
	return arrow.NewSchema(fs, nil)
}

// arrowWriter writes rows as an Arrow IPC stream, a record batch every
// arrowBatchRows rows (and on Flush).
type arrowWriter struct {
	st  *schema.Struct
	b   *array.RecordBuilder
	w   *ipc.Writer
	n   int
	out func() // called after each batch (to flush the HTTP response)
}

func newArrowWriter(w io.Writer, st *schema.Struct, flush func()) *arrowWriter {
	sc := arrowSchema(st)
	return &arrowWriter{st: st, b: array.NewRecordBuilder(memory.DefaultAllocator, sc),
		w: ipc.NewWriter(w, ipc.WithSchema(sc)), out: flush}
}

// Write appends one row (aligned with the schema's fields).
func (a *arrowWriter) Write(row []any) error {
	for i, f := range a.st.Fields {
		if err := appendArrow(a.b.Field(i), f.Type, row[i]); err != nil {
			return fmt.Errorf("column %s: %w", f.Name, err)
		}
	}
	if a.n++; a.n >= arrowBatchRows {
		return a.Flush()
	}
	return nil
}

// Flush writes the rows appended so far as one record batch.
func (a *arrowWriter) Flush() error {
	if a.n == 0 {
		return nil
	}
	rec := a.b.NewRecordBatch()
	defer rec.Release()
	a.n = 0
	if err := a.w.Write(rec); err != nil {
		return err
	}
	if a.out != nil {
		a.out()
	}
	return nil
}

// Close flushes the last batch and ends the stream (writing the schema
// even when there was no row).
func (a *arrowWriter) Close() error {
	err := a.Flush()
	if cerr := a.w.Close(); err == nil {
		err = cerr
	}
	a.b.Release()
	return err
}

func appendArrow(b array.Builder, t schema.Type, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch bb := b.(type) {
	case *array.StringBuilder:
		if s, ok := v.(string); ok {
			bb.Append(s)
			return nil
		}
		j, err := json.Marshal(v)
		if err != nil {
			return err
		}
		bb.Append(string(j))
		return nil
	case *array.BinaryBuilder:
		if x, ok := v.([]byte); ok {
			bb.Append(x)
			return nil
		}
	case *array.BooleanBuilder:
		if x, ok := v.(bool); ok {
			bb.Append(x)
			return nil
		}
	case *array.Int64Builder:
		if x, ok := v.(int64); ok {
			bb.Append(x)
			return nil
		}
	case *array.Float32Builder:
		if x, ok := v.(float32); ok {
			bb.Append(x)
			return nil
		}
	case *array.Float64Builder:
		if x, ok := v.(float64); ok {
			bb.Append(x)
			return nil
		}
	case *array.Date32Builder:
		if x, ok := v.(time.Time); ok {
			bb.Append(arrow.Date32FromTime(x))
			return nil
		}
	case *array.TimestampBuilder:
		if x, ok := v.(time.Time); ok {
			bb.Append(arrow.Timestamp(x.UnixMicro()))
			return nil
		}
	case *array.Decimal128Builder:
		if x, ok := v.(json.Number); ok {
			dt := bb.Type().(*arrow.Decimal128Type)
			n, err := decimal128.FromString(string(x), dt.Precision, dt.Scale)
			if err != nil {
				return err
			}
			bb.Append(n)
			return nil
		}
	case *array.ListBuilder:
		if xs, ok := v.([]any); ok {
			bb.Append(true)
			et := t.(*schema.Array).Element
			for _, x := range xs {
				if err := appendArrow(bb.ValueBuilder(), et, x); err != nil {
					return err
				}
			}
			return nil
		}
	case *array.StructBuilder:
		if m, ok := v.(map[string]any); ok {
			bb.Append(true)
			for i, f := range t.(*schema.Struct).Fields {
				if err := appendArrow(bb.FieldBuilder(i), f.Type, m[f.Name]); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return fmt.Errorf("a %T value for an Arrow %s column", v, b.Type())
}
