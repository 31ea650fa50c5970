package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"
)

// The stderr lines of --json that are neither progress nor notices (see
// progress.go): a command's closing summary, join's --explain, and the
// server's log, all JSON lines {"event": ...} in the vocabulary of
// docs/cli-json.md.

// summary tells the user a command's closing counts on stderr: text as
// is, or with --json a JSON line {"event": event, "source": source} plus
// fields (snake_case keys, numbers as numbers).
func (g *globals) summary(event, source, text string, fields map[string]any) {
	if !g.jsonOut {
		fmt.Fprintln(g.env.Stderr, text)
		return
	}
	m := make(map[string]any, len(fields)+2)
	for k, v := range fields {
		m[k] = v
	}
	m["event"], m["source"] = event, source
	if b, err := json.Marshal(m); err == nil {
		g.env.Stderr.Write(append(b, '\n'))
	}
}

// messages returns the writer a library's progress text goes to: stderr,
// or with --json a writer that turns each line into a notice of source.
func (g *globals) messages(source string) io.Writer {
	if !g.jsonOut {
		return g.env.Stderr
	}
	return &noticeWriter{g: g, source: source}
}

// noticeWriter turns the text written to it into notices, one per line
// (a line ends at \n or \r; blank lines are dropped).
type noticeWriter struct {
	mu     sync.Mutex
	g      *globals
	source string
	buf    []byte
}

func (w *noticeWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexAny(w.buf, "\r\n")
		if i < 0 {
			return len(p), nil
		}
		if line := strings.TrimSpace(string(w.buf[:i])); line != "" {
			w.g.notice(w.source, line)
		}
		w.buf = w.buf[i+1:]
	}
}

// newEventLogHandler is the server's log with --json: one JSON line per
// record, {"event": "log", "time", "level", "message", attributes...}:
// the time in RFC 3339 UTC, the level in lower case, durations as
// numbers of seconds under KEY_seconds (never Go's nanoseconds).
func newEventLogHandler(w io.Writer) slog.Handler {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 {
			switch a.Key {
			case slog.TimeKey:
				return slog.String("time", a.Value.Time().UTC().Format(time.RFC3339Nano))
			case slog.LevelKey:
				return slog.String("level", strings.ToLower(a.Value.String()))
			case slog.MessageKey:
				return slog.String("message", a.Value.String())
			}
		}
		if a.Value.Kind() == slog.KindDuration {
			s := math.Round(a.Value.Duration().Seconds()*1000) / 1000
			return slog.Float64(a.Key+"_seconds", s)
		}
		return a
	}})
	return h.WithAttrs([]slog.Attr{slog.String("event", "log")})
}
