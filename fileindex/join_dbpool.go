package fileindex

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"

	"github.com/ariadne-go/ariadne/internal/duck"
)

// A join runs in an in-memory DuckDB database of its own. Opening one
// (the engine, its settings, the Spark functions and macros) costs about
// 20 ms of CPU, as much as the rest of a one-key join of a few thousand
// rows. The databases of finished joins are therefore kept, emptied, for
// the handle's next join: a database goes back to the pool only when,
// after its tables and views are dropped, its catalog and settings are
// exactly what they were when it was opened (its signature); anything
// else closes it. A join never sees another join's objects.

// maxIdleJoinDBs is the number of emptied databases a handle keeps.
const maxIdleJoinDBs = 2

// joinDB is a join's database and its spill folder.
type joinDB struct {
	db  *duck.DB
	tmp string
	sig string // catalog and settings when opened
}

// joinDBPool holds a handle's idle join databases.
type joinDBPool struct {
	mu     sync.Mutex
	idle   []*joinDB
	closed bool // the handle is gone: databases put back are closed
}

func newJoinDBPool(owner *FileIndex) *joinDBPool {
	p := &joinDBPool{}
	// The pooled databases live as long as the handle (FileIndex has no
	// Close).
	runtime.AddCleanup(owner, func(p *joinDBPool) { p.closeAll() }, p)
	return p
}

// joinDBSignature lists what a database holds besides data: every table,
// every non-internal view and sequence, and every setting's value.
// Functions and types are left out: listing them costs as much as opening
// a database (thousands of built-ins), and a join creates none (its SQL
// is ours: queries, tables and views; computed expressions are checked
// expressions inside a SELECT).
const joinDBSignature = `SELECT coalesce(string_agg(x, chr(10) ORDER BY x), '') FROM (
  SELECT 'table ' || database_name || '.' || schema_name || '.' || table_name AS x FROM duckdb_tables()
  UNION ALL SELECT 'view ' || database_name || '.' || schema_name || '.' || view_name FROM duckdb_views() WHERE NOT internal
  UNION ALL SELECT 'sequence ' || database_name || '.' || schema_name || '.' || sequence_name FROM duckdb_sequences()
  UNION ALL SELECT 'setting ' || name || '=' || coalesce(value, 'NULL') FROM duckdb_settings())`

func signature(ctx context.Context, db *duck.DB) (string, error) {
	_, rows, err := db.QueryAll(ctx, joinDBSignature)
	if err != nil {
		return "", err
	}
	s, _ := rows[0][0].(string)
	return s, nil
}

// get returns an idle database, or opens one.
func (p *joinDBPool) get(ctx context.Context) (*joinDB, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		d := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return d, nil
	}
	p.mu.Unlock()
	tmp, err := newSpillDir("join")
	if err != nil {
		return nil, err
	}
	db, err := duck.Open(ctx, duck.Options{TempDirectory: tmp})
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	d := &joinDB{db: db, tmp: tmp}
	if d.sig, err = signature(ctx, db); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// put empties d and keeps it for the next join, or closes it when it
// cannot be brought back to its state when opened.
func (p *joinDBPool) put(d *joinDB) error {
	ctx := context.Background()
	if err := d.reset(ctx); err != nil {
		return d.close()
	}
	p.mu.Lock()
	if !p.closed && len(p.idle) < maxIdleJoinDBs {
		p.idle = append(p.idle, d)
		d = nil
	}
	p.mu.Unlock()
	if d != nil {
		return d.close()
	}
	return nil
}

// errNotReset reports a database whose catalog or settings differ from
// its signature after its objects were dropped.
var errNotReset = errors.New("fileindex: join database not reset")

// reset drops the views and tables a join created, and checks the
// database is as it was opened.
func (d *joinDB) reset(ctx context.Context) error {
	// Views first: they may read the tables.
	_, rows, err := d.db.QueryAll(ctx, `SELECT 'VIEW', database_name, schema_name, view_name FROM duckdb_views() WHERE NOT internal
  UNION ALL SELECT 'TABLE', database_name, schema_name, table_name FROM duckdb_tables() ORDER BY 1 DESC`)
	if err != nil {
		return err
	}
	for _, r := range rows {
		kind, _ := r[0].(string)
		db, _ := r[1].(string)
		sc, _ := r[2].(string)
		name, _ := r[3].(string)
		if err := d.db.Exec(ctx, "DROP "+kind+" IF EXISTS "+duck.Ident(db)+"."+duck.Ident(sc)+"."+duck.Ident(name)+" CASCADE"); err != nil {
			return err
		}
	}
	sig, err := signature(ctx, d.db)
	if err != nil {
		return err
	}
	if sig != d.sig {
		return errNotReset
	}
	return nil
}

func (d *joinDB) close() error {
	err := d.db.Close()
	os.RemoveAll(d.tmp)
	return err
}

func (p *joinDBPool) closeAll() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, d := range idle {
		d.close()
	}
}
