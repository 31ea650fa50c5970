package fileindex

import (
	"context"
	"testing"
	"time"
)

// TestJoinDBPoolReset: a join database goes back to the pool emptied of
// the tables and views a join made (the next join cannot see them), and
// is closed instead when something else about it changed (a setting, a
// sequence).
func TestJoinDBPoolReset(t *testing.T) {
	ctx := context.Background()
	p := &joinDBPool{}
	d, err := p.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE q AS SELECT 1 AS k",
		"CREATE TEMP TABLE tt AS SELECT 2 AS k",
		"CREATE VIEW raw AS SELECT * FROM q",
		"CREATE VIEW idx_all AS SELECT * FROM raw",
	} {
		if err := d.db.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now()
	if err := p.put(d); err != nil {
		t.Fatal(err)
	}
	t.Logf("reset in %v", time.Since(t0))
	if len(p.idle) != 1 {
		t.Fatalf("%d idle databases after an emptied join, want 1", len(p.idle))
	}
	d2, err := p.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d2 != d {
		t.Fatal("the idle database was not reused")
	}
	_, rows, err := d2.db.QueryAll(ctx, "SELECT count(*) FROM duckdb_tables()")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := rows[0][0].(int64); n != 0 {
		t.Fatalf("a reused database holds %d tables", n)
	}
	if err := d2.db.Exec(ctx, "CREATE TABLE q AS SELECT 3 AS k"); err != nil {
		t.Fatalf("a reused database cannot take the next join's table: %v", err)
	}
	for _, leak := range []string{"SET threads = 1", "CREATE SEQUENCE leaked"} {
		if err := d2.db.Exec(ctx, leak); err != nil {
			t.Fatal(err)
		}
		if err := p.put(d2); err != nil {
			t.Fatal(err)
		}
		if len(p.idle) != 0 {
			t.Fatalf("after %q the database was pooled", leak)
		}
		if d2, err = p.get(ctx); err != nil {
			t.Fatal(err)
		}
		if d2 == d {
			t.Fatal("a closed database came back")
		}
	}
	// A result closed after its handle was collected closes its database.
	p.closeAll()
	if err := p.put(d2); err != nil {
		t.Fatal(err)
	}
	if len(p.idle) != 0 {
		t.Fatal("a database was pooled after the pool was closed")
	}
}
