package duck_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/internal/duck"
)

// TestJavaRegexRefusals: every construct whose meaning differs between
// java.util.regex (Spark) and RE2 (DuckDB) is refused with a typed error
// naming it, before anything is planned; the common syntax is accepted.
func TestJavaRegexRefusals(t *testing.T) {
	refused := map[string]string{
		`regexp_like(s, '(?i)abc')`:           "(?",
		`regexp_like(s, '(a)\\1')`:            "back-reference",
		`regexp_like(s, 'a(?=b)')`:            "(?",
		`regexp_like(s, '(?<!a)b')`:           "(?",
		`regexp_like(s, '(?>ab)')`:            "(?",
		`regexp_like(s, '(?<n>a)')`:           "(?",
		`regexp_like(s, 'a++')`:               "possessive",
		`regexp_like(s, 'a{2}+')`:             "possessive",
		`regexp_like(s, '\\p{Alpha}')`:        `\p`,
		`regexp_like(s, '\\bab')`:             `\b`,
		`regexp_like(s, 'ab\\Z')`:             `\Z`,
		`regexp_like(s, '\\h')`:               `\h`,
		`regexp_like(s, '[[:alpha:]]')`:       "nested",
		`regexp_like(s, '[a-z&&[^b]]')`:       "intersection",
		`regexp_like(s, '[a&&b]')`:            "intersection",
		`regexp_like(s, 'a{')`:                "{",
		`regexp_like(s, '[\\S,]')`:            `\S inside`,
		`regexp_extract(s, '([a-z]+)$', 1)`:   "$",
		`regexp_replace(s, 'a$', 'b')`:        "$",
		`split(s, ',$')`:                      "$",
		`regexp_like(s, s)`:                   "string literal",
		`regexp_like(s, '[abc')`:              "unclosed",
		`regexp_replace(s, concat('a'), 'b')`: "string literal",
	}
	for expr, want := range refused {
		err := duck.CheckFunctions(expr)
		var ue *duck.UnsupportedFunctionError
		if !errors.As(err, &ue) || !errors.Is(err, duck.ErrUnsupportedFunction) {
			t.Errorf("%s: %v, want a refusal", expr, err)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: refusal %q does not name %q", expr, err, want)
		}
	}
	for _, expr := range []string{
		`regexp_like(s, '^[0-9]+(?:\\.[0-9]*)?$')`, `regexp_extract(s, '(\\d+)-(\\w+)', 2)`,
		`regexp_replace(s, '\\s+', ' ')`, `split(s, '[,;]')`, `regexp_like(s, '\\Q$.\\E')`,
		`regexp_like(s, 'a{2,3}?b*?')`, `regexp_like(s, '[^\\s]')`, `regexp_like(s, '\\u00e9')`,
	} {
		if err := duck.CheckFunctions(expr); err != nil {
			t.Errorf("%s: refused: %v", expr, err)
		}
	}
}

// TestRefusedWhenPlanned: a refusal that depends on an argument's type
// (floor/ceil/round of a decimal, a map read by a non-literal key) fails
// the statement when DuckDB plans it — add-index plans every computed
// expression over the stored schema — with the typed error; the same
// expressions over other types run.
func TestRefusedWhenPlanned(t *testing.T) {
	ctx := context.Background()
	db, err := duck.Open(ctx, duck.Options{Threads: 1, TempDirectory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec(ctx, `CREATE TABLE p (dec DECIMAL(10,3), d DOUBLE, i INTEGER, m MAP(INTEGER, VARCHAR), sm MAP(VARCHAR, INTEGER), a VARCHAR[], k INTEGER)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(ctx, `INSERT INTO p VALUES (1.25, 1.25, 7, MAP {1: 'x'}, MAP {'a': 1}, ['p', 'q'], 0)`); err != nil {
		t.Fatal(err)
	}
	run := func(expr string) ([][]any, error) {
		_, rows, err := db.QueryAll(ctx, "SELECT ("+duck.Translate(expr)+") AS v FROM p LIMIT 0")
		if err != nil {
			return nil, err
		}
		_, rows, err = db.QueryAll(ctx, "SELECT ("+duck.Translate(expr)+") AS v FROM p")
		return rows, err
	}
	for _, expr := range []string{"floor(dec)", "ceil(dec)", "ceiling(dec + 1)", "round(dec, 1)", "bround(dec)", "m[k]", "m[1]", "element_at(m, 1)"} {
		if err := duck.CheckFunctions(expr); err != nil {
			t.Fatalf("%s: refused before planning (%v); the refusal depends on the type", expr, err)
		}
		_, err := run(expr)
		var ue *duck.UnsupportedFunctionError
		if !errors.As(err, &ue) || !errors.Is(err, duck.ErrUnsupportedFunction) || !errors.Is(err, duck.ErrSQL) {
			t.Errorf("%s: %v, want a typed refusal when planned", expr, err)
		}
	}
	for expr, want := range map[string]any{"floor(d)": int64(1), "round(d, 1)": 1.3, "a[k]": "p", "sm['a']": int32(1), "sm['zz']": nil, "a[i - 6]": "q", "element_at(a, 2)": "q"} {
		rows, err := run(expr)
		if err != nil || len(rows) != 1 || rows[0][0] != want {
			t.Errorf("%s: %v %v, want %v", expr, rows, err, want)
		}
	}
	// element_at(a, 0) fails at run time as in Spark (INVALID_INDEX_OF_ZERO).
	if _, err := run("element_at(a, k)"); err == nil || !strings.Contains(err.Error(), "index 0") {
		t.Errorf("element_at(a, 0): %v, want Spark's failure", err)
	}
}

// TestArithmeticParse: binary + - * and unary minus keep Spark's
// precedence and associativity once rewritten to the wrapping macros, in
// every place an expression can stand.
func TestArithmeticParse(t *testing.T) {
	ctx := context.Background()
	db, err := duck.Open(ctx, duck.Options{Threads: 1, TempDirectory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec(ctx, `CREATE TABLE p AS SELECT 2147483647::INTEGER AS i, 3::BIGINT AS l, 1.5::DOUBLE AS d, ['a', 'b', 'c'] AS a, {'f': 5} AS st`); err != nil {
		t.Fatal(err)
	}
	for expr, want := range map[string]any{
		"i + 1":           int32(-2147483648),
		"1 + 2 * 3 - 4":   int32(3),
		"10 - 2 - 3":      int32(5),
		"-(i + 1)":        int32(-2147483648),
		"- -i":            int32(2147483647),
		"2 * (l - 1) * 3": int64(12),
		"i * 2 div 3":     int64(0),
		"i + l":           int64(2147483650),
		"d * 2 + 1":       4.0,
		"CASE WHEN i + 1 < 0 THEN l * 2 ELSE l END": int64(6),
		"coalesce(i + 1, 0) + 1":                    int32(-2147483647),
		"a[l - 2]":                                  "b",
		"st.f * 2 + st.f":                           int32(15),
		"abs(-(l))":                                 int64(3),
		"concat(cast(i + 1 as string), 'x')":        "-2147483648x",
		"(i + 1) = -2147483648 AND l - 3 = 0":       true,
		"i in (l + 2147483644, 0)":                  true,
		"10 % 4 * 2":                                int32(4),
		"7 / 2 * 2":                                 7.0,
	} {
		_, rows, err := db.QueryAll(ctx, "SELECT ("+duck.Translate(expr)+") AS v FROM p")
		if err != nil || len(rows) != 1 || rows[0][0] != want {
			t.Errorf("%s → %s: %v %v, want %v (%T)", expr, duck.Translate(expr), rows, err, want, want)
		}
	}
}
