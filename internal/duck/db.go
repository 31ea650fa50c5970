package duck

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/duckdb/duckdb-go/v2"
)

// Options are a database's explicit settings. Nothing is left to DuckDB's
// machine-wide defaults, so one index update cannot take every core or
// most of the memory of a shared host by accident.
type Options struct {
	// Threads is DuckDB's worker count (0: runtime.GOMAXPROCS(0)).
	Threads int
	// MemoryLimit is DuckDB's memory_limit, e.g. "2GB" ("" : DefaultMemoryLimit).
	// Past it, DuckDB spills sorts, aggregates and joins to TempDirectory.
	MemoryLimit string
	// TempDirectory is where DuckDB spills ("" : no spilling; queries
	// larger than MemoryLimit fail with an out-of-memory ErrSQL).
	TempDirectory string
}

// DefaultMemoryLimit bounds one database to 1 GiB: the file index runs one
// database per update batch, and a batch is sized (largeIndexLimit = 500,000
// distinct values per column, §3.10) so that its per-file value sets,
// at ~100 B per value in DuckDB's hash tables, need ~50 MB per indexed
// column; 1 GiB holds ~20 such columns in memory before spilling.
const DefaultMemoryLimit = "1GB"

// DB is one in-memory DuckDB database with a single connection. Tables
// loaded into it live until Drop or Close. A DB is not safe for concurrent
// use (a query's Rows hold the connection until closed); open one DB per
// goroutine: each is an independent database.
type DB struct {
	connector *duckdb.Connector
	db        *sql.DB
	conn      *sql.Conn
}

// Open opens an in-memory database with the given settings. Extension
// auto-installation and auto-loading are switched off: the engine must
// never reach the network, nor open files itself.
func Open(ctx context.Context, opts Options) (*DB, error) {
	threads := opts.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	mem := opts.MemoryLimit
	if mem == "" {
		mem = DefaultMemoryLimit
	}
	settings := []string{
		fmt.Sprintf("SET threads = %d", threads),
		"SET memory_limit = " + String(mem),
		"SET autoinstall_known_extensions = false",
		"SET autoload_known_extensions = false",
		"SET preserve_insertion_order = true",
		// Spark: x / 0 and x % 0 are NULL (not Infinity or NaN) in every type.
		"SET ieee_floating_point_ops = false",
	}
	if opts.TempDirectory != "" {
		settings = append(settings, "SET temp_directory = "+String(opts.TempDirectory))
	} else {
		settings = append(settings, "SET temp_directory = ''")
	}
	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, fmt.Errorf("duck: open: %w", err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		connector.Close()
		return nil, fmt.Errorf("duck: open: %w", err)
	}
	d := &DB{connector: connector, db: db, conn: conn}
	for _, s := range settings {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			d.Close()
			return nil, sqlErr(s, err)
		}
	}
	if err := registerSparkFunctions(conn); err != nil {
		d.Close()
		return nil, err
	}
	for _, s := range sparkArithMacros() {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			d.Close()
			return nil, sqlErr(s, err)
		}
	}
	return d, nil
}

// Close closes the database and frees everything in it.
func (d *DB) Close() error {
	err := d.conn.Close()
	if e := d.db.Close(); err == nil {
		err = e
	}
	if e := d.connector.Close(); err == nil {
		err = e
	}
	return err
}

// Exec runs statements that return no rows. Arguments bind to ? or $n
// placeholders. Errors are *SQLError (ErrSQL).
func (d *DB) Exec(ctx context.Context, query string, args ...any) error {
	_, err := d.conn.ExecContext(ctx, query, args...)
	return sqlErr(query, err)
}

// Source is a stream of rows with a Spark schema: datafile.Relation,
// datafile.Reader and *Rows all are one. Next returns batches (each row
// aligned with Schema, in the pqrow value model) and (nil, io.EOF) at the
// end.
type Source interface {
	Schema() *schema.Struct
	Next(ctx context.Context) ([]pqrow.Row, error)
}

// Load creates table name with the columns of src's schema (DuckType) and
// streams every row of src into it through DuckDB's appender, returning the
// number of rows. The table is an ordinary in-memory table: DuckDB keeps it
// within MemoryLimit by evicting to TempDirectory. On error the table is
// dropped.
//
// Why the appender and not an Arrow view: duckdb-go's Arrow interface is
// compiled only with the duckdb_arrow build tag, which every build, test
// and CI run of every package importing this one would have to carry, and
// an Arrow view over a stream can be scanned only once, while the index's
// statements read a batch's rows several times (per-file value sets,
// bloom values, ranges, temporal maxima). Appending measured ~1.0 M rows a
// second for a 4-column batch schema on this 2-core machine, aggregation
// included (BenchmarkLoad), the same order as the CSV reader's own rate
// (~1.05 M rows/s, datafile's BenchmarkReadCSV), so loading roughly halves
// the end-to-end rate of one stream; the Arrow path was not measured, as it
// needs the build tag. Loading several files concurrently, each into its
// own DB or through a streaming table function, is the next step if this
// becomes the bottleneck.
func (d *DB) Load(ctx context.Context, name string, src Source) (int64, error) {
	st := src.Schema()
	ddl, err := CreateTableSQL(name, st)
	if err != nil {
		return 0, err
	}
	if err := d.Exec(ctx, ddl); err != nil {
		return 0, err
	}
	var n int64
	err = d.conn.Raw(func(dc any) error {
		app, err := duckdb.NewAppenderFromConn(dc.(driver.Conn), "", name)
		if err != nil {
			return sqlErr("append "+name, err)
		}
		n, err = appendAll(ctx, app, name, src, 0)
		return err
	})
	if err != nil {
		d.Drop(context.WithoutCancel(ctx), name)
		return 0, err
	}
	return n, nil
}

// appendAll appends every row of src to table through app, each value
// converted to the Go type the appender takes, and closes app in every
// case. limit > 0 refuses a source of more rows (ErrTooManyRows) rather
// than loading part of it. It returns the rows appended.
func appendAll(ctx context.Context, app *duckdb.Appender, table string, src Source, limit int64) (int64, error) {
	st := src.Schema()
	conv := make([]func(any) (any, error), len(st.Fields))
	for i, f := range st.Fields {
		conv[i] = toDuck(f.Type)
	}
	vals := make([]driver.Value, len(st.Fields))
	var n int64
	fail := func(err error) (int64, error) {
		app.Close()
		return n, err
	}
	for {
		batch, err := src.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(err)
		}
		for _, row := range batch {
			if limit > 0 && n >= limit {
				return fail(fmt.Errorf("%w: more than %d rows to load", ErrTooManyRows, limit))
			}
			if len(row) != len(vals) {
				return fail(fmt.Errorf("duck: load %s: row has %d values for %d columns", table, len(row), len(vals)))
			}
			for i, v := range row {
				if vals[i], err = conv[i](v); err != nil {
					return fail(fmt.Errorf("duck: load %s: column %q: %w", table, st.Fields[i].Name, err))
				}
			}
			if err := app.AppendRow(vals...); err != nil {
				return fail(sqlErr("append "+table, err))
			}
			n++
		}
	}
	return n, sqlErr("append "+table, app.Close())
}

// CreateTableSQL returns the CREATE TABLE statement for a Spark schema.
func CreateTableSQL(name string, st *schema.Struct) (string, error) {
	if len(st.Fields) == 0 {
		return "", fmt.Errorf("%w: table %q has no columns", ErrUnsupportedType, name)
	}
	q := "CREATE TABLE " + Ident(name) + " ("
	for i, f := range st.Fields {
		t, err := DuckType(f.Type)
		if err != nil {
			return "", fmt.Errorf("column %q: %w", f.Name, err)
		}
		if i > 0 {
			q += ", "
		}
		q += Ident(f.Name) + " " + t
	}
	return q + ")", nil
}

// Drop drops a table if it exists.
func (d *DB) Drop(ctx context.Context, name string) error {
	return d.Exec(ctx, "DROP TABLE IF EXISTS "+Ident(name))
}

// Rows is a streaming query result. It holds the DB's connection until
// closed.
type Rows struct {
	query  string
	rows   *sql.Rows
	schema *schema.Struct
	conv   []func(any) (any, error)
	scan   []any
	batch  int
	err    error
}

// QueryBatchRows is the number of rows per batch of Rows.Next (see
// datafile.DefaultBatchRows for the arithmetic).
const QueryBatchRows = 1024

// Query runs a statement and streams its result. The result schema is
// derived from DuckDB's column types (SparkType). Errors, including those
// raised while rows are produced, are *SQLError (ErrSQL).
func (d *DB) Query(ctx context.Context, query string, args ...any) (*Rows, error) {
	rows, err := d.conn.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, sqlErr(query, err)
	}
	return FromSQLRows(rows, query)
}

// FromSQLRows streams a database/sql result of DuckDB (or any driver that
// reports DuckDB type names) as rows of the pqrow value model, with the
// schema derived from its column types. It takes ownership of rows; query is
// used in error messages only.
func FromSQLRows(rows *sql.Rows, query string) (*Rows, error) {
	types, err := rows.ColumnTypes()
	if err != nil {
		rows.Close()
		return nil, sqlErr(query, err)
	}
	r := &Rows{query: query, rows: rows, schema: &schema.Struct{}, batch: QueryBatchRows}
	for _, ct := range types {
		t, err := SparkType(ct.DatabaseTypeName())
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("duck: column %q: %w", ct.Name(), err)
		}
		r.schema.Fields = append(r.schema.Fields, schema.Field{Name: ct.Name(), Type: t, Nullable: true})
		r.conv = append(r.conv, fromDuck(t))
		r.scan = append(r.scan, new(any))
	}
	return r, nil
}

// Schema returns the result's Spark schema.
func (r *Rows) Schema() *schema.Struct { return r.schema }

// Next returns the next batch of rows, (nil, io.EOF) at the end. Rows are
// owned by the caller.
func (r *Rows) Next(ctx context.Context) ([]pqrow.Row, error) {
	if r.err != nil {
		return nil, r.err
	}
	var out []pqrow.Row
	for len(out) < r.batch {
		if !r.rows.Next() {
			if err := r.rows.Err(); err != nil {
				r.err = sqlErr(r.query, err)
				return nil, r.err
			}
			r.rows.Close()
			break
		}
		if err := r.rows.Scan(r.scan...); err != nil {
			r.err = sqlErr(r.query, err)
			return nil, r.err
		}
		row := make(pqrow.Row, len(r.scan))
		for i, p := range r.scan {
			v, err := r.conv[i](*p.(*any))
			if err != nil {
				r.err = fmt.Errorf("duck: column %q: %w", r.schema.Fields[i].Name, err)
				return nil, r.err
			}
			row[i] = v
		}
		out = append(out, row)
	}
	if len(out) == 0 {
		r.err = io.EOF
		return nil, io.EOF
	}
	return out, nil
}

// Close releases the result (and the connection).
func (r *Rows) Close() error {
	if r.err == nil {
		r.err = errors.New("duck: rows closed")
	}
	return r.rows.Close()
}

// QueryAll runs a query and returns all its rows: for small results
// (tests, per-batch summaries), never for data-sized ones.
func (d *DB) QueryAll(ctx context.Context, query string, args ...any) (*schema.Struct, []pqrow.Row, error) {
	r, err := d.Query(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var all []pqrow.Row
	for {
		b, err := r.Next(ctx)
		if err == io.EOF {
			return r.schema, all, nil
		}
		if err != nil {
			return nil, nil, err
		}
		all = append(all, b...)
	}
}
