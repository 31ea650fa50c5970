package datafile

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// Resolver maps an object URI ("s3://bucket/key", "file:///abs/path") to
// the store holding it and the object's key in that store. The store
// package's *store.Resolver satisfies it; it must be safe for concurrent
// use, and the stores it returns stay owned by it (readers never close
// them).
type Resolver interface {
	Resolve(ctx context.Context, uri string) (store.Store, string, error)
}

// Format is a data file format, as stored in metadata.json's "format".
type Format string

// The formats Spark's reader supports for an index.
const (
	CSV     Format = "csv"
	JSON    Format = "json"
	Parquet Format = "parquet"
)

// Spec says how to read an index's data files: the stored format, schema and
// read options (Spark option names, case-insensitive, unknown ones ignored).
type Spec struct {
	Format  string
	Schema  *schema.Struct
	Options map[string]string
	// BatchRows is the number of rows per batch returned by Next (0:
	// DefaultBatchRows).
	BatchRows int
}

// DefaultBatchRows is the default batch size. A batch of 1024 rows of a
// typical index schema (tens of columns, short values, ~100 B a row) is
// ~100 KiB: large enough to amortise per-batch costs (an appender flush,
// a channel send), small enough that a few batches in flight per file stay
// far below any memory budget.
const DefaultBatchRows = 1024

// readBufferSize is the buffer over a CSV or JSON object's ranged read:
// 256 KiB means one object-store request serves ~2,500 rows of 100 B and
// keeps a sequential stream's request count at size/256 KiB.
const readBufferSize = 256 << 10

// Plan is a compiled Spec and projection: the options are parsed and the
// converters built once, then any number of files are opened with it. A Plan
// is immutable and safe for concurrent use.
type Plan struct {
	format    Format
	full      *schema.Struct // the stored schema
	proj      *schema.Struct // the projected schema
	idx       []int          // proj field i is full field idx[i]
	opts      *options
	csvConv   []textConv // per projected field (CSV only)
	batchRows int
}

// Compile validates a Spec and a projection (top-level column names; nil
// means every column, in schema order). An unknown format is
// aerr.ErrInvalidArgument ("Unsupported format: <f>", spec §5.9), an unknown
// column aerr.ErrColumnNotFound, a type the format cannot read
// ErrUnsupported.
func Compile(spec Spec, columns []string) (*Plan, error) {
	if spec.Schema == nil {
		return nil, aerr.New(aerr.ErrMissingSchema, "datafile: no schema to read with")
	}
	f := Format(strings.ToLower(strings.TrimSpace(spec.Format)))
	switch f {
	case CSV, JSON, Parquet:
	default:
		return nil, aerr.Invalid("Unsupported format: %s", spec.Format)
	}
	o, err := parseOptions(spec.Options)
	if err != nil {
		return nil, err
	}
	p := &Plan{format: f, full: spec.Schema, opts: o, batchRows: spec.BatchRows}
	if p.batchRows <= 0 {
		p.batchRows = DefaultBatchRows
	}
	if columns == nil {
		columns = spec.Schema.Names()
	}
	p.proj = &schema.Struct{}
	for _, c := range columns {
		i := fieldIndex(spec.Schema, c)
		if i < 0 {
			return nil, aerr.ColumnNotFound(c)
		}
		p.idx = append(p.idx, i)
		p.proj.Fields = append(p.proj.Fields, spec.Schema.Fields[i])
	}
	switch f {
	case CSV:
		// Spark refuses the whole schema, not only the projected part.
		for _, fd := range spec.Schema.Fields {
			if _, err := textConverter(fd.Type, o); err != nil {
				return nil, fmt.Errorf("%w: CSV data source does not support %s (column %q)", ErrUnsupported, fd.Type, fd.Name)
			}
		}
		for _, fd := range p.proj.Fields {
			c, _ := textConverter(fd.Type, o)
			p.csvConv = append(p.csvConv, c)
		}
	case JSON:
		for _, fd := range p.proj.Fields {
			if err := jsonSupported(fd.Type); err != nil {
				return nil, fmt.Errorf("%w (column %q)", err, fd.Name)
			}
		}
	}
	return p, nil
}

func fieldIndex(st *schema.Struct, name string) int {
	for i, f := range st.Fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// Schema returns the projected schema: the shape of every row read.
func (p *Plan) Schema() *schema.Struct { return p.proj }

// Format returns the plan's format.
func (p *Plan) Format() Format { return p.format }

// Mode returns the parse mode (CSV and JSON).
func (p *Plan) Mode() Mode { return p.opts.mode }

// source yields one file's rows; next returns io.EOF at the end.
type source interface {
	next(ctx context.Context) (pqrow.Row, error)
	close() error
}

// Reader reads one data file's rows in batches. A Reader is not safe for
// concurrent use; Close it when done (also after an error).
type Reader struct {
	uri  string
	plan *Plan
	src  source
	err  error // sticky
}

// Open opens the file at uri through res and starts reading it with the
// plan. A missing file is a *FileError matching store.ErrNotExist; a file
// that is not of the format (Parquet) one matching ErrCorruptFile.
func (p *Plan) Open(ctx context.Context, res Resolver, uri string) (*Reader, error) {
	st, key, err := res.Resolve(ctx, uri)
	if err != nil {
		return nil, &FileError{URI: uri, Err: err}
	}
	var src source
	switch p.format {
	case Parquet:
		src, err = openParquet(ctx, st, key, uri, p)
	default:
		var rc io.ReadCloser
		rc, err = openText(ctx, st, key)
		if err == nil {
			br := bufio.NewReaderSize(rc, readBufferSize)
			if p.format == CSV {
				src = newCSVSource(br, rc, p)
			} else {
				src = newJSONSource(br, rc, p)
			}
		}
	}
	if err != nil {
		return nil, &FileError{URI: uri, Err: err}
	}
	return &Reader{uri: uri, plan: p, src: src}, nil
}

// Open compiles spec and columns and opens one file; see Compile and
// Plan.Open.
func Open(ctx context.Context, res Resolver, uri string, spec Spec, columns []string) (*Reader, error) {
	p, err := Compile(spec, columns)
	if err != nil {
		return nil, err
	}
	return p.Open(ctx, res, uri)
}

// openText opens a whole object as one sequential ranged read, gunzipped
// when the key ends in ".gz" (as Hadoop's codec factory does for Spark).
func openText(ctx context.Context, st store.Store, key string) (io.ReadCloser, error) {
	rc, err := st.NewRangeReader(ctx, key, 0, -1)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(strings.ToLower(key), ".gz") {
		return rc, nil
	}
	zr, err := gzip.NewReader(bufio.NewReaderSize(rc, readBufferSize))
	if err != nil {
		rc.Close()
		if errors.Is(err, io.EOF) { // an empty .gz object: no rows
			return io.NopCloser(strings.NewReader("")), nil
		}
		return nil, fmt.Errorf("%w: gzip: %w", ErrCorruptFile, err)
	}
	return &gzipReadCloser{zr: zr, rc: rc}, nil
}

type gzipReadCloser struct {
	zr *gzip.Reader
	rc io.ReadCloser
}

func (g *gzipReadCloser) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	if err != nil && err != io.EOF && !errors.Is(err, store.ErrStorage) {
		err = fmt.Errorf("%w: gzip: %w", ErrCorruptFile, err)
	}
	return n, err
}

func (g *gzipReadCloser) Close() error {
	g.zr.Close()
	return g.rc.Close()
}

// URI returns the file's URI as passed to Open.
func (r *Reader) URI() string { return r.uri }

// Schema returns the projected schema of the rows.
func (r *Reader) Schema() *schema.Struct { return r.plan.proj }

// Next returns the next batch of at most the plan's BatchRows rows, each
// aligned with Schema() and owned by the caller. At the end it returns
// (nil, io.EOF). Any other error is a *FileError naming the file, and is
// returned again by every later call.
func (r *Reader) Next(ctx context.Context) ([]pqrow.Row, error) {
	if r.err != nil {
		return nil, r.err
	}
	var batch []pqrow.Row
	for len(batch) < r.plan.batchRows {
		row, err := r.src.next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			r.err = &FileError{URI: r.uri, Err: err}
			return nil, r.err
		}
		batch = append(batch, row)
	}
	if len(batch) == 0 {
		r.err = io.EOF
		return nil, io.EOF
	}
	return batch, nil
}

// Close releases the file.
func (r *Reader) Close() error {
	if r.src == nil {
		return nil
	}
	err := r.src.close()
	r.src = nil
	if r.err == nil {
		r.err = errors.New("datafile: reader closed")
	}
	return err
}
