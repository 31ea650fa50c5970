package duck

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
)

// Spark's decimal arithmetic (spark.sql.decimalOperations.allowPrecisionLoss
// =true, the default) gives a result type computed from the operands'
// precision and scale, and a NULL when a value overflows it (ANSI mode off).
// DuckDB's rules differ (a product of DECIMAL(10,2) and DECIMAL(10,0) is
// DECIMAL(18,2) in DuckDB, decimal(21,2) in Spark; decimal / decimal is a
// DOUBLE; an overflow raises). A computed index must hold Spark's type and
// value, and a macro cannot name a type that depends on its arguments, so
// the arithmetic macros check each decimal operation when DuckDB plans it:
// sparkArithCheck refuses (typed, at add-index) every one whose DuckDB type
// is not Spark's, or whose exact result may not fit in Spark's type. What
// is left (sums and differences of decimals and integer columns, products
// whose types happen to agree) is exact in both engines.

// sparkDecimalOperand is Spark's decimal view of an operand of DuckDB type
// typ: a decimal's own precision and scale, an integer column's widening
// (int is decimal(10,0), bigint decimal(20,0)), or for an integer literal
// its digits (hint "DECIMAL(k,0)": Spark types the literal 42 as
// decimal(2,0) next to a decimal). isDec reports a decimal operand, ok an
// operand Spark widens to a decimal at all.
func sparkDecimalOperand(typ, hint string) (p, s int, isDec, ok bool) {
	if strings.HasPrefix(typ, "DECIMAL(") {
		if _, err := fmt.Sscanf(typ, "DECIMAL(%d,%d)", &p, &s); err == nil {
			return p, s, true, true
		}
		return 0, 0, true, false
	}
	if hint != "" {
		if _, err := fmt.Sscanf(hint, "DECIMAL(%d,%d)", &p, &s); err == nil {
			return p, s, false, true
		}
	}
	switch typ {
	case "TINYINT":
		return 3, 0, false, true
	case "SMALLINT":
		return 5, 0, false, true
	case "INTEGER":
		return 10, 0, false, true
	case "BIGINT":
		return 20, 0, false, true
	}
	return 0, 0, false, false
}

// sparkDecimalResult is the precision and scale of Spark 3.5's result of
// op over decimal(p1,s1) and decimal(p2,s2) before it is bounded to 38
// digits (DecimalPrecision / the arithmetic's resultDecimalType), and the
// type after Spark's adjustPrecisionScale.
func sparkDecimalResult(op string, p1, s1, p2, s2 int) (p, s, ap, as int) {
	switch op {
	case "+", "-":
		s = max(s1, s2)
		p = max(p1-s1, p2-s2) + s + 1
	case "*":
		p, s = p1+p2+1, s1+s2
	case "/":
		s = max(6, s1+p2+1)
		p = p1 - s1 + s2 + s
	case "%":
		s = max(s1, s2)
		p = min(p1-s1, p2-s2) + s
	}
	ap, as = p, s
	if p > 38 {
		intDigits := p - s
		as = max(38-intDigits, min(s, 6))
		ap = 38
	}
	return p, s, ap, as
}

// sparkArithCheck decides, from the DuckDB types of the operands (and the
// hints of integer literals), whether op is refused; result is DuckDB's
// type of the operation, or "" for the first check that must not bind the
// operation (DuckDB raises while binding some products, scale above 38).
// It returns the refusal's function name and reason, or "" when the
// translation gives Spark's value.
func sparkArithCheck(op, ta, tb, ha, hb, result string) (fn, why string) {
	name := "operator " + op
	if op == "//" {
		name = "operator div"
	}
	if op == "//" && (ta == "VARCHAR" || tb == "VARCHAR") {
		return name, "of a string: Spark itself refuses it (DATATYPE_MISMATCH); cast the string to bigint"
	}
	p1, s1, d1, ok1 := sparkDecimalOperand(ta, ha)
	p2, s2, d2, ok2 := sparkDecimalOperand(tb, hb)
	if !d1 && !d2 {
		return "", ""
	}
	if (d1 && !ok1) || (d2 && !ok2) {
		return name, "of a decimal whose type is not known"
	}
	if !ok1 || !ok2 {
		return "", "" // decimal with double: a double in both engines
	}
	if op == "//" {
		return name, "of a decimal: Spark's integral division of decimals (a bigint, NULL on overflow) is not translated; cast the operands to bigint"
	}
	operands := fmt.Sprintf("decimal(%d,%d) %s decimal(%d,%d)", p1, s1, op, p2, s2)
	if op == "/" {
		_, _, ap, as := sparkDecimalResult(op, p1, s1, p2, s2)
		return name, fmt.Sprintf("of a decimal: Spark's %s is decimal(%d,%d), its quotient rounded half up, and DuckDB's decimal division gives a double; cast the operands to double", operands, ap, as)
	}
	p, _, ap, as := sparkDecimalResult(op, p1, s1, p2, s2)
	if p > 38 {
		return name, fmt.Sprintf("%s needs precision %d: Spark rounds it to decimal(%d,%d) and gives NULL when a value overflows, which the DuckDB translation does not do; cast the operands to double or to smaller decimals", operands, p, ap, as)
	}
	if result == "" {
		return "", ""
	}
	if want := fmt.Sprintf("DECIMAL(%d,%d)", ap, as); result != want {
		hint := "cast the operands to double"
		switch {
		case ha != "" || hb != "":
			lit := ha
			if lit == "" {
				lit = hb
			}
			hint = fmt.Sprintf("Spark types the integer literal as %s next to a decimal: write it as cast(… as %s), or cast the operands to double", strings.ToLower(lit), strings.ToLower(lit))
		case ta == "BIGINT" || tb == "BIGINT":
			hint = "Spark widens a bigint to decimal(20,0): cast it so, or cast the operands to double"
		}
		return name, fmt.Sprintf("%s is decimal(%d,%d) in Spark and %s in the DuckDB translation; %s", operands, ap, as, strings.ToLower(result), hint)
	}
	return "", ""
}

// integerLiteralHint is the hint for an operand that is an integer
// literal: Spark's decimal type of it next to a decimal, DECIMAL(digits,0);
// "" for any other operand.
func integerLiteralHint(n *arithNode) string {
	if n == nil || n.toks == nil {
		return ""
	}
	// (1) is still a literal to Spark's analyzer.
	toks := n.toks
	for {
		i, k := nextSignificant(toks, 0), lastSignificant(toks)
		if i > k {
			return ""
		}
		if toks[i].kind == tOp && toks[i].text == "(" && matching(toks, i) == k {
			toks = toks[i+1 : k]
			continue
		}
		toks = toks[i : k+1]
		break
	}
	if len(toks) != 1 || toks[0].kind != tNumber {
		return ""
	}
	text := strings.TrimPrefix(toks[0].text, "-")
	if _, err := strconv.ParseInt(text, 10, 64); err != nil {
		return "" // 1.5, 1e3, 2L, ...: typed by DuckDB as Spark does, or not an int
	}
	digits := len(strings.TrimLeft(text, "0"))
	if digits == 0 {
		digits = 1
	}
	return fmt.Sprintf("DECIMAL(%d,0)", digits)
}

// arithCheckUDF is spark_arith_check(op, typeof(a), typeof(b), hint a,
// hint b, result type): it fails binding with the refusal sparkArithCheck
// gives, and returns NULL otherwise.
type arithCheckUDF struct{}

func (arithCheckUDF) Config() duckdb.ScalarFuncConfig {
	v, _ := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	b, _ := duckdb.NewTypeInfo(duckdb.TYPE_BOOLEAN)
	return duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{v, v, v, v, v, v}, ResultTypeInfo: b}
}

func (arithCheckUDF) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{
		RowExecutor: func([]driver.Value) (any, error) { return nil, nil },
		ScalarBinder: func(ctx context.Context, args []duckdb.ScalarUDFArg) (context.Context, error) {
			if len(args) != 6 {
				return ctx, nil
			}
			var s [6]string
			for i, a := range args {
				if !a.Foldable {
					return ctx, nil
				}
				s[i], _ = a.Value.(string)
			}
			if fn, why := sparkArithCheck(s[0], s[1], s[2], s[3], s[4], s[5]); fn != "" {
				return ctx, fmt.Errorf("%s%s\x1f%s\x1f", unsupportedMarker, fn, why)
			}
			return ctx, nil
		},
	}
}
