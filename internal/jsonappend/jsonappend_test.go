package jsonappend

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// encodingJSON is what the package must write: json.Marshal's bytes, or
// an Encoder's with SetEscapeHTML(false) less its newline.
func encodingJSON(v any, escapeHTML bool) ([]byte, error) {
	if escapeHTML {
		return json.Marshal(v)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

func checkValue(t *testing.T, v any) {
	t.Helper()
	for _, html := range []bool{true, false} {
		want, werr := encodingJSON(v, html)
		got, err := Value([]byte("prefix"), v, html)
		if (err != nil) != (werr != nil) {
			t.Fatalf("%#v (escapeHTML %v): error %v, encoding/json's %v", v, html, err, werr)
		}
		if werr != nil {
			continue
		}
		if !bytes.HasPrefix(got, []byte("prefix")) || string(got[6:]) != string(want) {
			t.Fatalf("%#v (escapeHTML %v): %s, encoding/json %s", v, html, got, want)
		}
	}
}

// TestValueMatchesEncodingJSON: every value kind, edge cases first, then
// random ones, in both escapings.
func TestValueMatchesEncodingJSON(t *testing.T) {
	vals := []any{nil, true, false, int64(-1), int64(math.MinInt64), int64(1) << 62, int32(-7), 42,
		"", "plain", "a\"b<c>d&e\\f", "\b\f\n\r\t\x00\x01\x1f\x7f", "é\u2028\u2029日本", "bad \xff\xfe utf-8 \xe2\x82",
		`{"type":"liked-songs","uri":"spotify:liked-songs:205df07a"}`,
		1.5, -0.0, 0.0, 1e21, 1e20, 1e-6, 1e-7, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64,
		float32(2.25), float32(1e21), float32(1e-7), float32(math.MaxFloat32), float32(0.1),
		math.NaN(), math.Inf(1), float32(math.Inf(-1)),
		[]byte("xy"), map[string]any{"b": 1, "a": "<"}, []any{int64(1), "x&y", nil}, json.Number("12.50"),
		time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 6, 1, 12, 3, 4, 500_000_000, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 6, 1, 12, 3, 4, 120_000, time.FixedZone("x", 3600)), time.UnixMicro(1717243384123456).UTC(), time.Time{}}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		vals = append(vals, time.UnixMicro(rng.Int64N(1<<52)-1<<51).UTC(), time.Unix(rng.Int64N(1<<34), rng.Int64N(1e9)).UTC(),
			math.Float64frombits(rng.Uint64()), math.Float32frombits(rng.Uint32()),
			rng.NormFloat64()*math.Pow(10, float64(rng.IntN(60)-30)), randomString(rng))
	}
	for _, v := range vals {
		checkValue(t, v)
	}
}

// randomString draws bytes mostly from the characters that need care.
func randomString(rng *rand.Rand) string {
	const pick = "ab\"\\<>&\x00\x1f\x7f\n\t é日\u2028\u2029\xff\xc3"
	b := make([]byte, rng.IntN(24))
	for i := range b {
		b[i] = pick[rng.IntN(len(pick))]
	}
	return string(b)
}

// FuzzString: any string, both escapings, is encoding/json's bytes.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\xff", "\u2028<&>", "\x00\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkValue(t, s)
	})
}
