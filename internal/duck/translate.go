package duck

import (
	"strings"
)

// Translate rewrites an expression of the Spark SQL subset that computed
// indexes use (spec §3.3) into DuckDB SQL. Most of it is the same in both
// dialects (arithmetic, comparisons, upper, lower, trim, length, coalesce,
// year, month, day, hour, minute, second, quarter, dayofyear, date_trunc,
// abs, round, CASE, IN, LIKE, struct field access); the differences are
// rewritten:
//
//   - `ident` (backticks) becomes "ident"; "text" (a Spark string literal)
//     becomes 'text'; backslash escapes in Spark string literals (\' \" \\
//     \n \t \r \0) are decoded.
//   - substring/substr(s, pos[, len]): Spark treats pos 0 as 1 and a
//     negative len as empty; DuckDB counts pos 0 as the position before the
//     first character and reads a negative len backwards. Rewritten to
//     substring(s, CASE WHEN pos = 0 THEN 1 ELSE pos END, greatest(len, 0)).
//   - concat(a, b, …): Spark returns NULL if any argument is NULL; DuckDB's
//     concat skips NULLs. Rewritten to a CASE that returns NULL first.
//   - cast(x AS t): Spark 3.5 (non-ANSI) returns NULL when the cast fails;
//     DuckDB's CAST raises. Rewritten to TRY_CAST, with Spark type names
//     mapped (string VARCHAR, long BIGINT, short SMALLINT, byte TINYINT,
//     binary BLOB). Known difference: casting '1.5' to int gives 1 in
//     Spark (truncation) and 2 in DuckDB (rounding).
//   - dayofweek(x): Spark 1 = Sunday … 7; DuckDB 0 = Sunday … 6: +1.
//   - dayofmonth(x) → day(x); size(x) → coalesce(len(x), -1) (Spark 3.5's
//     legacy size of NULL is -1); split(s, re) → regexp_split_to_array.
//   - date_format(x, 'pattern') with a literal Java pattern → strftime with
//     the pattern converted (yyyy yy MM dd HH mm ss SSS and 'literals').
//   - a <=> b → a IS NOT DISTINCT FROM b; a div b → a // b.
//
// Translate never fails: text it does not understand (including a
// malformed expression) is passed through, and DuckDB reports the problem
// when the statement runs, as an *SQLError (ErrSQL) carrying its message,
// the analogue of Spark's analysis error at update or join time.
func Translate(expr string) string {
	toks := tokenize(expr)
	return render(toks)
}

type tokKind int

const (
	tWS tokKind = iota
	tIdent
	tQuotedIdent // `x` (text holds the raw name)
	tString      // 'x' or "x" (text holds the decoded value)
	tNumber
	tOp
	tComment
)

type tok struct {
	kind tokKind
	text string
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func tokenize(s string) []tok {
	var out []tok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			j := i
			for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
				j++
			}
			out = append(out, tok{tWS, s[i:j]})
			i = j
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			out = append(out, tok{tComment, s[i : i+j]})
			i += j
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			out = append(out, tok{tIdent, s[i:j]})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i
			for j < len(s) && (isIdentChar(s[j]) || s[j] == '.' ||
				(s[j] == '+' || s[j] == '-') && (s[j-1] == 'e' || s[j-1] == 'E')) {
				j++
			}
			out = append(out, tok{tNumber, s[i:j]})
			i = j
		case c == '`':
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				if s[j] == '`' {
					if j+1 < len(s) && s[j+1] == '`' {
						b.WriteByte('`')
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				b.WriteByte(s[j])
				j++
			}
			if !closed { // malformed: pass through for DuckDB to reject
				out = append(out, tok{tOp, s[i:]})
				return out
			}
			out = append(out, tok{tQuotedIdent, b.String()})
			i = j
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				d := s[j]
				if d == '\\' && j+1 < len(s) {
					switch e := s[j+1]; e {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					case 'r':
						b.WriteByte('\r')
					case '0':
						b.WriteByte(0)
					default:
						b.WriteByte(e)
					}
					j += 2
					continue
				}
				if d == c {
					if j+1 < len(s) && s[j+1] == c { // doubled quote
						b.WriteByte(c)
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				b.WriteByte(d)
				j++
			}
			if !closed {
				out = append(out, tok{tOp, s[i:]})
				return out
			}
			out = append(out, tok{tString, b.String()})
			i = j
		default:
			n := 1
			for _, op := range []string{"<=>", "==", "!=", "<>", "<=", ">=", "||", "::", "->"} {
				if strings.HasPrefix(s[i:], op) {
					n = len(op)
					break
				}
			}
			out = append(out, tok{tOp, s[i : i+n]})
			i += n
		}
	}
	return out
}

// nextSignificant returns the index of the first non-space token at or
// after i, or len(toks).
func nextSignificant(toks []tok, i int) int {
	for i < len(toks) && (toks[i].kind == tWS || toks[i].kind == tComment) {
		i++
	}
	return i
}

// matching returns the index of the ')' closing the '(' at open, or -1.
func matching(toks []tok, open int) int {
	depth := 0
	for i := open; i < len(toks); i++ {
		if toks[i].kind != tOp {
			continue
		}
		switch toks[i].text {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// splitArgs splits the tokens between parentheses at top-level commas.
func splitArgs(toks []tok) [][]tok {
	var args [][]tok
	depth, start := 0, 0
	for i, t := range toks {
		if t.kind != tOp {
			continue
		}
		switch t.text {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
		case ",":
			if depth == 0 {
				args = append(args, toks[start:i])
				start = i + 1
			}
		}
	}
	if len(toks) > 0 {
		args = append(args, toks[start:])
	}
	return args
}

var sparkCastTypes = map[string]string{
	"string": "VARCHAR", "long": "BIGINT", "short": "SMALLINT", "byte": "TINYINT",
	"binary": "BLOB", "int": "INTEGER", "integer": "INTEGER", "bigint": "BIGINT",
	"smallint": "SMALLINT", "tinyint": "TINYINT", "timestamp": "TIMESTAMP",
	"timestamp_ntz": "TIMESTAMP", "date": "DATE", "double": "DOUBLE", "float": "FLOAT",
	"real": "FLOAT", "boolean": "BOOLEAN", "decimal": "DECIMAL", "numeric": "DECIMAL",
}

func render(toks []tok) string {
	var b strings.Builder
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.kind {
		case tQuotedIdent:
			b.WriteString(Ident(t.text))
			continue
		case tString:
			b.WriteString(String(t.text))
			continue
		case tOp:
			if t.text == "<=>" {
				b.WriteString(" IS NOT DISTINCT FROM ")
				continue
			}
		case tIdent:
			if strings.EqualFold(t.text, "div") {
				b.WriteString("//")
				continue
			}
			p := nextSignificant(toks, i+1)
			if p < len(toks) && toks[p].kind == tOp && toks[p].text == "(" && !prevIsDot(toks, i) {
				if end := matching(toks, p); end > 0 {
					if s, ok := rewriteCall(strings.ToLower(t.text), toks[p+1:end]); ok {
						b.WriteString(s)
						i = end
						continue
					}
				}
			}
		}
		b.WriteString(t.text)
	}
	return b.String()
}

func prevIsDot(toks []tok, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if toks[j].kind == tWS {
			continue
		}
		return toks[j].kind == tOp && toks[j].text == "."
	}
	return false
}

// rewriteCall rewrites one function call whose Spark semantics differ.
func rewriteCall(name string, inner []tok) (string, bool) {
	args := splitArgs(inner)
	r := make([]string, len(args))
	for i, a := range args {
		r[i] = strings.TrimSpace(render(a))
	}
	switch name {
	case "substring", "substr":
		if len(r) < 2 || len(r) > 3 {
			return "", false
		}
		pos := "CASE WHEN (" + r[1] + ") = 0 THEN 1 ELSE (" + r[1] + ") END"
		if len(r) == 2 {
			return "substring(" + r[0] + ", " + pos + ")", true
		}
		return "substring(" + r[0] + ", " + pos + ", greatest(" + r[2] + ", 0))", true
	case "concat":
		if len(r) == 0 {
			return "", false
		}
		conds := make([]string, len(r))
		for i, a := range r {
			conds[i] = "(" + a + ") IS NULL"
		}
		return "(CASE WHEN " + strings.Join(conds, " OR ") + " THEN NULL ELSE concat(" + strings.Join(r, ", ") + ") END)", true
	case "cast":
		if len(args) != 1 {
			return "", false
		}
		a := args[0]
		for j := len(a) - 1; j >= 0; j-- {
			if a[j].kind == tIdent && strings.EqualFold(a[j].text, "as") {
				typ := strings.TrimSpace(render(a[j+1:]))
				word, rest, _ := strings.Cut(typ, "(")
				if m, ok := sparkCastTypes[strings.ToLower(strings.TrimSpace(word))]; ok {
					typ = m
					if rest != "" {
						typ += "(" + rest
					}
				}
				return "TRY_CAST(" + strings.TrimSpace(render(a[:j])) + " AS " + typ + ")", true
			}
		}
		return "", false
	case "dayofweek":
		if len(r) != 1 {
			return "", false
		}
		return "(dayofweek(" + r[0] + ") + 1)", true
	case "dayofmonth":
		if len(r) != 1 {
			return "", false
		}
		return "day(" + r[0] + ")", true
	case "size", "cardinality":
		if len(r) != 1 {
			return "", false
		}
		return "coalesce(len(" + r[0] + "), -1)", true
	case "split":
		if len(r) < 2 {
			return "", false
		}
		return "regexp_split_to_array(" + r[0] + ", " + r[1] + ")", true
	case "date_format":
		if len(args) != 2 {
			return "", false
		}
		p := nextSignificant(args[1], 0)
		if p >= len(args[1]) || args[1][p].kind != tString || nextSignificant(args[1], p+1) != len(args[1]) {
			return "", false
		}
		return "strftime(" + r[0] + ", " + String(javaToStrftime(args[1][p].text)) + ")", true
	}
	// Not rewritten: still translate the arguments.
	return name + "(" + strings.Join(r, ", ") + ")", true
}

// javaToStrftime converts the common Java date pattern letters to strftime.
func javaToStrftime(p string) string {
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
		switch {
		case c == 'y' && n == 2:
			b.WriteString("%y")
		case c == 'y':
			b.WriteString("%Y")
		case c == 'M' && n >= 4:
			b.WriteString("%B")
		case c == 'M' && n == 3:
			b.WriteString("%b")
		case c == 'M':
			b.WriteString("%m")
		case c == 'd':
			b.WriteString("%d")
		case c == 'H':
			b.WriteString("%H")
		case c == 'h':
			b.WriteString("%I")
		case c == 'm':
			b.WriteString("%M")
		case c == 's':
			b.WriteString("%S")
		case c == 'S':
			b.WriteString("%g")
		case c == 'a':
			b.WriteString("%p")
		case c == 'E' && n >= 4:
			b.WriteString("%A")
		case c == 'E':
			b.WriteString("%a")
		case c == '%':
			b.WriteString(strings.Repeat("%%", n))
		default:
			b.WriteString(p[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Computed is one computed column: Name = Expr (Spark SQL).
type Computed struct {
	Name string
	Expr string
}

// SelectComputed returns a SELECT over table from that adds computed
// columns as Spark's withColumn does (spec §3.3): in order, each either
// replaces the column of the same name in place or is appended. Names are
// quoted; expressions are translated with Translate and parenthesised.
func SelectComputed(from string, columns []string, computed []Computed) string {
	exprs := make([]string, len(columns))
	names := append([]string(nil), columns...)
	for i, c := range columns {
		exprs[i] = Ident(c)
	}
	for _, c := range computed {
		e := "(" + Translate(c.Expr) + ")"
		found := false
		for i, n := range names {
			if n == c.Name {
				exprs[i], found = e, true
			}
		}
		if !found {
			names = append(names, c.Name)
			exprs = append(exprs, e)
		}
	}
	parts := make([]string, len(names))
	for i := range names {
		parts[i] = exprs[i] + " AS " + Ident(names[i])
	}
	return "SELECT " + strings.Join(parts, ", ") + " FROM " + Ident(from)
}
