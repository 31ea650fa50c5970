package ariadne

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/schema"
)

// SQL over a key's rows: the rows a lookup selects (served by the row
// index, as Lookup serves them) are loaded into a temporary DuckDB table
// named rows, typed by the index's schema, and one read-only query the
// caller wrote runs over them. See docs/serving.md.

// SQLTable is the name of the table a LookupSQL query reads.
const SQLTable = "rows"

// The bounds of LookupSQL when neither the request nor the Store's
// SQLOptions set them.
const (
	// DefaultSQLRows caps the rows a query returns.
	DefaultSQLRows = 1000
	// DefaultSQLTimeout bounds a query, loading included.
	DefaultSQLTimeout = 10 * time.Second
	// DefaultSQLInputRows caps the rows loaded into the table: a key with
	// more is refused (narrow it with Where or Columns), never truncated,
	// which would change the answer silently.
	DefaultSQLInputRows = 1_000_000
	// DefaultSQLMemory bounds the Store's SQL database, loaded tables of
	// queries running at once included; a query past it fails.
	DefaultSQLMemory = "256MB"
)

// SQLOptions bound the Store's SQL database (Options.SQL). Zero fields
// take the defaults above.
type SQLOptions struct {
	// MemoryLimit is DuckDB's memory limit for all SQL queries together.
	MemoryLimit string
	// Conns is the most queries running at once (default 2); more wait.
	Conns int
	// Threads is DuckDB's worker count (default 1).
	Threads int
	// MaxInputRows caps the rows loaded per query (request may lower it).
	MaxInputRows int64
	// MaxRows caps the rows a query returns (request may lower it).
	MaxRows int
	// Timeout bounds each query (request may lower it).
	Timeout time.Duration
}

// WithSQLOptions sets the bounds of LookupSQL.
func WithSQLOptions(o SQLOptions) Option { return func(opts *Options) { opts.SQL = o } }

// LookupSQLRequest is a query over the rows of a key. The rows are chosen
// as a LookupRequest chooses them (Column, RowIndex, Key or Keys or a
// range, Where), all of them (no page); Columns are the columns of table
// rows (nil: every column of the index's schema).
type LookupSQLRequest struct {
	Column   string
	RowIndex string
	Key      any
	Keys     []any
	Low      any
	High     any
	Range    bool
	Columns  []string
	Where    []Filter
	// SQL is one read-only DuckDB query (SELECT, WITH ... SELECT, or
	// FROM-first) over the table rows; anything else is refused with
	// rowindex.ErrBadQuery before it runs.
	SQL string
	// Limit caps the rows returned (0: the Store's MaxRows, else
	// DefaultSQLRows); rows past it are left out and Truncated says so.
	Limit int
	// MaxInputRows caps the rows loaded (0: the Store's cap); it cannot
	// raise the Store's cap.
	MaxInputRows int64
	// Timeout bounds the query, loading included (0: the Store's); it
	// cannot raise the Store's.
	Timeout time.Duration
}

// SQLResult is a LookupSQL answer: rows aligned with Columns, values in
// the face's value model (as Lookup returns them).
type SQLResult struct {
	RowIndex string
	Version  int64
	// Columns are the query's result columns; Types their Spark types
	// (as DuckDB typed them: sum of a long is a decimal(38,0)).
	Columns []string
	Types   []schema.Type
	Rows    [][]any
	// Truncated reports that the query had rows past Limit.
	Truncated bool
	// InputRows is the number of rows loaded into the table rows.
	InputRows int64
	// Plan is the cost of reading the rows (as Lookup's).
	Plan rowindex.Plan
}

// Record returns row i as a map by column name.
func (r *SQLResult) Record(i int) map[string]any {
	m := make(map[string]any, len(r.Columns))
	for j, c := range r.Columns {
		m[c] = r.Rows[i][j]
	}
	return m
}

func (s *Store) sqlSandbox() (*duck.Sandbox, error) {
	s.sqlMu.Lock()
	defer s.sqlMu.Unlock()
	if s.sql != nil {
		return s.sql, nil
	}
	if s.closed {
		return nil, errors.New("ariadne: store closed")
	}
	o := s.opts.SQL
	mem := o.MemoryLimit
	if mem == "" {
		mem = DefaultSQLMemory
	}
	sb, err := duck.OpenSandbox(duck.SandboxOptions{Threads: o.Threads, MemoryLimit: mem, Conns: o.Conns})
	if err != nil {
		return nil, err
	}
	s.sql = sb
	return sb, nil
}

// closeSQL closes the SQL database, if one was opened.
func (s *Store) closeSQL() error {
	s.sqlMu.Lock()
	defer s.sqlMu.Unlock()
	s.closed = true
	if s.sql == nil {
		return nil
	}
	err := s.sql.Close()
	s.sql = nil
	return err
}

// capInt returns the request's value when set and within the store's cap.
func capInt[T int | int64 | time.Duration](req, store, def T) T {
	if store <= 0 {
		store = def
	}
	if req > 0 && req < store {
		return req
	}
	return store
}

// LookupSQL runs req.SQL over the rows of req's key(s), loaded into the
// table rows. The Store keeps one embedded DuckDB database for it, locked
// down (no file, network or extension access; its configuration locked)
// and bounded in memory; each query takes one of its pooled connections
// and a temporary table of its own. Errors: rowindex.ErrBadQuery for a
// statement that is not one read-only query, a query DuckDB rejects or
// fails to run (out of memory included), or more rows than MaxInputRows;
// context.DeadlineExceeded past the timeout; otherwise as Lookup's.
func (ix *Index) LookupSQL(ctx context.Context, req LookupSQLRequest) (*SQLResult, error) {
	if strings.TrimSpace(req.SQL) == "" {
		return nil, fmt.Errorf("%w: sql: give a query over the table %s", rowindex.ErrBadQuery, SQLTable)
	}
	if req.Limit < 0 || req.MaxInputRows < 0 || req.Timeout < 0 {
		return nil, fmt.Errorf("%w: sql: limits must be 0 (default) or more", rowindex.ErrBadQuery)
	}
	o := ix.s.opts.SQL
	limit := capInt(req.Limit, o.MaxRows, DefaultSQLRows)
	maxIn := capInt(req.MaxInputRows, o.MaxInputRows, DefaultSQLInputRows)
	timeout := capInt(req.Timeout, o.Timeout, DefaultSQLTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	st, err := ix.sqlSchema(req.Columns)
	if err != nil {
		return nil, err
	}
	cols := make([]string, len(st.Fields))
	for i, f := range st.Fields {
		cols[i] = f.Name
	}
	sb, err := ix.s.sqlSandbox()
	if err != nil {
		return nil, err
	}
	lr, err := ix.LookupRows(ctx, LookupRequest{Column: req.Column, RowIndex: req.RowIndex, Key: req.Key, Keys: req.Keys,
		Low: req.Low, High: req.High, Range: req.Range, Columns: cols, Where: req.Where})
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	src := &sqlSource{lr: lr, st: st}
	res, err := sb.Run(ctx, SQLTable, src, req.SQL, maxIn, limit)
	if err != nil {
		return nil, sqlError(err)
	}
	out := &SQLResult{RowIndex: lr.RowIndex(), Version: lr.Version(), Truncated: res.Truncated, InputRows: res.Loaded, Plan: lr.Plan()}
	seen := map[string]bool{}
	for _, f := range res.Schema.Fields {
		if seen[f.Name] {
			return nil, fmt.Errorf("%w: sql: result column %q appears twice; name each column once (AS)", rowindex.ErrBadQuery, f.Name)
		}
		seen[f.Name] = true
		out.Columns = append(out.Columns, f.Name)
		out.Types = append(out.Types, f.Type)
	}
	out.Rows = make([][]any, len(res.Rows))
	for i, raw := range res.Rows {
		row := make([]any, len(res.Schema.Fields))
		for k, f := range res.Schema.Fields {
			if k < len(raw) {
				row[k] = faceValue(f.Type, raw[k])
			}
		}
		out.Rows[i] = row
	}
	return out, nil
}

// sqlError types a sandbox error: the context's own error when it ended
// the query, else a bad query (refused, rejected or failed by DuckDB, too
// many rows), else as is (storage, corrupt row index...).
func sqlError(err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, duck.ErrRefused), errors.Is(err, duck.ErrTooManyRows), errors.Is(err, duck.ErrSQL):
		return fmt.Errorf("%w: sql: %w", rowindex.ErrBadQuery, err)
	}
	return err
}

// sqlSchema returns the columns of the table rows: cols (nil: all) typed
// by the index's stored schema.
func (ix *Index) sqlSchema(cols []string) (*schema.Struct, error) {
	stored, err := ix.reg.StoredSchema()
	if err != nil {
		return nil, fmt.Errorf("%w: sql: the index has no stored schema to type the table %s: %w", rowindex.ErrBadQuery, SQLTable, err)
	}
	if cols == nil {
		return stored, nil
	}
	out := &schema.Struct{}
	for _, c := range cols {
		f, ok := stored.Field(c)
		if !ok {
			return nil, fmt.Errorf("%w: sql: no column %q in the index's schema", rowindex.ErrBadQuery, c)
		}
		out.Fields = append(out.Fields, f)
	}
	return out, nil
}

// sqlSource feeds a lookup's rows to the sandbox in the data files' row
// model (pqrow), typed by the table's schema.
type sqlSource struct {
	lr *LookupRows
	st *schema.Struct
}

func (s *sqlSource) Schema() *schema.Struct { return s.st }

func (s *sqlSource) Next(ctx context.Context) ([]pqrow.Row, error) {
	var batch []pqrow.Row
	for len(batch) < duck.QueryBatchRows && s.lr.Next() {
		vals := s.lr.Values()
		cols := s.lr.Columns()
		row := make(pqrow.Row, len(s.st.Fields))
		for i, f := range s.st.Fields {
			var v any
			if i < len(cols) && cols[i] == f.Name && i < len(vals) {
				v = vals[i]
			} else {
				for j, c := range cols {
					if c == f.Name && j < len(vals) {
						v = vals[j]
					}
				}
			}
			x, err := pqValue(f.Type, v)
			if err != nil {
				return nil, fmt.Errorf("sql: column %q: %w", f.Name, err)
			}
			row[i] = x
		}
		batch = append(batch, row)
	}
	if err := s.lr.Err(); err != nil {
		return nil, err
	}
	if len(batch) == 0 {
		return nil, io.EOF
	}
	return batch, nil
}

// pqValue brings a value of the face's value model back to the data
// files' row model that the appender takes, exactly: integers narrowed to
// their column's width, decimals from their exact text, structs as
// positional lists, maps as key-value lists.
func pqValue(t schema.Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch tt := t.(type) {
	case *schema.Decimal:
		switch x := v.(type) {
		case json.Number:
			return pqrow.ParseDecimal(string(x), int32(tt.Scale))
		case pqrow.Decimal:
			return x, nil
		}
		return nil, fmt.Errorf("%T is not a decimal", v)
	case *schema.Struct:
		switch x := v.(type) {
		case map[string]any:
			out := make([]any, len(tt.Fields))
			for i, f := range tt.Fields {
				e, err := pqValue(f.Type, x[f.Name])
				if err != nil {
					return nil, err
				}
				out[i] = e
			}
			return out, nil
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				if i >= len(tt.Fields) {
					break
				}
				c, err := pqValue(tt.Fields[i].Type, e)
				if err != nil {
					return nil, err
				}
				out[i] = c
			}
			return out, nil
		}
		return nil, fmt.Errorf("%T is not a struct", v)
	case *schema.Array:
		x, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%T is not a list", v)
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, err := pqValue(tt.Element, e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case *schema.Map:
		switch x := v.(type) {
		case []pqrow.KV:
			out := make([]pqrow.KV, len(x))
			for i, kv := range x {
				k, err := pqValue(tt.Key, kv.Key)
				if err != nil {
					return nil, err
				}
				e, err := pqValue(tt.Value, kv.Value)
				if err != nil {
					return nil, err
				}
				out[i] = pqrow.KV{Key: k, Value: e}
			}
			return out, nil
		case map[string]any:
			if tt.Key != schema.String {
				return nil, fmt.Errorf("a map keyed by %s given by text keys", tt.Key)
			}
			out := make([]pqrow.KV, 0, len(x))
			for k, e := range x {
				c, err := pqValue(tt.Value, e)
				if err != nil {
					return nil, err
				}
				out = append(out, pqrow.KV{Key: k, Value: c})
			}
			return out, nil
		}
		return nil, fmt.Errorf("%T is not a map", v)
	}
	switch t {
	case schema.Integer, schema.Short, schema.Byte:
		i, ok := pqrow.AsInt64(v)
		if !ok {
			return nil, fmt.Errorf("%T is not an integer", v)
		}
		switch t {
		case schema.Integer:
			return int32(i), nil
		case schema.Short:
			return int16(i), nil
		}
		return int8(i), nil
	case schema.Long:
		if i, ok := pqrow.AsInt64(v); ok {
			return i, nil
		}
	case schema.Float:
		switch x := v.(type) {
		case float32:
			return x, nil
		case float64:
			return float32(x), nil
		}
	case schema.Double:
		switch x := v.(type) {
		case float64:
			return x, nil
		case float32:
			return float64(x), nil
		}
	case schema.String:
		if b, ok := v.([]byte); ok {
			return string(b), nil
		}
	case schema.Binary:
		if s, ok := v.(string); ok {
			return []byte(s), nil
		}
	}
	return v, nil
}
