package duck

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrUnsupportedFunction is matched (errors.Is) by the error of
// CheckFunctions: a computed-index expression uses a Spark function that
// Ariadne refuses, because DuckDB cannot give Spark's value for it (or the
// value depends on the session, the clock or chance).
var ErrUnsupportedFunction = errors.New("duck: Spark function not supported in computed indexes")

// UnsupportedFunctionError names the refused function and says why.
type UnsupportedFunctionError struct {
	Func   string // the function (or operator) as written, lower case
	Reason string
}

func (e *UnsupportedFunctionError) Error() string {
	return fmt.Sprintf("Spark function %s is not supported in a computed index: %s (docs/compatibility.md, \"Computed index functions\")", e.Func, e.Reason)
}

// Unwrap returns ErrUnsupportedFunction.
func (e *UnsupportedFunctionError) Unwrap() error { return ErrUnsupportedFunction }

// sparkRule says how one Spark function is translated: the accepted
// argument counts and either a rewrite, a DuckDB function of the same
// meaning (rename), or a refusal.
type sparkRule struct {
	min, max int    // accepted argument counts (max < 0: any)
	rename   string // DuckDB function of the same meaning; "" with rewrite nil: same name
	rewrite  func(r []string, args [][]tok) (string, error)
	refuse   string
}

// refusal is a rewrite's refusal of one form of a function.
type refusal string

func (r refusal) Error() string { return string(r) }

// sparkKeywords are words that can stand before "(" without being a call.
var sparkKeywords = map[string]bool{
	"in": true, "and": true, "or": true, "not": true, "when": true, "then": true, "else": true,
	"is": true, "between": true, "like": true, "ilike": true, "case": true, "end": true, "as": true,
	"distinct": true, "null": true, "on": true, "exists": true,
}

// sparkOperators are word operators DuckDB does not share.
var sparkOperators = map[string]string{
	"rlike":  "the RLIKE operator is not translated: write regexp_like(s, pattern)",
	"regexp": "the REGEXP operator is not translated: write regexp_like(s, pattern)",
}

// str is Spark's implicit or explicit cast of e to string.
// A string stays as it is without a call into Go (DuckDB folds the
// typeof test when it plans the statement).
func str(e string) string {
	return "(CASE WHEN typeof(" + e + ") = 'VARCHAR' THEN CAST(" + e + " AS VARCHAR) ELSE spark_to_string(" + e + ", typeof(" + e + ")) END)"
}

// caseMap is Java's full case mapping of a string: DuckDB's for ASCII text
// (the same there), Go's for the rest.
func caseMap(duckFn, goFn, e string) string {
	x := str(e)
	return "(CASE WHEN strlen(" + x + ") = length(" + x + ") THEN " + duckFn + "(" + x + ") ELSE " + goFn + "(" + x + ") END)"
}

// sparkDate is Spark's cast of e to date: a date or timestamp, or a
// string holding a date with or without a time of day; else NULL.
func sparkDate(e string) string {
	return "coalesce(TRY_CAST(" + e + " AS DATE), TRY_CAST(TRY_CAST(" + e + " AS TIMESTAMP) AS DATE))"
}

func sparkTimestamp(e string) string { return "TRY_CAST(" + e + " AS TIMESTAMP)" }

func call(name string, r []string) string { return name + "(" + strings.Join(r, ", ") + ")" }

func asInt(e string) string { return "CAST(" + e + " AS INTEGER)" }

// stringLiteral returns the decoded text of an argument that is one string
// literal.
func stringLiteral(arg []tok) (string, bool) {
	p := nextSignificant(arg, 0)
	if p >= len(arg) || arg[p].kind != tString || nextSignificant(arg, p+1) != len(arg) {
		return "", false
	}
	return arg[p].text, true
}

// intLiteral returns the value of an argument that is one (signed)
// integer literal.
func intLiteral(arg []tok) (int, bool) {
	var b strings.Builder
	for _, t := range arg {
		if t.kind != tWS && t.kind != tComment {
			b.WriteString(t.text)
		}
	}
	n, err := strconv.Atoi(b.String())
	return n, err == nil
}

func boolLiteral(arg []tok) (bool, bool) {
	var b strings.Builder
	for _, t := range arg {
		if t.kind != tWS && t.kind != tComment {
			b.WriteString(strings.ToLower(t.text))
		}
	}
	switch b.String() {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// castTargets maps Spark cast target types to the translation of
// cast(e AS t).
var castTargets = map[string]func(e string) string{
	"string":   str,
	"varchar":  str,
	"int":      func(e string) string { return "spark_to_int(" + e + ", typeof(" + e + "))" },
	"integer":  func(e string) string { return "spark_to_int(" + e + ", typeof(" + e + "))" },
	"bigint":   func(e string) string { return "spark_to_bigint(" + e + ", typeof(" + e + "))" },
	"long":     func(e string) string { return "spark_to_bigint(" + e + ", typeof(" + e + "))" },
	"smallint": func(e string) string { return "spark_to_smallint(" + e + ", typeof(" + e + "))" },
	"short":    func(e string) string { return "spark_to_smallint(" + e + ", typeof(" + e + "))" },
	"tinyint":  func(e string) string { return "spark_to_tinyint(" + e + ", typeof(" + e + "))" },
	"byte":     func(e string) string { return "spark_to_tinyint(" + e + ", typeof(" + e + "))" },
	"double":   func(e string) string { return "spark_to_double(" + e + ", typeof(" + e + "))" },
	"float":    func(e string) string { return "spark_to_float(" + e + ", typeof(" + e + "))" },
	"real":     func(e string) string { return "spark_to_float(" + e + ", typeof(" + e + "))" },
	"date":     sparkDate,
	"timestamp": func(e string) string {
		return "coalesce(TRY_CAST(" + e + " AS TIMESTAMP), spark_to_timestamp(" + e + ", typeof(" + e + ")), " +
			"CASE spark_timestamp_saturates(" + e + ", typeof(" + e + ")) WHEN 1 THEN CAST('infinity' AS TIMESTAMP) " +
			"WHEN -1 THEN CAST('-infinity' AS TIMESTAMP) END)"
	},
	"boolean": func(e string) string { return "TRY_CAST(" + e + " AS BOOLEAN)" },
	"binary":  func(e string) string { return "TRY_CAST(" + e + " AS BLOB)" },
}

// castTo translates cast(e AS typ) (typ as written in Spark).
func castTo(e, typ string) (string, error) {
	word, rest, _ := strings.Cut(typ, "(")
	word = strings.ToLower(strings.TrimSpace(word))
	if word == "decimal" || word == "numeric" || word == "dec" {
		t := "DECIMAL(10,0)"
		if rest != "" {
			t = "DECIMAL(" + rest
		}
		// Through Spark's text of the value: a double rounds half up on
		// its shortest decimal text, as Spark's BigDecimal(d) does.
		return "TRY_CAST(" + str(e) + " AS " + t + ")", nil
	}
	if f, ok := castTargets[word]; ok && rest == "" {
		return f(e), nil
	}
	return "", refusal("cast to " + typ + " is not translated")
}

// sparkFunctions is every Spark function a computed index may use, with
// its translation; a function not listed is refused.
var sparkFunctions map[string]sparkRule

func fixed(n int, f func(r []string, args [][]tok) (string, error)) sparkRule {
	return sparkRule{min: n, max: n, rewrite: f}
}

func simple(n int, f func(r []string) string) sparkRule {
	return sparkRule{min: n, max: n, rewrite: func(r []string, _ [][]tok) (string, error) { return f(r), nil }}
}

func refused(reason string) sparkRule { return sparkRule{max: -1, refuse: reason} }

func init() {
	nonDeterministic := "its value depends on the clock, the session or chance, so an index built from it cannot be located"
	sessionZone := "its value depends on the Spark session time zone, which Ariadne does not know"
	datePart := func(duckFn string) sparkRule {
		return simple(1, func(r []string) string { return asInt(duckFn + "(" + sparkDate(r[0]) + ")") })
	}
	timePart := func(duckFn string) sparkRule {
		return simple(1, func(r []string) string { return asInt(duckFn + "(" + sparkTimestamp(r[0]) + ")") })
	}
	positiveLog := func(f func(x string) string) sparkRule {
		return simple(1, func(r []string) string {
			return "(CASE WHEN (" + r[0] + ") <= 0 THEN NULL ELSE " + f(r[0]) + " END)"
		})
	}
	pad := func(fn string) sparkRule {
		return sparkRule{min: 2, max: 3, rewrite: func(r []string, _ [][]tok) (string, error) {
			p := "' '"
			if len(r) == 3 {
				p = r[2]
			}
			n := "greatest(" + r[1] + ", 0)"
			return "(CASE WHEN (" + p + ") = '' THEN left(" + str(r[0]) + ", " + n + ") ELSE " +
				fn + "(" + str(r[0]) + ", " + n + ", " + p + ") END)", nil
		}}
	}
	cast := func(target string) sparkRule {
		return fixed(1, func(r []string, _ [][]tok) (string, error) { return castTo(r[0], target) })
	}
	// Spark refuses to hash a map (DATATYPE_MISMATCH.HASH_MAP_TYPE); so
	// does the translation, with a typed refusal when it is planned.
	hash := func(name, udf, seed string) sparkRule {
		return sparkRule{min: 1, max: -1, rewrite: func(r []string, _ [][]tok) (string, error) {
			h := seed
			for _, a := range r {
				h = refuseType(name, "of a map: Spark refuses it too (DATATYPE_MISMATCH.HASH_MAP_TYPE)", a, "MAP", udf+"("+a+", "+h+")")
			}
			return h, nil
		}}
	}
	// Spark keeps a decimal argument a decimal of a precision that depends
	// on the argument's (floor(decimal(10,3)) is decimal(8,0)); the
	// translation cannot name that type, so a decimal argument is refused
	// when the expression is planned (at add-index).
	decimalWhy := "of a decimal: Spark returns a decimal whose precision depends on the argument's (floor(decimal(10,3)) is decimal(8,0), round(decimal(10,3), 1) decimal(9,1)), which the DuckDB translation does not give; cast the argument to double or bigint"
	floorCeil := func(fn string) sparkRule {
		return simple(1, func(r []string) string {
			x := fn + "(" + r[0] + ")"
			return refuseType(fn, decimalWhy, r[0], "DECIMAL", "spark_to_bigint("+x+", typeof("+x+"))")
		})
	}
	round := func(name, udf string) sparkRule {
		return sparkRule{min: 1, max: 2, rewrite: func(r []string, _ [][]tok) (string, error) {
			d := "0"
			if len(r) == 2 {
				d = r[1]
			}
			return refuseType(name, decimalWhy, r[0], "DECIMAL", udf+"("+r[0]+", CAST("+d+" AS INTEGER))"), nil
		}}
	}
	truncPart := func(fmtArg []tok, units map[string]string) (string, error) {
		f, ok := stringLiteral(fmtArg)
		if !ok {
			return "", refusal("the unit must be a string literal")
		}
		return units[strings.ToLower(f)], nil
	}
	tsUnits := map[string]string{"year": "year", "yyyy": "year", "yy": "year", "quarter": "quarter",
		"month": "month", "mon": "month", "mm": "month", "week": "week", "day": "day", "dd": "day",
		"hour": "hour", "minute": "minute", "second": "second", "millisecond": "millisecond", "microsecond": "microsecond"}
	dateUnits := map[string]string{"year": "year", "yyyy": "year", "yy": "year", "quarter": "quarter",
		"month": "month", "mon": "month", "mm": "month", "week": "week"}

	regexLike := fixed(2, func(r []string, args [][]tok) (string, error) {
		re, err := regexArg(args[1], true)
		if err != nil {
			return "", err
		}
		return "regexp_matches(" + r[0] + ", " + re + ")", nil
	})

	sparkFunctions = map[string]sparkRule{
		// strings
		"lower":            simple(1, func(r []string) string { return caseMap("lower", "spark_lower", r[0]) }),
		"lcase":            simple(1, func(r []string) string { return caseMap("lower", "spark_lower", r[0]) }),
		"upper":            simple(1, func(r []string) string { return caseMap("upper", "spark_upper", r[0]) }),
		"ucase":            simple(1, func(r []string) string { return caseMap("upper", "spark_upper", r[0]) }),
		"trim":             simple(1, func(r []string) string { return "trim(" + str(r[0]) + ")" }),
		"ltrim":            simple(1, func(r []string) string { return "ltrim(" + str(r[0]) + ")" }),
		"rtrim":            simple(1, func(r []string) string { return "rtrim(" + str(r[0]) + ")" }),
		"length":           simple(1, func(r []string) string { return asInt("length(" + str(r[0]) + ")") }),
		"char_length":      simple(1, func(r []string) string { return asInt("length(" + str(r[0]) + ")") }),
		"character_length": simple(1, func(r []string) string { return asInt("length(" + str(r[0]) + ")") }),
		"octet_length":     simple(1, func(r []string) string { return asInt("strlen(" + str(r[0]) + ")") }),
		"substring":        sparkRule{min: 2, max: 3, rewrite: substring},
		"substr":           sparkRule{min: 2, max: 3, rewrite: substring},
		"left":             simple(2, func(r []string) string { return "left(" + str(r[0]) + ", greatest(" + r[1] + ", 0))" }),
		"right":            simple(2, func(r []string) string { return "right(" + str(r[0]) + ", greatest(" + r[1] + ", 0))" }),
		"concat": {min: 1, max: -1, rewrite: func(r []string, _ [][]tok) (string, error) {
			conds, parts := make([]string, len(r)), make([]string, len(r))
			for i, a := range r {
				conds[i] = "(" + a + ") IS NULL"
				parts[i] = str(a)
			}
			return "(CASE WHEN " + strings.Join(conds, " OR ") + " THEN NULL ELSE concat(" + strings.Join(parts, ", ") + ") END)", nil
		}},
		"concat_ws": {min: 1, max: -1, rewrite: func(r []string, _ [][]tok) (string, error) {
			parts := []string{r[0]}
			for _, a := range r[1:] {
				parts = append(parts, a, "typeof("+a+")")
			}
			return call("spark_concat_ws", parts), nil
		}},
		"replace": {min: 2, max: 3, rewrite: func(r []string, _ [][]tok) (string, error) {
			rep := "''"
			if len(r) == 3 {
				rep = r[2]
			}
			return "replace(" + str(r[0]) + ", " + r[1] + ", " + rep + ")", nil
		}},
		"lpad":    pad("lpad"),
		"rpad":    pad("rpad"),
		"reverse": simple(1, func(r []string) string { return "reverse(" + str(r[0]) + ")" }),
		"repeat":  simple(2, func(r []string) string { return "repeat(" + str(r[0]) + ", greatest(" + r[1] + ", 0))" }),
		"instr":   simple(2, func(r []string) string { return asInt("instr(" + str(r[0]) + ", " + r[1] + ")") }),
		"locate":  simple(2, func(r []string) string { return asInt("instr(" + str(r[1]) + ", " + r[0] + ")") }),
		"ascii":   simple(1, func(r []string) string { return asInt("ascii(" + str(r[0]) + ")") }),
		"split": fixed(2, func(r []string, args [][]tok) (string, error) {
			re, err := regexArg(args[1], false)
			if err != nil {
				return "", err
			}
			return "(CASE WHEN (" + r[0] + ") = '' THEN [''] ELSE regexp_split_to_array(" + r[0] + ", " + re + ") END)", nil
		}),
		"split_part": simple(3, func(r []string) string { return call("split_part", r) }),
		"regexp_extract": {min: 2, max: 3, rewrite: func(r []string, args [][]tok) (string, error) {
			g := "1"
			if len(r) == 3 {
				g = r[2]
			}
			re, err := regexArg(args[1], false)
			if err != nil {
				return "", err
			}
			return "regexp_extract(" + r[0] + ", " + re + ", " + g + ")", nil
		}},
		"regexp_replace": fixed(3, func(r []string, args [][]tok) (string, error) {
			rep, ok := stringLiteral(args[2])
			if !ok {
				return "", refusal("the replacement must be a string literal")
			}
			re, err := regexArg(args[1], false)
			if err != nil {
				return "", err
			}
			return "regexp_replace(" + r[0] + ", " + re + ", " + String(javaReplacement(rep)) + ", 'g')", nil
		}),
		"regexp_like": regexLike,
		"rlike":       regexLike,
		"regexp":      regexLike,
		"initcap":     refused("DuckDB has no initcap with Spark's rule (capitalise after white space only)"),

		// arrays
		// Spark raises for index 0 (INVALID_INDEX_OF_ZERO), so an update
		// fails in both. A map's element_at by a string literal key is
		// m['key'] (NULL for a missing key, as DuckDB's); by any other key
		// it is refused when planned (the key would be read as a position).
		"element_at": fixed(2, func(r []string, args [][]tok) (string, error) {
			if _, ok := stringLiteral(args[1]); ok {
				return "(" + r[0] + ")[" + r[1] + "]", nil
			}
			i := "(CASE WHEN (" + r[1] + ") = 0 THEN error('element_at: the index 0 is invalid (Spark: INVALID_INDEX_OF_ZERO, SQL array indices start at 1)') ELSE " + r[1] + " END)"
			return refuseType("element_at", "of a map by a key that is not a string literal: not translated (write element_at(m, 'key'))", r[0], "MAP", "list_extract("+r[0]+", "+i+")"), nil
		}),
		"size":        simple(1, func(r []string) string { return "spark_size(" + r[0] + ", typeof(" + r[0] + "))" }),
		"cardinality": simple(1, func(r []string) string { return "spark_size(" + r[0] + ", typeof(" + r[0] + "))" }),
		// maps: DuckDB keeps a map's entries in their order, as Spark does
		"map_keys":   simple(1, func(r []string) string { return "map_keys(" + r[0] + ")" }),
		"map_values": simple(1, func(r []string) string { return "map_values(" + r[0] + ")" }),
		"map_contains_key": simple(2, func(r []string) string {
			return "(CASE WHEN (" + r[0] + ") IS NULL OR (" + r[1] + ") IS NULL THEN NULL ELSE map_contains(" + r[0] + ", " + r[1] + ") END)"
		}),
		"map": refused("DuckDB's map constructor differs from Spark's (duplicate and NULL keys); index a map column instead"),
		"array_contains": simple(2, func(r []string) string {
			a, v := r[0], r[1]
			return "(CASE WHEN (" + a + ") IS NULL OR (" + v + ") IS NULL THEN NULL WHEN list_contains(" + a + ", " + v +
				") THEN true WHEN list_count(" + a + ") < len(" + a + ") THEN NULL ELSE false END)"
		}),
		"array_join": simple(2, func(r []string) string { return call("array_to_string", r) }),
		"sort_array": {min: 1, max: 2, rewrite: func(r []string, args [][]tok) (string, error) {
			asc := true
			if len(args) == 2 {
				b, ok := boolLiteral(args[1])
				if !ok {
					return "", refusal("the order must be the literal true or false")
				}
				asc = b
			}
			if asc {
				return "list_sort(" + r[0] + ", 'ASC', 'NULLS FIRST')", nil
			}
			return "list_sort(" + r[0] + ", 'DESC', 'NULLS LAST')", nil
		}},
		"array":          {max: -1, rename: "list_value"},
		"array_distinct": refused("DuckDB's list_distinct drops NULL and does not keep Spark's first-occurrence order"),

		// conditional
		"coalesce": {min: 1, max: -1},
		"nvl":      simple(2, func(r []string) string { return call("coalesce", r) }),
		"ifnull":   simple(2, func(r []string) string { return call("coalesce", r) }),
		"nullif":   {min: 2, max: 2},
		"if": simple(3, func(r []string) string {
			return "(CASE WHEN " + r[0] + " THEN " + r[1] + " ELSE " + r[2] + " END)"
		}),
		"nvl2": simple(3, func(r []string) string {
			return "(CASE WHEN (" + r[0] + ") IS NOT NULL THEN " + r[1] + " ELSE " + r[2] + " END)"
		}),
		"isnull":    simple(1, func(r []string) string { return "((" + r[0] + ") IS NULL)" }),
		"isnotnull": simple(1, func(r []string) string { return "((" + r[0] + ") IS NOT NULL)" }),
		"greatest":  {min: 2, max: -1},
		"least":     {min: 2, max: -1},

		// math
		"abs": simple(1, func(r []string) string { return "coalesce(try(abs(" + r[0] + ")), " + r[0] + ")" }),
		"mod": simple(2, func(r []string) string { return "((" + r[0] + ") % (" + r[1] + "))" }),
		"pmod": simple(2, func(r []string) string {
			m := "((" + r[0] + ") % (" + r[1] + "))"
			return "(CASE WHEN " + m + " < 0 THEN (" + m + " + (" + r[1] + ")) % (" + r[1] + ") ELSE " + m + " END)"
		}),
		"round":   round("round", "spark_round"),
		"bround":  round("bround", "spark_bround"),
		"floor":   floorCeil("floor"),
		"ceil":    floorCeil("ceil"),
		"ceiling": floorCeil("ceil"),
		"sign": simple(1, func(r []string) string {
			d := "CAST(" + r[0] + " AS DOUBLE)"
			return "(CASE WHEN isnan(" + d + ") OR " + d + " = 0 THEN " + d + " ELSE CAST(sign(" + r[0] + ") AS DOUBLE) END)"
		}),
		"signum": simple(1, func(r []string) string {
			d := "CAST(" + r[0] + " AS DOUBLE)"
			return "(CASE WHEN isnan(" + d + ") OR " + d + " = 0 THEN " + d + " ELSE CAST(sign(" + r[0] + ") AS DOUBLE) END)"
		}),
		"sqrt": simple(1, func(r []string) string {
			return "(CASE WHEN (" + r[0] + ") < 0 THEN CAST('NaN' AS DOUBLE) ELSE sqrt(" + r[0] + ") END)"
		}),
		"power": simple(2, func(r []string) string { return "pow(CAST(" + r[0] + " AS DOUBLE), " + r[1] + ")" }),
		"pow":   simple(2, func(r []string) string { return "pow(CAST(" + r[0] + " AS DOUBLE), " + r[1] + ")" }),
		"exp":   simple(1, func(r []string) string { return "exp(" + r[0] + ")" }),
		"ln":    positiveLog(func(x string) string { return "ln(" + x + ")" }),
		"log10": positiveLog(func(x string) string { return "log10(" + x + ")" }),
		// Spark's log2 is ln(x) / ln(2); DuckDB's log2 can differ in the last digit.
		"log2": positiveLog(func(x string) string { return "(ln(" + x + ") / ln(2))" }),
		"log": {min: 1, max: 2, rewrite: func(r []string, _ [][]tok) (string, error) {
			if len(r) == 1 { // Spark's log(x) is ln(x); DuckDB's log(x) is log10
				return "(CASE WHEN (" + r[0] + ") <= 0 THEN NULL ELSE ln(" + r[0] + ") END)", nil
			}
			return "(CASE WHEN (" + r[0] + ") <= 0 OR (" + r[1] + ") <= 0 THEN NULL ELSE ln(" + r[1] + ") / ln(" + r[0] + ") END)", nil
		}},

		// casts
		"cast":   {min: 1, max: 1}, // rewritten in rewriteCall (AS inside the parentheses)
		"string": cast("string"), "int": cast("int"), "bigint": cast("bigint"), "smallint": cast("smallint"),
		"tinyint": cast("tinyint"), "double": cast("double"), "float": cast("float"), "date": cast("date"),
		"timestamp": cast("timestamp"), "boolean": cast("boolean"), "binary": cast("binary"),

		// date and time
		"date_format": fixed(2, func(r []string, args [][]tok) (string, error) {
			p, ok := stringLiteral(args[1])
			if !ok {
				return "", refusal("the pattern must be a string literal")
			}
			f, err := javaToStrftime(p)
			if err != nil {
				return "", err
			}
			return "strftime(" + sparkTimestamp(r[0]) + ", " + String(f) + ")", nil
		}),
		"to_date": {min: 1, max: 2, rewrite: func(r []string, _ [][]tok) (string, error) {
			if len(r) == 2 {
				return "", refusal("to_date with a pattern is not translated: Spark 3.5 raises SparkUpgradeException on text its legacy parser reads, and Java patterns differ from strptime")
			}
			return sparkDate(r[0]), nil
		}},
		"to_timestamp": {min: 1, max: 2, rewrite: func(r []string, _ [][]tok) (string, error) {
			if len(r) == 2 {
				return "", refusal("to_timestamp with a pattern is not translated (see to_date)")
			}
			return sparkTimestamp(r[0]), nil
		}},
		"year":       datePart("year"),
		"month":      datePart("month"),
		"day":        datePart("day"),
		"dayofmonth": datePart("day"),
		"dayofyear":  datePart("dayofyear"),
		"quarter":    datePart("quarter"),
		"weekofyear": datePart("weekofyear"),
		"dayofweek":  simple(1, func(r []string) string { return asInt("dayofweek(" + sparkDate(r[0]) + ") + 1") }),
		"weekday":    simple(1, func(r []string) string { return asInt("isodow(" + sparkDate(r[0]) + ") - 1") }),
		"hour":       timePart("hour"),
		"minute":     timePart("minute"),
		"second":     timePart("second"),
		"date_trunc": fixed(2, func(r []string, args [][]tok) (string, error) {
			u, err := truncPart(args[0], tsUnits)
			if err != nil {
				return "", err
			}
			if u == "" {
				return "CAST(NULL AS TIMESTAMP)", nil // Spark: an unknown unit gives NULL
			}
			return "date_trunc('" + u + "', " + sparkTimestamp(r[1]) + ")", nil
		}),
		"trunc": fixed(2, func(r []string, args [][]tok) (string, error) {
			u, err := truncPart(args[1], dateUnits)
			if err != nil {
				return "", err
			}
			if u == "" {
				return "CAST(NULL AS DATE)", nil
			}
			return "CAST(date_trunc('" + u + "', " + sparkDate(r[0]) + ") AS DATE)", nil
		}),
		"date_add": simple(2, func(r []string) string {
			return "CAST(" + sparkDate(r[0]) + " + CAST(" + r[1] + " AS INTEGER) AS DATE)"
		}),
		"date_sub": simple(2, func(r []string) string {
			return "CAST(" + sparkDate(r[0]) + " - CAST(" + r[1] + " AS INTEGER) AS DATE)"
		}),
		"datediff": simple(2, func(r []string) string { return asInt(sparkDate(r[0]) + " - " + sparkDate(r[1])) }),
		"add_months": simple(2, func(r []string) string {
			return "CAST(" + sparkDate(r[0]) + " + to_months(CAST(" + r[1] + " AS INTEGER)) AS DATE)"
		}),
		"last_day":                    simple(1, func(r []string) string { return "last_day(" + sparkDate(r[0]) + ")" }),
		"make_date":                   refused("Spark gives NULL for an invalid date and accepts years outside 1..9999; DuckDB raises"),
		"unix_timestamp":              refused(sessionZone),
		"to_unix_timestamp":           refused(sessionZone),
		"from_unixtime":               refused(sessionZone),
		"from_utc_timestamp":          refused(sessionZone),
		"to_utc_timestamp":            refused(sessionZone),
		"current_date":                refused(nonDeterministic),
		"current_timestamp":           refused(nonDeterministic),
		"now":                         refused(nonDeterministic),
		"rand":                        refused(nonDeterministic),
		"random":                      refused(nonDeterministic),
		"randn":                       refused(nonDeterministic),
		"uuid":                        refused(nonDeterministic),
		"monotonically_increasing_id": refused(nonDeterministic),
		"spark_partition_id":          refused(nonDeterministic),
		"input_file_name":             refused(nonDeterministic),

		// hashes and encodings
		"hash":     hash("hash", "spark_murmur3", "CAST(42 AS INTEGER)"),
		"xxhash64": hash("xxhash64", "spark_xxhash64", "CAST(42 AS BIGINT)"),
		"md5":      {min: 1, max: 1},
		"sha1":     simple(1, func(r []string) string { return call("sha1", r) }),
		"sha":      simple(1, func(r []string) string { return call("sha1", r) }),
		"sha2":     simple(2, func(r []string) string { return "spark_sha2(" + r[0] + ", CAST(" + r[1] + " AS INTEGER))" }),
		"crc32":    simple(1, func(r []string) string { return call("spark_crc32", r) }),
		"base64":   simple(1, func(r []string) string { return "to_base64(encode(" + str(r[0]) + "))" }),
		"hex":      {min: 1, max: 1},
		"unhex":    refused("Spark gives NULL for text that is not hexadecimal; DuckDB raises"),
	}
}

func substring(r []string, _ [][]tok) (string, error) {
	// Spark: position 0 is 1, a negative length is empty; DuckDB counts
	// position 0 as before the first character and reads a negative
	// length backwards.
	pos := "CASE WHEN (" + r[1] + ") = 0 THEN 1 ELSE (" + r[1] + ") END"
	if len(r) == 2 {
		return "substring(" + str(r[0]) + ", " + pos + ")", nil
	}
	return "substring(" + str(r[0]) + ", " + pos + ", greatest(" + r[2] + ", 0))", nil
}

// javaReplacement converts a Java regex replacement ($1, \$) to RE2's
// (\1, $, \\).
func javaReplacement(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] == '\\' {
				b.WriteString(`\\`)
			} else {
				b.WriteByte(s[i])
			}
		case c == '$' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			b.WriteByte('\\')
			b.WriteByte(s[i+1])
			i++
		case c == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// javaToStrftime converts a Java date pattern (Spark's DateTimeFormatter
// letters) to strftime; letters it cannot convert are a refusal.
func javaToStrftime(p string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); {
		c := p[i]
		if c == '\'' {
			j := strings.IndexByte(p[i+1:], '\'')
			if j < 0 {
				b.WriteString(strings.ReplaceAll(p[i+1:], "%", "%%"))
				break
			}
			if j == 0 {
				b.WriteByte('\'')
			} else {
				b.WriteString(strings.ReplaceAll(p[i+1:i+1+j], "%", "%%"))
			}
			i += j + 2
			continue
		}
		n := 1
		for i+n < len(p) && p[i+n] == c {
			n++
		}
		one := func(pad, nopad string) string {
			if n == 1 {
				return nopad
			}
			return pad
		}
		switch {
		case c == 'y' && n == 2:
			b.WriteString("%y")
		case c == 'y' && n == 4:
			b.WriteString("%Y")
		case c == 'M' && n >= 4:
			b.WriteString("%B")
		case c == 'M' && n == 3:
			b.WriteString("%b")
		case c == 'M' && n <= 2:
			b.WriteString(one("%m", "%-m"))
		case c == 'd' && n <= 2:
			b.WriteString(one("%d", "%-d"))
		case c == 'H' && n <= 2:
			b.WriteString(one("%H", "%-H"))
		case c == 'h' && n <= 2:
			b.WriteString(one("%I", "%-I"))
		case c == 'm' && n <= 2:
			b.WriteString(one("%M", "%-M"))
		case c == 's' && n <= 2:
			b.WriteString(one("%S", "%-S"))
		case c == 'S' && n == 3:
			b.WriteString("%g")
		case c == 'S' && n == 6:
			b.WriteString("%f")
		case c == 'a' && n == 1:
			b.WriteString("%p")
		case c == 'E' && n >= 4:
			b.WriteString("%A")
		case c == 'E':
			b.WriteString("%a")
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			return "", refusal(fmt.Sprintf("the pattern letter %q (×%d) is not translated", c, n))
		case c == '%':
			b.WriteString(strings.Repeat("%%", n))
		default:
			b.WriteString(p[i : i+n])
		}
		i += n
	}
	return b.String(), nil
}

// rewriteCall translates one function call (name lower case).
func rewriteCall(name string, inner []tok) (string, error) {
	args := splitArgs(inner)
	if len(args) == 1 && nextSignificant(args[0], 0) == len(args[0]) {
		args = nil // f()
	}
	if name == "cast" {
		return rewriteCast(args)
	}
	r := make([]string, len(args))
	for i, a := range args {
		s, err := renderChecked(a)
		if err != nil {
			return "", err
		}
		r[i] = strings.TrimSpace(s)
	}
	rule, ok := sparkFunctions[name]
	if !ok {
		return "", &UnsupportedFunctionError{Func: name, Reason: "it is not among the functions Ariadne translates to DuckDB with Spark's values"}
	}
	if rule.refuse != "" {
		return "", &UnsupportedFunctionError{Func: name, Reason: rule.refuse}
	}
	if len(r) < rule.min || rule.max >= 0 && len(r) > rule.max {
		return "", &UnsupportedFunctionError{Func: name, Reason: fmt.Sprintf("it is translated with %s, not %d", argCounts(rule), len(r))}
	}
	if rule.rewrite != nil {
		s, err := rule.rewrite(r, args)
		if err != nil {
			var rf refusal
			if errors.As(err, &rf) {
				return "", &UnsupportedFunctionError{Func: name, Reason: err.Error()}
			}
			return "", err
		}
		return s, nil
	}
	fn := name
	if rule.rename != "" {
		fn = rule.rename
	}
	return call(fn, r), nil
}

func argCounts(r sparkRule) string {
	switch {
	case r.max < 0:
		return fmt.Sprintf("%d or more arguments", r.min)
	case r.min == r.max:
		return fmt.Sprintf("%d argument(s)", r.min)
	}
	return fmt.Sprintf("%d to %d arguments", r.min, r.max)
}

// rewriteCast translates cast(e AS type); the type is taken as written.
func rewriteCast(args [][]tok) (string, error) {
	if len(args) != 1 {
		return "", &UnsupportedFunctionError{Func: "cast", Reason: "cast takes one expression AS a type"}
	}
	a := args[0]
	for j := len(a) - 1; j >= 0; j-- {
		if a[j].kind == tIdent && strings.EqualFold(a[j].text, "as") {
			e, err := renderChecked(a[:j])
			if err != nil {
				return "", err
			}
			var typ strings.Builder
			for _, t := range a[j+1:] {
				typ.WriteString(t.text)
			}
			s, err := castTo(strings.TrimSpace(e), strings.TrimSpace(typ.String()))
			if err != nil {
				return "", &UnsupportedFunctionError{Func: "cast", Reason: err.Error()}
			}
			return s, nil
		}
	}
	return "", &UnsupportedFunctionError{Func: "cast", Reason: "no AS type"}
}
