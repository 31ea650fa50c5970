package pqrow

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/ariadne-go/ariadne/schema"
)

const benchSchema = `{"type":"struct","fields":[
{"name":"id","type":"long","nullable":false,"metadata":{}},
{"name":"name","type":"string","nullable":true,"metadata":{}},
{"name":"score","type":"double","nullable":true,"metadata":{}},
{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]}`

const benchRows = 100_000

func benchData() []Row {
	rows := make([]Row, benchRows)
	for i := range rows {
		rows[i] = Row{int64(i), fmt.Sprintf("file-%08d.parquet", i), float64(i) / 3, []any{"a", "b"}}
	}
	return rows
}

// BenchmarkWrite: 100 000 rows of (long, string, double, array<string>).
func BenchmarkWrite(b *testing.B) {
	st, _ := parseForBench()
	rows := benchData()
	b.ReportAllocs()
	var size int
	for b.Loop() {
		var buf bytes.Buffer
		w := NewWriter(&buf, st, WriterOptions{})
		if err := w.Write(rows...); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(size), "file-bytes")
}

// BenchmarkRead reads the same file back, all columns, and one column.
func BenchmarkRead(b *testing.B) {
	st, proj := parseForBench()
	var buf bytes.Buffer
	w := NewWriter(&buf, st, WriterOptions{})
	w.Write(benchData()...)
	w.Close()
	data := buf.Bytes()
	for _, tc := range []struct {
		name string
		req  *schema.Struct
	}{{"all", st}, {"id-only", proj}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f, err := OpenFile(bytes.NewReader(data), int64(len(data)))
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for _, err := range f.Rows(context.Background(), tc.req, ReadOptions{}) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != benchRows {
					b.Fatalf("%d rows", n)
				}
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

func parseForBench() (st, idOnly *schema.Struct) {
	st, err := schema.Parse(benchSchema)
	if err != nil {
		panic(err)
	}
	idOnly, err = schema.Parse(`{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]}`)
	if err != nil {
		panic(err)
	}
	return st, idOnly
}
