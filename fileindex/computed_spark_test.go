package fileindex

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestComputedSparkValues: computed indexes store Spark's values, so a
// locate with the value Spark computes finds the file. The expected values
// were measured with Spark 3.5 (internal/duck/testdata/spark_functions.json,
// where DuckDB's own functions give other values: hash is Murmur3 with
// seed 42, upper maps ß to SS, a double's text is Java's).
func TestComputedSparkValues(t *testing.T) {
	ctx := context.Background()
	e := newUpdEnv(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return updFileURI(t, p)
	}
	f1 := write("a.csv", "name,score\nabc,1.5\nß straße İ,1e20\n")
	f2 := write("b.csv", "name,score\nx,NaN\n,1e7\n")
	ix := e.open("spark", `{"type":"struct","fields":[{"name":"name","type":"string","nullable":true,"metadata":{}},{"name":"score","type":"double","nullable":true,"metadata":{}}]}`,
		"csv", map[string]string{"header": "true"})
	updAddFiles(t, ix, f1, f2)
	defs := map[string]string{
		"h":     "hash(name)",
		"up":    "upper(name)",
		"txt":   "cast(score as string)",
		"first": "split(name, ' ')[0]",
		"fl":    "floor(score)",
	}
	fi := e.fi(ix)
	for k, v := range defs {
		if err := fi.CheckComputed(ctx, k, v); err != nil {
			t.Fatalf("%s = %s: %v", k, v, err)
		}
		must(t, ix.AddComputedIndex(ctx, k, v))
	}
	updMust(t, fi)
	tests := []struct {
		col  string
		val  any
		want []string
	}{
		{"h", int32(1322437556), []string{f1}}, // Spark: hash('abc')
		{"h", int32(42), []string{f2}},         // a null name hashes to the seed
		{"up", "SS STRASSE İ", []string{f1}},
		{"txt", "1.0E20", []string{f1}},
		{"txt", "1.0E7", []string{f2}},
		{"txt", "NaN", []string{f2}},
		{"first", "ß", []string{f1}},
		{"fl", int64(9223372036854775807), []string{f1}}, // floor(1e20) saturates
		{"fl", int64(0), []string{f2}},                   // floor(NaN) is 0
	}
	for _, tc := range tests {
		got, err := fi.Locate(ctx, Query{tc.col: {tc.val}})
		if err != nil {
			t.Fatalf("%s = %v: %v", tc.col, tc.val, err)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("locate %s = %v: %v, want %v", tc.col, tc.val, got, tc.want)
		}
	}
}

// TestComputedRefusedFunction: a function Ariadne refuses is reported,
// typed and named, when the index is checked before registering and at
// update when it was registered anyway (e.g. by the Spark library).
func TestComputedRefusedFunction(t *testing.T) {
	ctx := context.Background()
	e := newUpdEnv(t)
	ix := e.open("refused", updT1S, "csv", map[string]string{"header": "true"})
	updAddFiles(t, ix, updDataURI(t, "table1_part0.csv"))
	must(t, ix.AddIndex(ctx, "Id"))
	fi := e.fi(ix)
	check := func(err error, fn string) {
		t.Helper()
		var ce *ComputedIndexError
		var ue *UnsupportedFunctionError
		if !errors.Is(err, ErrUnsupportedFunction) || !errors.Is(err, ErrComputedExpression) ||
			!errors.As(err, &ce) || ce.Name != "r" || !errors.As(err, &ue) || ue.Func != fn || ue.Reason == "" {
			t.Fatalf("want an UnsupportedFunctionError for %s in computed index r, got %v", fn, err)
		}
	}
	check(fi.CheckComputed(ctx, "r", "concat(cast(Id as string), cast(rand() as string))"), "rand")
	must(t, ix.AddComputedIndex(ctx, "r", "initcap(cast(Id AS string))"))
	_, err := fi.Update(ctx, UpdateOptions{})
	check(err, "initcap")
	if v := updTableVersion(t, ix.Root(), ix.Paths().Main); v != -1 {
		t.Errorf("main table written (version %d)", v)
	}
}
