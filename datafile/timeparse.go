package datafile

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// This file parses dates and timestamps as Spark's CSV and JSON readers do:
// with a user pattern (Java DateTimeFormatter letters, the common subset)
// when timestampFormat/dateFormat is set, else leniently like Spark's
// DateTimeUtils.stringToTimestamp / stringToDate, which accept everything
// the default patterns accept plus "2024-01-15 10:00:00" style values.

var errBadTime = errors.New("cannot parse date/time")

// loadZone resolves a Spark time zone id: a region ("Europe/Paris"), "UTC",
// "Z", "GMT", or an offset ("+01:00", "-0530", "UTC+2", "GMT-08:00").
func loadZone(s string) (*time.Location, error) {
	s = strings.TrimSpace(s)
	switch strings.ToUpper(s) {
	case "Z", "UTC", "GMT", "UT", "":
		return time.UTC, nil
	}
	up := strings.ToUpper(s)
	for _, p := range []string{"UTC", "GMT", "UT"} {
		if strings.HasPrefix(up, p) && len(s) > len(p) && (s[len(p)] == '+' || s[len(p)] == '-') {
			s = s[len(p):]
			break
		}
	}
	if s[0] == '+' || s[0] == '-' {
		off, ok := parseOffset(s)
		if !ok {
			return nil, fmt.Errorf("invalid zone offset %q", s)
		}
		return time.FixedZone(s, off), nil
	}
	return time.LoadLocation(s)
}

// parseOffset parses ±h, ±hh, ±hhmm, ±hh:mm, ±hh:mm:ss into seconds.
func parseOffset(s string) (int, bool) {
	if len(s) < 2 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	body := strings.ReplaceAll(s[1:], ":", "")
	for _, c := range body {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	var h, m, sec int
	switch len(body) {
	case 1, 2:
		h, _ = strconv.Atoi(body)
	case 4:
		h, _ = strconv.Atoi(body[:2])
		m, _ = strconv.Atoi(body[2:])
	case 6:
		h, _ = strconv.Atoi(body[:2])
		m, _ = strconv.Atoi(body[2:4])
		sec, _ = strconv.Atoi(body[4:])
	default:
		return 0, false
	}
	if h > 18 || m > 59 || sec > 59 {
		return 0, false
	}
	return sign * (h*3600 + m*60 + sec), true
}

// digits reads between min and max ASCII digits from s at i.
func digits(s string, i, min, max int) (v, next int, ok bool) {
	j := i
	for j < len(s) && j-i < max && s[j] >= '0' && s[j] <= '9' {
		v = v*10 + int(s[j]-'0')
		j++
	}
	return v, j, j-i >= min
}

// parseLenientDate is Spark's stringToDate: "yyyy", "yyyy-[m]m",
// "yyyy-[m]m-[d]d", optionally followed by ' ' or 'T' and anything.
func parseLenientDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	y, i, ok := digits(s, 0, 4, 7)
	if !ok {
		return time.Time{}, errBadTime
	}
	mo, d := 1, 1
	if i < len(s) && s[i] == '-' {
		if mo, i, ok = digits(s, i+1, 1, 2); !ok {
			return time.Time{}, errBadTime
		}
		if i < len(s) && s[i] == '-' {
			if d, i, ok = digits(s, i+1, 1, 2); !ok {
				return time.Time{}, errBadTime
			}
		}
	}
	if i < len(s) && s[i] != ' ' && s[i] != 'T' {
		return time.Time{}, errBadTime
	}
	return makeDate(y, mo, d)
}

func makeDate(y, mo, d int) (time.Time, error) {
	if mo < 1 || mo > 12 || d < 1 || d > 31 {
		return time.Time{}, errBadTime
	}
	t := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d { // 2024-02-30 does not normalise
		return time.Time{}, errBadTime
	}
	return t, nil
}

// parseLenientTimestamp is Spark's stringToTimestamp:
// yyyy[-[m]m[-[d]d]][( |T)[h]h:[m]m[:[s]s[.fraction]]][zone], the zone being
// Z, ±hh[:mm], UTC/GMT[±offset] or a region id, optionally after a space.
// Without a zone the value is wall-clock time in loc. With ntz set a zone is
// an error and the result is the wall clock in UTC.
func parseLenientTimestamp(s string, loc *time.Location, ntz bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	y, i, ok := digits(s, 0, 4, 7)
	if !ok {
		return time.Time{}, errBadTime
	}
	mo, d := 1, 1
	var h, mi, sec, nanos int
	if i < len(s) && s[i] == '-' {
		if mo, i, ok = digits(s, i+1, 1, 2); !ok {
			return time.Time{}, errBadTime
		}
		if i < len(s) && s[i] == '-' {
			if d, i, ok = digits(s, i+1, 1, 2); !ok {
				return time.Time{}, errBadTime
			}
		}
	}
	if i < len(s) && (s[i] == ' ' || s[i] == 'T') && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
		if h, i, ok = digits(s, i+1, 1, 2); !ok || i >= len(s) || s[i] != ':' {
			return time.Time{}, errBadTime
		}
		if mi, i, ok = digits(s, i+1, 1, 2); !ok {
			return time.Time{}, errBadTime
		}
		if i < len(s) && s[i] == ':' {
			if sec, i, ok = digits(s, i+1, 1, 2); !ok {
				return time.Time{}, errBadTime
			}
			if i < len(s) && s[i] == '.' {
				j := i + 1
				frac := 0
				n := 0
				for j < len(s) && s[j] >= '0' && s[j] <= '9' {
					if n < 9 {
						frac = frac*10 + int(s[j]-'0')
						n++
					}
					j++
				}
				for k := n; k < 9; k++ {
					frac *= 10
				}
				nanos = frac / 1000 * 1000 // microsecond precision, truncated
				i = j
			}
		}
	} else if i < len(s) && s[i] == 'T' && i+1 == len(s) {
		i++
	}
	zone := loc
	if rest := strings.TrimSpace(s[i:]); rest != "" {
		if ntz {
			return time.Time{}, errBadTime
		}
		z, err := loadZone(rest)
		if err != nil {
			return time.Time{}, errBadTime
		}
		zone = z
	} else if i < len(s) {
		return time.Time{}, errBadTime
	}
	if h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, errBadTime
	}
	if _, err := makeDate(y, mo, d); err != nil {
		return time.Time{}, err
	}
	if ntz {
		zone = time.UTC
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, nanos, zone).UTC(), nil
}

// patternKind says whether a pattern is for dates or timestamps.
type patternKind int

const (
	patDate patternKind = iota
	patTimestamp
)

// A timePattern is a compiled Java DateTimeFormatter pattern (the common
// subset: y M d H h m s S a E X x Z z V O, 'literals' and [optional]
// sections), matched with a regular expression.
type timePattern struct {
	src    string
	re     *regexp.Regexp
	fields []byte // pattern letter of each capture group, in order
	widths []int  // letter count of each group
}

var monthNames = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}

// compilePattern compiles a Java date-time pattern. Time fields in a date
// pattern are accepted and ignored, as Spark does; kind is kept for the
// messages and future checks.
func compilePattern(p string, kind patternKind) (*timePattern, error) {
	_ = kind
	tp := &timePattern{src: p}
	var b strings.Builder
	b.WriteString("^")
	depth := 0
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			j := i + 1
			var lit strings.Builder
			for {
				if j >= len(p) {
					return nil, fmt.Errorf("unterminated quote")
				}
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						lit.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				lit.WriteByte(p[j])
				j++
			}
			if j == i+1 {
				lit.WriteByte('\'') // '' is a quote
			}
			b.WriteString(regexp.QuoteMeta(lit.String()))
			i = j + 1
			continue
		case c == '[':
			b.WriteString("(?:")
			depth++
		case c == ']':
			if depth == 0 {
				return nil, fmt.Errorf("unbalanced ]")
			}
			b.WriteString(")?")
			depth--
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			n := 1
			for i+n < len(p) && p[i+n] == c {
				n++
			}
			var re string
			switch c {
			case 'y', 'u':
				switch n {
				case 2:
					re = `(\d{2})`
				default:
					re = `([+-]?\d{4,9})`
				}
			case 'M', 'L':
				switch {
				case n >= 4:
					re = `([A-Za-z]+)`
				case n == 3:
					re = `([A-Za-z]{3})`
				case n == 2:
					re = `(\d{2})`
				default:
					re = `(\d{1,2})`
				}
			case 'd', 'H', 'h', 'm', 's', 'k', 'K':
				if n == 2 {
					re = `(\d{2})`
				} else {
					re = `(\d{1,2})`
				}
			case 'D':
				re = `(\d{1,3})`
			case 'S':
				re = fmt.Sprintf(`(\d{%d})`, n)
			case 'a':
				re = `([AaPp][Mm])`
			case 'E':
				re = `([A-Za-z]+)`
			case 'X', 'x', 'Z', 'O':
				re = `(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?|(?:GMT|UTC)(?:[+-]\d{1,2}(?::?\d{2})?)?)`
			case 'z', 'V':
				re = `([A-Za-z][A-Za-z0-9_/+\-]*)`
			default:
				return nil, fmt.Errorf("unsupported pattern letter %q", c)
			}
			b.WriteString(re)
			tp.fields = append(tp.fields, c)
			tp.widths = append(tp.widths, n)
			i += n
			continue
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
		i++
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced [")
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	tp.re = re
	return tp, nil
}

// parse parses s with the pattern. Fields missing from the pattern default
// to the start of their range (year 1970, January, day 1, midnight). A
// parsed zone overrides loc; with ntz a zone is ignored (wall clock).
func (tp *timePattern) parse(s string, loc *time.Location, ntz bool) (time.Time, error) {
	m := tp.re.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, fmt.Errorf("%w: %q does not match %q", errBadTime, s, tp.src)
	}
	y, mo, d, h, mi, sec, nanos := 1970, 1, 1, 0, 0, 0, 0
	pm, hasAmPm := false, false
	zone := loc
	for gi, f := range tp.fields {
		v := m[gi+1]
		if v == "" {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(v, "+"))
		switch f {
		case 'y', 'u':
			y = n
			if tp.widths[gi] == 2 {
				y = 2000 + n
			}
		case 'M', 'L':
			if tp.widths[gi] >= 3 {
				n = 0
				lv := strings.ToLower(v)
				for k, name := range monthNames {
					if lv == name || (tp.widths[gi] == 3 && lv == name[:3]) {
						n = k + 1
					}
				}
			}
			mo = n
		case 'd':
			d = n
		case 'H', 'k':
			h = n % 24
		case 'h', 'K':
			h = n % 12
		case 'm':
			mi = n
		case 's':
			sec = n
		case 'S':
			for k := len(v); k < 9; k++ {
				n *= 10
			}
			nanos = n / 1000 * 1000
		case 'a':
			hasAmPm, pm = true, strings.EqualFold(v, "pm")
		case 'X', 'x', 'Z', 'O', 'z', 'V':
			z, err := loadZone(v)
			if err != nil {
				return time.Time{}, fmt.Errorf("%w: zone %q", errBadTime, v)
			}
			zone = z
		}
	}
	if hasAmPm && pm {
		h += 12
	}
	if _, err := makeDate(y, mo, d); err != nil {
		return time.Time{}, err
	}
	if h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, errBadTime
	}
	if ntz {
		zone = time.UTC
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, nanos, zone).UTC(), nil
}

// timeParsers turns the options into the three string → time functions.
type timeParsers struct{ o *options }

func (tp timeParsers) timestamp(s string) (time.Time, error) {
	if tp.o.timestampFmt != nil {
		return tp.o.timestampFmt.parse(s, tp.o.loc, false)
	}
	return parseLenientTimestamp(s, tp.o.loc, false)
}

func (tp timeParsers) timestampNTZ(s string) (time.Time, error) {
	if tp.o.ntzFmt != nil {
		return tp.o.ntzFmt.parse(s, time.UTC, true)
	}
	if tp.o.timestampFmt != nil {
		if t, err := tp.o.timestampFmt.parse(s, time.UTC, true); err == nil {
			return t, nil
		}
	}
	return parseLenientTimestamp(s, time.UTC, true)
}

func (tp timeParsers) date(s string) (time.Time, error) {
	if tp.o.dateFmt != nil {
		t, err := tp.o.dateFmt.parse(s, time.UTC, true)
		if err != nil {
			return time.Time{}, err
		}
		y, mo, d := t.Date()
		return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC), nil
	}
	return parseLenientDate(s)
}
