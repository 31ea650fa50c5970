// Package duckdb owns the benchmarks' DuckDB baseline: an embedded DuckDB
// (github.com/duckdb/duckdb-go/v2, cgo) answering
// SELECT * FROM read_parquet([...]) WHERE key = ? [LIMIT n] over local
// Parquet files, as a user would point DuckDB at a lake. Unlike
// internal/duck (the product's SQL engine, fed by our own readers), DuckDB
// reads the files itself here: that scan is what the benchmarks compare
// with.
package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver
)

// Engine is an in-memory DuckDB database querying a fixed set of Parquet
// files on one key column. It is not safe for concurrent use.
type Engine struct {
	db       *sql.DB
	all, lim *sql.Stmt
	from     string // read_parquet([...])
	key      string // the key column, quoted
}

// Open opens an engine over local Parquet paths, with the lookup of rows
// whose column keyCol equals a value prepared once (with and without a
// LIMIT).
func Open(ctx context.Context, paths []string, keyCol string) (*Engine, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = "'" + strings.ReplaceAll(p, "'", "''") + "'"
	}
	q := "SELECT * FROM read_parquet([" + strings.Join(quoted, ",") + "]) WHERE \"" +
		strings.ReplaceAll(keyCol, `"`, `""`) + "\" = ?"
	e := &Engine{db: db, from: "read_parquet([" + strings.Join(quoted, ",") + "])", key: "\"" + strings.ReplaceAll(keyCol, `"`, `""`) + "\""}
	if e.all, err = db.PrepareContext(ctx, q); err == nil {
		e.lim, err = db.PrepareContext(ctx, q+" LIMIT ?")
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	return e, nil
}

// KeyScan reads every value of the key column once (a bare scan: the
// hash of each value summed, so no statistic answers it) and returns the
// row count: what a row index build is held against.
func (e *Engine) KeyScan(ctx context.Context) (int64, error) {
	var n int64
	var h any
	err := e.db.QueryRowContext(ctx, "SELECT count("+e.key+"), sum(hash("+e.key+")) FROM "+e.from).Scan(&n, &h)
	return n, err
}

// Name names the engine in reports.
func (e *Engine) Name() string { return "DuckDB" }

// Rows returns the rows whose key equals key, at most limit of them (0: all),
// each as its column values in file order. Every value is scanned into Go,
// as a caller consuming the rows would.
func (e *Engine) Rows(ctx context.Context, key any, limit int) ([][]any, error) {
	var out [][]any
	err := e.scan(ctx, key, limit, func(vals []any) { out = append(out, vals) })
	return out, err
}

// Count returns the number of rows whose key equals key (at most limit; 0:
// no limit), scanning every value into Go like Rows but keeping none.
func (e *Engine) Count(ctx context.Context, key any, limit int) (int, error) {
	n := 0
	err := e.scan(ctx, key, limit, func([]any) { n++ })
	return n, err
}

func (e *Engine) scan(ctx context.Context, key any, limit int, each func([]any)) error {
	var rows *sql.Rows
	var err error
	if limit > 0 {
		rows, err = e.lim.QueryContext(ctx, key, limit)
	} else {
		rows, err = e.all.QueryContext(ctx, key)
	}
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		each(vals)
	}
	return rows.Err()
}

// Close releases the database.
func (e *Engine) Close() error {
	e.all.Close()
	e.lim.Close()
	return e.db.Close()
}
