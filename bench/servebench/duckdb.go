package servebench

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
)

// duckBaseline answers the benchmark's lookups with DuckDB over the same
// Parquet files: SELECT the same columns FROM read_parquet(the lake's
// files) WHERE user_id = ? LIMIT the same page size, from as many
// connections of one in-process database as the server has clients. DuckDB
// reads the files from the local disk itself: no latency is injected into
// its reads, and it keeps Parquet footers cached between queries
// (parquet_metadata_cache), as the server keeps its row index cached.
type duckBaseline struct {
	db   *sql.DB
	stmt *sql.Stmt
	conn *duckdb.Connector
}

func newDuckBaseline(ctx context.Context, lakeDir string, cols []string, limit, conc int) (*duckBaseline, error) {
	files, err := filepath.Glob(filepath.Join(lakeDir, "*", "*.parquet"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("duckdb baseline: no Parquet files under %s (%v)", lakeDir, err)
	}
	lits := make([]string, len(files))
	for i, f := range files {
		lits[i] = "'" + strings.ReplaceAll(f, "'", "''") + "'"
	}
	sel := "*"
	if cols != nil {
		sel = strings.Join(cols, ", ")
	}
	settings := []string{
		fmt.Sprintf("SET threads = %d", runtime.NumCPU()),
		"SET memory_limit = '2GB'",
		"SET autoinstall_known_extensions = false",
		"SET autoload_known_extensions = false",
		"SET parquet_metadata_cache = true",
	}
	conn, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(conc)
	db.SetMaxIdleConns(conc)
	b := &duckBaseline{db: db, conn: conn}
	for _, s := range settings {
		if _, err := db.ExecContext(ctx, s); err != nil {
			b.Close()
			return nil, fmt.Errorf("duckdb baseline: %s: %w", s, err)
		}
	}
	q := fmt.Sprintf("SELECT %s FROM read_parquet([%s]) WHERE user_id = ? LIMIT %d", sel, strings.Join(lits, ", "), limit)
	if b.stmt, err = db.PrepareContext(ctx, q); err != nil {
		b.Close()
		return nil, fmt.Errorf("duckdb baseline: %w", err)
	}
	return b, nil
}

// lookup answers one key: its rows and the bytes of their values as text
// (a rough size, for the report).
func (b *duckBaseline) lookup(ctx context.Context, key string) (int, int64, error) {
	k, err := strconv.ParseInt(key, 10, 64)
	if err != nil {
		return 0, 0, err
	}
	rows, err := b.stmt.QueryContext(ctx, k)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, 0, err
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n, size := 0, int64(0)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, size, err
		}
		for _, v := range vals {
			size += int64(len(v))
		}
		n++
	}
	return n, size, rows.Err()
}

func (b *duckBaseline) Close() error {
	if b.stmt != nil {
		b.stmt.Close()
	}
	err := b.db.Close()
	if e := b.conn.Close(); err == nil {
		err = e
	}
	return err
}
