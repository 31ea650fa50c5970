package pqrow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/schema"
)

const allTypesSchema = `{"type":"struct","fields":[
{"name":"s","type":"string","nullable":true,"metadata":{}},
{"name":"bin","type":"binary","nullable":true,"metadata":{}},
{"name":"b","type":"boolean","nullable":true,"metadata":{}},
{"name":"i8","type":"byte","nullable":true,"metadata":{}},
{"name":"i16","type":"short","nullable":true,"metadata":{}},
{"name":"i32","type":"integer","nullable":false,"metadata":{}},
{"name":"i64","type":"long","nullable":true,"metadata":{}},
{"name":"f32","type":"float","nullable":true,"metadata":{}},
{"name":"f64","type":"double","nullable":true,"metadata":{}},
{"name":"d","type":"date","nullable":true,"metadata":{}},
{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
{"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},
{"name":"dec5","type":"decimal(5,2)","nullable":true,"metadata":{}},
{"name":"dec15","type":"decimal(15,3)","nullable":true,"metadata":{}},
{"name":"dec38","type":"decimal(38,10)","nullable":true,"metadata":{}},
{"name":"arr","type":{"type":"array","elementType":"integer","containsNull":true},"nullable":true,"metadata":{}},
{"name":"arr2","type":{"type":"array","elementType":{"type":"array","elementType":"string","containsNull":false},"containsNull":true},"nullable":true,"metadata":{}},
{"name":"m","type":{"type":"map","keyType":"string","valueType":"long","valueContainsNull":true},"nullable":true,"metadata":{}},
{"name":"st","type":{"type":"struct","fields":[
  {"name":"x","type":"integer","nullable":true,"metadata":{}},
  {"name":"inner","type":{"type":"struct","fields":[{"name":"y","type":"string","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
{"name":"los","type":{"type":"array","elementType":{"type":"struct","fields":[
  {"name":"k","type":"string","nullable":false,"metadata":{}},
  {"name":"v","type":{"type":"array","elementType":"double","containsNull":true},"nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}}
]}`

func mustParse(t *testing.T, s string) *schema.Struct {
	t.Helper()
	st, err := schema.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func bigDec(s string, scale int32) Decimal {
	u, _ := new(big.Int).SetString(s, 10)
	return Decimal{Unscaled: u, Scale: scale}
}

// allTypesRows covers every type with nulls at every level, empty vs null
// arrays and maps, and extremes.
func allTypesRows() []Row {
	ts := time.Date(2024, 3, 1, 12, 34, 56, 789012000, time.UTC)
	return []Row{
		{"héllo", []byte{0, 1, 2}, true, int8(-128), int16(32767), int32(1), int64(-9007199254740993), float32(1.5), 2.25,
			Date(2024, 2, 29), ts, time.Date(2001, 1, 1, 1, 1, 1, 1000, time.UTC),
			NewDecimal(-12345, 2), NewDecimal(123456789012345, 3), bigDec("-12345678901234567890123456789012345678", 10),
			[]any{int32(1), nil, int32(3)}, []any{[]any{"a", "b"}, nil, []any{}},
			[]KV{{"a", int64(1)}, {"b", nil}},
			[]any{int32(7), []any{"y"}},
			[]any{[]any{"k1", []any{1.0, nil}}, nil, []any{"k2", nil}, []any{"k3", []any{}}}},
		{nil, nil, nil, nil, nil, int32(2), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{"", []byte{}, false, int8(127), int16(-32768), int32(-2147483648), int64(9223372036854775807), float32(-0.0), -1e300,
			Date(1, 1, 1), time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC),
			NewDecimal(99999, 2), NewDecimal(-999999999999999, 3), bigDec("99999999999999999999999999999999999999", 10),
			[]any{}, []any{}, []KV{},
			[]any{nil, nil},
			[]any{}},
		{"x", []byte("y"), true, int8(0), int16(0), int32(0), int64(0), float32(0), 0.0,
			Date(1970, 1, 1), time.Unix(0, 0).UTC(), time.Unix(0, 0).UTC(),
			NewDecimal(0, 2), NewDecimal(0, 3), NewDecimal(0, 10),
			[]any{nil}, []any{nil}, []KV{{"z", int64(-1)}},
			[]any{nil, []any{nil}},
			[]any{nil}},
	}
}

func writeFile(t *testing.T, st *schema.Struct, rows []Row, opts WriterOptions) (string, FileStats) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.parquet")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(fh, st, opts)
	if err := w.Write(rows...); err != nil {
		t.Fatal(err)
	}
	fs, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	return path, fs
}

func readFile(t *testing.T, path string, st *schema.Struct, opts ReadOptions) ([]Row, *File) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	info, _ := fh.Stat()
	f, err := OpenFile(fh, info.Size())
	if err != nil {
		t.Fatal(err)
	}
	var rows []Row
	for r, err := range f.Rows(context.Background(), st, opts) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	return rows, f
}

func TestRoundTripAllTypes(t *testing.T) {
	st := mustParse(t, allTypesSchema)
	want := allTypesRows()
	path, _ := writeFile(t, st, want, WriterOptions{})
	got, f := readFile(t, path, st, ReadOptions{})
	if len(got) != len(want) {
		t.Fatalf("read %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		for j := range want[i] {
			if !Equal(got[i][j], want[i][j]) {
				t.Errorf("row %d field %s: got %#v, want %#v", i, st.Fields[j].Name, got[i][j], want[i][j])
			}
		}
	}
	// The inferred schema is the written one (names, types, nullability).
	inferred, err := f.Schema()
	if err != nil {
		t.Fatal(err)
	}
	if g, w := inferred.String(), st.String(); g != w {
		t.Errorf("inferred schema\n%s\nwant\n%s", g, w)
	}
	for i, fd := range inferred.Fields {
		if fd.Nullable != st.Fields[i].Nullable {
			t.Errorf("field %s nullable = %v", fd.Name, fd.Nullable)
		}
	}
}

func TestRoundTripProjectionAndMissing(t *testing.T) {
	st := mustParse(t, allTypesSchema)
	path, _ := writeFile(t, st, allTypesRows(), WriterOptions{})
	// Ask for two existing fields in another order, a missing one, and a
	// struct with a missing nested field.
	req := mustParse(t, `{"type":"struct","fields":[
{"name":"i32","type":"integer","nullable":false,"metadata":{}},
{"name":"nope","type":"string","nullable":true,"metadata":{}},
{"name":"st","type":{"type":"struct","fields":[{"name":"gone","type":"long","nullable":true,"metadata":{}},{"name":"x","type":"integer","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
{"name":"s","type":"string","nullable":true,"metadata":{}}]}`)
	got, _ := readFile(t, path, req, ReadOptions{})
	want := []Row{
		{int32(1), nil, []any{nil, int32(7)}, "héllo"},
		{int32(2), nil, nil, nil},
		{int32(-2147483648), nil, []any{nil, nil}, ""},
		{int32(0), nil, []any{nil, nil}, "x"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
}

func TestRoundTripRowGroups(t *testing.T) {
	st := mustParse(t, `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]}`)
	const n = 50_000
	rows := make([]Row, n)
	for i := range rows {
		var tags any
		switch i % 3 {
		case 0:
			tags = nil
		case 1:
			tags = []any{}
		default:
			tags = []any{fmt.Sprint("t", i), nil}
		}
		rows[i] = Row{int64(i), tags}
	}
	path, fs := writeFile(t, st, rows, WriterOptions{RowGroupBytes: 64 << 10})
	got, f := readFile(t, path, st, ReadOptions{})
	if f.NumRowGroups() < 3 {
		t.Errorf("NumRowGroups = %d, want several", f.NumRowGroups())
	}
	if len(got) != n || f.NumRows() != n || fs.NumRecords != n {
		t.Fatalf("rows: read %d, footer %d, stats %d; want %d", len(got), f.NumRows(), fs.NumRecords, n)
	}
	for i := range rows {
		if !Equal(got[i][0], rows[i][0]) || !Equal(got[i][1], rows[i][1]) {
			t.Fatalf("row %d: got %v want %v", i, got[i], rows[i])
		}
	}
	// Reading selected row groups in reverse order.
	var last []Row
	fh, _ := os.Open(path)
	defer fh.Close()
	for r, err := range f.Rows(context.Background(), st, ReadOptions{RowGroups: []int{f.NumRowGroups() - 1}}) {
		if err != nil {
			t.Fatal(err)
		}
		last = append(last, r)
	}
	if len(last) == 0 || last[len(last)-1][0] != int64(n-1) {
		t.Errorf("last row group does not end with the last row")
	}
}

func TestStats(t *testing.T) {
	st := mustParse(t, allTypesSchema)
	_, fs := writeFile(t, st, allTypesRows(), WriterOptions{})
	var got map[string]any
	if err := json.Unmarshal([]byte(fs.JSON()), &got); err != nil {
		t.Fatalf("stats JSON %s: %v", fs.JSON(), err)
	}
	want := map[string]any{}
	if err := json.Unmarshal([]byte(`{"numRecords":4,
"minValues":{"s":"","i8":-128,"i16":-32768,"i32":-2147483648,"i64":-9007199254740993,"f32":-0,"f64":-1e300,
  "d":"0001-01-01","ts":"1900-01-01T00:00:00.000Z","ntz":"1970-01-01T00:00:00.000",
  "dec5":-123.45,"dec15":-999999999999.999,"dec38":-1234567890123456789012345678.9012345678,"st":{"x":7,"inner":{"y":"y"}}},
"maxValues":{"s":"x","i8":127,"i16":32767,"i32":2,"i64":9223372036854775807,"f32":1.5,"f64":2.25,
  "d":"2024-02-29","ts":"2024-03-01T12:34:56.789Z","ntz":"9999-12-31T23:59:59.999",
  "dec5":999.99,"dec15":123456789012.345,"dec38":9999999999999999999999999999.9999999999,"st":{"x":7,"inner":{"y":"y"}}},
"nullCount":{"s":1,"bin":1,"b":1,"i8":1,"i16":1,"i32":0,"i64":1,"f32":1,"f64":1,"d":1,"ts":1,"ntz":1,"dec5":1,"dec15":1,"dec38":1,
  "arr":1,"arr2":1,"m":1,"st":{"x":3,"inner":{"y":3}},"los":1}}`), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("stats\n got %s\nwant %s", g, w)
	}
	// Decimal and big long bounds must be exact in the JSON text.
	for _, s := range []string{`"i64":-9007199254740993`, `"dec38":9999999999999999999999999999.9999999999`} {
		if !strings.Contains(fs.JSON(), s) {
			t.Errorf("stats JSON lacks %s: %s", s, fs.JSON())
		}
	}
}

func TestStatsStringTruncationAndNaN(t *testing.T) {
	st := mustParse(t, `{"type":"struct","fields":[{"name":"s","type":"string","nullable":true,"metadata":{}},{"name":"f","type":"double","nullable":true,"metadata":{}},{"name":"g","type":"double","nullable":true,"metadata":{}}]}`)
	long := strings.Repeat("é", 40)
	nan := func() float64 { z := 0.0; return z / z }()
	_, fs := writeFile(t, st, []Row{{long, 1.0, 1.0}, {"a", nan, 2.0}}, WriterOptions{})
	s := fs.Columns[0]
	if s.Min != "a" {
		t.Errorf("min = %q", s.Min)
	}
	wantMax := strings.Repeat("é", 32) + "\U0010FFFF"
	if s.Max != wantMax || !(s.Max.(string) > long) {
		t.Errorf("max = %q, want %q (an upper bound)", s.Max, wantMax)
	}
	if fs.Columns[1].Min != nil || fs.Columns[1].Max != nil {
		t.Errorf("NaN column has min/max %v/%v", fs.Columns[1].Min, fs.Columns[1].Max)
	}
	if fs.Columns[2].Min != 1.0 || fs.Columns[2].Max != 2.0 {
		t.Errorf("g stats %v/%v", fs.Columns[2].Min, fs.Columns[2].Max)
	}
}

func TestStatsColumnsLimit(t *testing.T) {
	st := mustParse(t, allTypesSchema)
	_, fs := writeFile(t, st, allTypesRows(), WriterOptions{StatsColumns: 3})
	if len(fs.Columns) != 3 || fs.Columns[2].Path[0] != "b" {
		t.Errorf("stats columns = %v", fs.Columns)
	}
}

func TestWriteErrors(t *testing.T) {
	st := mustParse(t, allTypesSchema)
	tests := []struct {
		name string
		mod  func(Row)
	}{
		{"null in non-nullable", func(r Row) { r[5] = nil }},
		{"wrong Go type", func(r Row) { r[0] = 12 }},
		{"byte out of range", func(r Row) { r[3] = 300 }},
		{"decimal too precise", func(r Row) { r[12] = NewDecimal(1, 5) }},
		{"decimal too wide", func(r Row) { r[12] = NewDecimal(1000000, 2) }},
		{"struct arity", func(r Row) { r[18] = []any{int32(1)} }},
		{"null map key", func(r Row) { r[17] = []KV{{nil, int64(1)}} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := allTypesRows()[0]
			tc.mod(row)
			w := NewWriter(&bytes.Buffer{}, st, WriterOptions{})
			err := w.Write(row)
			if err == nil {
				t.Fatal("no error")
			}
			if !errorsIs(err, ErrSchemaMismatch) {
				t.Errorf("error %v is not ErrSchemaMismatch", err)
			}
		})
	}
}

func TestColumnMappingNames(t *testing.T) {
	st := mustParse(t, `{"type":"struct","fields":[
{"name":"a","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-aaa"}},
{"name":"b","type":{"type":"struct","fields":[{"name":"c","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-ccc"}}]},"nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-bbb"}}]}`)
	rows := []Row{{int64(1), []any{"x"}}, {nil, nil}}
	path, fs := writeFile(t, st, rows, WriterOptions{PhysicalNames: true})
	if !strings.Contains(fs.JSON(), `"col-bbb":{"col-ccc":"x"}`) {
		t.Errorf("stats not keyed by physical names: %s", fs.JSON())
	}
	got, f := readFile(t, path, st, ReadOptions{})
	if !reflect.DeepEqual(got, rows) {
		t.Errorf("by physical name: got %v", got)
	}
	inferred, _ := f.Schema()
	if inferred.Fields[0].Name != "col-aaa" {
		t.Errorf("file column name %q", inferred.Fields[0].Name)
	}
	// By field id, with logical names that match nothing.
	renamed := mustParse(t, `{"type":"struct","fields":[
{"name":"z","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1}},
{"name":"y","type":{"type":"struct","fields":[{"name":"w","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":3}}]},"nullable":true,"metadata":{"delta.columnMapping.id":2}}]}`)
	got, _ = readFile(t, path, renamed, ReadOptions{ByFieldID: true})
	if !reflect.DeepEqual(got, rows) {
		t.Errorf("by field id: got %v", got)
	}
}
