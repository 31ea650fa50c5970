package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAddComputedRefusedFunction: add-index --computed refuses a Spark
// function whose value DuckDB cannot reproduce before registering it, with
// the --json kind "unsupported function" and the function named; an
// accepted one is registered and located by Spark's value (hash of the int
// 2 as Spark 3.5 computed it: internal/duck/testdata/spark_functions.json,
// case hash(i), the row where i = 2).
func TestAddComputedRefusedFunction(t *testing.T) {
	dir := t.TempDir()
	data, _ := filepath.Abs(testdata)
	p0, p1 := filepath.Join(data, "table1_part0.csv"), filepath.Join(data, "table1_part1.csv")
	runOK(t, dir, "create", "t1", "--format", "csv", "--read-option", "header=true", "--infer-from", p0)
	runOK(t, dir, "add-files", "t1", p0, p1)
	code, out, _ := run(t, dir, "--json", "add-index", "t1", "--computed", "r=concat(Id, rand())")
	if code != 1 || decode(t, out)["kind"] != "unsupported function" || !strings.Contains(out, "rand") {
		t.Fatalf("refused function: %d %s", code, out)
	}
	// A refusal that depends on an argument's type is found when the
	// expression is planned over the stored schema, still before registering.
	code, out, _ = run(t, dir, "--json", "add-index", "t1", "--computed", "f=floor(cast(Value as decimal(10,2)))")
	if code != 1 || decode(t, out)["kind"] != "unsupported function" || !strings.Contains(out, "decimal") {
		t.Fatalf("floor of a decimal: %d %s", code, out)
	}
	// Spark's text of an array or a map ([a, b], {k -> v}) is refused when
	// planned, not when the update reads a row.
	code, out, _ = run(t, dir, "--json", "add-index", "t1", "--computed", "c=cast(split(cast(Id as string), ',') as string)")
	if code != 1 || decode(t, out)["kind"] != "unsupported function" || !strings.Contains(out, "cast to string") {
		t.Fatalf("cast of an array to string: %d %s", code, out)
	}
	// Spark's decimal product is decimal(21,4) here, DuckDB's DECIMAL(18,4).
	code, out, _ = run(t, dir, "--json", "add-index", "t1", "--computed", "m=cast(Value as decimal(10,2)) * cast(Value as decimal(10,2))")
	if code != 1 || decode(t, out)["kind"] != "unsupported function" || !strings.Contains(out, "decimal(21,4)") {
		t.Fatalf("decimal product: %d %s", code, out)
	}
	runOK(t, dir, "add-index", "t1", "--computed", "h=hash(Id)")
	// A string operand is cast to double, as Spark does ('2' + 0.5 = 2.5);
	// DuckDB refused VARCHAR + DECIMAL and failed the update.
	runOK(t, dir, "add-index", "t1", "--computed", "sd=cast(Id as string) + 0.5")
	// Spark's int arithmetic wraps (2 * 2147483647 = -2); DuckDB's raised
	// and failed the update.
	runOK(t, dir, "add-index", "t1", "--computed", "w=Id * 2147483647")
	runOK(t, dir, "update", "t1")
	got0 := decode(t, runOK(t, dir, "--json", "locate", "t1", "--key", "w=-2"))
	if files, _ := got0["files"].([]any); len(files) != 1 || !strings.HasSuffix(files[0].(string), "table1_part0.csv") {
		t.Fatalf("locate w=-2 (Id 2 * 2147483647 wrapped): %v", got0)
	}
	gotS := decode(t, runOK(t, dir, "--json", "locate", "t1", "--key", "sd=2.5"))
	if files, _ := gotS["files"].([]any); len(files) != 1 || !strings.HasSuffix(files[0].(string), "table1_part0.csv") {
		t.Fatalf("locate sd=2.5 ('2' + 0.5 as a double): %v", gotS)
	}
	got := decode(t, runOK(t, dir, "--json", "locate", "t1", "--key", "h=1765031574"))
	files, _ := got["files"].([]any)
	if len(files) != 1 || !strings.HasSuffix(files[0].(string), "table1_part0.csv") {
		t.Fatalf("locate h=hash(2) (Id 2 is in table1_part0.csv only): %v", got)
	}
}
