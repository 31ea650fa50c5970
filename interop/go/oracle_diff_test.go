package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Schemas of the shared test data (../shared/testdata/ariadne/data).
const (
	t1Schema = `{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},` +
		`{"name":"Version","type":"integer","nullable":true,"metadata":{}},` +
		`{"name":"Value","type":"double","nullable":true,"metadata":{}}]}`
	t3Schema = `{"type":"struct","fields":[{"name":"Id","type":"string","nullable":true,"metadata":{}},` +
		`{"name":"Value","type":"double","nullable":true,"metadata":{}}]}`
	temporalSchema = `{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},` +
		`{"name":"Value","type":"double","nullable":true,"metadata":{}},` +
		`{"name":"UpdatedAt","type":"timestamp","nullable":true,"metadata":{}}]}`
	arraysSchema = `{"type":"struct","fields":[{"name":"event_id","type":"string","nullable":true,"metadata":{}},` +
		`{"name":"event_type","type":"string","nullable":true,"metadata":{}},` +
		`{"name":"users","type":{"type":"array","elementType":{"type":"struct","fields":[` +
		`{"name":"id","type":"integer","nullable":true,"metadata":{}},` +
		`{"name":"name","type":"string","nullable":true,"metadata":{}}]},"containsNull":true},` +
		`"nullable":true,"metadata":{}},` +
		`{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},` +
		`"nullable":true,"metadata":{}}]}`
)

// keysSchema renders a join keys schema from "name:type" pairs.
func keysSchema(cols ...string) string {
	var f []string
	for _, c := range cols {
		n, t, _ := strings.Cut(c, ":")
		f = append(f, fmt.Sprintf(`{"name":%q,"type":%q,"nullable":true,"metadata":{}}`, n, t))
	}
	return `{"type":"struct","fields":[` + strings.Join(f, ",") + `]}`
}

// Step builders.
func sCreate(ix, sch, format string, opts map[string]string) Step {
	return Step{"op": "create", "index": ix, "schema": sch, "format": format, "options": opts}
}
func sCall(ix, method string, args ...any) Step {
	if args == nil {
		args = []any{}
	}
	return Step{"op": "call", "index": ix, "method": method, "args": args}
}
func sFiles(ix string, files ...string) Step {
	return Step{"op": "add_files", "index": ix, "files": files}
}
func sUpdate(ix string) Step { return sCall(ix, "update") }

// sLocate is a locate; types maps a column to the Java type its values are
// given as (default: Integer for whole numbers, Double, String).
func sLocate(ix string, q map[string][]any, types map[string]string) Step {
	s := Step{"op": "locate", "index": ix, "query": q}
	if types != nil {
		s["types"] = types
	}
	return s
}
func sJoin(ix string, on []string, how string, keys string, rows [][]any, indexLeft bool) Step {
	if rows == nil {
		rows = [][]any{}
	}
	return Step{"op": "join", "index": ix, "on": on, "how": how, "keys_schema": keys, "rows": rows, "index_left": indexLeft}
}

// scenario is one differential case: the same steps through the oracle and
// through us, on two fresh store roots.
type scenario struct {
	name  string
	steps []Step
	// differs documents the steps where we deliberately answer otherwise
	// (docs/compatibility.md): step index → check of both results (nil
	// error = the documented difference holds).
	differs map[int]func(spark, ours StepResult) error
}

// diffReport counts what a differential run compared (safe for the
// parallel subtests that share one).
type diffReport struct {
	mu                                        sync.Mutex
	steps, locates, joins, errors, documented int
}

func (r *diffReport) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprintf("%d steps (%d locates, %d joins, %d failing alike, %d documented differences)",
		r.steps, r.locates, r.joins, r.errors, r.documented)
}

// compareStep compares one step's results: errors (both or neither), file
// sets, join columns, schema and sorted canonical rows, bloom bytes.
func compareStep(s Step, spark, ours StepResult, sparkData, oursData string) error {
	if (spark.Error == nil) != (ours.Error == nil) {
		return fmt.Errorf("error mismatch: spark %v, ours %v", deref(spark.Error), deref(ours.Error))
	}
	if spark.Error != nil {
		return nil
	}
	switch s["op"] {
	case "locate":
		if !slices.Equal(spark.Files, ours.Files) {
			return fmt.Errorf("files: spark %v, ours %v", short(spark.Files), short(ours.Files))
		}
	case "join":
		if !slices.Equal(spark.Columns, ours.Columns) {
			return fmt.Errorf("columns: spark %v, ours %v", spark.Columns, ours.Columns)
		}
		if d := diffLines(spark.Rows, ours.Rows); d != "" {
			return fmt.Errorf("rows (ours vs spark): %s", d)
		}
		if err := sameJoinSchema(ours.Schema, spark.Schema); err != nil {
			return err
		}
	case "bloom_bytes":
		if len(spark.Blooms) == 0 || len(spark.Blooms) != len(ours.Blooms) {
			return fmt.Errorf("bloom cells: spark %d, ours %d", len(spark.Blooms), len(ours.Blooms))
		}
		for f, b := range spark.Blooms {
			if ours.Blooms[f] != b {
				return fmt.Errorf("bloom of %s: spark %s, ours %s", f, b, ours.Blooms[f])
			}
		}
	}
	return nil
}

// sameJoinSchema compares the names and types of a join's columns (not
// nullability: Spark's outer joins widen it, and both sides render nulls).
func sameJoinSchema(ours, spark string) error {
	o, err := parseTypes(ours)
	if err != nil {
		return err
	}
	s, err := parseTypes(spark)
	if err != nil {
		return err
	}
	if !slices.Equal(o, s) {
		return fmt.Errorf("schema: spark %v, ours %v", s, o)
	}
	return nil
}

func parseTypes(js string) ([]string, error) {
	var st struct {
		Fields []struct {
			Name string          `json:"name"`
			Type json.RawMessage `json:"type"`
		} `json:"fields"`
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		return nil, fmt.Errorf("schema %q: %w", js, err)
	}
	var out []string
	for _, f := range st.Fields {
		var v any
		json.Unmarshal(f.Type, &v)
		b, _ := json.Marshal(v) // keys sorted: Python and Go render alike
		out = append(out, f.Name+" "+string(b))
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}

func short(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Base(f)
	}
	return out
}

// runScenario runs sc through us and the oracle and compares step by step.
func runScenario(t *testing.T, ctx context.Context, o *Oracle, sc scenario, rep *diffReport) {
	t.Helper()
	base := t.TempDir()
	sparkRoot, oursRoot := filepath.Join(base, "spark"), filepath.Join(base, "ours")
	for _, d := range []string{sparkRoot, oursRoot} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Minute) // per scenario: Spark is slow on a loaded machine
	defer cancel()
	us := newOurs(t, ctx, oursRoot)
	t0 := time.Now()
	got := us.run(ctx, sc.steps)
	oursTime := time.Since(t0)
	want, secs, err := o.Run(sparkRoot, sc.steps)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d steps, ours %.1fs, spark %.1fs", sc.name, len(sc.steps), oursTime.Seconds(), secs)
	rep.mu.Lock()
	defer rep.mu.Unlock()
	for i, s := range sc.steps {
		rep.steps++
		switch s["op"] {
		case "locate":
			rep.locates++
		case "join":
			rep.joins++
		}
		if want[i].Error != nil {
			rep.errors++
		}
		if chk, ok := sc.differs[i]; ok {
			rep.documented++
			if err := chk(want[i], got[i]); err != nil {
				t.Errorf("%s step %d %v: documented difference does not hold: %v", sc.name, i, stepLabel(s), err)
			}
			continue
		}
		if err := compareStep(s, want[i], got[i], sparkRoot, oursRoot); err != nil {
			t.Errorf("%s step %d %v: %v", sc.name, i, stepLabel(s), err)
		}
	}
}

func stepLabel(s Step) string {
	b, _ := json.Marshal(s)
	if len(b) > 200 {
		b = append(b[:200], "…"...)
	}
	return string(b)
}

// sharedData returns the absolute path of a shared test data file as the
// file URI both implementations record.
func sharedData(t *testing.T, name string) string {
	p, err := filepath.Abs(filepath.Join(testData, name))
	if err != nil {
		t.Fatal(err)
	}
	return "file://" + p
}
