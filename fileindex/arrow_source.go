package fileindex

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// ArrowSource returns a KeySource over an Arrow record reader, for callers
// whose keys are Arrow batches (from DuckDB's Arrow interface, a Flight
// stream, a pandas/polars hand-off). Supported column types: signed and
// unsigned integers, floats, booleans, strings and binaries (regular and
// large), date32, timestamps (any unit; with or without a zone), decimal128,
// lists, structs and maps. Other types fail with a clear error naming the
// column. The reader is released at the end of the stream.
func ArrowSource(rdr array.RecordReader) (KeySource, error) {
	st := &schema.Struct{}
	for _, f := range rdr.Schema().Fields() {
		t, err := sparkTypeOfArrow(f.Type)
		if err != nil {
			return nil, fmt.Errorf("fileindex: arrow column %q: %w", f.Name, err)
		}
		st.Fields = append(st.Fields, schema.Field{Name: f.Name, Type: t, Nullable: f.Nullable})
	}
	return &arrowKeys{rdr: rdr, st: st}, nil
}

type arrowKeys struct {
	rdr  array.RecordReader
	st   *schema.Struct
	done bool
}

func (a *arrowKeys) Schema() *schema.Struct { return a.st }

func (a *arrowKeys) Next(ctx context.Context) ([][]any, error) {
	if a.done {
		return nil, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !a.rdr.Next() {
		a.done = true
		err := a.rdr.Err()
		a.rdr.Release()
		if err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	rec := a.rdr.RecordBatch()
	rows := make([][]any, rec.NumRows())
	for i := range rows {
		rows[i] = make([]any, rec.NumCols())
	}
	for c := range int(rec.NumCols()) {
		col := rec.Column(c)
		for i := range rows {
			v, err := arrowValue(col, i)
			if err != nil {
				return nil, fmt.Errorf("fileindex: arrow column %q: %w", a.st.Fields[c].Name, err)
			}
			rows[i][c] = v
		}
	}
	return rows, nil
}

func sparkTypeOfArrow(t arrow.DataType) (schema.Type, error) {
	switch t := t.(type) {
	case *arrow.Int8Type:
		return schema.Byte, nil
	case *arrow.Int16Type, *arrow.Uint8Type:
		return schema.Short, nil
	case *arrow.Int32Type, *arrow.Uint16Type:
		return schema.Integer, nil
	case *arrow.Int64Type, *arrow.Uint32Type:
		return schema.Long, nil
	case *arrow.Uint64Type:
		return &schema.Decimal{Precision: 20, Scale: 0}, nil
	case *arrow.Float32Type:
		return schema.Float, nil
	case *arrow.Float64Type:
		return schema.Double, nil
	case *arrow.BooleanType:
		return schema.Boolean, nil
	case *arrow.StringType, *arrow.LargeStringType:
		return schema.String, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		return schema.Binary, nil
	case *arrow.Date32Type:
		return schema.Date, nil
	case *arrow.TimestampType:
		if t.TimeZone == "" {
			return schema.TimestampNTZ, nil
		}
		return schema.Timestamp, nil
	case *arrow.Decimal128Type:
		return &schema.Decimal{Precision: int(t.Precision), Scale: int(t.Scale)}, nil
	case *arrow.ListType:
		et, err := sparkTypeOfArrow(t.Elem())
		return &schema.Array{Element: et, ContainsNull: true}, err
	case *arrow.LargeListType:
		et, err := sparkTypeOfArrow(t.Elem())
		return &schema.Array{Element: et, ContainsNull: true}, err
	case *arrow.MapType:
		kt, err := sparkTypeOfArrow(t.KeyType())
		if err != nil {
			return nil, err
		}
		vt, err := sparkTypeOfArrow(t.ItemType())
		return &schema.Map{Key: kt, Value: vt, ValueContainsNull: true}, err
	case *arrow.StructType:
		st := &schema.Struct{}
		for _, f := range t.Fields() {
			ft, err := sparkTypeOfArrow(f.Type)
			if err != nil {
				return nil, err
			}
			st.Fields = append(st.Fields, schema.Field{Name: f.Name, Type: ft, Nullable: f.Nullable})
		}
		return st, nil
	}
	return nil, fmt.Errorf("unsupported Arrow type %s", t)
}

// arrowValue converts element i of an Arrow array to the row value model.
func arrowValue(col arrow.Array, i int) (any, error) {
	if col.IsNull(i) {
		return nil, nil
	}
	switch a := col.(type) {
	case *array.Int8:
		return a.Value(i), nil
	case *array.Int16:
		return a.Value(i), nil
	case *array.Uint8:
		return int16(a.Value(i)), nil
	case *array.Int32:
		return a.Value(i), nil
	case *array.Uint16:
		return int32(a.Value(i)), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Uint32:
		return int64(a.Value(i)), nil
	case *array.Uint64:
		return pqrow.Decimal{Unscaled: new(big.Int).SetUint64(a.Value(i)), Scale: 0}, nil
	case *array.Float32:
		return a.Value(i), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.Boolean:
		return a.Value(i), nil
	case *array.String:
		return a.Value(i), nil
	case *array.LargeString:
		return a.Value(i), nil
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.LargeBinary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.Date32:
		return pqrow.DateFromDays(int32(a.Value(i))), nil
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit).UTC().Truncate(time.Microsecond), nil
	case *array.Decimal128:
		v := a.Value(i)
		return pqrow.Decimal{Unscaled: v.BigInt(), Scale: a.DataType().(*arrow.Decimal128Type).Scale}, nil
	case *array.Map:
		start, end := a.ValueOffsets(i)
		keys, items := a.Keys(), a.Items()
		out := make([]pqrow.KV, 0, end-start)
		for j := int(start); j < int(end); j++ {
			k, err := arrowValue(keys, j)
			if err != nil {
				return nil, err
			}
			v, err := arrowValue(items, j)
			if err != nil {
				return nil, err
			}
			out = append(out, pqrow.KV{Key: k, Value: v})
		}
		return out, nil
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		out := make([]any, 0, end-start)
		for j := int(start); j < int(end); j++ {
			v, err := arrowValue(vals, j)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *array.Struct:
		out := make([]any, a.NumField())
		for f := range a.NumField() {
			v, err := arrowValue(a.Field(f), i)
			if err != nil {
				return nil, err
			}
			out[f] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported Arrow array %T", col)
}
