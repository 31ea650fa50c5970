package duck

import (
	"fmt"
	"regexp"
	"strings"
)

// Spark's regular expressions are java.util.regex; DuckDB's are RE2. The
// common syntax means the same in both except for a few constructs, which
// javaRegex translates (so the RE2 pattern matches exactly what Java's
// does) or refuses (so no index is built whose values differ from the
// library's):
//
//   - `.` outside a class: Java's excludes every line terminator (\n, \r,
//     U+0085, U+2028, U+2029), RE2's only \n: translated to a class.
//   - `\s` / `\S`: Java's includes the vertical tab \x0B, RE2's does not:
//     translated to a class (`\S` inside a class is refused).
//   - `\uXXXX`: Java only; translated to RE2's \x{XXXX}.
//   - `$` outside a class: Java's also matches before a final line
//     terminator; for a match test (regexp_like) translated to an optional
//     terminator and \z, elsewhere (where the matched text or its position
//     counts) refused.
//   - refused: back-references (\1, \k<name>), look-around, atomic groups,
//     possessive quantifiers, inline flags and named groups (Java's (?i) is
//     ASCII-only, RE2's Unicode; Java's (?U) is another flag than RE2's),
//     \b \B (Java's word characters are Unicode letters and digits), \p{…}
//     \P{…} (the class names differ), \Z \G \R \X \h \H \v \V \e \c \0
//     \N, class intersection (&&) and nested classes ([a[b]], [[:alpha:]]),
//     an empty or ]-first class, and a `{` that does not start a valid
//     quantifier (an error in Java, a literal in RE2).

// lineTerminators is Java's set of line terminators, as RE2 class items.
const lineTerminators = `\n\r\x{85}\x{2028}\x{2029}`

var quantifierRE = regexp.MustCompile(`^\{[0-9]+(,[0-9]*)?\}`)

// javaRegex translates a java.util.regex pattern to RE2, or returns a
// refusal naming the construct. matchOnly: the pattern is only tested for
// a match (regexp_like), so `$` may consume a final line terminator.
func javaRegex(p string, matchOnly bool) (string, error) {
	refuse := func(what, why string) (string, error) {
		return "", refusal(fmt.Sprintf("the regular expression %q uses %s, which %s (Spark's patterns are java.util.regex, DuckDB's RE2)", p, what, why))
	}
	var b strings.Builder
	inClass := false
	classStart := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' {
			if i+1 >= len(p) {
				return refuse("a trailing backslash", "is an error in Java")
			}
			e := p[i+1]
			switch {
			case e == 'Q': // quoted until \E, the same in both
				j := strings.Index(p[i+2:], `\E`)
				if j < 0 {
					b.WriteString(p[i:])
					return b.String(), nil
				}
				b.WriteString(p[i : i+2+j+2])
				i += 1 + j + 2
				classStart = false
				continue
			case e == 's':
				if inClass {
					b.WriteString(`\t\n\x0B\f\r `)
				} else {
					b.WriteString(`[\t\n\x0B\f\r ]`)
				}
			case e == 'S':
				if inClass {
					return refuse(`\S inside a character class`, "cannot be written in RE2 with Java's meaning")
				}
				b.WriteString(`[^\t\n\x0B\f\r ]`)
			case e == 'u':
				if i+6 > len(p) || !isHex(p[i+2:i+6]) {
					return refuse(`\u without four hex digits`, "is an error in Java")
				}
				b.WriteString(`\x{` + p[i+2:i+6] + `}`)
				i += 4
			case e >= '0' && e <= '9':
				return refuse(`a back-reference or octal escape (\`+string(e)+`)`, "RE2 does not support")
			case strings.IndexByte("bBZGRXhHvVecNkpPg", e) >= 0:
				return refuse(`\`+string(e), "means something else or nothing in RE2")
			default:
				b.WriteString(p[i : i+2])
			}
			i++
			classStart = false
			continue
		}
		if inClass {
			switch {
			case c == ']' && !classStart:
				inClass = false
			case c == ']' || c == '[':
				return refuse("a nested, empty or ]-first character class", "Java reads as a union or an error")
			case c == '&' && i+1 < len(p) && p[i+1] == '&':
				return refuse("a class intersection (&&)", "RE2 does not support")
			}
			if c == '^' && classStart && i > 0 && p[i-1] == '[' {
				b.WriteByte(c)
				continue // still the start of the class
			}
			classStart = false
			b.WriteByte(c)
			continue
		}
		switch c {
		case '[':
			inClass, classStart = true, true
			b.WriteByte(c)
		case '.':
			b.WriteString(`[^` + lineTerminators + `]`)
		case '$':
			if !matchOnly {
				return refuse("$", "also matches before a final line terminator in Java")
			}
			b.WriteString(`(?:\r\n|[` + lineTerminators + `])?\z`)
		case '(':
			if i+1 < len(p) && p[i+1] == '?' {
				if i+2 < len(p) && p[i+2] == ':' {
					b.WriteString("(?:")
					i += 2
					continue
				}
				return refuse("a (? group other than (?:", "is look-around, an atomic or named group or a flag, which RE2 lacks or reads otherwise")
			}
			b.WriteByte(c)
		case '*', '+', '?', '}':
			if i+1 < len(p) && p[i+1] == '+' {
				return refuse("a possessive quantifier ("+p[i:i+2]+")", "RE2 does not support")
			}
			b.WriteByte(c)
		case '{':
			if !quantifierRE.MatchString(p[i:]) {
				return refuse("a { that starts no quantifier", "is an error in Java")
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	if inClass {
		return refuse("an unclosed character class", "is an error in Java")
	}
	return b.String(), nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// regexArg translates the pattern argument of a regex function: it must
// be a string literal (so it can be checked before anything is built).
func regexArg(arg []tok, matchOnly bool) (string, error) {
	p, ok := stringLiteral(arg)
	if !ok {
		return "", refusal("the regular expression must be a string literal (it is checked for constructs whose meaning differs between Java and RE2)")
	}
	re, err := javaRegex(p, matchOnly)
	if err != nil {
		return "", err
	}
	return String(re), nil
}
