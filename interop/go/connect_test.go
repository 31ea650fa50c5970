package interop

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/spark-connect-go/spark/sql"

	"github.com/ariadne-go/ariadne/delta"
)

// TestSparkConnect is issue 5 item 5: a local Spark Connect server started
// from the installed pyspark answers the Go Spark Connect client — a SQL
// query, and a Delta read of a table our delta package wrote (count and a
// sum over the live rows after a delete). The server is stopped on every
// path (t.Cleanup), and every wait is bounded by the test's context.
func TestSparkConnect(t *testing.T) {
	e := loadEnv(t)
	ctx := testContext(t, 5*time.Minute)
	dir := t.TempDir()

	// A table of ours: ids 0..29, then ids divisible by 4 deleted.
	table := filepath.Join(dir, "table")
	tbl, err := delta.Create(ctx, openStore(t, ctx, table), writtenSchemaV1, delta.CreateOptions{PartitionColumns: []string{"part"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Append(ctx, delta.Rows(genRows(0, 30, "sc", genRow)), delta.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Delete(ctx, func(r []any) bool { return r[0].(int64)%4 == 0 }, delta.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var wantCount, wantSum int64
	for i := int64(0); i < 30; i++ {
		if i%4 != 0 {
			wantCount++
			wantSum += i
		}
	}

	srv, err := e.StartConnectServer(ctx, ConnectOptions{LogFile: filepath.Join(dir, "connect-server.log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf(format+"\n--- server log (tail) ---\n%s", append(args, srv.logTail())...)
	}

	spark, err := sql.NewSessionBuilder().Remote(srv.Remote()).Build(ctx)
	if err != nil {
		fail("connect to %s: %v", srv.Remote(), err)
	}
	t.Cleanup(func() { spark.Stop() })

	df, err := spark.Sql(ctx, "SELECT 1 + 1 AS two, version() AS v")
	if err != nil {
		fail("SELECT 1 + 1: %v", err)
	}
	rows, err := df.Collect(ctx)
	if err != nil {
		fail("collect: %v", err)
	}
	if len(rows) != 1 || rows[0].At(0) != int32(2) {
		fail("SELECT 1 + 1 gave %v", rows)
	}
	t.Logf("Spark Connect server at %s runs Spark %v", srv.Addr, rows[0].At(1))

	ddf, err := spark.Read().Format("delta").Load(table)
	if err != nil {
		fail("read delta: %v", err)
	}
	n, err := ddf.Count(ctx)
	if err != nil {
		fail("count: %v", err)
	}
	if n != wantCount {
		t.Errorf("count of our table through Spark Connect = %d, want %d", n, wantCount)
	}
	// The delta source as a SQL relation: sum and count in one query.
	sdf, err := spark.Sql(ctx, "SELECT count(*) AS n, sum(id) AS s, count(DISTINCT part) AS p FROM delta.`"+table+"`")
	if err != nil {
		fail("delta SQL: %v", err)
	}
	srows, err := sdf.Collect(ctx)
	if err != nil {
		fail("delta SQL collect: %v", err)
	}
	if len(srows) != 1 || srows[0].At(0) != wantCount || srows[0].At(1) != wantSum || srows[0].At(2) != int64(3) {
		t.Errorf("count, sum(id), distinct parts through Spark Connect = %v, want %d, %d, 3", srows, wantCount, wantSum)
	}
}
