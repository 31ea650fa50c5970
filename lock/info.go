package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
type LockInfo struct {
	CorrelationID   string    // correlationId: the holder's id
	AcquiredAt      time.Time // acquiredAt: when the holder created the lock
	LastRefreshedAt time.Time // lastRefreshedAt: the holder's last sign of life
	Owner           string    // owner: the holder's process (application id or host name)
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
	b.WriteByte('}')
	return b.Bytes()
}

// ParseLockInfo reads a lock file. Absent string fields read as "" and
// absent or unparsable timestamps as the zero time; content that is not a
// JSON object fails with an error wrapping ErrCorrupt.
func ParseLockInfo(data []byte) (LockInfo, error) {
	var raw struct {
		CorrelationID   *string `json:"correlationId"`
		AcquiredAt      *string `json:"acquiredAt"`
		LastRefreshedAt *string `json:"lastRefreshedAt"`
		Owner           *string `json:"owner"`
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
	return LockInfo{
		CorrelationID:   str(raw.CorrelationID),
		AcquiredAt:      at(raw.AcquiredAt),
		LastRefreshedAt: at(raw.LastRefreshedAt),
		Owner:           str(raw.Owner),
	}, nil
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
