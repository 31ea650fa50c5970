package fileindex

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// The Go summaries must build exactly the index the engine builds: these
// tests index the same real files twice, once through the engine only (the
// path before the Go summaries) and once through the Go summaries, and
// compare every table cell (bloom and auto-bloom filters byte for byte,
// value arrays as sets with their values' exact Go representation, ranges
// exactly), every large-index row, the metadata, and Locate answers.

// sumDef is a set of index definitions.
type sumDef struct {
	regular  []string
	exploded [][3]string
	temporal [][2]string
	bloom    []string
	ranges   []string
}

func (d sumDef) apply(t *testing.T, ix *index.Index) {
	ctx := context.Background()
	for _, c := range d.regular {
		must(t, ix.AddIndex(ctx, c))
	}
	for _, c := range d.exploded {
		must(t, ix.AddExplodedFieldIndex(ctx, c[0], c[1], c[2]))
	}
	for _, c := range d.temporal {
		must(t, ix.AddTemporalIndex(ctx, c[0], c[1]))
	}
	for _, c := range d.bloom {
		must(t, ix.AddBloomIndex(ctx, c, 0.01))
	}
	for _, c := range d.ranges {
		must(t, ix.AddRangeIndex(ctx, c))
	}
}

// sumExact renders a value with its Go type and exact content: -0 and 0,
// NaN payload-free, timestamps to the nanosecond, decimals with scale.
func sumExact(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = sumExact(e)
		}
		return "(" + strings.Join(parts, ",") + ")"
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case time.Time:
		return x.Format(time.RFC3339Nano) + "@" + x.Location().String()
	case pqrow.Decimal:
		return x.Unscaled.String() + "e-" + fmt.Sprint(x.Scale)
	case float64:
		if math.Signbit(x) && x == 0 {
			return "float64(-0)"
		}
	case float32:
		if math.Signbit(float64(x)) && x == 0 {
			return "float32(-0)"
		}
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

// sumCell renders a main-table cell: arrays as sorted sets.
func sumCell(v any) string {
	if x, ok := v.([]any); ok {
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = sumExact(e)
		}
		sort.Strings(parts)
		return "[" + strings.Join(parts, ",") + "]"
	}
	return sumExact(v)
}

// sumState renders everything the index holds, exactly.
func sumState(t *testing.T, ix *index.Index, ranges []string) string {
	t.Helper()
	ctx := context.Background()
	must(t, ix.RefreshMetadata(ctx))
	var b strings.Builder
	sch, rows := updTableRows(t, ix.Root(), ix.Paths().Main)
	var lines []string
	for _, r := range rows {
		fn := r[0].(string)
		fn = fn[strings.LastIndex(fn, "/")+1:]
		for i, f := range sch.Fields {
			cell := sumCell(r[i])
			if slices.Contains(ranges, strings.TrimPrefix(f.Name, "range_")) && strings.HasPrefix(f.Name, "range_") {
				cell = sumExact(r[i]) // ordered: {min, max}
			}
			lines = append(lines, fmt.Sprintf("%s %s=%s", fn, f.Name, cell))
		}
	}
	sort.Strings(lines)
	b.WriteString(strings.Join(lines, "\n"))
	fmt.Fprintf(&b, "\nschema %s\n", sch.Marshal())
	// Every large-index table.
	large := store.Sub(ix.Root(), "large_indexes")
	var cols []string
	for info, err := range large.List(ctx, store.ListOptions{}) {
		must(t, err)
		if c, rest, ok := strings.Cut(info.Key, "/_delta_log/"); ok && rest == "00000000000000000000.json" {
			cols = append(cols, c)
		}
	}
	slices.Sort(cols)
	for _, c := range cols {
		_, rows := updTableRows(t, ix.Root(), ix.Paths().LargeIndex(c))
		var l []string
		for _, r := range rows {
			fn := r[0].(string)
			l = append(l, fn[strings.LastIndex(fn, "/")+1:]+"="+sumExact(r[1]))
		}
		slices.Sort(l)
		fmt.Fprintf(&b, "large %s %v\n", c, l)
	}
	m := ix.Metadata()
	fmt.Fprintf(&b, "staging=%d total=%d auto=%v\n", updTableVersion(t, ix.Root(), ix.Paths().Staging), m.TotalIndexedFileSize, m.AutoBloomIndexes)
	return b.String()
}

// sumCompare indexes files with both paths (for each large-index limit)
// and compares the indexes and the answers of queries.
func sumCompare(t *testing.T, name, js, format string, ro map[string]string, files []string, d sumDef, queries []Query) (typedFiles []int) {
	t.Helper()
	ctx := context.Background()
	for _, L := range []int64{4, 500_000} {
		// (No '#' in test names: the store root is a file:// URL.)
		t.Run(fmt.Sprintf("%s_L%d", name, L), func(t *testing.T) {
			// The engine, the Go summaries on the row reader, the
			// default (typed pages where a file allows), and summaries
			// from another engine's records (two files per request),
			// streamed or written as Delta tables.
			modes := []UpdateOptions{{engineOnly: true}, {rowsOnly: true}, {}, {SummaryBatchFiles: 2}, {SummaryBatchFiles: 2, SummaryTables: true}}
			var states [5]string
			var answers [5][]string
			var results [5]UpdateResult
			for k, mode := range modes {
				engineOnly := mode.engineOnly
				e := newUpdEnv(t)
				e.cfg.LargeIndexLimit = L
				ix := e.open("sum", js, format, ro)
				updAddFiles(t, ix, files...)
				d.apply(t, ix)
				fi := e.fi(ix)
				switch k {
				case 3:
					mode.Summaries = &recordEngine{res: fi.res}
				case 4:
					mode.Summaries = &tableEngine{recordEngine: recordEngine{res: fi.res}}
				}
				mode.Concurrency = 3
				res, err := fi.Update(ctx, mode)
				if tracked, _ := ix.Files(ctx); len(tracked) != len(files) {
					t.Fatalf("tracked %d of %d files: %v", len(tracked), len(files), tracked)
				}
				if err != nil {
					t.Fatalf("engineOnly=%v: %v", engineOnly, err)
				}
				results[k] = res
				states[k] = sumState(t, ix, d.ranges)
				for _, q := range queries {
					got, err := fi.Locate(ctx, q)
					if err != nil {
						t.Fatalf("locate %v: %v", q, err)
					}
					answers[k] = append(answers[k], fmt.Sprint(q, " → ", got))
				}
			}
			for k := 3; k < 5; k++ {
				if results[k].SummarizedBy != len(files) || results[k].TypedFiles != 0 {
					t.Errorf("summaries from records (mode %d): %+v, want all %d files summarised there", k, results[k], len(files))
				}
			}
			if results[1].TypedFiles != 0 {
				t.Errorf("rowsOnly summarised %d files from typed pages", results[1].TypedFiles)
			}
			typedFiles = append(typedFiles, results[2].TypedFiles)
			for k := 1; k < len(modes); k++ {
				if results[k].EngineFiles != 0 {
					t.Errorf("Go path (mode %d) sent %d files to the engine", k, results[k].EngineFiles)
				}
				if results[0].Batches != results[k].Batches {
					t.Errorf("batches: engine %+v, Go (mode %d) %+v", results[0], k, results[k])
				}
				if states[0] != states[k] {
					el, gl := strings.Split(states[0], "\n"), strings.Split(states[k], "\n")
					for i := range min(len(el), len(gl)) {
						if el[i] != gl[i] {
							t.Errorf("first difference at line %d:\nengine %s\ngo (%d) %s", i, el[i], k, gl[i])
							break
						}
					}
					t.Fatalf("indexes differ (%d vs %d lines, mode %d)", len(el), len(gl), k)
				}
				if !slices.Equal(answers[0], answers[k]) {
					t.Fatalf("locate answers differ:\nengine %v\ngo (%d) %v", answers[0], k, answers[k])
				}
			}
			if !strings.Contains(states[1], "=[") {
				t.Fatalf("nothing indexed:\n%s", states[1])
			}
		})
	}
	return typedFiles
}

const sumParquetSchema = `{"type":"struct","fields":[` +
	`{"name":"s","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"b","type":"binary","nullable":true,"metadata":{}},` +
	`{"name":"bo","type":"boolean","nullable":true,"metadata":{}},` +
	`{"name":"i8","type":"byte","nullable":true,"metadata":{}},` +
	`{"name":"i16","type":"short","nullable":true,"metadata":{}},` +
	`{"name":"i32","type":"integer","nullable":true,"metadata":{}},` +
	`{"name":"i64","type":"long","nullable":true,"metadata":{}},` +
	`{"name":"f","type":"float","nullable":true,"metadata":{}},` +
	`{"name":"d","type":"double","nullable":true,"metadata":{}},` +
	`{"name":"dt","type":"date","nullable":true,"metadata":{}},` +
	`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},` +
	`{"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},` +
	`{"name":"dec","type":"decimal(10,2)","nullable":true,"metadata":{}},` +
	`{"name":"wdec","type":"decimal(30,5)","nullable":true,"metadata":{}},` +
	`{"name":"st","type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,"metadata":{}},{"name":"y","type":"string","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},` +
	`{"name":"arr","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}},` +
	`{"name":"tk","type":"integer","nullable":true,"metadata":{}},` +
	`{"name":"tts","type":"timestamp","nullable":true,"metadata":{}}]}`

// sumRow draws a random row of sumParquetSchema: small domains so values
// repeat within and across files, ~15% nulls, and the values whose
// equality or order is delicate (-0.0 and 0.0, NaN, infinities, empty and
// non-ASCII strings, negative decimals, pre-1970 instants).
func sumRow(rng *rand.Rand) pqrow.Row {
	null := func() bool { return rng.IntN(100) < 15 }
	pick := func(v func() any) any {
		if null() {
			return nil
		}
		return v()
	}
	floats := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1.5, -2.25, 3}
	strs := []string{"", "a", "B", "é", "zz", "a\x00b", "日本", "Z"}
	base := time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC)
	return pqrow.Row{
		pick(func() any { return strs[rng.IntN(len(strs))] }),
		pick(func() any { return []byte(strs[rng.IntN(len(strs))]) }),
		pick(func() any { return rng.IntN(2) == 0 }),
		pick(func() any { return int8(rng.IntN(7) - 3) }),
		pick(func() any { return int16(rng.IntN(9) - 4) }),
		pick(func() any { return int32(rng.IntN(11) - 5) }),
		pick(func() any { return int64(rng.IntN(13)-6) * 1_000_000_007 }),
		pick(func() any { return float32(floats[rng.IntN(len(floats))]) }),
		pick(func() any { return floats[rng.IntN(len(floats))] }),
		pick(func() any { return base.AddDate(0, 0, rng.IntN(5)).Truncate(24 * time.Hour) }),
		pick(func() any {
			return base.Add(time.Duration(rng.IntN(7)) * 90 * time.Minute).Add(time.Duration(rng.IntN(3)) * time.Microsecond)
		}),
		pick(func() any { return base.Add(time.Duration(rng.IntN(5)) * time.Hour) }),
		pick(func() any { return pqrow.NewDecimal(int64(rng.IntN(9)-4)*125, 2) }),
		pick(func() any {
			u, _ := new(big.Int).SetString(fmt.Sprintf("%d123456789012345678901", rng.IntN(5)-2), 10)
			return pqrow.Decimal{Unscaled: u, Scale: 5}
		}),
		pick(func() any {
			return []any{pick(func() any { return int32(rng.IntN(4)) }), pick(func() any { return strs[rng.IntN(3)] })}
		}),
		pick(func() any {
			var arr []any
			for range rng.IntN(4) {
				if rng.IntN(6) == 0 {
					arr = append(arr, nil)
					continue
				}
				arr = append(arr, []any{pick(func() any { return int64(rng.IntN(9)) }), pick(func() any { return strs[rng.IntN(len(strs))] })})
			}
			if arr == nil {
				return []any{}
			}
			return arr
		}),
		pick(func() any { return int32(rng.IntN(5)) }),
		pick(func() any { return base.Add(time.Duration(rng.IntN(6)) * time.Hour) }),
	}
}

// TestSummariesMatchEngineParquet: every index type over every summarised
// Spark type, with nulls, in Parquet files (one empty, one all null).
func TestSummariesMatchEngineParquet(t *testing.T) {
	st, err := schema.Parse(sumParquetSchema)
	must(t, err)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(11, 7))
	var files []string
	for f := range 6 {
		var rows []pqrow.Row
		n := 5 + rng.IntN(30)
		switch f {
		case 4:
			n = 0
		}
		for range n {
			rows = append(rows, sumRow(rng))
		}
		if f == 5 {
			rows = []pqrow.Row{make(pqrow.Row, len(st.Fields)), make(pqrow.Row, len(st.Fields))}
		}
		var buf bytes.Buffer
		w := pqrow.NewWriter(&buf, st, pqrow.WriterOptions{})
		must(t, w.Write(rows...))
		_, err := w.Close()
		must(t, err)
		p := filepath.Join(dir, fmt.Sprintf("p%d.parquet", f))
		must(t, os.WriteFile(p, buf.Bytes(), 0o644))
		files = append(files, updFileURI(t, p))
	}
	d := sumDef{
		regular:  []string{"s", "b", "bo", "i8", "i16", "i32", "i64", "f", "d", "dt", "ts", "ntz", "dec", "wdec"},
		exploded: [][3]string{{"arr", "id", "arr_id"}, {"arr", "name", "arr_name"}},
		temporal: [][2]string{{"tk", "tts"}},
	}
	queries := []Query{
		{"s": {"a", "é"}}, {"i32": {int32(2)}}, {"i64": {int64(2_000_000_014)}}, {"d": {1.5}}, {"d": {0.0}},
		{"f": {float32(-2.25)}}, {"arr_id": {int64(3)}}, {"arr_name": {"zz"}}, {"tk": {int32(2)}},
	}
	sumCompare(t, "regular", sumParquetSchema, "parquet", nil, files, d, queries)

	// Ranges on every summarised type (bytewise strings and binaries, NaN
	// greatest, -0.0 equal to 0.0).
	rg := sumDef{ranges: []string{"s", "b", "bo", "i8", "i16", "i32", "i64", "f", "d", "dt", "ts", "ntz", "dec", "wdec"}}
	sumCompare(t, "range", sumParquetSchema, "parquet", nil, files, rg,
		[]Query{{"s": {"b"}}, {"i32": {int32(-5)}}, {"d": {100.0}}, {"f": {float32(0)}}})

	// Bloom indexes on every summarised type (their filters hash each
	// value's rendering: -0.0 and 0.0 both, NaN once).
	bl := sumDef{
		regular: []string{"s"},
		bloom:   []string{"b", "bo", "i8", "i16", "i32", "i64", "f", "d", "dt", "ts", "ntz", "dec", "wdec"},
	}
	sumCompare(t, "bloom", sumParquetSchema, "parquet", nil, files, bl, []Query{{"i32": {int32(1)}}, {"d": {-2.25}}})

	// The typed path: indexes on the types it reads (strings, integers,
	// dates, timestamps) take it, in every file (a column has one index
	// type; the regular and range cases above cover the other pairs).
	ty := sumDef{
		regular: []string{"s", "i8", "i16"},
		bloom:   []string{"i64", "dt"},
		ranges:  []string{"i32", "ts", "ntz"},
	}
	for _, n := range sumCompare(t, "typed", sumParquetSchema, "parquet", nil, files, ty,
		[]Query{{"s": {"a", "é"}}, {"i32": {int32(2)}}, {"i64": {int64(2_000_000_014)}}, {"i8": {int8(3)}}, {"ts": {"2024-01-01T03:00:00Z"}}}) {
		if n != len(files) {
			t.Errorf("typed path took %d of %d files", n, len(files))
		}
	}
	// A bloom index on strings: its sets keep the filter's hashes of the
	// strings, on the typed and the row path.
	tb := sumDef{regular: []string{"i8"}, bloom: []string{"s"}}
	for _, n := range sumCompare(t, "typed bloom", sumParquetSchema, "parquet", nil, files, tb,
		[]Query{{"s": {"a", "é"}}, {"s": {"zz"}}, {"i8": {int8(3)}}}) {
		if n != len(files) {
			t.Errorf("typed path took %d of %d files", n, len(files))
		}
	}
}

// TestSummariesMatchEngineCSV: CSV files with nulls (empty fields),
// special floats and every CSV-readable summarised type.
func TestSummariesMatchEngineCSV(t *testing.T) {
	const js = `{"type":"struct","fields":[` +
		`{"name":"Id","type":"integer","nullable":true,"metadata":{}},` +
		`{"name":"Name","type":"string","nullable":true,"metadata":{}},` +
		`{"name":"Score","type":"double","nullable":true,"metadata":{}},` +
		`{"name":"Day","type":"date","nullable":true,"metadata":{}},` +
		`{"name":"At","type":"timestamp","nullable":true,"metadata":{}},` +
		`{"name":"Amount","type":"decimal(12,3)","nullable":true,"metadata":{}},` +
		`{"name":"Flag","type":"boolean","nullable":true,"metadata":{}}]}`
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 5))
	scores := []string{"0.0", "-0.0", "NaN", "Infinity", "-Infinity", "1.5", "2", ""}
	names := []string{"alpha", "Beta", "", "ünï", "x,y"}
	var files []string
	for f := range 5 {
		var b strings.Builder
		b.WriteString("Id,Name,Score,Day,At,Amount,Flag\n")
		for range rng.IntN(25) {
			opt := func(s string) string {
				if rng.IntN(100) < 15 {
					return ""
				}
				return s
			}
			name := names[rng.IntN(len(names))]
			if strings.Contains(name, ",") {
				name = `"` + name + `"`
			}
			fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,%s\n",
				opt(fmt.Sprint(rng.IntN(12))), opt(name), scores[rng.IntN(len(scores))],
				opt(fmt.Sprintf("2024-01-%02d", 1+rng.IntN(4))),
				opt(fmt.Sprintf("2024-01-01T%02d:%02d:00.%06dZ", rng.IntN(3), rng.IntN(2), rng.IntN(2)*123456)),
				opt(fmt.Sprintf("%d.%03d", rng.IntN(5)-2, rng.IntN(3)*250)),
				opt(fmt.Sprint(rng.IntN(2) == 0)))
		}
		files = append(files, updWriteFile(t, dir, fmt.Sprintf("c%d.csv", f), b.String()))
	}
	d := sumDef{
		regular:  []string{"Name", "Day"},
		temporal: [][2]string{{"Id", "At"}},
		bloom:    []string{"Score", "Amount"},
		ranges:   []string{"At", "Flag"},
	}
	sumCompare(t, "csv", js, "csv", map[string]string{"header": "true"}, files, d,
		[]Query{{"Name": {"alpha"}}, {"Score": {0.0}}, {"Id": {int32(3)}}, {"Amount": {"1.250"}}})
}

// TestSummariesMatchEngineJSON: line-delimited JSON with nested arrays
// (exploded), nested structs (regular on a field path) and nulls.
func TestSummariesMatchEngineJSON(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(9, 1))
	var files []string
	for f := range 4 {
		var b strings.Builder
		for range rng.IntN(20) {
			var tags []string
			for range rng.IntN(4) {
				switch rng.IntN(5) {
				case 0:
					tags = append(tags, "null")
				case 1:
					tags = append(tags, `{"name":null,"category":"c"}`)
				default:
					tags = append(tags, fmt.Sprintf(`{"name":"t%d","category":"k%d"}`, rng.IntN(6), rng.IntN(3)))
				}
			}
			tagJSON := "[" + strings.Join(tags, ",") + "]"
			if rng.IntN(6) == 0 {
				tagJSON = "null"
			}
			users := fmt.Sprintf("[%d,%d]", rng.IntN(9), rng.IntN(9))
			if rng.IntN(5) == 0 {
				users = "null"
			}
			fmt.Fprintf(&b, `{"event_id":"e%d","event_type":"%s","timestamp":"2024-0%d","tags":%s,"user_ids":%s}`+"\n",
				rng.IntN(30), []string{"view", "buy", "signup"}[rng.IntN(3)], 1+rng.IntN(3), tagJSON, users)
		}
		files = append(files, updWriteFile(t, dir, fmt.Sprintf("j%d.json", f), b.String()))
	}
	d := sumDef{
		regular:  []string{"event_type"},
		exploded: [][3]string{{"tags", "name", "tag_name"}, {"tags", "category", "tag_category"}},
		bloom:    []string{"event_id"},
		ranges:   []string{"timestamp"},
	}
	sumCompare(t, "json", updSchemaEvents, "json", nil, files, d,
		[]Query{{"tag_name": {"t1"}}, {"tag_category": {"k0", "c"}}, {"event_type": {"buy"}}, {"event_id": {"e3"}}})
}

// TestSummariesOverBudget: a file whose value sets outgrow the memory
// budget goes to the engine, and the index is still the engine's.
func TestSummariesOverBudget(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	files := []string{updCSVIDs(t, dir, "small.csv", 3), updCSVIDs(t, dir, "big.csv", 400)}
	var states [2]string
	for k, engineOnly := range []bool{true, false} {
		e := newUpdEnv(t)
		e.cfg.LargeIndexLimit = 50
		ix := e.open("budget", updSchemaIDs, "csv", map[string]string{"header": "true"})
		updAddFiles(t, ix, files...)
		sumDef{regular: []string{"Id"}, bloom: []string{"Category"}, ranges: []string{"Value"}}.apply(t, ix)
		res, err := e.fi(ix).Update(ctx, UpdateOptions{engineOnly: engineOnly, SummaryMemoryBytes: 8 << 10, Concurrency: 1})
		must(t, err)
		if !engineOnly && res.EngineFiles != 1 {
			t.Errorf("engine files %d, want 1 (big.csv)", res.EngineFiles)
		}
		states[k] = sumState(t, ix, []string{"Value"})
	}
	if states[0] != states[1] {
		t.Fatalf("engine\n%s\nmixed\n%s", states[0], states[1])
	}
}

// TestUpdateReadsOnlyWhatIndexesNeed: an update reads nothing from a data
// file when no index needs a summary (only its size is recorded), and only
// the indexed columns' chunks otherwise.
func TestUpdateReadsOnlyWhatIndexesNeed(t *testing.T) {
	ctx := context.Background()
	st, err := schema.Parse(sumParquetSchema)
	must(t, err)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 5))
	var files []string
	var total int64
	for f := range 3 {
		var rows []pqrow.Row
		for range 3000 {
			rows = append(rows, sumRow(rng))
		}
		var buf bytes.Buffer
		w := pqrow.NewWriter(&buf, st, pqrow.WriterOptions{})
		must(t, w.Write(rows...))
		_, err := w.Close()
		must(t, err)
		p := filepath.Join(dir, fmt.Sprintf("r%d.parquet", f))
		must(t, os.WriteFile(p, buf.Bytes(), 0o644))
		files = append(files, updFileURI(t, p))
		total += int64(buf.Len())
	}
	for _, tc := range []struct {
		name     string
		def      sumDef
		maxBytes int64
	}{
		{"no index column", sumDef{}, 0},
		{"one int column", sumDef{regular: []string{"i32"}}, total / 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var counted []*store.Counting
			res := store.NewResolver(store.ResolverOptions{Wrap: func(s store.Store) store.Store {
				c := store.NewCounting(s)
				mu.Lock()
				counted = append(counted, c)
				mu.Unlock()
				return c
			}})
			defer res.Close()
			e := newUpdEnv(t)
			ix := e.open("reads", sumParquetSchema, "parquet", nil)
			updAddFiles(t, ix, files...)
			tc.def.apply(t, ix)
			cfg := e.cfg
			r, err := New(ix, Options{Config: &cfg, Resolver: res}).Update(ctx, UpdateOptions{})
			must(t, err)
			if r.NewFiles != len(files) {
				t.Fatalf("indexed %d files", r.NewFiles)
			}
			var read int64
			for _, c := range counted {
				read += c.Snapshot().Read.Bytes
			}
			if read > tc.maxBytes {
				t.Errorf("read %d bytes of %d, want at most %d", read, total, tc.maxBytes)
			}
			if got := updMainTable(t, ix); got[files[0]][FileSizeColumn] != updItoa(updFileSize(t, files[0])) {
				t.Errorf("main table %v", got[files[0]])
			}
		})
	}
}

// TestMergeTakesStagedBatchesFromMemory: the merge of an update's own
// batches appends them from memory: with every read of a staging data file
// failing, the update still succeeds (four batches, two merges) and builds
// the index an unhindered update builds; a recovery, which must read
// staging/, does fail under the same fault.
func TestMergeTakesStagedBatchesFromMemory(t *testing.T) {
	ctx := context.Background()
	fx := newCrashFixture(t)
	ref := newUpdEnv(t)
	refIx := fx.setup(t, ref)
	updMust(t, ref.fi(refIx))
	want := indexState(t, refIx)

	e := newUpdEnv(t)
	ix := fx.setup(t, e)
	errRead := errors.New("staging read")
	faulty := store.NewFaulty(e.root, store.Faults{Errors: []store.FaultRule{{
		Op:  store.OpRead,
		Key: func(k string) bool { return strings.Contains(k, "/staging/") && strings.HasSuffix(k, ".parquet") },
		Err: errRead,
	}}})
	cfg := e.cfg
	fix, err := index.NewCatalog(faulty, index.Options{Config: cfg}).Get(ctx, ix.Name())
	must(t, err)
	res, err := New(fix, Options{Config: &cfg}).Update(ctx, UpdateOptions{})
	if err != nil {
		t.Fatalf("update with unreadable staging files: %v", err)
	}
	if res.Batches != 4 || res.Consolidations != 2 {
		t.Fatalf("fixture does not exercise what it should: %+v", res)
	}
	if got := indexState(t, ix); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}

	// The engine path's batches are read back from staging/ (their arrays
	// are not in the spill): the same fault fails it.
	e1 := newUpdEnv(t)
	ix1 := fx.setup(t, e1)
	faulty1 := store.NewFaulty(e1.root, store.Faults{Errors: []store.FaultRule{{
		Op:  store.OpRead,
		Key: func(k string) bool { return strings.Contains(k, "/staging/") && strings.HasSuffix(k, ".parquet") },
		Err: errRead,
	}}})
	eix, err := index.NewCatalog(faulty1, index.Options{Config: cfg}).Get(ctx, ix1.Name())
	must(t, err)
	if _, err := New(eix, Options{Config: &cfg}).Update(ctx, UpdateOptions{engineOnly: true}); !errors.Is(err, errRead) {
		t.Fatalf("engine path merged without reading staging/: %v", err)
	}

	// The fault is real: a leftover staging table cannot be recovered.
	e2 := newUpdEnv(t)
	ix2 := fx.setup(t, e2)
	crash := store.NewFaulty(e2.root, store.Faults{CrashAfterWrites: 12})
	cix, err := index.NewCatalog(crash, index.Options{Config: cfg}).Get(ctx, ix2.Name())
	must(t, err)
	if _, err := New(cix, Options{Config: &cfg}).Update(ctx, UpdateOptions{}); err == nil {
		t.Fatal("the crash did not happen")
	}
	if updTableVersion(t, ix2.Root(), ix2.Paths().Staging) < 0 {
		t.Fatal("no staging left to recover")
	}
	must(t, e2.root.Delete(ctx, ix2.Paths().UpdateLock, nil))
	faulty2 := store.NewFaulty(e2.root, store.Faults{Errors: []store.FaultRule{{
		Op:  store.OpRead,
		Key: func(k string) bool { return strings.Contains(k, "/staging/") && strings.HasSuffix(k, ".parquet") },
		Err: errRead,
	}}})
	rix, err := index.NewCatalog(faulty2, index.Options{Config: cfg}).Get(ctx, ix2.Name())
	must(t, err)
	if _, err := New(rix, Options{Config: &cfg}).Update(ctx, UpdateOptions{}); !errors.Is(err, errRead) {
		t.Fatalf("recovery read staging without the fault firing: %v", err)
	}
}
