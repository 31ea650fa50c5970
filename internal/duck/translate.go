package duck

import (
	"bytes"
	"strconv"
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
	s, err := TranslateChecked(expr)
	if err != nil {
		// A refused function fails the statement when it runs; callers
		// that can report it typed call CheckFunctions first.
		return "error(" + String(err.Error()) + ")"
	}
	return s
}

// TranslateChecked is Translate that returns an *UnsupportedFunctionError
// (ErrUnsupportedFunction) for a function Ariadne refuses.
func TranslateChecked(expr string) (string, error) {
	return renderChecked(tokenize(expr))
}

// CheckFunctions returns an *UnsupportedFunctionError
// (ErrUnsupportedFunction) naming the first function or operator in expr
// that Ariadne refuses and why, or nil. It plans nothing: errors of
// types and names surface when DuckDB plans the translation.
func CheckFunctions(expr string) error {
	_, err := TranslateChecked(expr)
	return err
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
					case 'u':
						// Spark decodes \uXXXX in string literals.
						if j+6 <= len(s) && isHex(s[j+2:j+6]) {
							r, _ := strconv.ParseUint(s[j+2:j+6], 16, 32)
							b.WriteRune(rune(r))
							j += 6
							continue
						}
						b.WriteByte(e)
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

// renderTokens renders toks token by token (arithmetic chains are
// renderChecked's); a parenthesised group is an expression of its own.
func renderTokens(toks []tok) (string, error) {
	var b bytes.Buffer
	// pos[k]: where the rendering of token k began in b (-1: inside a
	// chunk), to find a subscript's rendered operand.
	pos := make([]int, len(toks))
	for k := range pos {
		pos[k] = -1
	}
	for i := 0; i < len(toks); i++ {
		pos[i] = b.Len()
		t := toks[i]
		switch t.kind {
		case tQuotedIdent:
			b.WriteString(Ident(t.text))
			continue
		case tString:
			b.WriteString(String(t.text))
			continue
		case tOp:
			switch t.text {
			case "<=>":
				b.WriteString(" IS NOT DISTINCT FROM ")
				continue
			case "(":
				if end := matching(toks, i); end > 0 {
					inner, err := renderChecked(toks[i+1 : end])
					if err != nil {
						return "", err
					}
					b.WriteString("(" + inner + ")")
					i = end
					continue
				}
			case "[":
				// A subscript: Spark's arrays count from 0 and give NULL
				// for a negative index; DuckDB's count from 1. A string
				// literal key is a map's and stays as it is.
				end := matching(toks, i)
				if end > 0 && isOperandEnd(toks, i) {
					inner := toks[i+1 : end]
					idx, err := renderChecked(inner)
					if err != nil {
						return "", err
					}
					if _, isKey := stringLiteral(inner); isKey {
						b.WriteString("[" + idx + "]")
					} else {
						// An array index, 0-based in Spark. The operand is
						// rendered already; a map indexed by anything but a
						// string literal is refused when planned (its keys
						// would be read as array positions).
						start := -1
						if j := operandStart(toks, i); j >= 0 {
							start = pos[j]
						}
						if start < 0 {
							b.WriteString("[(CASE WHEN (" + idx + ") >= 0 THEN CAST(" + idx + " AS BIGINT) + 1 ELSE 0 END)]")
							i = end
							continue
						}
						operand := b.String()[start:]
						b.Truncate(start)
						b.WriteString(refuseType("subscript", "of a map by a key that is not a string literal: not translated (write m['key'])", operand, "MAP",
							operand+"[(CASE WHEN ("+idx+") >= 0 THEN CAST("+idx+" AS BIGINT) + 1 ELSE 0 END)]"))
					}
					i = end
					continue
				}
			}
		case tIdent:
			low := strings.ToLower(t.text)
			if low == "div" {
				// Spark's div is a bigint; DuckDB's // keeps the operands'
				// type. A simple right operand is widened to make it one.
				b.WriteString("//")
				q := nextSignificant(toks, i+1)
				if q < len(toks) && (toks[q].kind == tNumber || toks[q].kind == tIdent || toks[q].kind == tQuotedIdent) {
					r := nextSignificant(toks, q+1)
					if r == len(toks) || toks[r].kind != tOp || toks[r].text != "(" && toks[r].text != "." && toks[r].text != "[" {
						operand, _ := renderChecked(toks[q : q+1])
						b.WriteString(" CAST(" + operand + " AS BIGINT)")
						i = q
					}
				}
				continue
			}
			p := nextSignificant(toks, i+1)
			isCall := p < len(toks) && toks[p].kind == tOp && toks[p].text == "(" && !prevIsDot(toks, i)
			if reason, ok := sparkOperators[low]; ok && !isCall {
				return "", &UnsupportedFunctionError{Func: low, Reason: reason}
			}
			if isCall && !sparkKeywords[low] {
				end := matching(toks, p)
				if end < 0 {
					break // malformed: DuckDB reports it
				}
				s, err := rewriteCall(low, toks[p+1:end])
				if err != nil {
					return "", err
				}
				b.WriteString(s)
				i = end
				continue
			}
		}
		b.WriteString(t.text)
	}
	return b.String(), nil
}

// operandStart returns the index of the first token of the operand that
// ends just before toks[i] (an identifier with its call parentheses, field
// accesses and subscripts, or a parenthesised group), or -1.
func operandStart(toks []tok, i int) int {
	j := i - 1
	for j >= 0 && (toks[j].kind == tWS || toks[j].kind == tComment) {
		j--
	}
	for j >= 0 {
		switch t := toks[j]; {
		case t.kind == tOp && (t.text == ")" || t.text == "]"):
			open := matchingBack(toks, j)
			if open < 0 {
				return -1
			}
			j = open
			if t.text == ")" { // a call: the function's name
				k := open - 1
				for k >= 0 && toks[k].kind == tWS {
					k--
				}
				if k >= 0 && toks[k].kind == tIdent && !sparkKeywords[strings.ToLower(toks[k].text)] {
					j = k
				}
			}
		case t.kind == tIdent || t.kind == tQuotedIdent:
		default:
			return -1
		}
		// a postfix chain continues backwards through "." and "[...]"
		k := j - 1
		for k >= 0 && toks[k].kind == tWS {
			k--
		}
		if k >= 0 && toks[k].kind == tOp && toks[k].text == "." {
			j = k - 1
			for j >= 0 && toks[j].kind == tWS {
				j--
			}
			continue
		}
		if t := toks[j]; t.kind == tOp && t.text == "[" && k >= 0 && toks[k].kind == tOp && (toks[k].text == "]" || toks[k].text == ")") {
			j = k
			continue
		}
		if toks[j].kind == tOp && toks[j].text == "[" && k >= 0 && (toks[k].kind == tIdent || toks[k].kind == tQuotedIdent) {
			j = k
			continue
		}
		return j
	}
	return -1
}

// matchingBack returns the index of the '(' or '[' opening the bracket
// closed at close, or -1.
func matchingBack(toks []tok, close int) int {
	depth := 0
	for i := close; i >= 0; i-- {
		if toks[i].kind != tOp {
			continue
		}
		switch toks[i].text {
		case ")", "]":
			depth++
		case "(", "[":
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// isOperandEnd reports whether the token before i ends an operand (so a
// "[" at i is a subscript, not a list literal).
func isOperandEnd(toks []tok, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch toks[j].kind {
		case tWS, tComment:
			continue
		case tIdent:
			return !sparkKeywords[strings.ToLower(toks[j].text)]
		case tQuotedIdent:
			return true
		case tOp:
			return toks[j].text == ")" || toks[j].text == "]"
		}
		return false
	}
	return false
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
