// Package duckbench owns the row index benchmark's DuckDB baseline: an
// embedded DuckDB (github.com/duckdb/duckdb-go/v2, cgo) answering
// SELECT * WHERE user_id = ? over local Parquet files. It lives apart from
// package rowindex so that only the benchmark pays DuckDB's build cost.
package duckbench

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver

	"github.com/ariadne-go/ariadne/rowindex"
)

// Engine is an in-memory DuckDB database querying a fixed set of Parquet
// files. It is not safe for concurrent use.
type Engine struct {
	db   *sql.DB
	stmt *sql.Stmt
}

// Open opens an engine over local Parquet paths (SELECT * FROM
// read_parquet([...]) WHERE user_id = ?, prepared once).
func Open(ctx context.Context, paths []string) (*Engine, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = "'" + strings.ReplaceAll(p, "'", "''") + "'"
	}
	stmt, err := db.PrepareContext(ctx, "SELECT * FROM read_parquet(["+strings.Join(quoted, ",")+"]) WHERE user_id = ?")
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("duckbench: %w", err)
	}
	return &Engine{db: db, stmt: stmt}, nil
}

// Factory opens an Engine as a rowindex.External, for rowindex.Bench.
func Factory(ctx context.Context, paths []string) (rowindex.External, error) {
	return Open(ctx, paths)
}

// Name names the engine in reports.
func (e *Engine) Name() string { return "DuckDB scan" }

// Rows returns the rows whose user_id equals key, each as its column
// values (user_id, ts, track_uri, duration_ms, context).
func (e *Engine) Rows(ctx context.Context, key int64) ([][]any, error) {
	rows, err := e.stmt.QueryContext(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// Lookup returns the number of rows whose user_id equals key.
func (e *Engine) Lookup(ctx context.Context, key int64) (int, error) {
	rows, err := e.Rows(ctx, key)
	return len(rows), err
}

// Close releases the database.
func (e *Engine) Close() error {
	e.stmt.Close()
	return e.db.Close()
}
