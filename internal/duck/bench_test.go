package duck

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// genSource yields n rows of (filename, Id, Name, Value) in batches of 1024.
type genSource struct {
	st   *schema.Struct
	n, i int
}

func (g *genSource) Schema() *schema.Struct { return g.st }
func (g *genSource) Next(context.Context) ([]pqrow.Row, error) {
	if g.i >= g.n {
		return nil, io.EOF
	}
	var b []pqrow.Row
	for ; g.i < g.n && len(b) < QueryBatchRows; g.i++ {
		b = append(b, pqrow.Row{fmt.Sprintf("file://f%d", g.i/100000), int32(g.i), "name", float64(g.i)})
	}
	return b, nil
}

// BenchmarkLoad measures appender throughput (rows/s) for a typical index
// batch schema, and the per-file aggregation that follows.
func BenchmarkLoad(b *testing.B) {
	st := &schema.Struct{Fields: []schema.Field{
		{Name: "filename", Type: schema.String}, {Name: "Id", Type: schema.Integer},
		{Name: "Name", Type: schema.String}, {Name: "Value", Type: schema.Double}}}
	const n = 1_000_000
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		db := openDB(b)
		if _, err := db.Load(ctx, "t", &genSource{st: st, n: n}); err != nil {
			b.Fatal(err)
		}
		if _, _, err := db.QueryAll(ctx, `SELECT filename, count(DISTINCT Id) FROM t GROUP BY filename`); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkComputedSpark measures what Spark's values cost in a computed
// expression over 1M rows: DuckDB's own function against our translation
// (Go scalar functions where DuckDB's value differs), in the same run.
func BenchmarkComputedSpark(b *testing.B) {
	st := &schema.Struct{Fields: []schema.Field{
		{Name: "filename", Type: schema.String}, {Name: "Id", Type: schema.Integer},
		{Name: "Name", Type: schema.String}, {Name: "Value", Type: schema.Double}}}
	const n = 1_000_000
	ctx := context.Background()
	db := openDB(b)
	if _, err := db.Load(ctx, "t", &genSource{st: st, n: n}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, sql string }{
		{"duckdb-lower", "lower(Name)"},
		{"spark-lower", Translate("lower(Name)")},
		{"duckdb-hash", "hash(Name)"},
		{"spark-hash", Translate("hash(Name)")},
		{"duckdb-cast-double-string", "CAST(Value AS VARCHAR)"},
		{"spark-cast-double-string", Translate("cast(Value as string)")},
		{"duckdb-substring", "substring(Name, 1, 2)"},
		{"spark-substring", Translate("substring(Name, 1, 2)")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, _, err := db.QueryAll(ctx, "SELECT count(DISTINCT "+tc.sql+") FROM t"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
