package interop

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/duck/sparkcases"
)

// sparkCases is the case file shared with internal/duck's unit tests.
const sparkCases = "../../internal/duck/testdata/spark_functions.json"

// TestSparkFunctions is issue 13 item 5: every Spark function a computed
// index may use, on edge values (null, empty, negative, overflow, NaN,
// unicode, out-of-range index, invalid cast), evaluated through Spark
// itself (spark_functions.py: one local session, all cases in one run) and
// through our translation to DuckDB (internal/duck, the build's code path),
// compared as canonical text and result type. A case recorded as refused
// must be refused by duck.CheckFunctions; a documented difference is
// logged. It also checks that the recorded Spark answers (which the unit
// tests use without Spark) are still Spark's, except for the refused
// functions whose values depend on the clock or chance.
func TestSparkFunctions(t *testing.T) {
	e := loadEnv(t)
	ctx := testContext(t, 15*time.Minute)
	in, err := filepath.Abs(sparkCases)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "spark.json")
	if _, err := e.RunScript(ctx, "spark_functions.py", in, out); err != nil {
		t.Fatal(err)
	}
	live, err := sparkcases.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sparkcases.Load(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(live.Cases) != len(rec.Cases) {
		t.Fatalf("spark_functions.py returned %d cases for %d", len(live.Cases), len(rec.Cases))
	}
	db, err := duck.Open(ctx, duck.Options{Threads: 1, TempDirectory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ours, err := live.Evaluate(ctx, db, "t")
	if err != nil {
		t.Fatal(err)
	}
	var same, refused, differs int
	for i, c := range live.Cases {
		if err := sparkcases.Compare(c, ours[i]); err != nil {
			t.Error(err)
			continue
		}
		switch {
		case c.Ours == "refused":
			refused++
		case c.Ours != "":
			differs++
			t.Logf("documented difference: %s: %s", c.Expr, c.Ours)
		default:
			same++
		}
		r := rec.Cases[i]
		if c.Ours != "refused" && (r.SparkType != c.SparkType || r.SparkError != c.SparkError || !equal(r.Spark, c.Spark)) {
			t.Errorf("%s: the recorded Spark answer (%s %v %q) is not Spark's now (%s %v %q): refresh %s with spark_functions.py",
				c.Expr, r.SparkType, r.Spark, r.SparkError, c.SparkType, c.Spark, c.SparkError, sparkCases)
		}
	}
	t.Logf("%d cases: %d give Spark's values, %d refused, %d documented differences", len(live.Cases), same, refused, differs)
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
