package fileindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// recordEngine is a SummaryEngine without Spark: it reads each file of a
// job with our readers and returns the records SummaryJob describes, files
// in reverse order and each file's records last part first (the order
// within a file is free), so that the tests exercise the seam — the record
// layout, the consolidation of records into the ordinary update — on every
// value type of the Go summaries. The interop test TestSparkEngineUpdate
// does the same with Spark's records.
type recordEngine struct {
	res *store.Resolver
	// lie, when set, rewrites the records (to test the checks).
	lie func(st *schema.Struct, recs [][]any) (*schema.Struct, [][]any)
	// jobs counts the Summarize calls.
	jobs int
}

func (e *recordEngine) Name() string { return "records" }

func (e *recordEngine) Summarize(ctx context.Context, job *SummaryJob) (JoinRows, error) {
	e.jobs++
	st := &schema.Struct{Fields: []schema.Field{{Name: "file", Type: schema.String}, {Name: "part", Type: schema.Integer}, {Name: "rows", Type: schema.Long}}}
	add := func(t schema.Type) {
		st.Fields = append(st.Fields, schema.Field{Name: fmt.Sprint("s", len(st.Fields)), Type: t, Nullable: true})
	}
	for _, p := range job.Parts {
		add(p.Type)
		if p.Kind == SummaryTemporal {
			add(p.TimestampType)
		}
	}
	for _, t := range job.RangeTypes {
		add(t)
		add(t)
	}
	var recs [][]any
	for fi := len(job.Files) - 1; fi >= 0; fi-- {
		f := job.Files[fi]
		rd, err := datafile.Open(ctx, e.res, f, datafile.Spec{Format: job.Format, Schema: job.Schema, Options: job.Options}, nil)
		if err != nil {
			return nil, err
		}
		var rows [][]any
		for {
			b, err := rd.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rd.Close()
				return nil, err
			}
			for _, r := range b {
				rows = append(rows, r)
			}
		}
		rd.Close()
		rec := func(part int, cells map[int]any) []any {
			r := make([]any, len(st.Fields))
			r[0], r[1] = f, int32(part)
			for i, v := range cells {
				r[i] = v
			}
			return r
		}
		col := 3
		var fileRecs [][]any
		for pi, p := range job.Parts {
			ops, _ := opsFor(p.Type)
			type entry struct{ v, ts any }
			seen := map[string]*entry{}
			var order []string
			note := func(v, ts any) {
				v, _ = ops.canon(v)
				k := "null"
				switch {
				case v != nil && p.Raw && ops.rawKey != nil:
					k = fmt.Sprint(ops.rawKey(v))
				case v != nil:
					k = fmt.Sprint(ops.intKeyOrStr(v))
				}
				en, ok := seen[k]
				if !ok {
					en = &entry{v: v}
					seen[k] = en
					order = append(order, k)
				}
				if ts != nil {
					tsOps, _ := opsFor(p.TimestampType)
					ts, _ = tsOps.canon(ts)
					if en.ts == nil || tsOps.cmp(ts, en.ts) > 0 {
						en.ts = ts
					}
				}
			}
			for _, r := range rows {
				switch p.Kind {
				case SummaryValues:
					get, _ := pathGetter(job.Schema, p.Column)
					if v := get(r); v != nil {
						note(v, nil)
					}
				case SummaryExploded:
					get, _ := pathGetter(job.Schema, p.ArrayColumn)
					at, _ := job.Schema.Resolve(p.ArrayColumn)
					field, _ := structGetter(at.Type.(*schema.Array).Element.(*schema.Struct), p.Field)
					arr, _ := get(r).([]any)
					for _, el := range arr {
						if v := field(el); v != nil {
							note(v, nil)
						}
					}
				case SummaryTemporal:
					get, _ := pathGetter(job.Schema, p.Column)
					ts, _ := pathGetter(job.Schema, p.Timestamp)
					note(get(r), ts(r))
				}
			}
			for _, k := range order {
				cells := map[int]any{col: seen[k].v}
				if p.Kind == SummaryTemporal {
					cells[col+1] = seen[k].ts
				}
				fileRecs = append([][]any{rec(pi, cells)}, fileRecs...)
			}
			col++
			if p.Kind == SummaryTemporal {
				col++
			}
		}
		if len(rows) > 0 {
			cells := map[int]any{2: int64(len(rows))}
			for ri, r := range job.Ranges {
				ops, _ := opsFor(job.RangeTypes[ri])
				get, _ := pathGetter(job.Schema, r)
				var lo, hi any
				for _, row := range rows {
					v, _ := ops.canon(get(row))
					if v == nil {
						continue
					}
					if lo == nil || ops.cmp(v, lo) < 0 {
						lo = v
					}
					if hi == nil || ops.cmp(v, hi) > 0 {
						hi = v
					}
				}
				cells[col+2*ri], cells[col+2*ri+1] = lo, hi
			}
			fileRecs = append(fileRecs, rec(-1, cells))
		}
		recs = append(recs, fileRecs...)
	}
	if e.lie != nil {
		st, recs = e.lie(st, recs)
	}
	return recordRows{RowsSource(st, recs)}, nil
}

type recordRows struct{ KeySource }

func (recordRows) Close() error { return nil }

// intKeyOrStr is a value's equality key (for the record engine's DISTINCT).
func (o *valueOps) intKeyOrStr(v any) any {
	if o.intKey != nil {
		return o.intKey(v)
	}
	return o.strKey(v)
}

// TestSummaryEngineChecks: records that do not fit the job fail the update
// with a message, before anything is written: a value typed otherwise than
// the index stores it, a file that is not in the batch, a file whose
// records are not together.
func TestSummaryEngineChecks(t *testing.T) {
	ctx := context.Background()
	js := `{"type":"struct","fields":[{"name":"k","type":"long","nullable":true,"metadata":{}},{"name":"s","type":"string","nullable":true,"metadata":{}}]}`
	dir := t.TempDir()
	var files []string
	for i := range 3 {
		files = append(files, updWriteFile(t, dir, fmt.Sprintf("f%d.csv", i), fmt.Sprintf("k,s\n%d,a\n%d,b\n", i, i+1)))
	}
	for _, tc := range []struct {
		name, want string
		lie        func(st *schema.Struct, recs [][]any) (*schema.Struct, [][]any)
	}{
		{"type", "column k is string in the engine, bigint in the index", func(st *schema.Struct, recs [][]any) (*schema.Struct, [][]any) {
			st.Fields[3].Type = schema.String
			return st, recs
		}},
		{"foreign file", "not a file of the batch", func(st *schema.Struct, recs [][]any) (*schema.Struct, [][]any) {
			recs[0][0] = "file:///elsewhere.csv"
			return st, recs
		}},
		{"scattered", "not in file order", func(st *schema.Struct, recs [][]any) (*schema.Struct, [][]any) {
			return st, append(recs, recs[0])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newUpdEnv(t)
			ix := e.open("chk", js, "csv", map[string]string{"header": "true"})
			updAddFiles(t, ix, files...)
			must(t, ix.AddIndex(ctx, "k"))
			fi := e.fi(ix)
			_, err := fi.Update(ctx, UpdateOptions{Summaries: &recordEngine{res: fi.res, lie: tc.lie}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("update: %v, want an error saying %q", err, tc.want)
			}
			for _, key := range []string{ix.Paths().Main, ix.Paths().Staging} {
				if v := updTableVersion(t, ix.Root(), key); v != -1 {
					t.Errorf("a failed update wrote %s (version %d)", key, v)
				}
			}
		})
	}
}
