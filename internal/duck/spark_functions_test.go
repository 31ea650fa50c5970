package duck_test

import (
	"context"
	"testing"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/duck/sparkcases"
)

// TestSparkFunctions evaluates every computed-index function case of
// testdata/spark_functions.json through our translation on DuckDB and
// compares each row's canonical value and the result type with the values
// Spark 3.5 gave (measured by interop/scripts/spark_functions.py; the
// interop test TestSparkFunctions re-measures them against a live Spark).
// Cases recorded as refused must be refused with ErrUnsupportedFunction.
func TestSparkFunctions(t *testing.T) {
	f, err := sparkcases.Load("testdata/spark_functions.json")
	if err != nil {
		t.Fatal(err)
	}
	db, err := duck.Open(context.Background(), duck.Options{Threads: 1, TempDirectory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := f.Evaluate(context.Background(), db, "t")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range f.Cases {
		if err := sparkcases.Compare(c, res[i]); err != nil {
			t.Error(err)
		}
	}
}
