package datafile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ariadne-go/ariadne/internal/pqrow"
)

// csvSource streams a CSV file as Spark's reader (univocity, enforceSchema)
// does: records are positional against the stored schema, the header line
// is skipped without matching its names, empty lines are skipped.
type csvSource struct {
	br     *bufio.Reader
	rc     io.Closer
	p      *Plan
	o      *options
	header bool  // a header line is still to be skipped
	rec    int64 // records read (after the header)
	eof    bool
	fields []csvField
	sb     strings.Builder
}

// csvField is one token: its text and whether it was quoted (an unquoted
// empty token is Spark's null, a quoted one its emptyValue).
type csvField struct {
	text   string
	quoted bool
}

// rowsPerContextCheck: rows between checks of ctx (a check is an atomic
// load; 1024 rows keep its cost negligible next to parsing).
const rowsPerContextCheck = 1024

func newCSVSource(br *bufio.Reader, rc io.Closer, p *Plan) *csvSource {
	return &csvSource{br: br, rc: rc, p: p, o: p.opts, header: p.opts.header}
}

func (s *csvSource) close() error { return s.rc.Close() }

// readLine returns the next physical line with its terminator.
func (s *csvSource) readLine() (string, error) {
	if s.eof {
		return "", io.EOF
	}
	line, err := s.br.ReadString('\n')
	if err == io.EOF {
		s.eof = true
		if line == "" {
			return "", io.EOF
		}
		return line, nil
	}
	return line, err
}

func trimEOL(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

func (s *csvSource) next(ctx context.Context) (pqrow.Row, error) {
	for {
		if s.rec%rowsPerContextCheck == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		fields, err := s.readRecord()
		if err != nil {
			return nil, err
		}
		if s.header {
			s.header = false
			continue
		}
		s.rec++
		row, keep, err := s.convert(fields)
		if err != nil {
			return nil, err
		}
		if keep {
			return row, nil
		}
	}
}

// readRecord returns the next record's tokens, skipping empty and comment
// lines. With multiLine a quoted token may span lines.
func (s *csvSource) readRecord() ([]csvField, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, s.readErr(err)
		}
		if trimEOL(line) == "" {
			continue
		}
		if s.o.comment != 0 {
			if r, _ := utf8.DecodeRuneInString(line); r == s.o.comment {
				continue
			}
		}
		for {
			fields, open := s.tokenize(line)
			if !open || !s.p.opts.multiLine {
				return fields, nil
			}
			more, err := s.readLine()
			if err == io.EOF {
				return fields, nil // unterminated quote at end of file: keep what we have
			}
			if err != nil {
				return nil, s.readErr(err)
			}
			line += more
		}
	}
}

func (s *csvSource) readErr(err error) error {
	if err == io.EOF || errors.Is(err, ErrCorruptFile) {
		return err
	}
	return fmt.Errorf("read: %w", err)
}

// tokenize splits one record. It reports open when the text ended inside a
// quoted token (more lines are needed in multiLine mode).
func (s *csvSource) tokenize(line string) (fields []csvField, open bool) {
	o := s.o
	body := trimEOL(line)
	if o.multiLine {
		body = line // quoted newlines are data; the final terminator is cut below
	}
	fields = s.fields[:0]
	i := 0
	end := len(body)
	atEOL := func(i int) bool {
		if i >= end {
			return true
		}
		rest := body[i:]
		return rest == "\n" || rest == "\r\n" || rest == "\r"
	}
	atSep := func(i int) bool { return strings.HasPrefix(body[i:], o.sep) }
	for {
		if o.ignoreLeading {
			for i < end && (body[i] == ' ' || body[i] == '\t') {
				i++
			}
		}
		r, w := utf8.DecodeRuneInString(body[i:])
		if o.quote != 0 && i < end && r == o.quote {
			i += w
			s.sb.Reset()
			closed := false
			for i < end {
				r, w := utf8.DecodeRuneInString(body[i:])
				if o.escape != 0 && r == o.escape && o.escape != o.quote && i+w < end {
					n, nw := utf8.DecodeRuneInString(body[i+w:])
					if n == o.quote || n == o.escape {
						s.sb.WriteRune(n)
						i += w + nw
						continue
					}
				}
				if r == o.quote {
					if i+w < end {
						if n, nw := utf8.DecodeRuneInString(body[i+w:]); n == o.quote {
							s.sb.WriteRune(n) // "" inside quotes is a quote
							i += w + nw
							continue
						}
					}
					i += w
					closed = true
					break
				}
				s.sb.WriteRune(r)
				i += w
			}
			if !closed {
				text := s.sb.String()
				if o.multiLine {
					return append(fields, csvField{text: text, quoted: true}), true
				}
				fields = append(fields, csvField{text: trimEOL(text), quoted: true})
				s.fields = fields
				return fields, false
			}
			// Characters between the closing quote and the separator are kept.
			for i < end && !atEOL(i) && !atSep(i) {
				s.sb.WriteByte(body[i])
				i++
			}
			text := s.sb.String()
			if o.ignoreTrailing {
				text = strings.TrimRight(text, " \t")
			}
			fields = append(fields, csvField{text: text, quoted: true})
		} else {
			j := i
			for j < end && !atEOL(j) && !atSep(j) {
				j++
			}
			text := body[i:j]
			if o.ignoreTrailing {
				text = strings.TrimRight(text, " \t")
			}
			fields = append(fields, csvField{text: text})
			i = j
		}
		if i < end && !atEOL(i) && atSep(i) {
			i += len(o.sep)
			continue
		}
		s.fields = fields
		return fields, false
	}
}

// convert turns tokens into a projected row. keep is false for a record
// DROPMALFORMED drops; FAILFAST returns a *RecordError.
func (s *csvSource) convert(fields []csvField) (row pqrow.Row, keep bool, err error) {
	p := s.p
	o := s.o
	var bad error
	if len(fields) != len(p.full.Fields) {
		bad = &RecordError{Record: s.rec, Err: fmt.Errorf("%d tokens for %d columns", len(fields), len(p.full.Fields))}
	}
	row = make(pqrow.Row, len(p.idx))
	for i, fi := range p.idx {
		if fi >= len(fields) {
			continue // missing trailing tokens are null
		}
		f := fields[fi]
		datum := f.text
		switch {
		case !f.quoted && datum == "":
			datum = o.nullValue
		case f.quoted && datum == "":
			datum = o.emptyValue
		}
		if datum == o.nullValue {
			continue
		}
		v, cerr := p.csvConv[i](datum)
		if cerr != nil {
			if bad == nil {
				bad = &RecordError{Record: s.rec, Column: p.proj.Fields[i].Name, Err: cerr}
			}
			continue
		}
		row[i] = v
	}
	if bad != nil {
		switch o.mode {
		case FailFast:
			return nil, false, bad
		case DropMalformed:
			return nil, false, nil
		}
	}
	return row, true, nil
}
