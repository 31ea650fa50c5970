package ariadne_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/playsfixture"
	"github.com/ariadne-go/ariadne/rowindex"
)

// duckOver answers q over read_parquet of the lake's files, filtered to
// user: the baseline the SQL over the row index's rows must equal.
func duckOver(t *testing.T, lake *playsfixture.PlaysLake, user int64, q string) []string {
	t.Helper()
	ctx := context.Background()
	db, err := duck.Open(ctx, duck.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var paths []string
	for _, f := range lake.Files {
		paths = append(paths, duck.String(strings.TrimPrefix(f, "file://")))
	}
	view := fmt.Sprintf("CREATE TEMP VIEW rows AS SELECT * FROM read_parquet([%s]) WHERE user_id = %d", strings.Join(paths, ", "), user)
	if err := db.Exec(ctx, view); err != nil {
		t.Fatal(err)
	}
	_, got, err := db.QueryAll(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range got {
		out = append(out, fmt.Sprint(r...))
	}
	return out
}

func sqlLines(res *ariadne.SQLResult) []string {
	var out []string
	for _, r := range res.Rows {
		out = append(out, fmt.Sprint(r...))
	}
	return out
}

func TestLookupSQLEqualsDuckDB(t *testing.T) {
	ctx := context.Background()
	lake, ix := openLake(t, 4)
	// Aggregates and a grouped, ordered query, cast to text on both sides
	// so the comparison is DuckDB's own rendering of each value.
	for _, q := range []string{
		`SELECT count(*)::VARCHAR, sum(duration_ms)::VARCHAR, epoch_us(min(ts))::VARCHAR, epoch_us(max(ts))::VARCHAR, count(DISTINCT track_uri)::VARCHAR, avg(duration_ms)::VARCHAR FROM rows`,
		`WITH d AS (SELECT context, duration_ms FROM rows) SELECT context, count(*)::VARCHAR, sum(duration_ms)::VARCHAR FROM d GROUP BY context ORDER BY context`,
		`SELECT track_uri, epoch_us(ts)::VARCHAR FROM rows ORDER BY ts, track_uri LIMIT 7`,
	} {
		res, err := ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot, SQL: q})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		want := duckOver(t, lake, lake.Hot, q)
		got := sqlLines(res)
		if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s:\n got %q\nwant %q", q, got, want)
		}
		if res.InputRows < 10 || res.Truncated {
			t.Fatalf("%s: %d input rows, truncated %v", q, res.InputRows, res.Truncated)
		}
	}
	// Typed values in the face's value model: counts are int64, times
	// time.Time, and a narrower table (covered columns only) reads no data
	// file.
	res, err := ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot, Columns: []string{"user_id", "ts", "duration_ms"},
		SQL: `SELECT count(*) AS n, max(ts) AS last, sum(duration_ms) AS total, any_value(user_id) AS u FROM rows`})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || strings.Join(res.Columns, ",") != "n,last,total,u" {
		t.Fatalf("%+v", res)
	}
	rec := res.Record(0)
	if _, ok := rec["n"].(int64); !ok {
		t.Errorf("count is %T", rec["n"])
	}
	if _, ok := rec["last"].(time.Time); !ok {
		t.Errorf("max(ts) is %T", rec["last"])
	}
	if rec["u"] != lake.Hot {
		t.Errorf("user_id %v (%T)", rec["u"], rec["u"])
	}
	if !res.Plan.Covered || res.Plan.Data.Requests != 0 {
		t.Errorf("covered table read data files: %+v", res.Plan)
	}
	want := duckOver(t, lake, lake.Hot, `SELECT count(*) FROM rows`)
	if fmt.Sprint(rec["n"]) != want[0] || res.InputRows != rec["n"] {
		t.Errorf("count %v, input rows %d, DuckDB %v", rec["n"], res.InputRows, want)
	}
}

func TestLookupSQLRefusesHostile(t *testing.T) {
	ctx := context.Background()
	lake, ix := openLake(t, 2)
	dir := t.TempDir()
	other := strings.TrimPrefix(lake.Files[len(lake.Files)-1], "file://")
	target := filepath.Join(dir, "out.csv")
	for _, q := range []string{
		"COPY rows TO " + duck.String(target),
		"COPY (SELECT 1) TO " + duck.String(target),
		"ATTACH " + duck.String(filepath.Join(dir, "x.db")) + " AS x",
		"INSTALL httpfs",
		"LOAD httpfs",
		"SELECT * FROM read_parquet(" + duck.String(other) + ")",
		"SELECT * FROM read_csv(" + duck.String("/etc/passwd") + ")",
		"SELECT * FROM glob('/*')",
		"PRAGMA database_list",
		"SET enable_external_access = true",
		"SELECT 1; SELECT 2",
		"SELECT count(*) FROM rows; COPY rows TO " + duck.String(target),
		"CREATE TABLE t AS SELECT * FROM rows",
		"DELETE FROM rows",
		"DROP TABLE rows",
		"CALL pragma_version()",
		"EXPLAIN SELECT * FROM rows",
		"SELECT * FROM nosuchtable",
		"SELEKT 1",
		"",
	} {
		_, err := ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot, SQL: q})
		if !errors.Is(err, rowindex.ErrBadQuery) || ariadne.ErrorKind(err) != "bad query" {
			t.Errorf("%q: %v (kind %q), want bad query", q, err, ariadne.ErrorKind(err))
		}
		t.Logf("%q: %v", q, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a refused statement wrote %v", ents)
	}
	// The database still answers after the refusals (no lock lifted, no
	// table left behind).
	res, err := ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot, SQL: "SELECT current_setting('enable_external_access') AS x"})
	if err != nil || fmt.Sprint(res.Rows[0][0]) != "false" {
		t.Fatalf("%v %v", res, err)
	}
}

func TestLookupSQLLimits(t *testing.T) {
	ctx := context.Background()
	lake, ix := openLake(t, 4)
	// Result rows past Limit are left out and said so.
	res, err := ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot, SQL: "SELECT * FROM rows", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 || !res.Truncated || res.InputRows <= 3 {
		t.Fatalf("%d rows, truncated %v, input %d", len(res.Rows), res.Truncated, res.InputRows)
	}
	all, err := ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot, SQL: "SELECT * FROM rows", Limit: int(res.InputRows)})
	if err != nil || all.Truncated || int64(len(all.Rows)) != res.InputRows {
		t.Fatalf("exact limit: %d rows, truncated %v, %v", len(all.Rows), all.Truncated, err)
	}
	// More rows than MaxInputRows: refused, not truncated.
	_, err = ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot, SQL: "SELECT count(*) FROM rows", MaxInputRows: 5})
	if !errors.Is(err, rowindex.ErrBadQuery) || !strings.Contains(err.Error(), "more than 5 rows") {
		t.Fatalf("input cap: %v", err)
	}
	// A slow query is cancelled by its deadline.
	start := time.Now()
	_, err = ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot, Timeout: 300 * time.Millisecond,
		SQL: "SELECT count(*) FROM range(100000000000) a WHERE a.range % 7 = 3"})
	if !errors.Is(err, context.DeadlineExceeded) || ariadne.ErrorKind(err) != "deadline exceeded" {
		t.Fatalf("slow query: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("slow query ran %v past its 300 ms deadline", d)
	}
	// A cancelled context stops it too.
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err = ix.LookupSQL(cctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot,
		SQL: "SELECT count(*) FROM range(100000000000) a WHERE a.range % 7 = 3"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled query: %v", err)
	}
	// Memory: a query past the database's memory limit fails as a bad
	// query, and the next one runs.
	_, err = ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot,
		SQL: "SELECT count(DISTINCT (a.range::VARCHAR || repeat('x', 100))) FROM range(20000000) a"})
	if !errors.Is(err, rowindex.ErrBadQuery) || !strings.Contains(strings.ToLower(err.Error()), "memory") {
		t.Fatalf("memory-hungry query: %v", err)
	}
	if _, err := ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot, SQL: "SELECT 1 AS one"}); err != nil {
		t.Fatal(err)
	}
	// Duplicate result names cannot become objects.
	if _, err := ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot, SQL: "SELECT 1 AS a, 2 AS a"}); !errors.Is(err, rowindex.ErrBadQuery) {
		t.Fatalf("duplicate names: %v", err)
	}
}

// BenchmarkLookupSQL prices SQL over the hot key's rows (343 rows) against
// the plain lookup of the same rows: the cost of the sandbox round trip
// (connection, temporary table, appender, query, drop).
func BenchmarkLookupSQL(b *testing.B) {
	ctx := context.Background()
	lake, err := playsfixture.Plays(ctx, b.TempDir(), 4)
	if err != nil {
		b.Fatal(err)
	}
	defer lake.Close()
	st, err := ariadne.Open(ctx, lake.StoreURL)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ix, err := st.Index(ctx, playsfixture.PlaysIndex)
	if err != nil {
		b.Fatal(err)
	}
	covered := []string{"user_id", "ts", "duration_ms"}
	q := "SELECT count(*) AS n, sum(duration_ms) AS total, max(ts) AS last FROM rows"
	b.Run("lookup-covered", func(b *testing.B) {
		for b.Loop() {
			if _, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: lake.Hot, Columns: covered}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sql-covered", func(b *testing.B) {
		for b.Loop() {
			if _, err := ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot, Columns: covered, SQL: q}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lookup-all", func(b *testing.B) {
		for b.Loop() {
			if _, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: lake.Hot}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sql-all", func(b *testing.B) {
		for b.Loop() {
			if _, err := ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: lake.Hot, SQL: q}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestLookupSQLConcurrent: queries running at once over different keys each
// see only their own key's rows (each connection's temporary table is its
// own), more queries than pooled connections wait their turn, and each
// answer equals the same query run alone.
func TestLookupSQLConcurrent(t *testing.T) {
	ctx := context.Background()
	lake, ix := openLake(t, 4)
	q := "SELECT min(user_id) AS lo, max(user_id) AS hi, count(*) AS n, sum(duration_ms) AS total FROM rows"
	keys := []int64{lake.Hot, 1, 2, 3, 5, 8, 13, 21}
	want := map[int64]string{}
	for _, k := range keys {
		res, err := ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: k, SQL: q})
		if err != nil {
			t.Fatal(err)
		}
		want[k] = fmt.Sprint(res.Rows)
	}
	errs := make(chan error, len(keys)*4)
	for range 4 {
		for _, k := range keys {
			go func() {
				res, err := ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: k, SQL: q})
				switch {
				case err != nil:
					errs <- err
				case fmt.Sprint(res.Rows) != want[k]:
					errs <- fmt.Errorf("key %d: %v, alone %s", k, res.Rows, want[k])
				default:
					errs <- nil
				}
			}()
		}
	}
	for range len(keys) * 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
