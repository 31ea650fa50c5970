package sparkengine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/schema"
)

// The keys sent to Spark decode (as Spark's Arrow reader would) to the
// same values, nulls and pre-1970 dates included.
func TestKeysIPCRoundTrip(t *testing.T) {
	st := &schema.Struct{Fields: []schema.Field{
		{Name: "l", Type: schema.Long, Nullable: true}, {Name: "s", Type: schema.String, Nullable: true},
		{Name: "d", Type: schema.Date, Nullable: true}, {Name: "ts", Type: schema.Timestamp, Nullable: true},
		{Name: "dec", Type: &schema.Decimal{Precision: 20, Scale: 3}, Nullable: true},
		{Name: "arr", Type: &schema.Array{Element: schema.Integer, ContainsNull: true}, Nullable: true},
	}}
	rows := [][]any{
		{int64(7), "a", time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC),
			pqrow.Decimal{Unscaled: big.NewInt(-12345), Scale: 3}, []any{int32(1), nil}},
		{nil, nil, nil, nil, nil, nil},
	}
	data, err := keysIPC(st, rows)
	if err != nil {
		t.Fatal(err)
	}
	sch, recs, err := decodeBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	br := &batchReader{schema: sch, first: recs, pull: func() ([]byte, error) { return nil, errEnd }}
	src, err := fileindex.ArrowSource(br)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := src.Schema().String(), st.String(); got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
	var got [][]any
	for {
		b, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b...)
	}
	if fmt.Sprint(got) != fmt.Sprint(rows) {
		t.Errorf("round trip:\n got %v\nwant %v", got, rows)
	}
	if _, err := keysIPC(&schema.Struct{Fields: []schema.Field{{Name: "m", Type: &schema.Map{Key: schema.String, Value: schema.String}}}}, nil); err == nil {
		t.Error("a map key column was accepted")
	}
}

func TestJoinSQL(t *testing.T) {
	st := &schema.Struct{Fields: []schema.Field{{Name: "id", Type: schema.Long}, {Name: "we`ird", Type: schema.String}, {Name: "ts", Type: schema.Timestamp}}}
	keys := fileindex.RowsSource(&schema.Struct{Fields: []schema.Field{{Name: "id", Type: schema.Long}, {Name: "note", Type: schema.String}}}, nil)
	job := &fileindex.JoinJob{
		Schema: st, Keys: keys, On: []string{"id"}, How: fileindex.Full,
		Computed:     []fileindex.Computed{{Name: "up", Expr: "upper(`we``ird`)"}, {Name: "id", Expr: "id + 1"}},
		Exploded:     []metadata.ExplodedFieldIndex{{ArrayColumn: "a.b", FieldPath: "f", AsColumn: "tag"}},
		Temporal:     []metadata.TemporalIndex{{Column: "id", TimestampColumn: "ts"}},
		IndexColumns: []string{"id", "we`ird", "up"},
	}
	got := JoinSQL(job)
	for _, want := range []string{
		"(id + 1) AS `id`, `we``ird` AS `we``ird`, `ts` AS `ts`, (upper(`we``ird`)) AS `up` FROM ariadne_raw",
		"explode(transform(`a`.`b`, e -> e.`f`)) AS `tag`",
		"row_number() OVER (PARTITION BY `id` ORDER BY `ts` DESC NULLS LAST) = 1",
		"coalesce(l.`id`, r.`id`) AS `id`, l.`note`, r.`we``ird`, r.`up`",
		"FULL OUTER JOIN",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("JoinSQL lacks %q:\n%s", want, got)
		}
	}
	job.How = fileindex.Anti
	if got := JoinSQL(job); !strings.HasPrefix(got, "SELECT l.`id`, l.`note` FROM") || !strings.Contains(got, "LEFT ANTI JOIN") {
		t.Errorf("anti join: %s", got)
	}
}

func TestSparkPaths(t *testing.T) {
	got := sparkPaths([]string{"file:///a/b[1]{x}.parquet", "s3://bucket/k*?.csv", "gs://b/o"})
	want := []string{`file:///a/b\[1\]\{x\}.parquet`, `s3a://bucket/k\*\?.csv`, "gs://b/o"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sparkPaths = %q, want %q", got, want)
	}
}

func TestRPCErrorKinds(t *testing.T) {
	for _, tc := range []struct {
		err  error
		kind Kind
	}{
		{status.Error(codes.Unavailable, "connection refused"), KindConnection},
		{status.Error(codes.DeadlineExceeded, "late"), KindTimeout},
		{context.DeadlineExceeded, KindTimeout},
		{status.Error(codes.Canceled, "bye"), KindCanceled},
		{status.Error(codes.Internal, "task failed"), KindExecution},
	} {
		err := rpcError("sc://h:1", "join", tc.err)
		var se *Error
		if !errors.As(err, &se) || se.Kind != tc.kind || !errors.Is(err, ErrSpark) {
			t.Errorf("%v: %v, want kind %s", tc.err, err, tc.kind)
		}
	}
	if !errors.Is(rpcError("r", "o", context.DeadlineExceeded), context.DeadlineExceeded) {
		t.Error("a timeout does not match context.DeadlineExceeded")
	}
}

// The protocol's messages are registered and built by field name.
func TestMessages(t *testing.T) {
	rel := msg("Relation")
	set(rel, "read.data_source.paths", []string{"p1", "p2"})
	set(rel, "read.data_source.options", map[string]string{"header": "true"})
	ds := get(rel, "read.data_source")
	if ds == nil || ds.Get(field(ds, "paths")).List().Len() != 2 || ds.Get(field(ds, "options")).Map().Len() != 1 {
		t.Fatalf("read relation not built: %v", rel)
	}
	if get(rel, "sql") != nil {
		t.Error("an unset oneof member reads as set")
	}
}

// An engine on a closed port fails the join with a connection error.
func TestUnreachable(t *testing.T) {
	ctx := context.Background()
	e, err := New(ctx, "sc://127.0.0.1:1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	keys := fileindex.RowsSource(&schema.Struct{Fields: []schema.Field{{Name: "id", Type: schema.Long}}}, [][]any{{int64(1)}})
	_, err = e.Join(ctx, &fileindex.JoinJob{Format: "parquet", Schema: &schema.Struct{}, Keys: keys, On: []string{"id"}, How: fileindex.Inner})
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindConnection {
		t.Fatalf("join on a closed port: %v", err)
	}
	if _, err := New(ctx, "http://x", Options{}); err == nil {
		t.Error("a non-sc:// remote was accepted")
	}
}

// TestPathKey: the file paths Spark reports (Hadoop's file:/x, percent-
// encoded, s3a://) map back to the URIs we gave it.
func TestPathKey(t *testing.T) {
	for _, tc := range [][2]string{
		{"file:/tmp/lake/a%20b.parquet", "file:///tmp/lake/a b.parquet"},
		{"file:///tmp/lake/x.csv", "file:///tmp/lake/x.csv"},
		{"s3a://bucket/k/p.json", sparkPath("s3://bucket/k/p.json")},
	} {
		if a, b := pathKey(tc[0]), pathKey(tc[1]); a != b {
			t.Errorf("pathKey(%q) = %q, pathKey(%q) = %q: want equal", tc[0], a, tc[1], b)
		}
	}
	if pathKey("file:/tmp/a.parquet") == pathKey("file:/tmp/b.parquet") {
		t.Error("two files share a key")
	}
}

// TestSummarySQL: the record layout of fileindex.SummaryJob (file, part,
// rows, then each part's value and timestamp, then each range's min and
// max), each part's aggregation, computed columns over the scan.
func TestSummarySQL(t *testing.T) {
	st := &schema.Struct{Fields: []schema.Field{{Name: "id", Type: schema.Long}, {Name: "u", Type: schema.String}, {Name: "ts", Type: schema.Timestamp}}}
	job := &fileindex.SummaryJob{Schema: st,
		Computed: []fileindex.Computed{{Name: "up", Expr: "upper(u)"}},
		Parts: []fileindex.SummaryPart{
			{Kind: fileindex.SummaryValues, Column: "up"},
			{Kind: fileindex.SummaryTemporal, Column: "u", Timestamp: "ts"},
			{Kind: fileindex.SummaryExploded, ArrayColumn: "a.b", Field: "f"},
		},
		Ranges: []string{"id"},
	}
	got := SummarySQL(job)
	for _, want := range []string{
		"WITH t AS (SELECT `id` AS `id`, `u` AS `u`, `ts` AS `ts`, (upper(u)) AS `up`, `_ariadne_file` FROM ariadne_raw)",
		"SELECT `_ariadne_file` AS file, -1 AS part, count(*) AS rows, NULL AS s0, NULL AS s1, NULL AS s2, NULL AS s3, min(`id`) AS s4, max(`id`) AS s5 FROM t GROUP BY `_ariadne_file`",
		"0 AS part, NULL AS rows, v AS s0, NULL AS s1, NULL AS s2, NULL AS s3, NULL AS s4, NULL AS s5 FROM (SELECT DISTINCT `_ariadne_file`, `up` AS v FROM t WHERE `up` IS NOT NULL)",
		"1 AS part, NULL AS rows, NULL AS s0, v AS s1, m AS s2, NULL AS s3, NULL AS s4, NULL AS s5 FROM (SELECT `_ariadne_file`, v, max(ts) AS m FROM (SELECT `_ariadne_file`, `u` AS v, `ts` AS ts FROM t) GROUP BY `_ariadne_file`, v)",
		"2 AS part, NULL AS rows, NULL AS s0, NULL AS s1, NULL AS s2, v AS s3, NULL AS s4, NULL AS s5 FROM (SELECT DISTINCT `_ariadne_file`, v FROM (SELECT `_ariadne_file`, explode(transform(`a`.`b`, e -> e.`f`)) AS v FROM t) WHERE v IS NOT NULL)",
		") ORDER BY file, part",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("SummarySQL lacks %q:\n%s", want, got)
		}
	}
}

// TestKeyRead: every key type a row index build sends to an engine has a
// Spark type and a rendering; an unknown one is refused, not read as
// something else.
func TestKeyRead(t *testing.T) {
	for _, kt := range []rowindex.EngineKeyType{rowindex.EngineKeyInt8, rowindex.EngineKeyInt16, rowindex.EngineKeyInt32, rowindex.EngineKeyInt64,
		rowindex.EngineKeyDate, rowindex.EngineKeyMillis, rowindex.EngineKeyMicros, rowindex.EngineKeyFloat, rowindex.EngineKeyDouble,
		rowindex.EngineKeyBool, rowindex.EngineKeyString, rowindex.EngineKeyBinary} {
		st, expr, err := keyRead(kt)
		if err != nil || st == "" || !strings.Contains(expr, keyCol) {
			t.Errorf("%s: %q, %q, %v", kt, st, expr, err)
		}
		if q := RunSQL(kt); !strings.Contains(q, expr) || !strings.Contains(q, "row_number() OVER (PARTITION BY file, k ORDER BY pos)") {
			t.Errorf("%s: %s", kt, q)
		}
	}
	if _, _, err := keyRead("int96"); err == nil {
		t.Error("int96 read on Spark")
	}
}

// TestWriteCommand: an output is Spark's df.write.format(f).mode(m).save(p)
// with our formats and modes mapped to Spark Connect's, s3:// as s3a://.
func TestWriteCommand(t *testing.T) {
	for _, tc := range []struct {
		format, mode, source, saveMode string
	}{
		{"", "", "parquet", "SAVE_MODE_ERROR_IF_EXISTS"},
		{fileindex.OutputParquet, fileindex.OutputErrorIfExists, "parquet", "SAVE_MODE_ERROR_IF_EXISTS"},
		{fileindex.OutputDelta, fileindex.OutputOverwrite, "delta", "SAVE_MODE_OVERWRITE"},
		{fileindex.OutputDelta, fileindex.OutputAppend, "delta", "SAVE_MODE_APPEND"},
	} {
		cmd, err := writeCommand("SELECT 1", "s3://b/out", tc.format, tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		wo := get(cmd, "write_operation")
		mode := wo.Get(field(wo, "mode")).Enum()
		name := field(wo, "mode").Enum().Values().ByNumber(mode).Name()
		if got := wo.Get(field(wo, "source")).String(); got != tc.source || string(name) != tc.saveMode ||
			wo.Get(field(wo, "path")).String() != "s3a://b/out" ||
			get(cmd, "write_operation.input.sql").Get(field(get(cmd, "write_operation.input.sql"), "query")).String() != "SELECT 1" {
			t.Errorf("%q %q: source %q mode %s path %q; want %q %s", tc.format, tc.mode, got, name, wo.Get(field(wo, "path")).String(), tc.source, tc.saveMode)
		}
	}
	if _, err := writeCommand("SELECT 1", "file:///o", "orc", ""); err == nil {
		t.Error("format orc accepted")
	}
	if _, err := writeCommand("SELECT 1", "file:///o", "", "ignore"); err == nil {
		t.Error("mode ignore accepted")
	}
}
