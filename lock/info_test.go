package lock

import (
	"errors"
	"testing"
	"time"
)

func TestFormatInstant(t *testing.T) {
	base := time.Date(2024, 1, 15, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{base, "2024-01-15T10:00:00Z"},
		{base.Add(123 * time.Millisecond), "2024-01-15T10:00:00.123Z"},
		{base.Add(120 * time.Millisecond), "2024-01-15T10:00:00.120Z"},
		{base.Add(123456 * time.Microsecond), "2024-01-15T10:00:00.123456Z"},
		{base.Add(100 * time.Microsecond), "2024-01-15T10:00:00.000100Z"},
		{base.Add(123456789), "2024-01-15T10:00:00.123456789Z"},
		{base.Add(1), "2024-01-15T10:00:00.000000001Z"},
		{base.In(time.FixedZone("CET", 3600)), "2024-01-15T10:00:00Z"}, // always UTC
	} {
		if got := FormatInstant(tc.t); got != tc.want {
			t.Errorf("FormatInstant(%v) = %s, want %s", tc.t, got, tc.want)
		}
		back, err := ParseInstant(tc.want)
		if err != nil || !back.Equal(tc.t) {
			t.Errorf("ParseInstant(%s) = %v, %v", tc.want, back, err)
		}
	}
	for _, s := range []string{"2024-01-15T11:00:00+01:00", "2024-01-15t10:00:00z", "2024-01-15T10:00:00.000Z"} {
		if got, err := ParseInstant(s); err != nil || !got.Equal(base) {
			t.Errorf("ParseInstant(%s) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "2024-01-15", "2024-01-15 10:00:00", "yesterday"} {
		if _, err := ParseInstant(s); err == nil {
			t.Errorf("ParseInstant(%q) succeeded", s)
		}
	}
}

func TestLockInfoJSON(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	info := LockInfo{CorrelationID: "id<1>", AcquiredAt: at, LastRefreshedAt: at.Add(1500 * time.Millisecond), Owner: "local-1700000000000"}
	const want = `{"correlationId":"id\u003c1\u003e","acquiredAt":"2026-01-01T00:00:00Z","lastRefreshedAt":"2026-01-01T00:00:01.500Z","owner":"local-1700000000000"}`
	if got := string(info.Marshal()); got != want {
		t.Fatalf("Marshal = %s\nwant %s", got, want)
	}
	back, err := ParseLockInfo([]byte(want))
	if err != nil || back.CorrelationID != info.CorrelationID || !back.AcquiredAt.Equal(info.AcquiredAt) ||
		!back.LastRefreshedAt.Equal(info.LastRefreshedAt) || back.Owner != info.Owner {
		t.Fatalf("ParseLockInfo = %+v, %v", back, err)
	}
	for _, bad := range []string{"", "  ", "null", "[]", `"x"`, "{", `{"correlationId":1}`} {
		if _, err := ParseLockInfo([]byte(bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ParseLockInfo(%q): err = %v, want ErrCorrupt", bad, err)
		}
	}
	partial, err := ParseLockInfo([]byte(`{"owner":"o","lastRefreshedAt":"garbage","extra":true}`))
	if err != nil || partial.CorrelationID != "" || !partial.LastRefreshedAt.IsZero() || partial.Owner != "o" {
		t.Errorf("partial = %+v, %v", partial, err)
	}
}
