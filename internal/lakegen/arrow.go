package lakegen

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ariadne-go/ariadne/store"
)

// arrowSchema is Listen as an Arrow schema: the same names, the same
// required columns and a UTC microsecond timestamp, so the Parquet schema
// matches the one parquet-go writes for Listen.
var arrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "user_id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	{Name: "track_uri", Type: arrow.BinaryTypes.String},
	{Name: "duration_ms", Type: arrow.PrimitiveTypes.Int32},
	{Name: "context", Type: arrow.BinaryTypes.String},
}, nil)

// writerProps returns the Parquet writer properties of an arrow-go writer
// (WriterArrow: nil, arrow-go's defaults; WriterPyArrow: pyarrow's).
func writerProps(writer string) *parquet.WriterProperties {
	if writer != WriterPyArrow {
		return nil
	}
	// pyarrow.parquet.write_table's defaults that differ from arrow-go's:
	// SNAPPY for every column (use_dictionary, the 1 MiB data and
	// dictionary page limits, version 2.6, data page v1 and no page index
	// are arrow-go's defaults too).
	return parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
}

// writeArrow writes rows as one record batch with pqarrow's writer, its
// default Arrow properties and the Parquet properties of writer (see
// WriterArrow, WriterPyArrow).
func writeArrow(ctx context.Context, st store.Store, key string, rows []Listen, writer string) (int64, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrowSchema)
	defer b.Release()
	uid := b.Field(0).(*array.Int64Builder)
	ts := b.Field(1).(*array.TimestampBuilder)
	track := b.Field(2).(*array.StringBuilder)
	dur := b.Field(3).(*array.Int32Builder)
	cx := b.Field(4).(*array.StringBuilder)
	for _, r := range rows {
		uid.Append(r.UserID)
		ts.Append(arrow.Timestamp(r.TS.UnixMicro()))
		track.Append(r.TrackURI)
		dur.Append(r.DurationMS)
		cx.Append(r.Context)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()

	w, err := st.NewWriter(ctx, key, nil)
	if err != nil {
		return 0, err
	}
	cw := &store.CountingWriter{W: w}
	fw, err := pqarrow.NewFileWriter(arrowSchema, cw, writerProps(writer), pqarrow.DefaultWriterProps())
	if err != nil {
		w.Abort()
		return 0, err
	}
	if err := fw.Write(rec); err != nil {
		w.Abort()
		return 0, err
	}
	if err := fw.Close(); err != nil {
		w.Abort()
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return cw.N, nil
}
