// Package jsonappend appends Go values to byte slices exactly as
// encoding/json encodes them, without its reflection, for the streams of
// rows the server and the command line write: strings, integers, floats,
// booleans and UTC times directly, anything else through encoding/json.
// A row of a hot key's lookup is a handful of such values, and millions of
// rows were spending most of their time in encoding/json's per-value
// reflection and map key sorting.
//
// Both of encoding/json's string escapings are offered: HTML-escaped
// (json.Marshal's) and not (an Encoder with SetEscapeHTML(false)).
package jsonappend

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Value appends v as encoding/json writes it: as json.Marshal does with
// escapeHTML, as an Encoder with SetEscapeHTML(false) does without (less
// the Encoder's newline). Its errors are encoding/json's (a NaN, an
// unsupported type).
func Value(b []byte, v any, escapeHTML bool) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case string:
		return String(b, x, escapeHTML), nil
	case float64:
		if c, ok := appendFloat(b, x, 64); ok {
			return c, nil
		}
	case float32:
		if c, ok := appendFloat(b, float64(x), 32); ok {
			return c, nil
		}
	case time.Time:
		// MarshalJSON's bytes: RFC 3339 with sub-second precision, quoted.
		if c, ok := appendUTC(b, x); ok {
			return c, nil
		}
	}
	return marshal(b, v, escapeHTML)
}

// marshal appends encoding/json's encoding of v.
func marshal(b []byte, v any, escapeHTML bool) ([]byte, error) {
	if escapeHTML {
		j, err := json.Marshal(v)
		return append(b, j...), err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// String appends s as a JSON string the way encoding/json writes it:
// quotes, backslashes and control characters escaped (\b \f \n \r \t by
// name, the others as \u00XX), invalid UTF-8 as \ufffd, U+2028 and U+2029
// always escaped, and with escapeHTML also <, > and &.
func String(b []byte, s string, escapeHTML bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] == 2 || plain[c] == 1 && !escapeHTML {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// plain says of each ASCII byte whether it is written as is inside a JSON
// string: 2 always, 1 only without HTML escaping (<, >, &), 0 never
// (control characters, quote, backslash). Bytes from 0x80 are UTF-8's.
var plain = func() (t [utf8.RuneSelf]uint8) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = 2
	}
	t['"'], t['\\'] = 0, 0
	t['<'], t['>'], t['&'] = 1, 1, 1
	return t
}()

// appendFloat appends f as encoding/json does (ES6 number formatting: %f
// but exponents beyond 1e21 and below 1e-6, unpadded); false for NaN and
// infinities, which encoding/json refuses.
func appendFloat(b []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// e-09 → e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendUTC appends a UTC time of years 0–9999 as MarshalJSON does
// ("2006-01-02T15:04:05.999999999Z", trailing zeros of the fraction cut),
// without the general layout interpreter; false for other times.
func appendUTC(b []byte, t time.Time) ([]byte, bool) {
	if t.Location() != time.UTC {
		return b, false
	}
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return b, false
	}
	h, mi, s := t.Clock()
	b = append(b, '"')
	b = appendDigits(b, y, 4)
	b = append(b, '-')
	b = appendDigits(b, int(mo), 2)
	b = append(b, '-')
	b = appendDigits(b, d, 2)
	b = append(b, 'T')
	b = appendDigits(b, h, 2)
	b = append(b, ':')
	b = appendDigits(b, mi, 2)
	b = append(b, ':')
	b = appendDigits(b, s, 2)
	if ns := t.Nanosecond(); ns != 0 {
		w := 9
		for ns%10 == 0 {
			ns /= 10
			w--
		}
		b = append(b, '.')
		b = appendDigits(b, ns, w)
	}
	return append(b, 'Z', '"'), true
}

// appendDigits appends v (≥ 0) zero-padded to w digits.
func appendDigits(b []byte, v, w int) []byte {
	var buf [9]byte
	for i := w - 1; i >= 0; i-- {
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, buf[:w]...)
}
