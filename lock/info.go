package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/metadata"
)

// LockInfo is the content of a lock file (§2.6, §4.9): a JSON object of four
// strings, written compact in this field order, e.g.
//
//	{"correlationId":"<uuid>","acquiredAt":"2026-01-01T00:00:00Z","lastRefreshedAt":"2026-01-01T00:00:00Z","owner":"local-1700000000000"}
//
// Timestamps are rendered as Java's Instant.toString (FormatInstant) and read
// in any RFC 3339 form. A timestamp that is absent or unparsable reads as
// the zero time, which makes the lock stale.
//
// A heartbeating holder (Config.HeartbeatInterval) appends its heartbeat
// interval and its process identity after the four fields:
//
//	…,"owner":"h","heartbeatSeconds":2,"host":"h","pid":4242,"pidNamespace":"<boot id>/pid:[4026531836]"}
//
// The Spark library reads lock files with Gson's reflective adapter, which
// skips names its LockInfo class does not declare, and it never rewrites a
// lock it does not hold, so these fields are invisible to it. Without them
// the lock is one the Spark library could have written and follows its
// rules only.
type LockInfo struct {
	CorrelationID   string    // correlationId: the holder's id
	AcquiredAt      time.Time // acquiredAt: when the holder created the lock
	LastRefreshedAt time.Time // lastRefreshedAt: the holder's last sign of life
	Owner           string    // owner: the holder's process (application id or host name)

	// Heartbeat (heartbeatSeconds, whole seconds) is how often the holder
	// promises to refresh the lock; zero means it makes no such promise
	// (the Spark library, or a holder without WithHeartbeat).
	Heartbeat time.Duration
	// Host (host) is the holder's host name, PID (pid) its process id and
	// PIDNamespace (pidNamespace) names the space its pid is valid in (on
	// Linux the boot id and the pid namespace), so that a waiter can tell
	// whether it can see the holder's process. Empty or zero when unknown.
	Host         string
	PID          int
	PIDNamespace string
}

// ErrCorrupt is the cause of reading a lock file that is not a LockInfo:
// empty, invalid JSON, JSON null or not an object.
var ErrCorrupt = errors.New("lock: corrupt lock file")

// Marshal renders info as the Spark library writes a lock file (Gson,
// compact, HTML-safe escaping).
func (info LockInfo) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString(`{"correlationId":`)
	b.WriteString(metadata.QuoteGson(info.CorrelationID))
	b.WriteString(`,"acquiredAt":`)
	b.WriteString(metadata.QuoteGson(FormatInstant(info.AcquiredAt)))
	b.WriteString(`,"lastRefreshedAt":`)
	b.WriteString(metadata.QuoteGson(FormatInstant(info.LastRefreshedAt)))
	b.WriteString(`,"owner":`)
	b.WriteString(metadata.QuoteGson(info.Owner))
	if secs := wholeSeconds(info.Heartbeat); secs > 0 {
		b.WriteString(`,"heartbeatSeconds":`)
		b.WriteString(strconv.FormatInt(secs, 10))
	}
	if info.Host != "" {
		b.WriteString(`,"host":`)
		b.WriteString(metadata.QuoteGson(info.Host))
	}
	if info.PID > 0 {
		b.WriteString(`,"pid":`)
		b.WriteString(strconv.Itoa(info.PID))
	}
	if info.PIDNamespace != "" {
		b.WriteString(`,"pidNamespace":`)
		b.WriteString(metadata.QuoteGson(info.PIDNamespace))
	}
	b.WriteByte('}')
	return b.Bytes()
}

// ParseLockInfo reads a lock file. Absent string fields read as "" and
// absent or unparsable timestamps as the zero time; content that is not a
// JSON object fails with an error wrapping ErrCorrupt. The heartbeat and
// process fields are optional and read leniently: a value of the wrong
// type or out of range reads as absent (a plain Spark lock), never as
// corrupt, since the Spark library accepts such a file too.
func ParseLockInfo(data []byte) (LockInfo, error) {
	var raw struct {
		CorrelationID   *string         `json:"correlationId"`
		AcquiredAt      *string         `json:"acquiredAt"`
		LastRefreshedAt *string         `json:"lastRefreshedAt"`
		Owner           *string         `json:"owner"`
		Heartbeat       json.RawMessage `json:"heartbeatSeconds"`
		Host            json.RawMessage `json:"host"`
		PID             json.RawMessage `json:"pid"`
		PIDNamespace    json.RawMessage `json:"pidNamespace"`
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return LockInfo{}, fmt.Errorf("%w: not a JSON object", ErrCorrupt)
	}
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return LockInfo{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	at := func(p *string) time.Time {
		t, err := ParseInstant(str(p))
		if err != nil {
			return time.Time{}
		}
		return t
	}
	// maxHeartbeatSeconds keeps a hostile value from overflowing a
	// Duration; a day is far beyond any useful heartbeat.
	const maxHeartbeatSeconds = 86400
	info := LockInfo{
		CorrelationID:   str(raw.CorrelationID),
		AcquiredAt:      at(raw.AcquiredAt),
		LastRefreshedAt: at(raw.LastRefreshedAt),
		Owner:           str(raw.Owner),
		Host:            optString(raw.Host),
		PIDNamespace:    optString(raw.PIDNamespace),
	}
	if n, ok := optInt(raw.Heartbeat); ok && n > 0 && n <= maxHeartbeatSeconds {
		info.Heartbeat = time.Duration(n) * time.Second
	}
	if n, ok := optInt(raw.PID); ok && n > 0 && n <= math.MaxInt32 {
		info.PID = int(n)
	}
	return info, nil
}

// optString reads an optional JSON string; anything else reads as "".
func optString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// optInt reads an optional JSON integer; ok is false for anything else.
func optInt(raw json.RawMessage) (int64, bool) {
	var n int64
	if len(raw) == 0 || json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	return n, true
}

// FormatInstant renders t in UTC as Java's Instant.toString does: ISO-8601
// with seconds always present, a fraction of 0, 3, 6 or 9 digits (the
// shortest of these that is exact) and a "Z", e.g. "2024-01-15T10:00:00Z",
// "2024-01-15T10:00:00.120Z", "2024-01-15T10:00:00.123456Z".
func FormatInstant(t time.Time) string {
	t = t.UTC()
	s := t.Format("2006-01-02T15:04:05")
	ns := t.Nanosecond()
	switch {
	case ns == 0:
	case ns%1_000_000 == 0:
		s += fmt.Sprintf(".%03d", ns/1_000_000)
	case ns%1_000 == 0:
		s += fmt.Sprintf(".%06d", ns/1_000)
	default:
		s += fmt.Sprintf(".%09d", ns)
	}
	return s + "Z"
}

// ParseInstant reads an RFC 3339 timestamp with any fraction and offset
// (Java's Instant.parse accepts the "Z" forms FormatInstant writes; offsets
// are accepted too, for lock files written by other tools).
func ParseInstant(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		// Lowercase designators are valid RFC 3339.
		if u := strings.ToUpper(s); u != s {
			if t2, err2 := time.Parse(time.RFC3339Nano, u); err2 == nil {
				return t2.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("lock: timestamp %s: %w", strconv.Quote(s), err)
	}
	return t.UTC(), nil
}
