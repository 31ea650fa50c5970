package duck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

const data = "../../testdata/ariadne/data/"

// rowsSource is a Source over rows in memory.
type rowsSource struct {
	st   *schema.Struct
	rows []pqrow.Row
	done bool
}

func (s *rowsSource) Schema() *schema.Struct { return s.st }
func (s *rowsSource) Next(context.Context) ([]pqrow.Row, error) {
	if s.done || len(s.rows) == 0 {
		return nil, io.EOF
	}
	s.done = true
	return s.rows, nil
}

// fileResolver resolves file:// URIs (the store package's resolver does
// this and more).
type fileResolver struct{ st store.Store }

func (r fileResolver) Resolve(ctx context.Context, uri string) (store.Store, string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return nil, "", fmt.Errorf("not a file URI: %q", uri)
	}
	return r.st, strings.TrimPrefix(u.Path, "/"), nil
}

func openDB(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), Options{Threads: 2, MemoryLimit: "512MB", TempDirectory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// loadFiles streams data files through datafile into table name.
func loadFiles(t testing.TB, db *DB, name, schemaText string, opts map[string]string, files ...string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "file:///")
	if err != nil {
		t.Fatal(err)
	}
	sch := &schema.Struct{}
	for _, part := range strings.Split(schemaText, ",") {
		n, ty, _ := strings.Cut(strings.TrimSpace(part), " ")
		typ := map[string]schema.Type{"int": schema.Integer, "double": schema.Double, "string": schema.String, "timestamp": schema.Timestamp}[ty]
		sch.Fields = append(sch.Fields, schema.Field{Name: n, Type: typ, Nullable: true})
	}
	plan, err := datafile.Compile(datafile.Spec{Format: "csv", Schema: sch, Options: opts}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, f := range files {
		abs, _ := filepath.Abs(data + f)
		uris = append(uris, "file://"+abs)
	}
	rel := datafile.NewRelation(plan, fileResolver{st}, uris, "")
	defer rel.Close()
	if _, err := db.Load(ctx, name, rel); err != nil {
		t.Fatal(err)
	}
}

func show(v any) string {
	switch v := v.(type) {
	case time.Time:
		return v.Format("2006-01-02T15:04:05.999999Z07:00")
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = show(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case string:
		if i := strings.LastIndex(v, "/"); strings.HasPrefix(v, "file://") && i >= 0 {
			return v[i+1:] // file URIs by base name
		}
	}
	return fmt.Sprint(v)
}

func queryLines(t *testing.T, db *DB, q string) []string {
	t.Helper()
	_, rows, err := db.QueryAll(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, show([]any(r)))
	}
	return out
}

func TestRoundTripEveryType(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	st, err := schema.Parse(`{"type":"struct","fields":[
		{"name":"s","type":"string","nullable":true,"metadata":{}},
		{"name":"bin","type":"binary","nullable":true,"metadata":{}},
		{"name":"b","type":"boolean","nullable":true,"metadata":{}},
		{"name":"i8","type":"byte","nullable":true,"metadata":{}},
		{"name":"i16","type":"short","nullable":true,"metadata":{}},
		{"name":"i32","type":"integer","nullable":true,"metadata":{}},
		{"name":"i64","type":"long","nullable":true,"metadata":{}},
		{"name":"f32","type":"float","nullable":true,"metadata":{}},
		{"name":"f64","type":"double","nullable":true,"metadata":{}},
		{"name":"d","type":"date","nullable":true,"metadata":{}},
		{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
		{"name":"dec","type":"decimal(10,2)","nullable":true,"metadata":{}},
		{"name":"bigdec","type":"decimal(38,6)","nullable":true,"metadata":{}},
		{"name":"arr","type":{"type":"array","elementType":"integer","containsNull":true},"nullable":true,"metadata":{}},
		{"name":"st","type":{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}},{"name":"y \"q\"","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
		{"name":"m","type":{"type":"map","keyType":"string","valueType":"double","valueContainsNull":true},"nullable":true,"metadata":{}}
	]}`)
	if err != nil {
		t.Fatal(err)
	}
	big38, _ := new(big.Int).SetString("-12345678901234567890123456789012345678", 10)
	full := pqrow.Row{
		"héllo 'x'", []byte{0, 1, 255}, true, int8(-8), int16(-16), int32(-32), int64(1) << 62,
		float32(1.5), 2.25, pqrow.Date(2024, 2, 29),
		time.Date(2024, 1, 15, 10, 0, 0, 123456000, time.UTC),
		pqrow.NewDecimal(-150, 2), pqrow.Decimal{Unscaled: big38, Scale: 6},
		[]any{int32(1), nil, int32(3)},
		[]any{int64(7), []any{"a", nil}},
		[]pqrow.KV{{Key: "z", Value: 1.0}, {Key: "a", Value: nil}},
	}
	nulls := make(pqrow.Row, len(full))
	empty := pqrow.Row{"", []byte{}, false, int8(0), int16(0), int32(0), int64(0), float32(0), 0.0,
		pqrow.Date(1970, 1, 1), time.Unix(0, 0).UTC(), pqrow.NewDecimal(0, 2), pqrow.NewDecimal(0, 6),
		[]any{}, []any{nil, nil}, []pqrow.KV{}}
	in := []pqrow.Row{full, nulls, empty}
	if _, err := db.Load(ctx, "t", &rowsSource{st: st, rows: in}); err != nil {
		t.Fatal(err)
	}
	gotSchema, rows, err := db.QueryAll(ctx, `SELECT * FROM t`)
	if err != nil {
		t.Fatal(err)
	}
	if gotSchema.Marshal() != st.Marshal() {
		t.Errorf("schema:\n%s\nwant\n%s", gotSchema.Marshal(), st.Marshal())
	}
	if len(rows) != len(in) {
		t.Fatalf("%d rows, want %d", len(rows), len(in))
	}
	for i := range in {
		for j := range in[i] {
			if !pqrow.Equal(rows[i][j], in[i][j]) {
				t.Errorf("row %d column %s: got %#v, want %#v", i, st.Fields[j].Name, rows[i][j], in[i][j])
			}
		}
	}
	// Decimals keep their scale (Java's BigDecimal text).
	if s := rows[0][11].(pqrow.Decimal).String(); s != "-1.50" {
		t.Errorf("decimal text %q", s)
	}
	// The result schema of expressions maps back to Spark types.
	s2, _, err := db.QueryAll(ctx, `SELECT 1::HUGEINT AS h, NULL AS n, 'a'::ENUM('a') AS e, [[1]] AS nested, uuid() AS u`)
	if err != nil {
		t.Fatal(err)
	}
	// DuckDB types a bare NULL as INTEGER.
	want := "struct<h:decimal(38,0),n:int,e:string,nested:array<array<int>>,u:string>"
	if s2.String() != want {
		t.Errorf("expression schema %s, want %s", s2, want)
	}
}

// The file index's per-file aggregation over rows streamed from the real
// CSVs (spec §3.2, §3.6).
func TestPerFileAggregation(t *testing.T) {
	db := openDB(t)
	loadFiles(t, db, "batch", "Id int, Version int, Value double", map[string]string{"header": "true"},
		"table1_part0.csv", "table1_part1.csv")
	got := queryLines(t, db, `SELECT filename, list(DISTINCT Id ORDER BY Id), list(DISTINCT Version ORDER BY Version), min(Value), max(Value)
		FROM batch GROUP BY filename ORDER BY filename`)
	want := []string{
		"[table1_part0.csv [1 2 3] [1 2] 3 5]",
		"[table1_part1.csv [1 3 4] [1 2 3] 2 9]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestEquiJoin(t *testing.T) {
	db := openDB(t)
	h := map[string]string{"header": "true"}
	loadFiles(t, db, "t3", "Id string, Value double", h, "table3_part0.csv", "table3_part1.csv")
	loadFiles(t, db, "t4", "Id string, Status string", h, "table4_part0.csv", "table4_part1.csv")
	got := queryLines(t, db, `SELECT Id, t3.Value, t4.Status FROM t3 JOIN t4 USING (Id) ORDER BY Id`)
	want := []string{"[cat1_3 8 Ok]", "[cat4_1 2 Bad]"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Temporal deduplication (spec §5.8) and the temporal lookup (§3.7): per
// Id, the row with the latest UpdatedAt.
func TestTemporalRank(t *testing.T) {
	db := openDB(t)
	loadFiles(t, db, "temporal", "Id int, Value double, UpdatedAt timestamp", map[string]string{"header": "true"},
		"temporal_part0.csv", "temporal_part1.csv")
	got := queryLines(t, db, `SELECT Id, Value, filename FROM (
		SELECT *, row_number() OVER (PARTITION BY Id ORDER BY UpdatedAt DESC NULLS LAST) AS rk FROM temporal)
		WHERE rk = 1 ORDER BY Id`)
	want := []string{
		"[1 150 temporal_part1.csv]", "[2 250 temporal_part1.csv]", "[3 300 temporal_part0.csv]",
		"[4 400 temporal_part0.csv]", "[5 500 temporal_part1.csv]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestMalformedExpression(t *testing.T) {
	db := openDB(t)
	loadFiles(t, db, "t", "Id string, Value double", map[string]string{"header": "true"}, "table3_part0.csv")
	for _, expr := range []string{
		"substring(Id, 1, ",    // syntax
		"no_such_function(Id)", // unknown function
		"NoSuchColumn + 1",     // unknown column
	} {
		q := SelectComputed("t", []string{"Id"}, []Computed{{Name: "c", Expr: expr}})
		_, _, err := db.QueryAll(context.Background(), q)
		var se *SQLError
		if !errors.Is(err, ErrSQL) || !errors.As(err, &se) || se.Query != q || se.Err == nil {
			t.Errorf("%q: got %v, want an *SQLError", expr, err)
		}
	}
	// Errors raised while producing rows are ErrSQL too.
	_, _, err := db.QueryAll(context.Background(), `SELECT CAST(Id AS INTEGER) FROM t`)
	if !errors.Is(err, ErrSQL) {
		t.Errorf("runtime conversion error: %v", err)
	}
}

func TestHostileNames(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	hostile := []string{`a"; DROP TABLE t; --`, `x'y`, "new\nline", `back\slash`, `"`, `semi;colon`, "nul\x00byte"}
	st := &schema.Struct{}
	row := pqrow.Row{}
	for _, n := range hostile {
		st.Fields = append(st.Fields, schema.Field{Name: n, Type: schema.String, Nullable: true})
		row = append(row, n) // the value is the name: hostile values too
	}
	if _, err := db.Load(ctx, `t"; DROP TABLE keep; --`, &rowsSource{st: st, rows: []pqrow.Row{row}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(ctx, "CREATE TABLE keep (a INTEGER)"); err != nil {
		t.Fatal(err)
	}
	for i, n := range hostile {
		if strings.Contains(n, "\x00") {
			continue // DuckDB cannot name such a column; Ident keeps the statement well-formed
		}
		q := fmt.Sprintf("SELECT %s FROM %s WHERE %s = %s", Ident(n), Ident(`t"; DROP TABLE keep; --`), Ident(n), String(n))
		got := queryLines(t, db, q)
		if len(got) != 1 || got[0] != "["+hostile[i]+"]" {
			t.Errorf("%q: got %q", n, got)
		}
	}
	if got := queryLines(t, db, "SELECT count(*) FROM keep"); len(got) != 1 {
		t.Errorf("table keep is gone: %v", got)
	}
	// String keeps a NUL byte as data.
	if got := queryLines(t, db, "SELECT length("+String("a\x00b")+")"); got[0] != "[3]" {
		t.Errorf("NUL literal: %v", got)
	}
}

// Spark semantics of the computed-index subset, evaluated by DuckDB after
// Translate.
func TestTranslate(t *testing.T) {
	db := openDB(t)
	tests := []struct{ spark, want string }{
		{"substring('hello', 0, 2)", "he"},
		{"substring('hello', 1, 2)", "he"},
		{"substr('hello', -3, 2)", "ll"},
		{"substring('hello', 2)", "ello"},
		{"substring('hello', 2, -1)", ""},
		{"upper('abc') || lower('DEF')", "ABCdef"},
		{"concat('a', NULL, 'b')", "<nil>"},
		{"concat('a', 1, 'b')", "a1b"},
		{"cast('x' as int)", "<nil>"},
		{"cast('42' as int) + 1", "43"},
		{"cast(7 as string)", "7"},
		{"CAST('2024-03-15 10:30:00' AS timestamp)", "2024-03-15T10:30:00Z"},
		{"cast('1.25' as decimal(5,2))", "1.25"},
		{"coalesce(NULL, 'x')", "x"},
		{"7 div 2", "3"},
		{"7 / 2", "3.5"},
		{"7 % 3", "1"},
		{"year(TIMESTAMP '2024-03-15 10:30:00')", "2024"},
		{"month(DATE '2024-03-15')", "3"},
		{"dayofmonth(DATE '2024-03-15')", "15"},
		{"dayofweek(DATE '2024-03-17')", "1"}, // a Sunday
		{"hour(TIMESTAMP '2024-03-15 10:30:00')", "10"},
		{"date_format(TIMESTAMP '2024-03-15 10:30:00', 'yyyy-MM')", "2024-03"},
		{`"double quoted" || 'x'`, "double quotedx"},
		{`'it\'s'`, "it's"},
		{"NULL <=> NULL", "true"},
		{"size(split('a,b,c', ','))", "3"},
		{"size(NULL)", "-1"},
	}
	for _, tc := range tests {
		got := queryLines(t, db, "SELECT "+Translate(tc.spark))
		if len(got) != 1 || got[0] != "["+tc.want+"]" {
			t.Errorf("%s → %s = %v, want %s", tc.spark, Translate(tc.spark), got, tc.want)
		}
	}
	// Backtick identifiers and computed columns replacing in place.
	loadFiles(t, db, "t", "Id string, Value double", map[string]string{"header": "true"}, "table3_part0.csv")
	q := SelectComputed("t", []string{"Id", "Value"}, []Computed{
		{Name: "Id", Expr: "substring(`Id`, 1, 4)"},
		{Name: "prefix", Expr: "concat(substring(Id, 1, 4), '_x')"},
	})
	got := queryLines(t, db, q+" ORDER BY Value")
	sort.Strings(got)
	want := []string{"[cat1 3 cat1_x]", "[cat1 5 cat1_x]", "[cat2 4 cat2_x]", "[cat2 4.5 cat2_x]"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("computed: got %v, want %v", got, want)
	}
}

func TestSparkTypeParse(t *testing.T) {
	tests := []struct{ duck, spark string }{
		{"INTEGER", "int"},
		{"DECIMAL(10,2)", "decimal(10,2)"},
		{"VARCHAR[]", "array<string>"},
		{"INTEGER[3]", "array<int>"},
		{`STRUCT("a" INTEGER, "b ""c""" VARCHAR[])`, `struct<a:int,b "c":array<string>>`},
		{"MAP(VARCHAR, STRUCT(\"x\" BIGINT))", "map<string,struct<x:bigint>>"},
		{"TIMESTAMP WITH TIME ZONE", "timestamp"},
		{"TIMESTAMP_NS", "timestamp"},
	}
	for _, tc := range tests {
		got, err := SparkType(tc.duck)
		if err != nil || got.String() != tc.spark {
			t.Errorf("SparkType(%q) = %v, %v; want %s", tc.duck, got, err, tc.spark)
		}
	}
	for _, bad := range []string{"INTERVAL", "TIME", "STRUCT(", "DECIMAL(x,1)"} {
		if _, err := SparkType(bad); err == nil {
			t.Errorf("SparkType(%q) accepted", bad)
		}
	}
	if _, err := SparkType("INTERVAL"); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("INTERVAL: %v", err)
	}
}
