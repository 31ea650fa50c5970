package duck

import (
	"context"
	"database/sql"
	"errors"
	"testing"
)

// TestSandboxLocked checks the sandbox's lock-down below Run's own
// checks: on a raw pooled connection the configuration cannot be changed
// and no file can be reached, and Run's second check (DuckDB's statement
// type) refuses a non-query that starts like one.
func TestSandboxLocked(t *testing.T) {
	ctx := context.Background()
	sb, err := OpenSandbox(SandboxOptions{Conns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	// Both pooled connections, not only the first, are locked.
	c1, err := sb.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := sb.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	for _, c := range []struct {
		name string
		q    string
	}{
		{"unlock access", "SET enable_external_access = true"},
		{"unlock config", "SET lock_configuration = false"},
		{"raise memory", "SET memory_limit = '64GB'"},
		{"spill", "SET temp_directory = '/tmp'"},
		{"read a file", "SELECT * FROM read_csv('/etc/passwd')"},
		{"install", "INSTALL httpfs"},
	} {
		for i, cn := range []*sql.Conn{c1, c2} {
			if _, err := cn.ExecContext(ctx, c.q); err == nil {
				t.Errorf("%s on connection %d: allowed", c.name, i+1)
			}
		}
	}
	var limit string
	if err := c2.QueryRowContext(ctx, "SELECT current_setting('memory_limit')").Scan(&limit); err != nil || limit == "" {
		t.Fatalf("memory_limit %q: %v", limit, err)
	}
	t.Logf("memory_limit %s", limit)
	if _, err := c1.ExecContext(ctx, "CREATE TEMP TABLE rows (a INTEGER)"); err != nil {
		t.Fatal(err)
	}
	// Past the first-word check: DuckDB's own statement type refuses.
	for _, q := range []string{
		"WITH x AS (SELECT 1 AS a) INSERT INTO rows SELECT a FROM x",
		"WITH x AS (SELECT 1 AS a) DELETE FROM rows",
	} {
		err := checkReadOnly(c1, q)
		if !errors.Is(err, ErrRefused) {
			t.Errorf("%q: %v", q, err)
		}
		t.Logf("%q: %v", q, err)
	}
	if err := checkReadOnly(c1, "WITH x AS (SELECT a FROM rows) SELECT count(*) FROM x"); err != nil {
		t.Fatal(err)
	}
}
