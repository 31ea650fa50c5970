package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// TestParquetSinkFaceValues: a join's rows in the face's value model
// (structs and maps as objects, decimals as json.Number, integers as int64)
// written by the Parquet sink read back as the data files' row model.
func TestParquetSinkFaceValues(t *testing.T) {
	st := &schema.Struct{Fields: []schema.Field{
		{Name: "id", Type: schema.Integer, Nullable: true},
		{Name: "amount", Type: &schema.Decimal{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "day", Type: schema.Date, Nullable: true},
		{Name: "info", Type: &schema.Struct{Fields: []schema.Field{
			{Name: "z", Type: schema.String, Nullable: true}, {Name: "a", Type: schema.Long, Nullable: true}}}, Nullable: true},
		{Name: "tags", Type: &schema.Array{Element: schema.String, ContainsNull: true}, Nullable: true},
		{Name: "counts", Type: &schema.Map{Key: schema.Integer, Value: schema.Long, ValueContainsNull: true}, Nullable: true},
	}}
	day := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	face := [][]any{
		{int64(7), json.Number("12.50"), day, map[string]any{"z": "x", "a": int64(3)}, []any{"p", nil}, map[string]any{"1": int64(10), "2": nil}},
		{nil, nil, nil, nil, nil, nil},
	}
	var buf bytes.Buffer
	s := &parquetSink{w: pqrow.NewWriter(&buf, st, pqrow.WriterOptions{}), st: st}
	if err := s.write(face); err != nil {
		t.Fatal(err)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	f, err := pqrow.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var got [][]any
	for r, err := range f.Rows(context.Background(), st, pqrow.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	want := [][]any{
		{int32(7), pqrow.NewDecimal(1250, 2), day, []any{"x", int64(3)}, []any{"p", nil}, []pqrow.KV{{Key: int32(1), Value: int64(10)}, {Key: int32(2), Value: nil}}},
		{nil, nil, nil, nil, nil, nil},
	}
	if len(got) != 2 {
		t.Fatalf("%d rows", len(got))
	}
	for i := range want {
		for j := range want[i] {
			g, w := got[i][j], want[i][j]
			if gd, ok := g.(pqrow.Decimal); ok {
				if gd.String() != w.(pqrow.Decimal).String() {
					t.Errorf("row %d column %d: %v, want %v", i, j, g, w)
				}
				continue
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("row %d column %d: %#v, want %#v", i, j, g, w)
			}
		}
	}
}

// TestJSONRenderFaceValues: --json and CSV output of a join render the
// face's structs in field order and its decimals as numbers.
func TestJSONRenderFaceValues(t *testing.T) {
	st := &schema.Struct{Fields: []schema.Field{
		{Name: "info", Type: &schema.Struct{Fields: []schema.Field{{Name: "z", Type: schema.String}, {Name: "a", Type: schema.Long}}}},
		{Name: "amount", Type: &schema.Decimal{Precision: 10, Scale: 2}},
		{Name: "counts", Type: &schema.Map{Key: schema.String, Value: schema.Date}},
	}}
	var b bytes.Buffer
	jsonRow(&b, []any{map[string]any{"z": "x", "a": int64(3)}, json.Number("12.50"), map[string]any{"k": time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)}}, st)
	if want := `{"info":{"z":"x","a":3},"amount":12.50,"counts":{"k":"2024-06-01"}}`; b.String() != want {
		t.Fatalf("%s, want %s", b.String(), want)
	}
}

// TestFileSinkWholeOrNothing: --out gets the whole answer or nothing: a
// sink aborted after an error (a join failing mid-stream) leaves no file
// and keeps a file already at the path; a closed one replaces it.
func TestFileSinkWholeOrNothing(t *testing.T) {
	st := &schema.Struct{Fields: []schema.Field{{Name: "id", Type: schema.Long, Nullable: true}}}
	dir := t.TempDir()
	entries := func() []string {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.Name())
		}
		return out
	}
	path := filepath.Join(dir, "out.csv")
	s, err := newRowSink(nil, path, false, st)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.write([][]any{{int64(1)}}); err != nil {
		t.Fatal(err)
	}
	abortSink(s)
	if got := entries(); len(got) != 0 {
		t.Fatalf("after an abort: %v, want nothing", got)
	}
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err = newRowSink(nil, path, false, st); err != nil {
		t.Fatal(err)
	}
	if err := s.write([][]any{{int64(2)}}); err != nil {
		t.Fatal(err)
	}
	abortSink(s)
	if b, _ := os.ReadFile(path); string(b) != "old\n" || len(entries()) != 1 {
		t.Fatalf("after an abort: %q, %v; want the old file alone", b, entries())
	}
	if s, err = newRowSink(nil, path, false, st); err != nil {
		t.Fatal(err)
	}
	if err := s.write([][]any{{int64(3)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "id\n3\n" || len(entries()) != 1 {
		t.Fatalf("after close: %q, %v", b, entries())
	}
}
