package server

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendValueMatchesEncodingJSON: the hand-written encodings (UTC
// times above all: fractions with trailing zeros, none, years at the
// edges; and other zones, which fall back) are encoding/json's bytes.
func TestAppendValueMatchesEncodingJSON(t *testing.T) {
	vals := []any{nil, true, false, int64(-1), int64(1) << 62, "a\"b<", "file:///tmp/lake/date=2024-06-01/part-00001.parquet", "é\u2028\x01", "", 1.5, float32(2.25), []byte("xy"),
		time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 6, 1, 12, 3, 4, 500_000_000, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(2024, 6, 1, 12, 3, 4, 120_000, time.FixedZone("x", 3600)), time.UnixMicro(1717243384123456).UTC()}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		vals = append(vals, time.UnixMicro(rng.Int64N(1<<52)-1<<51).UTC(), time.Unix(rng.Int64N(1<<34), rng.Int64N(1e9)).UTC())
	}
	for _, v := range vals {
		got, err := appendValue(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("%#v: %s, encoding/json %s", v, got, want)
		}
	}
}
