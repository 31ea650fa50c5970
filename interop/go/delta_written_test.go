package interop

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"path/filepath"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// The schema of the tables our writer produces for the engines to read: every
// Spark type family of the row model, nullable, plus the partition column.
var writtenSchemaV1 = mustSchema(`{"type":"struct","fields":[` +
	`{"name":"id","type":"long","nullable":false,"metadata":{}},` +
	`{"name":"name","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"qty","type":"integer","nullable":true,"metadata":{}},` +
	`{"name":"amount","type":"decimal(10,2)","nullable":true,"metadata":{}},` +
	`{"name":"big","type":"decimal(38,6)","nullable":true,"metadata":{}},` +
	`{"name":"score","type":"double","nullable":true,"metadata":{}},` +
	`{"name":"ratio","type":"float","nullable":true,"metadata":{}},` +
	`{"name":"flag","type":"boolean","nullable":true,"metadata":{}},` +
	`{"name":"d","type":"date","nullable":true,"metadata":{}},` +
	`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},` +
	`{"name":"raw","type":"binary","nullable":true,"metadata":{}},` +
	`{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},` +
	`{"name":"info","type":{"type":"struct","fields":[{"name":"city","type":"string","nullable":true,"metadata":{}},{"name":"zip","type":"integer","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},` +
	`{"name":"attrs","type":{"type":"map","keyType":"string","valueType":"integer","valueContainsNull":true},"nullable":true,"metadata":{}},` +
	`{"name":"part","type":"string","nullable":true,"metadata":{}}]}`)

// writtenSchemaV2 is the schema the overwrite installs: ratio dropped, qty
// widened to long, note added at the end.
var writtenSchemaV2 = func() *schema.Struct {
	var fs []schema.Field
	for _, f := range writtenSchemaV1.Fields {
		switch f.Name {
		case "ratio":
			continue
		case "qty":
			f.Type = schema.Long
		}
		fs = append(fs, f)
	}
	fs = append(fs, schema.Field{Name: "note", Type: schema.String, Nullable: true})
	return &schema.Struct{Fields: fs}
}()

func mustSchema(s string) *schema.Struct {
	st, err := schema.Parse(s)
	if err != nil {
		panic(err)
	}
	return st
}

var doubles = []float64{0.1, math.Copysign(0, -1), 1e16, 2.5, math.NaN(), math.Inf(1), 1.0 / 3, -1.5e-7, 5e-324}

// genRow returns the deterministic row i of the first schema: nulls in every
// nullable column at different strides, non-ASCII and control characters,
// float specials and signed zero, pre-epoch instants, a 38-digit decimal,
// null array elements and map values, and null partition values.
func genRow(i int64, tag string) []any {
	var name, qty, bigd, score, ratio, flag, raw, tags, info, attrs, part any
	if i%7 != 0 {
		name = fmt.Sprintf("%s-name-%d-é✓ \"q\" \\ \t\x01", tag, i)
	}
	if i%9 != 0 {
		qty = int32(i*3 - 20)
	}
	if i%11 != 0 {
		u := new(big.Int).Exp(big.NewInt(10), big.NewInt(37), nil)
		u.Add(u, big.NewInt(i))
		if i%2 == 1 {
			u.Neg(u)
		}
		bigd = pqrow.Decimal{Unscaled: u, Scale: 6}
	}
	if i%10 != 3 {
		score = doubles[i%int64(len(doubles))]
	}
	if i%6 != 0 {
		ratio = float32(i) / 7
	}
	if i%5 != 0 {
		flag = i%2 == 0
	}
	if i%4 != 1 {
		raw = []byte{byte(i), 0, 0xff, '"'}
	}
	if i%6 != 0 {
		tg := []any{fmt.Sprintf("t%d", i%3), tag, nil} // a null element in a third of the arrays
		tags = tg[:1+i%3]
	}
	if i%8 != 0 {
		var city any
		if i%3 != 0 {
			city = fmt.Sprintf("city%d", i%4)
		}
		info = []any{city, int32(10000 + i)}
	}
	if i%4 != 0 {
		var kv []pqrow.KV
		for j := i % 3; j >= 0; j-- { // reverse order: the rendering sorts
			var v any = int32(i*10 + j)
			if j == 1 && i%2 == 0 {
				v = nil
			}
			kv = append(kv, pqrow.KV{Key: fmt.Sprintf("k%d", j), Value: v})
		}
		attrs = kv
	}
	if i%10 != 9 {
		part = fmt.Sprintf("p%d", i%3)
	}
	d := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(i))
	ts := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*time.Hour + time.Duration(i*1001)*time.Microsecond)
	if i == 2 {
		d = time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)
		ts = time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC)
	}
	return []any{i, name, qty, pqrow.NewDecimal(i*125-300, 2), bigd, score, ratio, flag, d, ts, raw, tags, info, attrs, part}
}

// genRowV2 is row i of writtenSchemaV2.
func genRowV2(i int64, tag string) []any {
	r := genRow(i, tag)
	var qty any
	if r[2] != nil {
		qty = int64(r[2].(int32))
	}
	out := []any{r[0], r[1], qty}
	out = append(out, r[3:6]...) // amount, big, score
	out = append(out, r[7:]...)  // flag … part (ratio dropped)
	var note any
	if i%3 != 1 {
		note = fmt.Sprintf("note %d", i)
	}
	return append(out, note)
}

func genRows(from, n int64, tag string, gen func(int64, string) []any) [][]any {
	var rows [][]any
	for i := from; i < from+n; i++ {
		rows = append(rows, gen(i, tag))
	}
	return rows
}

// model is the expected content of a table: rows by id, with the schema they
// are aligned with.
type model struct {
	schema *schema.Struct
	rows   map[int64][]any
}

func (m *model) put(rows [][]any) {
	for _, r := range rows {
		m.rows[r[0].(int64)] = r
	}
}

func (m *model) lines(t *testing.T) []string {
	t.Helper()
	var rows [][]any
	for _, r := range m.rows {
		rows = append(rows, r)
	}
	lines, err := RenderRows(m.schema, rows)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// versionState is what a table must read as at one version.
type versionState struct {
	version int64
	op      string
	schema  *schema.Struct
	lines   []string
}

// writeHistory runs the operation sequence on a new table at dir and
// returns the expected state after every commit.
func writeHistory(t *testing.T, ctx context.Context, dir string, opts delta.CreateOptions, explicitCheckpoint bool) []versionState {
	t.Helper()
	st := openStore(t, ctx, dir)
	tbl, err := delta.Create(ctx, st, writtenSchemaV1, opts)
	if err != nil {
		t.Fatal(err)
	}
	m := &model{schema: writtenSchemaV1, rows: map[int64][]any{}}
	var states []versionState
	record := func(op string, v int64) {
		t.Helper()
		if n := len(states); n > 0 && states[n-1].version >= v {
			t.Fatalf("%s committed version %d after %d", op, v, states[n-1].version)
		}
		states = append(states, versionState{version: v, op: op, schema: m.schema, lines: m.lines(t)})
	}
	record("create", 0)

	for k := int64(0); k < 3; k++ {
		rows := genRows(k*10, 10, "v1", genRow)
		v, err := tbl.Append(ctx, delta.Rows(rows), delta.WriteOptions{})
		if err != nil {
			t.Fatalf("append %d: %v", k, err)
		}
		m.put(rows)
		record(fmt.Sprintf("append %d", k), v)
	}

	res, err := tbl.Delete(ctx, func(r []any) bool { return r[0].(int64)%5 == 0 }, delta.DeleteOptions{})
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	for id := range m.rows {
		if id%5 == 0 {
			delete(m.rows, id)
		}
	}
	record("delete id%5=0", res.Version)

	up := genRows(25, 10, "v2", genRow)
	res, err = tbl.Upsert(ctx, []string{"id"}, delta.Rows(up), delta.WriteOptions{})
	if err != nil {
		t.Fatalf("upsert: %v", err)
	}
	m.put(up)
	record("upsert 25..34", res.Version)

	om, err := tbl.Optimize(ctx, delta.OptimizeOptions{MinFileSize: 1 << 30})
	if err != nil {
		t.Fatalf("optimize: %v", err)
	}
	if !om.Committed || om.FilesRemoved < 2 {
		t.Fatalf("optimize did nothing: %+v", om)
	}
	record("optimize", om.Version)

	ow := genRows(100, 20, "v3", genRowV2)
	res, err = tbl.Overwrite(ctx, writtenSchemaV2, delta.Rows(ow), delta.WriteOptions{})
	if err != nil {
		t.Fatalf("overwrite: %v", err)
	}
	m = &model{schema: writtenSchemaV2, rows: map[int64][]any{}}
	m.put(ow)
	record("overwrite with schema change", res.Version)

	res, err = tbl.DeleteKeys(ctx, "id", []any{int64(101), int64(102), int64(999)}, delta.WriteOptions{})
	if err != nil {
		t.Fatalf("delete keys: %v", err)
	}
	delete(m.rows, 101)
	delete(m.rows, 102)
	record("delete keys 101,102", res.Version)

	for k := int64(0); k < 3; k++ {
		rows := genRows(120+k*10, 10, "v4", genRowV2)
		v, err := tbl.Append(ctx, delta.Rows(rows), delta.WriteOptions{})
		if err != nil {
			t.Fatalf("append %d after overwrite: %v", k, err)
		}
		m.put(rows)
		record(fmt.Sprintf("append %d after overwrite", k), v)
		if k == 1 && explicitCheckpoint {
			if err := tbl.Checkpoint(ctx, v); err != nil {
				t.Fatalf("checkpoint %d: %v", v, err)
			}
		}
	}
	return states
}

// TestGoWrittenTablesReadByEngines is issue 5 item 4a: tables written by our
// delta package (create, appends, delete, upsert, optimize, overwrite with a
// schema change, delete by keys, appends across a checkpoint) are read by
// delta-rs and by Spark with delta-spark at every version, and both give
// exactly the rows and schema we expect — which our own reader must give too.
func TestGoWrittenTablesReadByEngines(t *testing.T) {
	e := loadEnv(t)
	ctx := testContext(t, 10*time.Minute)
	root := t.TempDir()

	tables := []struct {
		name       string
		opts       delta.CreateOptions
		checkpoint bool // explicit Checkpoint call (else by delta.checkpointInterval)
	}{
		{"partitioned", delta.CreateOptions{PartitionColumns: []string{"part"}}, true},
		{"unpartitioned", delta.CreateOptions{Configuration: map[string]string{"delta.checkpointInterval": "4"}}, false},
	}
	type want struct {
		table string
		state versionState
		last  bool
	}
	var reqs []CheckRequest
	var wants []want
	for _, tc := range tables {
		dir := filepath.Join(root, tc.name)
		states := writeHistory(t, ctx, dir, tc.opts, tc.checkpoint)
		if cps, _ := filepath.Glob(filepath.Join(dir, "_delta_log", "*.checkpoint.parquet")); len(cps) == 0 {
			t.Fatalf("%s: no checkpoint was written", tc.name)
		}
		// Our own reader first: at every version it must give the model.
		st := openStore(t, ctx, dir)
		tbl, err := delta.Open(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range states {
			snap, err := tbl.SnapshotAt(ctx, s.version)
			if err != nil {
				t.Fatalf("%s v%d: %v", tc.name, s.version, err)
			}
			got, err := scanLines(ctx, snap)
			if err != nil {
				t.Fatalf("%s v%d (%s): our scan: %v", tc.name, s.version, s.op, err)
			}
			if d := diffLines(s.lines, got); d != "" {
				t.Errorf("%s v%d (%s): our reader: %s", tc.name, s.version, s.op, d)
			}
			if !schema.Equal(snap.Schema(), s.schema) {
				t.Errorf("%s v%d: our schema %s, want %s", tc.name, s.version, snap.Schema(), s.schema)
			}
		}
		for i, s := range states[1:] { // version 0 has no rows and delta-rs/Spark agree trivially
			v := s.version
			last := i == len(states)-2
			if last {
				reqs = append(reqs, CheckRequest{Table: dir}) // latest: no time travel
			} else {
				reqs = append(reqs, CheckRequest{Table: dir, Version: &v})
			}
			wants = append(wants, want{tc.name, s, last})
		}
	}

	results, err := e.CheckTables(ctx, root, "both", reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		w := wants[i]
		for _, eng := range []Engine{DeltaRS, Spark} {
			er := r.Engine(eng)
			label := fmt.Sprintf("%s v%d (%s) read by %s", w.table, w.state.version, w.state.op, eng)
			if er == nil {
				t.Errorf("%s: no result", label)
				continue
			}
			if er.Error != nil {
				t.Errorf("%s: %s", label, *er.Error)
				continue
			}
			if er.Version == nil || *er.Version != w.state.version {
				t.Errorf("%s: version %v", label, er.Version)
			}
			if d := diffLines(w.state.lines, er.Rows); d != "" {
				t.Errorf("%s: %s", label, d)
			}
			if er.EngineSchema == nil {
				t.Errorf("%s: no schema", label)
			} else if err := sameSchema(w.state.schema, *er.EngineSchema); err != nil {
				t.Errorf("%s: %v", label, err)
			}
		}
	}
}
