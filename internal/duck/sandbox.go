package duck

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/duckdb/duckdb-go/v2"
)

// ErrRefused is the kind of a statement a Sandbox will not run: more than
// one statement, or one that is not a read-only query (SELECT, WITH,
// FROM-first). Refused statements are never executed.
var ErrRefused = errors.New("duck: statement refused")

// ErrTooManyRows: the rows loaded for a sandboxed query exceed its
// MaxInputRows (a partial table would give wrong answers silently).
var ErrTooManyRows = errors.New("duck: too many rows")

// SandboxOptions bound a Sandbox. They are fixed when it opens: the
// database's configuration is locked, so no statement can lift them.
type SandboxOptions struct {
	// Threads is DuckDB's worker count for all queries together (0: 1).
	Threads int
	// MemoryLimit bounds the whole database, loaded tables included (""
	// : "256MB"). Nothing spills: a query past it fails.
	MemoryLimit string
	// Conns is the most connections open at once, hence queries running at
	// once (0: 2); a request waits for a free one.
	Conns int
}

// Sandbox is one embedded in-memory DuckDB database, locked down, that runs
// caller-written queries over rows the caller loads: the rows of one key
// served by a row index, for SQL over a key's rows. It is safe for
// concurrent use; each Run takes a pooled connection, loads its rows into
// a temporary table visible to that connection only, runs one statement
// and drops the table.
//
// Locked down: enable_external_access=false (no file, URL, ATTACH, COPY,
// INSTALL or LOAD), extension auto-install and auto-load off, no spill
// directory, and lock_configuration=true, so no statement can change any
// of it; on top, Run prepares the statement alone and refuses it unless
// DuckDB types it SELECT.
type Sandbox struct {
	db        *sql.DB
	connector *duckdb.Connector
}

// OpenSandbox opens a Sandbox; Close releases it.
func OpenSandbox(opts SandboxOptions) (*Sandbox, error) {
	threads, mem, conns := opts.Threads, opts.MemoryLimit, opts.Conns
	if threads <= 0 {
		threads = 1
	}
	if mem == "" {
		mem = "256MB"
	}
	if conns <= 0 {
		conns = 2
	}
	// The settings are global: the first connection sets them, the lock
	// last, before any statement of a caller can run on any connection.
	settings := []string{
		fmt.Sprintf("SET threads = %d", threads),
		"SET memory_limit = " + String(mem),
		"SET temp_directory = ''", // no spilling: the memory limit is a bound
		"SET autoinstall_known_extensions = false",
		"SET autoload_known_extensions = false",
		"SET enable_external_access = false",
		"SET lock_configuration = true",
	}
	var (
		mu   sync.Mutex
		done bool
	)
	connector, err := duckdb.NewConnector("", func(dc driver.ExecerContext) error {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return nil
		}
		for _, q := range settings {
			if _, err := dc.ExecContext(context.Background(), q, nil); err != nil {
				return sqlErr(q, err)
			}
		}
		done = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("duck: open sandbox: %w", err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	return &Sandbox{db: db, connector: connector}, nil
}

// Close closes the database.
func (s *Sandbox) Close() error {
	err := s.db.Close()
	if e := s.connector.Close(); err == nil {
		err = e
	}
	return err
}

// Result is a sandboxed query's answer: its schema (from DuckDB's result
// types), its rows in the pqrow value model, whether rows past MaxRows
// were left out, and how many rows were loaded.
type Result struct {
	Schema    *schema.Struct
	Rows      []pqrow.Row
	Truncated bool
	Loaded    int64
}

// Run loads src's rows into the temporary table table (columns typed by
// src's schema, through the appender so every value keeps its exact type),
// refusing more than maxInputRows (0: no cap), then runs query, a single
// read-only statement, and returns at most maxRows rows (0: no cap). The
// context bounds the whole run: DuckDB is interrupted when it ends.
// Errors: ErrRefused for a statement that is not one read-only query;
// ErrTooManyRows; *SQLError (ErrSQL) for a statement DuckDB rejects or
// fails to run; the context's error when it ended the run.
func (s *Sandbox) Run(ctx context.Context, table string, src Source, query string, maxInputRows int64, maxRows int) (*Result, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, ctxOr(ctx, fmt.Errorf("duck: sandbox connection: %w", err))
	}
	defer conn.Close()
	// The statement's first word is checked before anything is made.
	if _, err := statementWord(query); err != nil {
		return nil, err
	}
	st := src.Schema()
	ddl, err := CreateTableSQL(table, st)
	if err != nil {
		return nil, err
	}
	ddl = strings.Replace(ddl, "CREATE TABLE ", "CREATE OR REPLACE TEMP TABLE ", 1)
	if _, err := conn.ExecContext(ctx, ddl); err != nil {
		return nil, ctxOr(ctx, sqlErr(ddl, err))
	}
	// The table is the connection's own; drop it so the pooled connection
	// holds no memory between requests. A failed drop retires the
	// connection (its temporary tables die with it).
	defer func() {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS temp.main."+Ident(table)); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	// Check the statement against the (still empty) table before loading
	// anything: a refused statement must never run, and a query that does
	// not bind costs no load.
	if err := checkReadOnly(conn, query); err != nil {
		return nil, err
	}
	res := &Result{}
	err = conn.Raw(func(dc any) error {
		app, err := duckdb.NewAppender(dc.(driver.Conn), "temp", "main", table)
		if err != nil {
			return sqlErr("append "+table, err)
		}
		res.Loaded, err = appendAll(ctx, app, table, src, maxInputRows)
		return err
	})
	if err != nil {
		return nil, ctxOr(ctx, err)
	}
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return nil, ctxOr(ctx, sqlErr(query, err))
	}
	r, err := FromSQLRows(rows, query)
	if err != nil {
		return nil, ctxOr(ctx, err)
	}
	defer r.Close()
	res.Schema = r.Schema()
	for {
		b, err := r.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, ctxOr(ctx, err)
		}
		for _, row := range b {
			if maxRows > 0 && len(res.Rows) >= maxRows {
				res.Truncated = true
				return res, nil
			}
			res.Rows = append(res.Rows, row)
		}
	}
	return res, nil
}

// checkReadOnly prepares query on its own (the driver's context-free
// Prepare refuses more than one statement instead of running all but the
// last, as PrepareContext does) and refuses it unless DuckDB types it a
// SELECT.
func checkReadOnly(conn *sql.Conn, query string) error {
	// DuckDB rewrites some PRAGMAs into SELECTs over table functions, so
	// the statement's own first word must say it is a query too.
	if _, err := statementWord(query); err != nil {
		return err
	}
	return conn.Raw(func(dc any) error {
		st, err := dc.(driver.Conn).Prepare(query)
		if err != nil {
			if strings.Contains(err.Error(), "multiple statements") || strings.Contains(err.Error(), "PrepareContext") {
				return fmt.Errorf("%w: give exactly one statement", ErrRefused)
			}
			return sqlErr(query, err)
		}
		defer st.Close()
		ds, ok := st.(*duckdb.Stmt)
		if !ok {
			return fmt.Errorf("duck: unexpected statement type %T", st)
		}
		t, err := ds.StatementType()
		if err != nil {
			return sqlErr(query, err)
		}
		if t != duckdb.STATEMENT_TYPE_SELECT {
			return fmt.Errorf("%w: only a read-only query (SELECT, WITH, FROM) may run, not %s", ErrRefused, stmtTypeName(t))
		}
		return nil
	})
}

func stmtTypeName(t duckdb.StmtType) string {
	names := map[duckdb.StmtType]string{
		duckdb.STATEMENT_TYPE_INSERT: "INSERT", duckdb.STATEMENT_TYPE_UPDATE: "UPDATE", duckdb.STATEMENT_TYPE_DELETE: "DELETE",
		duckdb.STATEMENT_TYPE_COPY: "COPY", duckdb.STATEMENT_TYPE_ATTACH: "ATTACH", duckdb.STATEMENT_TYPE_PRAGMA: "PRAGMA",
		duckdb.STATEMENT_TYPE_CREATE: "CREATE", duckdb.STATEMENT_TYPE_DROP: "DROP", duckdb.STATEMENT_TYPE_EXPLAIN: "EXPLAIN",
		duckdb.STATEMENT_TYPE_SET: "SET", duckdb.STATEMENT_TYPE_LOAD: "LOAD/INSTALL", duckdb.STATEMENT_TYPE_EXPORT: "EXPORT",
		duckdb.STATEMENT_TYPE_ALTER: "ALTER", duckdb.STATEMENT_TYPE_DETACH: "DETACH", duckdb.STATEMENT_TYPE_CALL: "CALL",
		duckdb.STATEMENT_TYPE_TRANSACTION: "TRANSACTION",
	}
	if n, ok := names[t]; ok {
		return n
	}
	return fmt.Sprintf("non-SELECT (type %d)", t)
}

// ctxOr returns the context's error when the context ended (DuckDB's
// "interrupted" error says less), else err.
func ctxOr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	return err
}

// statementWord returns the statement's first word, refusing any but
// those a query starts with.
func statementWord(query string) (string, error) {
	switch w := strings.ToUpper(firstWord(query)); w {
	case "SELECT", "WITH", "FROM", "VALUES", "(":
		return w, nil
	case "":
		return "", fmt.Errorf("%w: empty statement", ErrRefused)
	default:
		return "", fmt.Errorf("%w: only a read-only query (SELECT, WITH, FROM) may run, not %s", ErrRefused, w)
	}
}

// firstWord returns the statement's first keyword (or "(" for a
// parenthesized query), past white space and comments.
func firstWord(q string) string {
	for {
		q = strings.TrimLeft(q, " \t\r\n\f\v")
		switch {
		case strings.HasPrefix(q, "--"):
			i := strings.IndexByte(q, '\n')
			if i < 0 {
				return ""
			}
			q = q[i+1:]
		case strings.HasPrefix(q, "/*"):
			i := strings.Index(q[2:], "*/")
			if i < 0 {
				return ""
			}
			q = q[2+i+2:]
		case strings.HasPrefix(q, "("):
			return "("
		default:
			j := 0
			for j < len(q) && (q[j] == '_' || q[j] >= 'a' && q[j] <= 'z' || q[j] >= 'A' && q[j] <= 'Z') {
				j++
			}
			if j == 0 && q != "" {
				return q[:1]
			}
			return q[:j]
		}
	}
}
