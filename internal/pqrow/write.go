package pqrow

import (
	"fmt"
	"io"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// WriterOptions configure a Writer. The zero value writes as Spark does by
// default: snappy, 128 MiB row groups, stats on the first 32 leaf columns,
// logical field names.
type WriterOptions struct {
	// PhysicalNames names columns by their column-mapping physical names
	// (delta.columnMapping.physicalName) where the field metadata has one.
	// Field ids (delta.columnMapping.id) are written whenever present.
	PhysicalNames bool
	// Codec is the compression: "snappy" (default), "zstd", "gzip" or
	// "uncompressed".
	Codec string
	// RowGroupBytes is the target uncompressed size of a row group
	// (default DefaultRowGroupBytes).
	RowGroupBytes int64
	// StatsColumns is the number of leading leaf columns with statistics
	// (0: DefaultStatsColumns; -1: all; StatsNone: none, only numRecords).
	StatsColumns int
	// CreatedBy is the footer's created_by application (default
	// "ariadne-go").
	CreatedBy string
	// Metadata is added to the footer's key/value metadata.
	Metadata map[string]string
}

// StatsNone as WriterOptions.StatsColumns collects no column statistics
// (Delta's delta.dataSkippingNumIndexedCols = 0).
const StatsNone = -2

// DefaultRowGroupBytes is Spark's parquet.block.size, 128 MiB. Row groups
// are buffered in memory until flushed, so this is also the writer's
// memory bound (plus parquet-go's encoding overhead).
const DefaultRowGroupBytes = 128 << 20

// Writer writes rows of a Spark schema to one Parquet file. It is not safe
// for concurrent use. Nothing is guaranteed to reach the underlying
// io.Writer before Close returns.
type Writer struct {
	pw      *parquet.Writer
	root    *wnode
	st      *schema.Struct
	stats   *statsCollector
	err     error // sticky
	target  int64
	pending int64 // estimated bytes in the current row group
	total   int64 // estimated bytes of all rows written
	cols    [][]parquet.Value
	buf     []parquet.Row
	closed  bool
}

// rowBatch is the number of shredded rows handed to parquet-go at once.
const rowBatch = 256

// NewWriter starts a Parquet file of schema st on w. An invalid schema
// (unsupported type, duplicate names) is reported by the first Write or by
// Close.
func NewWriter(w io.Writer, st *schema.Struct, opts WriterOptions) *Writer {
	wr := &Writer{st: st, target: opts.RowGroupBytes}
	if wr.target <= 0 {
		wr.target = DefaultRowGroupBytes
	}
	if len(st.Fields) == 0 {
		wr.err = fmt.Errorf("%w: schema without fields", ErrUnsupported)
		return wr
	}
	sch, root, err := buildWriteSchema(st, opts.PhysicalNames)
	if err != nil {
		wr.err = err
		return wr
	}
	var codec compress.Codec = &parquet.Snappy
	switch opts.Codec {
	case "", "snappy":
	case "zstd":
		codec = &parquet.Zstd
	case "gzip":
		codec = &parquet.Gzip
	case "uncompressed", "none":
		codec = &parquet.Uncompressed
	default:
		wr.err = fmt.Errorf("%w: codec %q", ErrUnsupported, opts.Codec)
		return wr
	}
	createdBy := opts.CreatedBy
	if createdBy == "" {
		createdBy = "ariadne-go"
	}
	wopts := []parquet.WriterOption{sch, parquet.Compression(codec), parquet.CreatedBy(createdBy, "", "")}
	for k, v := range opts.Metadata {
		wopts = append(wopts, parquet.KeyValueMetadata(k, v))
	}
	limit := opts.StatsColumns
	switch {
	case limit == 0:
		limit = DefaultStatsColumns
	case limit < -1:
		limit = 0
	}
	wr.pw = parquet.NewWriter(w, wopts...)
	wr.root = root
	wr.stats = newStatsCollector(st, limit, opts.PhysicalNames)
	wr.cols = make([][]parquet.Value, root.last)
	return wr
}

// Write adds rows. Each row must hold one value per top-level field, of the
// Go type documented on Row (integers of any Go integer type are accepted
// when in range); a value that does not fit fails with ErrSchemaMismatch
// and leaves the Writer unusable.
func (w *Writer) Write(rows ...Row) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("pqrow: write after Close")
	}
	for _, row := range rows {
		if err := w.writeRow(row); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

func (w *Writer) writeRow(row Row) error {
	if len(row) != len(w.root.fields) {
		return fmt.Errorf("%w: row has %d values for %d fields", ErrSchemaMismatch, len(row), len(w.root.fields))
	}
	for i := range w.cols {
		w.cols[i] = w.cols[i][:0]
	}
	size := int64(0)
	for i, f := range w.root.fields {
		n, err := w.shred(f, row[i], 0, 0)
		if err != nil {
			return err
		}
		size += n
	}
	n := 0
	for _, c := range w.cols {
		n += len(c)
	}
	prow := make(parquet.Row, 0, n)
	for _, c := range w.cols {
		prow = append(prow, c...)
	}
	w.stats.add(row)
	w.buf = append(w.buf, prow)
	w.pending += size
	w.total += size
	if len(w.buf) >= rowBatch {
		if err := w.flushRows(); err != nil {
			return err
		}
	}
	if w.pending >= w.target {
		if err := w.flushRows(); err != nil {
			return err
		}
		if err := w.pw.Flush(); err != nil {
			return err
		}
		w.pending = 0
	}
	return nil
}

func (w *Writer) flushRows() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.pw.WriteRows(w.buf)
	clear(w.buf)
	w.buf = w.buf[:0]
	return err
}

// shred appends the Parquet values of v at node n (the Dremel encoding);
// rep is the repetition level of the first value, def the definition level
// of n's parent. It returns an estimate of the bytes added.
func (w *Writer) shred(n *wnode, v any, rep, def int) (int64, error) {
	if v == nil {
		if !n.optional {
			return 0, colErr(n.path, ErrSchemaMismatch, "null in non-nullable field")
		}
		w.nulls(n, rep, def)
		return 1, nil
	}
	d := n.def
	switch n.kind {
	case kLeaf:
		pv, err := n.enc(v)
		if err != nil {
			return 0, err
		}
		w.cols[n.col] = append(w.cols[n.col], pv.Level(rep, d, n.col))
		if k := pv.Kind(); k == parquet.ByteArray || k == parquet.FixedLenByteArray {
			return int64(8 + len(pv.ByteArray())), nil
		}
		return 8, nil
	case kStruct:
		vals, ok := v.([]any)
		if !ok || len(vals) != len(n.fields) {
			return 0, colErr(n.path, ErrSchemaMismatch, "struct value must be []any of %d values, got %T", len(n.fields), v)
		}
		var size int64
		for i, c := range n.fields {
			s, err := w.shred(c, vals[i], rep, d)
			if err != nil {
				return 0, err
			}
			size += s
		}
		return size, nil
	case kList:
		vals, ok := v.([]any)
		if !ok {
			return 0, colErr(n.path, ErrSchemaMismatch, "array value must be []any, got %T", v)
		}
		if len(vals) == 0 {
			w.nulls(n, rep, d)
			return 1, nil
		}
		var size int64
		for i, e := range vals {
			r := rep
			if i > 0 {
				r = n.rep
			}
			s, err := w.shred(n.elem, e, r, d+1)
			if err != nil {
				return 0, err
			}
			size += s
		}
		return size, nil
	case kMap:
		kvs, ok := v.([]KV)
		if !ok {
			return 0, colErr(n.path, ErrSchemaMismatch, "map value must be []pqrow.KV, got %T", v)
		}
		if len(kvs) == 0 {
			w.nulls(n, rep, d)
			return 1, nil
		}
		var size int64
		for i, kv := range kvs {
			r := rep
			if i > 0 {
				r = n.rep
			}
			if kv.Key == nil {
				return 0, colErr(n.path, ErrSchemaMismatch, "null map key")
			}
			s1, err := w.shred(n.key, kv.Key, r, d+1)
			if err != nil {
				return 0, err
			}
			s2, err := w.shred(n.value, kv.Value, r, d+1)
			if err != nil {
				return 0, err
			}
			size += s1 + s2
		}
		return size, nil
	}
	return 0, fmt.Errorf("pqrow: unknown node kind %d", n.kind)
}

// nulls appends a null (or empty) value at the given levels to every leaf
// column below n.
func (w *Writer) nulls(n *wnode, rep, def int) {
	for c := n.first; c < n.last; c++ {
		w.cols[c] = append(w.cols[c], parquet.NullValue().Level(rep, def, c))
	}
}

// Close writes the footer and returns the file's statistics. It does not
// close the underlying io.Writer.
func (w *Writer) Close() (FileStats, error) {
	if w.closed {
		return FileStats{}, fmt.Errorf("pqrow: Close called twice")
	}
	w.closed = true
	if w.err != nil {
		return FileStats{}, w.err
	}
	if err := w.flushRows(); err != nil {
		return FileStats{}, err
	}
	if err := w.pw.Close(); err != nil {
		return FileStats{}, err
	}
	return w.stats.result(), nil
}

// EstimatedSize returns the estimated uncompressed size of the rows
// written so far (8 bytes per fixed-width value plus the bytes of strings
// and binaries). Callers use it to roll files at a target size; the file
// itself is smaller after encoding and compression.
func (w *Writer) EstimatedSize() int64 { return w.total }

// NumRows returns the number of rows written so far.
func (w *Writer) NumRows() int64 {
	if w.stats == nil {
		return 0
	}
	return w.stats.rows
}
