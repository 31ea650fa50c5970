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
