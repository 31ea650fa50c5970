package sparkengine

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// arrowType maps a Spark type to the Arrow type Spark's own Arrow
// conversion uses (timestamps in µs, UTC for timestamp; decimal128).
func arrowType(t schema.Type) (arrow.DataType, error) {
	switch t := t.(type) {
	case *schema.Decimal:
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}, nil
	case *schema.Array:
		et, err := arrowType(t.Element)
		if err != nil {
			return nil, err
		}
		return arrow.ListOf(et), nil
	case *schema.Struct:
		var fs []arrow.Field
		for _, f := range t.Fields {
			ft, err := arrowType(f.Type)
			if err != nil {
				return nil, err
			}
			fs = append(fs, arrow.Field{Name: f.Name, Type: ft, Nullable: true})
		}
		return arrow.StructOf(fs...), nil
	}
	switch t {
	case schema.Boolean:
		return arrow.FixedWidthTypes.Boolean, nil
	case schema.Byte:
		return arrow.PrimitiveTypes.Int8, nil
	case schema.Short:
		return arrow.PrimitiveTypes.Int16, nil
	case schema.Integer:
		return arrow.PrimitiveTypes.Int32, nil
	case schema.Long:
		return arrow.PrimitiveTypes.Int64, nil
	case schema.Float:
		return arrow.PrimitiveTypes.Float32, nil
	case schema.Double:
		return arrow.PrimitiveTypes.Float64, nil
	case schema.String:
		return arrow.BinaryTypes.String, nil
	case schema.Binary:
		return arrow.BinaryTypes.Binary, nil
	case schema.Date:
		return arrow.FixedWidthTypes.Date32, nil
	case schema.Timestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
	case schema.TimestampNTZ:
		return &arrow.TimestampType{Unit: arrow.Microsecond}, nil
	}
	return nil, fmt.Errorf("type %s is not supported for keys sent to Spark", schema.TypeName(t))
}

// appendValue appends v (pqrow value model) to b.
func appendValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	bad := func() error { return fmt.Errorf("value %v (%T) does not fit %T", v, v, b) }
	switch b := b.(type) {
	case *array.BooleanBuilder:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Int8Builder:
		x, ok := v.(int8)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Int16Builder:
		x, ok := v.(int16)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Int32Builder:
		x, ok := v.(int32)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Int64Builder:
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Float32Builder:
		x, ok := v.(float32)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Float64Builder:
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.StringBuilder:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.BinaryBuilder:
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Date32Builder:
		x, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		secs := x.Unix()
		days := secs / 86400
		if secs%86400 < 0 {
			days-- // floor: dates before 1970
		}
		b.Append(arrow.Date32(days))
	case *array.TimestampBuilder:
		x, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		b.Append(arrow.Timestamp(x.UnixMicro()))
	case *array.Decimal128Builder:
		x, ok := v.(pqrow.Decimal)
		if !ok {
			return bad()
		}
		b.Append(decimal128.FromBigInt(x.Unscaled))
	case *array.ListBuilder:
		xs, ok := v.([]any)
		if !ok {
			return bad()
		}
		b.Append(true)
		for _, x := range xs {
			if err := appendValue(b.ValueBuilder(), x); err != nil {
				return err
			}
		}
	case *array.StructBuilder:
		xs, ok := v.([]any)
		if !ok || len(xs) != b.NumField() {
			return bad()
		}
		b.Append(true)
		for i, x := range xs {
			if err := appendValue(b.FieldBuilder(i), x); err != nil {
				return err
			}
		}
	default:
		return bad()
	}
	return nil
}

// keysIPC renders rows aligned with st as an Arrow IPC stream (the data of
// a Spark Connect LocalRelation).
func keysIPC(st *schema.Struct, rows [][]any) ([]byte, error) {
	var fs []arrow.Field
	for _, f := range st.Fields {
		t, err := arrowType(f.Type)
		if err != nil {
			return nil, fmt.Errorf("keys column %q: %w", f.Name, err)
		}
		fs = append(fs, arrow.Field{Name: f.Name, Type: t, Nullable: true})
	}
	sch := arrow.NewSchema(fs, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for _, r := range rows {
		for i := range st.Fields {
			if err := appendValue(b.Field(i), r[i]); err != nil {
				return nil, fmt.Errorf("keys column %q: %w", st.Fields[i].Name, err)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sch))
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// batchReader is an array.RecordReader over the Arrow batches of a Spark
// Connect response stream, pulled as the reader is read: a result is never
// held whole in memory. Each ArrowBatch is a complete IPC stream.
type batchReader struct {
	schema *arrow.Schema
	first  []arrow.RecordBatch // decoded ahead to learn the schema
	cur    arrow.RecordBatch
	pull   func() ([]byte, error) // next batch's IPC bytes; io.EOF at the end
	err    error
}

func decodeBatch(data []byte) (*arrow.Schema, []arrow.RecordBatch, error) {
	r, err := ipc.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	defer r.Release()
	var recs []arrow.RecordBatch
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	return r.Schema(), recs, r.Err()
}

func (b *batchReader) Retain()                        {}
func (b *batchReader) Release()                       { b.release() }
func (b *batchReader) Schema() *arrow.Schema          { return b.schema }
func (b *batchReader) RecordBatch() arrow.RecordBatch { return b.cur }
func (b *batchReader) Record() arrow.RecordBatch      { return b.cur }
func (b *batchReader) Err() error                     { return b.err }
func (b *batchReader) release() {
	if b.cur != nil {
		b.cur.Release()
		b.cur = nil
	}
	for _, r := range b.first {
		r.Release()
	}
	b.first = nil
}

func (b *batchReader) Next() bool {
	if b.cur != nil {
		b.cur.Release()
		b.cur = nil
	}
	for len(b.first) == 0 {
		if b.err != nil {
			return false
		}
		data, err := b.pull()
		if err != nil {
			if !errors.Is(err, errEnd) {
				b.err = err
			}
			return false
		}
		_, recs, err := decodeBatch(data)
		if err != nil {
			b.err = err
			return false
		}
		b.first = recs
	}
	b.cur, b.first = b.first[0], b.first[1:]
	return true
}

// errEnd marks the end of a result's batches.
var errEnd = errors.New("end of batches")
