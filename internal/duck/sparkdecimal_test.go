package duck

import (
	"strings"
	"testing"
)

// TestSparkDecimalResult: Spark's result types of decimal arithmetic, as
// Spark 3.5 gave them for the cases of testdata/spark_functions.json
// (measured by interop/scripts/spark_functions.py), including the bound to
// 38 digits that keeps at least 6 fraction digits.
func TestSparkDecimalResult(t *testing.T) {
	for _, c := range []struct {
		op             string
		p1, s1, p2, s2 int
		p, s           int // Spark's measured type
	}{
		{"+", 10, 2, 10, 2, 11, 2},
		{"+", 10, 2, 10, 0, 13, 2},   // + i
		{"-", 10, 2, 20, 0, 23, 2},   // - l
		{"+", 10, 2, 1, 0, 11, 2},    // + 1 (a literal is decimal(1,0))
		{"+", 38, 10, 38, 10, 38, 9}, // bounded
		{"*", 10, 2, 10, 2, 21, 4},
		{"*", 10, 2, 10, 0, 21, 2},
		{"*", 9, 2, 8, 0, 18, 2},
		{"*", 38, 0, 38, 0, 38, 0}, // bounded
		{"/", 10, 2, 1, 0, 14, 6},
		{"/", 10, 2, 10, 0, 21, 13},
		{"%", 10, 2, 1, 0, 3, 2},
		{"%", 10, 2, 10, 2, 10, 2},
	} {
		_, _, p, s := sparkDecimalResult(c.op, c.p1, c.s1, c.p2, c.s2)
		if p != c.p || s != c.s {
			t.Errorf("decimal(%d,%d) %s decimal(%d,%d): decimal(%d,%d), Spark gives decimal(%d,%d)",
				c.p1, c.s1, c.op, c.p2, c.s2, p, s, c.p, c.s)
		}
	}
}

// TestSparkArithCheck: what the bind-time check refuses, from the DuckDB
// types it is given; a string, double or integer pair is never refused
// (except div of a string, which Spark itself refuses).
func TestSparkArithCheck(t *testing.T) {
	for _, c := range []struct {
		op, ta, tb, ha, hb, result string
		want                       string // "" accepted, else a word of the reason
	}{
		{"+", "DECIMAL(10,2)", "INTEGER", "", "", "DECIMAL(13,2)", ""},
		{"+", "DECIMAL(10,2)", "DECIMAL(10,2)", "", "", "DECIMAL(11,2)", ""},
		{"+", "DECIMAL(10,2)", "INTEGER", "", "DECIMAL(1,0)", "DECIMAL(13,2)", "integer literal"},
		{"-", "DECIMAL(10,2)", "BIGINT", "", "", "DECIMAL(22,2)", "decimal(20,0)"},
		{"*", "DECIMAL(10,2)", "DECIMAL(10,2)", "", "", "DECIMAL(18,4)", "decimal(21,4)"},
		{"*", "DECIMAL(9,2)", "DECIMAL(8,0)", "", "", "DECIMAL(18,2)", ""},
		{"+", "DECIMAL(38,10)", "DECIMAL(38,10)", "", "", "", "precision 39"},
		{"/", "DECIMAL(10,2)", "INTEGER", "", "DECIMAL(1,0)", "", "decimal(14,6)"},
		{"//", "DECIMAL(10,2)", "BIGINT", "", "", "", "integral division"},
		{"//", "VARCHAR", "BIGINT", "", "", "", "DATATYPE_MISMATCH"},
		{"+", "VARCHAR", "INTEGER", "", "", "", ""},
		{"+", "DECIMAL(10,2)", "DOUBLE", "", "", "DOUBLE", ""},
		{"/", "INTEGER", "INTEGER", "", "", "DOUBLE", ""},
		{"*", "BIGINT", "DOUBLE", "", "", "DOUBLE", ""},
	} {
		fn, why := sparkArithCheck(c.op, c.ta, c.tb, c.ha, c.hb, c.result)
		switch {
		case c.want == "" && fn != "":
			t.Errorf("%s %s %s: refused (%s), want accepted", c.ta, c.op, c.tb, why)
		case c.want != "" && fn == "":
			t.Errorf("%s %s %s: accepted, want refused (%s)", c.ta, c.op, c.tb, c.want)
		case c.want != "" && !strings.Contains(why, c.want):
			t.Errorf("%s %s %s: reason %q does not say %q", c.ta, c.op, c.tb, why, c.want)
		}
	}
}
