package datafile

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ariadne-go/ariadne/aerr"
)

// Mode is Spark's parse mode for malformed CSV and JSON records.
type Mode int

// The parse modes (option "mode", case-insensitive; PERMISSIVE when unset).
const (
	// Permissive turns a field that fails to convert into null (keeping the
	// rest of the record) and a record that cannot be parsed at all into a
	// row of nulls.
	Permissive Mode = iota
	// DropMalformed skips malformed records.
	DropMalformed
	// FailFast stops reading with a *RecordError (ErrMalformedRecord).
	FailFast
)

func (m Mode) String() string {
	switch m {
	case DropMalformed:
		return "DROPMALFORMED"
	case FailFast:
		return "FAILFAST"
	}
	return "PERMISSIVE"
}

// options are the parsed Spark read options. Spark's option names are
// case-insensitive; unknown options are ignored, as Spark ignores them.
type options struct {
	mode      Mode
	multiLine bool

	// CSV
	header         bool
	sep            string
	quote          rune // 0: no quoting
	escape         rune // 0: no escaping
	comment        rune // 0: no comment lines
	nullValue      string
	emptyValue     string
	ignoreLeading  bool
	ignoreTrailing bool
	nanValue       string
	positiveInf    string
	negativeInf    string

	// CSV and JSON
	loc          *time.Location
	timestampFmt *timePattern // nil: Spark's default pattern with the lenient fallback
	ntzFmt       *timePattern
	dateFmt      *timePattern
}

// parseOptions reads Spark read options. Invalid values are
// aerr.ErrInvalidArgument errors, as Spark fails the read for them.
func parseOptions(raw map[string]string) (*options, error) {
	o := &options{
		sep: ",", quote: '"', escape: '\\',
		nanValue: "NaN", positiveInf: "Inf", negativeInf: "-Inf",
		loc: time.UTC,
	}
	m := make(map[string]string, len(raw))
	for k, v := range raw {
		m[strings.ToLower(k)] = v
	}
	var err error
	boolOpt := func(name string, dst *bool) {
		v, ok := m[strings.ToLower(name)]
		if !ok || err != nil {
			return
		}
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			*dst = true
		case "false":
			*dst = false
		default:
			err = aerr.Invalid("%s flag can be true or false, got %q", name, v)
		}
	}
	boolOpt("header", &o.header)
	boolOpt("multiLine", &o.multiLine)
	boolOpt("ignoreLeadingWhiteSpace", &o.ignoreLeading)
	boolOpt("ignoreTrailingWhiteSpace", &o.ignoreTrailing)
	if err != nil {
		return nil, err
	}
	if v, ok := m["mode"]; ok {
		switch strings.ToUpper(v) {
		case "PERMISSIVE", "":
			o.mode = Permissive
		case "DROPMALFORMED":
			o.mode = DropMalformed
		case "FAILFAST":
			o.mode = FailFast
		default:
			// Spark falls back to PERMISSIVE for an unknown mode (with a
			// warning); so do we.
			o.mode = Permissive
		}
	}
	sep, ok := m["sep"]
	if !ok {
		sep, ok = m["delimiter"]
	}
	if ok {
		if o.sep, err = delimiter(sep); err != nil {
			return nil, err
		}
	}
	charOpt := func(name string, dst *rune) {
		v, ok := m[strings.ToLower(name)]
		if !ok || err != nil {
			return
		}
		switch utf8.RuneCountInString(v) {
		case 0:
			*dst = 0 // Spark: an empty quote/escape/comment turns it off (\u0000)
		case 1:
			*dst, _ = utf8.DecodeRuneInString(v)
		default:
			if v == `\u0000` {
				*dst = 0
				return
			}
			err = aerr.Invalid("%s cannot be more than one character, got %q", name, v)
		}
	}
	charOpt("quote", &o.quote)
	charOpt("escape", &o.escape)
	charOpt("comment", &o.comment)
	if err != nil {
		return nil, err
	}
	strOpt := func(name string, dst *string) {
		if v, ok := m[strings.ToLower(name)]; ok {
			*dst = v
		}
	}
	strOpt("nullValue", &o.nullValue)
	strOpt("emptyValue", &o.emptyValue)
	strOpt("nanValue", &o.nanValue)
	strOpt("positiveInf", &o.positiveInf)
	strOpt("negativeInf", &o.negativeInf)
	for _, name := range []string{"encoding", "charset"} {
		if v, ok := m[name]; ok {
			switch strings.ToUpper(strings.ReplaceAll(v, "_", "-")) {
			case "UTF-8", "UTF8", "US-ASCII", "ASCII":
			default:
				return nil, fmt.Errorf("%w: %s %q (only UTF-8 is read)", ErrUnsupported, name, v)
			}
		}
	}
	if tz, ok := m["timezone"]; ok {
		if o.loc, err = loadZone(tz); err != nil {
			return nil, aerr.Invalid("timeZone %q: %v", tz, err)
		}
	}
	patOpt := func(name string, dst **timePattern, kind patternKind) {
		v, ok := m[strings.ToLower(name)]
		if !ok || err != nil {
			return
		}
		p, perr := compilePattern(v, kind)
		if perr != nil {
			err = aerr.Invalid("%s %q: %v", name, v, perr)
			return
		}
		*dst = p
	}
	patOpt("timestampFormat", &o.timestampFmt, patTimestamp)
	patOpt("timestampNTZFormat", &o.ntzFmt, patTimestamp)
	patOpt("dateFormat", &o.dateFmt, patDate)
	if err != nil {
		return nil, err
	}
	return o, nil
}

// delimiter decodes Spark's sep option: a literal string, or one of the
// escapes \t, \n, \r, \\, \", \', \b, \f, \u0000 that CSVExprUtils accepts.
func delimiter(s string) (string, error) {
	if s == "" {
		return "", aerr.Invalid("Delimiter cannot be empty string")
	}
	switch s {
	case `\t`:
		return "\t", nil
	case `\n`:
		return "\n", nil
	case `\r`:
		return "\r", nil
	case `\b`:
		return "\b", nil
	case `\f`:
		return "\f", nil
	case `\"`:
		return `"`, nil
	case `\'`:
		return "'", nil
	case `\\`:
		return `\`, nil
	case `\u0000`:
		return "\x00", nil
	case `\`:
		return "", aerr.Invalid("Single backslash is prohibited. It has special meaning as beginning of an escape sequence.")
	}
	if strings.Contains(s, "\n") || strings.Contains(s, "\r") {
		return "", aerr.Invalid("Delimiter %q cannot contain a line separator", s)
	}
	return s, nil
}
