package duck

import (
	"fmt"
	"strings"
)

// Spark's integer arithmetic (spark.sql.ansi.enabled=false, the default)
// wraps around in two's complement: 2147483647 + 1 is -2147483648, and the
// result keeps the operands' wider type (byte + byte is a byte, int +
// bigint a bigint, an integer literal is an int). DuckDB raises on
// overflow, which would fail an update the library runs. Binary + - * and
// unary minus are therefore translated to the macros below, overloaded by
// DuckDB type: an integer pair is computed exactly in HUGEINT and wrapped to
// the width of the pair's type; any other pair (double, decimal, date,
// NULL, ...) falls through to DuckDB's own operator, as before.
//
// DuckDB picks the overload when it binds the statement, so the result
// type is the one DuckDB gives the plain operator, which for integer
// operands is Spark's (checked by the spark_functions.json cases).

// sparkArithMacros are the statements that create the arithmetic macros on
// a connection.
func sparkArithMacros() []string {
	types := []struct {
		name string
		bits uint
	}{{"TINYINT", 8}, {"SMALLINT", 16}, {"INTEGER", 32}, {"BIGINT", 64}}
	ops := []struct {
		name, op string
		wraps    bool
	}{{"spark_add", "+", true}, {"spark_sub", "-", true}, {"spark_mul", "*", true},
		{"spark_div", "/", false}, {"spark_mod", "%", false}}
	// A string operand is cast to double, as Spark's implicit cast does
	// (' 42 ' is 42.0, 'abc' NULL), and the operation is the double one.
	dbl := "spark_to_double(%s, 'VARCHAR')"
	var out []string
	for _, o := range ops {
		var overloads []string
		if o.wraps {
			for _, t := range types {
				overloads = append(overloads, fmt.Sprintf("(a %s, b %s, ha, hb) AS %s", t.name, t.name,
					wrapTo("(CAST(a AS HUGEINT) "+o.op+" CAST(b AS HUGEINT))", t.name, t.bits)))
			}
		}
		// DuckDB's product of DECIMAL(p1,s1) and DECIMAL(p2,s2) is p1+p2
		// digits wide (Spark's p1+p2+1): widening one operand by a digit
		// (an exact product with 1 as DECIMAL(1,0)) gives Spark's type
		// where DuckDB does not cap the width; the check refuses the rest.
		// A double, an integer pair or NULL keeps its value.
		b := "b"
		if o.op == "*" {
			b = "(b * CAST(1 AS DECIMAL(1,0)))"
		}
		overloads = append(overloads,
			"(a VARCHAR, b VARCHAR, ha, hb) AS ("+fmt.Sprintf(dbl, "a")+" "+o.op+" "+fmt.Sprintf(dbl, "b")+")",
			"(a VARCHAR, b, ha, hb) AS ("+fmt.Sprintf(dbl, "a")+" "+o.op+" b)",
			"(a, b VARCHAR, ha, hb) AS (a "+o.op+" "+fmt.Sprintf(dbl, "b")+")",
			// The first check refuses what is known from the operands' types
			// alone without binding the operation (DuckDB raises while
			// binding some decimal products); the second compares DuckDB's
			// result type with Spark's.
			"(a, b, ha, hb) AS (CASE WHEN spark_arith_check('"+o.op+"', typeof(a), typeof(b), ha, hb, '') THEN NULL "+
				"WHEN spark_arith_check('"+o.op+"', typeof(a), typeof(b), ha, hb, typeof(a "+o.op+" "+b+")) THEN NULL "+
				"ELSE (a "+o.op+" "+b+") END)")
		out = append(out, "CREATE OR REPLACE TEMP MACRO "+o.name+" "+strings.Join(overloads, ", "))
	}
	var neg []string
	for _, t := range types {
		neg = append(neg, fmt.Sprintf("(a %s) AS %s", t.name, wrapTo("(- CAST(a AS HUGEINT))", t.name, t.bits)))
	}
	neg = append(neg, "(a VARCHAR) AS (- "+fmt.Sprintf(dbl, "a")+")", "(a) AS (- a)")
	out = append(out, "CREATE OR REPLACE TEMP MACRO spark_neg "+strings.Join(neg, ", "))
	return out
}

// wrapTo is the two's complement wrap of the HUGEINT expression x to a
// bits-wide integer, cast to typ. x appears once.
func wrapTo(x, typ string, bits uint) string {
	half := "CAST(1 AS HUGEINT) << " + fmt.Sprint(bits-1)
	mask := "((CAST(1 AS HUGEINT) << " + fmt.Sprint(bits) + ") - 1)"
	return "CAST(((" + x + " + (" + half + ")) & " + mask + ") - (" + half + ") AS " + typ + ")"
}

// arithOp reports whether t is a binary arithmetic operator of Spark's
// additive or multiplicative level, and its precedence (1 or 2).
func arithOp(t tok) (string, int) {
	switch {
	case t.kind == tOp && (t.text == "+" || t.text == "-"):
		return t.text, 1
	case t.kind == tOp && (t.text == "*" || t.text == "/" || t.text == "%"):
		return t.text, 2
	case t.kind == tIdent && strings.EqualFold(t.text, "div"):
		return "div", 2
	}
	return "", 0
}

// arithNode is a parsed arithmetic chain: a leaf (toks) or an operator
// with its operands.
type arithNode struct {
	toks        []tok // leaf: the operand's tokens (a primary with its postfixes)
	op          string
	neg         bool // unary minus of left
	left, right *arithNode
}

// parseOperand reads one operand at toks[i:]: unary signs, then a primary
// (identifier, literal, call, parenthesised group) with postfixes (.field,
// [subscript]). It returns the node and the index after it, or ok=false.
func parseOperand(toks []tok, i int) (*arithNode, int, bool) {
	i = nextSignificant(toks, i)
	if i >= len(toks) {
		return nil, i, false
	}
	if t := toks[i]; t.kind == tOp && (t.text == "-" || t.text == "+") {
		n, j, ok := parseOperand(toks, i+1)
		if !ok {
			return nil, j, false
		}
		if t.text == "+" {
			return n, j, true
		}
		// A negative number literal stays a literal.
		if n.toks != nil && len(n.toks) == 1 && n.toks[0].kind == tNumber {
			return &arithNode{toks: []tok{{tNumber, "-" + n.toks[0].text}}}, j, true
		}
		return &arithNode{neg: true, left: n}, j, true
	}
	start := i
	switch t := toks[i]; {
	case t.kind == tIdent && !sparkKeywords[strings.ToLower(t.text)] && !strings.EqualFold(t.text, "div"):
		i++
		if p := nextSignificant(toks, i); p < len(toks) && toks[p].kind == tOp && toks[p].text == "(" {
			end := matching(toks, p)
			if end < 0 {
				return nil, i, false
			}
			i = end + 1
		}
	case t.kind == tQuotedIdent || t.kind == tNumber || t.kind == tString:
		i++
	case t.kind == tOp && t.text == "(":
		end := matching(toks, i)
		if end < 0 {
			return nil, i, false
		}
		i = end + 1
	default:
		return nil, i, false
	}
	for { // postfixes
		p := nextSignificant(toks, i)
		if p >= len(toks) || toks[p].kind != tOp {
			break
		}
		if toks[p].text == "[" {
			end := matching(toks, p)
			if end < 0 {
				return nil, p, false
			}
			i = end + 1
			continue
		}
		if toks[p].text == "." {
			q := nextSignificant(toks, p+1)
			if q < len(toks) && (toks[q].kind == tIdent || toks[q].kind == tQuotedIdent) {
				i = q + 1
				continue
			}
		}
		break
	}
	return &arithNode{toks: toks[start:i]}, i, true
}

// parseArith parses toks (one segment, no boundary tokens) as operands
// joined by arithmetic operators, with Spark's precedence (* / % div
// before + -, left to right). ok=false when the segment is not such a
// chain.
func parseArith(toks []tok) (*arithNode, bool) {
	var operands []*arithNode
	var ops []string
	n, i, ok := parseOperand(toks, 0)
	if !ok {
		return nil, false
	}
	operands = append(operands, n)
	for {
		i = nextSignificant(toks, i)
		if i >= len(toks) {
			break
		}
		op, _ := arithOp(toks[i])
		if op == "" {
			return nil, false
		}
		n, i, ok = parseOperand(toks, i+1)
		if !ok {
			return nil, false
		}
		ops = append(ops, op)
		operands = append(operands, n)
	}
	prec := func(op string) int {
		if op == "+" || op == "-" {
			return 1
		}
		return 2
	}
	// Shunting-yard over left-associative binary operators.
	var out []*arithNode
	var stack []string
	reduce := func() {
		op := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		r, l := out[len(out)-1], out[len(out)-2]
		out = append(out[:len(out)-2], &arithNode{op: op, left: l, right: r})
	}
	out = append(out, operands[0])
	for k, op := range ops {
		for len(stack) > 0 && prec(stack[len(stack)-1]) >= prec(op) {
			reduce()
		}
		stack = append(stack, op)
		out = append(out, operands[k+1])
	}
	for len(stack) > 0 {
		reduce()
	}
	return out[0], true
}

// renderArith renders a parsed chain.
func renderArith(n *arithNode) (string, error) {
	if n.toks != nil {
		// A parenthesised group is rendered as an expression of its own.
		p := nextSignificant(n.toks, 0)
		if p < len(n.toks) && n.toks[p].kind == tOp && n.toks[p].text == "(" {
			end := matching(n.toks, p)
			if end == len(n.toks)-1 {
				inner, err := renderChecked(n.toks[p+1 : end])
				if err != nil {
					return "", err
				}
				return "(" + inner + ")", nil
			}
		}
		s, err := renderTokens(n.toks)
		return strings.TrimSpace(s), err
	}
	l, err := renderArith(n.left)
	if err != nil {
		return "", err
	}
	if n.neg {
		return "spark_neg(" + l + ")", nil
	}
	r, err := renderArith(n.right)
	if err != nil {
		return "", err
	}
	hints := ", " + String(integerLiteralHint(n.left)) + ", " + String(integerLiteralHint(n.right)) + ")"
	switch n.op {
	case "+":
		return "spark_add(" + l + ", " + r + hints, nil
	case "-":
		return "spark_sub(" + l + ", " + r + hints, nil
	case "*":
		return "spark_mul(" + l + ", " + r + hints, nil
	case "/":
		return "spark_div(" + l + ", " + r + hints, nil
	case "%":
		return "spark_mod(" + l + ", " + r + hints, nil
	case "div":
		// A string or decimal operand is refused when planned (see
		// sparkArithCheck).
		check := "spark_arith_check('//', typeof(" + l + "), typeof(" + r + "), '', '', '')"
		// Spark's div is a bigint; DuckDB's // keeps the operands' type.
		if n.right.toks != nil && len(n.right.toks) == 1 && (n.right.toks[0].kind == tNumber || n.right.toks[0].kind == tIdent || n.right.toks[0].kind == tQuotedIdent) {
			r = "CAST(" + r + " AS BIGINT)"
		}
		return "(CASE WHEN " + check + " THEN NULL ELSE (" + l + " // " + r + ") END)", nil
	}
	return "(" + l + " " + n.op + " " + r + ")", nil
}

// isSegmentBoundary reports whether t ends an arithmetic chain at the top
// level of an expression: any operator other than the arithmetic ones and
// brackets, and the keywords of conditions and CASE.
func isSegmentBoundary(t tok) bool {
	switch t.kind {
	case tOp:
		switch t.text {
		case "+", "-", "*", "/", "%", "(", ")", "[", "]", ".":
			return false
		}
		return true
	case tIdent:
		return sparkKeywords[strings.ToLower(t.text)]
	}
	return false
}

// renderChecked renders an expression: each top-level arithmetic chain
// (between boundary tokens) with Spark's wrapping integer operators, the
// rest token by token (renderTokens). A chain that does not parse is
// rendered token by token, as DuckDB would read it.
func renderChecked(toks []tok) (string, error) {
	var b strings.Builder
	start := 0
	flush := func(end int) error {
		seg := toks[start:end]
		if nextSignificant(seg, 0) == len(seg) {
			s, err := renderTokens(seg)
			b.WriteString(s)
			return err
		}
		if hasArith(seg) {
			if n, ok := parseArith(seg); ok {
				s, err := renderArith(n)
				if err != nil {
					return err
				}
				// keep the white space around the chain
				lead := seg[:nextSignificant(seg, 0)]
				for _, t := range lead {
					b.WriteString(t.text)
				}
				b.WriteString(s)
				if k := lastSignificant(seg); k+1 < len(seg) {
					for _, t := range seg[k+1:] {
						b.WriteString(t.text)
					}
				}
				return nil
			}
		}
		s, err := renderTokens(seg)
		b.WriteString(s)
		return err
	}
	depth := 0
	for i, t := range toks {
		if t.kind == tOp {
			switch t.text {
			case "(", "[":
				depth++
			case ")", "]":
				depth--
			}
		}
		if depth == 0 && isSegmentBoundary(t) {
			if err := flush(i); err != nil {
				return "", err
			}
			s, err := renderTokens(toks[i : i+1])
			if err != nil {
				return "", err
			}
			b.WriteString(s)
			start = i + 1
		}
	}
	if err := flush(len(toks)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// hasArith reports whether a top-level arithmetic operator (or a unary
// minus) occurs in toks.
func hasArith(toks []tok) bool {
	depth := 0
	for _, t := range toks {
		if t.kind == tOp {
			switch t.text {
			case "(", "[":
				depth++
				continue
			case ")", "]":
				depth--
				continue
			}
		}
		if op, _ := arithOp(t); op != "" && depth == 0 {
			return true
		}
	}
	return false
}

func lastSignificant(toks []tok) int {
	k := len(toks) - 1
	for k >= 0 && (toks[k].kind == tWS || toks[k].kind == tComment) {
		k--
	}
	return k
}
