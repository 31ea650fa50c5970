package lock

import "testing"

// FuzzParseLockInfo: lock files of any content never panic; a refusal is
// ErrCorrupt.
func FuzzParseLockInfo(f *testing.F) {
	for _, s := range []string{
		`{"correlationId":"c1","acquiredAt":"2024-06-01T00:00:00Z","lastRefreshedAt":"2024-06-01T00:00:10Z","owner":"host:1"}`,
		`{"correlationId":"c1","acquiredAt":"2024-06-01T00:00:00.123456789Z","heartbeatMillis":2000,"pid":12,"host":"h","bootId":"b"}`,
		`{"acquiredAt": 5}`, `[]`, `null`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseLockInfo(data)
	})
}
