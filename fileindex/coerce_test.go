package fileindex

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/bloom"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// TestInKeys pins IN coercion: whether a literal matches an index value of a
// column type, as Spark 3.5 decides `value IN (literals)`.
func TestInKeys(t *testing.T) {
	day := time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC)
	at := time.Date(2024, 1, 15, 10, 0, 0, 0, time.UTC)
	dec := &schema.Decimal{Precision: 10, Scale: 2}
	for _, tc := range []struct {
		t     schema.Type
		value any   // the index value
		lits  []any // the query values
		match bool
		cast  bool // relation form
	}{
		{schema.Integer, int32(3), []any{3}, true, false},
		{schema.Integer, int32(3), []any{int64(3)}, true, false},
		{schema.Integer, int32(3), []any{"3"}, true, false},
		{schema.Integer, int32(3), []any{"03"}, false, false},
		{schema.Integer, int32(3), []any{"03"}, true, true},
		{schema.Integer, int32(3), []any{" 3 "}, true, true},
		{schema.Integer, int32(3), []any{3.0}, true, false},
		{schema.Integer, int32(3), []any{3.5}, false, false},
		{schema.Integer, int32(3), []any{"x", 3}, true, false},    // text "3"
		{schema.Integer, int32(3), []any{"x", 3.0}, false, false}, // text "3.0"
		{schema.Integer, int32(3), []any{int64(1) << 40}, false, false},
		{schema.Long, int64(1) << 40, []any{int64(1) << 40}, true, false},
		{schema.Byte, int8(-3), []any{-3}, true, false},
		{schema.Double, 4.0, []any{4}, true, false},
		{schema.Double, 4.5, []any{"4.5"}, true, false},
		{schema.Double, 4.5, []any{"4.50"}, false, false},
		{schema.Double, 4.5, []any{float32(4.5)}, true, false},
		{schema.Double, math.NaN(), []any{math.NaN()}, true, false},
		{schema.Double, math.Copysign(0, -1), []any{0}, true, false},
		{schema.Double, 1e10, []any{"1.0E10"}, true, false},
		{schema.Float, float32(0.1), []any{0.1}, false, false},
		{schema.Float, float32(0.5), []any{0.5}, true, false},
		{schema.Float, float32(2), []any{2}, true, false},
		{dec, pqrow.NewDecimal(150, 2), []any{1.5}, true, false},
		{dec, pqrow.NewDecimal(150, 2), []any{pqrow.NewDecimal(15, 1)}, true, false},
		{dec, pqrow.NewDecimal(150, 2), []any{"1.50"}, true, false},
		{dec, pqrow.NewDecimal(150, 2), []any{"1.5"}, false, false},
		{dec, pqrow.NewDecimal(300, 2), []any{3}, true, false},
		{schema.String, "3", []any{3}, true, false},
		{schema.String, "4.0", []any{4.0}, true, false},
		{schema.String, "a", []any{"a"}, true, false},
		{schema.Date, day, []any{day}, true, false},
		{schema.Date, day, []any{"2024-01-15"}, true, false},
		{schema.Date, day, []any{at}, false, false},
		{schema.Timestamp, at, []any{at}, true, false},
		{schema.Timestamp, at, []any{"2024-01-15 10:00:00"}, true, false},
		{schema.Timestamp, at, []any{"2024-01-15 10:00:00.0"}, false, false},
		{schema.Boolean, true, []any{true}, true, false},
		{schema.Binary, []byte("ab"), []any{[]byte("ab")}, true, false},
		{&schema.Array{Element: schema.Long}, []any{int64(1), int64(2)}, []any{[]any{1, 2}}, true, false},
		{&schema.Array{Element: schema.Long}, []any{int64(1), int64(2)}, []any{[]any{2, 1}}, false, false},
		{&schema.Struct{Fields: []schema.Field{{Name: "a", Type: schema.Integer}, {Name: "b", Type: schema.String}}},
			[]any{int32(1), "x"}, []any{[]any{1, "x"}}, true, false},
		{schema.Integer, int32(3), []any{nil}, false, false},
	} {
		want, ok := valueKey(tc.value, tc.t)
		if !ok {
			t.Fatalf("%v (%T) has no key as %s", tc.value, tc.value, tc.t)
		}
		keys, err := inKeys("c", tc.t, tc.lits, tc.cast)
		if err != nil {
			t.Errorf("%s %v IN %v: %v", tc.t, tc.value, tc.lits, err)
			continue
		}
		if got := slices.Contains(keys, want); got != tc.match {
			t.Errorf("%s %v IN %v (cast %v): match = %v, want %v (keys %q)", tc.t, tc.value, tc.lits, tc.cast, got, tc.match, keys)
		}
	}
}

// TestInKeysIncomparable: types Spark cannot compare are errors.
func TestInKeysIncomparable(t *testing.T) {
	for _, tc := range []struct {
		t   schema.Type
		lit any
	}{
		{schema.Integer, true},
		{schema.Boolean, "true"},
		{schema.Boolean, 1},
		{schema.Binary, "ab"},
		{schema.Date, 3},
		{&schema.Array{Element: schema.Long}, 1},
	} {
		if _, err := inKeys("c", tc.t, []any{tc.lit}, false); err == nil {
			t.Errorf("%s IN (%v): no error", tc.t, tc.lit)
		}
	}
}

// TestRangeLiteral pins range comparisons: string literals cast to the
// column type; numbers compare across Go types; NaN is the largest double.
func TestRangeLiteral(t *testing.T) {
	for _, tc := range []struct {
		t        schema.Type
		min, max any
		lit      any
		in       bool
	}{
		{schema.Integer, int32(1), int32(3), 3, true},
		{schema.Integer, int32(1), int32(3), "3", true},
		{schema.Integer, int32(1), int32(3), "3.9", true}, // truncated to 3
		{schema.Integer, int32(1), int32(3), "x", false},
		{schema.Integer, int32(1), int32(3), 3.5, false},
		{schema.Integer, int32(1), int32(3), int64(0), false},
		{schema.Double, 1.0, math.NaN(), 1e300, true},
		{schema.Double, 1.0, 2.0, math.NaN(), false},
		{schema.String, "b", "d", "c", true},
		{schema.String, "b", "d", "e", false},
		{schema.Date, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC), "2024-01-15", true},
		{&schema.Decimal{Precision: 10, Scale: 2}, pqrow.NewDecimal(100, 2), pqrow.NewDecimal(150, 2), 1.5, true},
		{&schema.Decimal{Precision: 10, Scale: 2}, pqrow.NewDecimal(100, 2), pqrow.NewDecimal(150, 2), "1.51", false},
	} {
		v, ok := rangeLiteral(tc.lit, tc.t)
		in := false
		if ok {
			c1, ok1 := compareValues(tc.min, v)
			c2, ok2 := compareValues(v, tc.max)
			in = ok1 && ok2 && c1 <= 0 && c2 <= 0
		}
		if in != tc.in {
			t.Errorf("%v in [%v, %v] as %s: %v, want %v", tc.lit, tc.min, tc.max, tc.t, in, tc.in)
		}
	}
}

// TestBloomBitsAgree: the view's precomputed-hash probe answers exactly as
// package bloom does, on random filters and values.
func TestBloomBitsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		n := 1 + r.IntN(500)
		f, err := bloom.New(int64(n), []float64{0.01, 0.001, 0.3}[r.IntN(3)])
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			f.AddString(string(rune('a'+i%26)) + string(rune(r.IntN(1000))))
		}
		b, err := parseBloom(f.Marshal())
		if err != nil {
			t.Fatal(err)
		}
		for range 2000 {
			s := string(rune('a'+r.IntN(26))) + string(rune(r.IntN(1000)))
			if b.mightContain(newProbe(s)) != f.MightContainString(s) {
				t.Fatalf("disagree on %q", s)
			}
		}
	}
	for _, bad := range [][]byte{nil, {2, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, {1, 3, 0, 0, 0, 2, 0}} {
		if _, err := parseBloom(bad); err == nil {
			t.Errorf("parseBloom(%v): no error", bad)
		}
	}
}

// TestStatsMayHold: file skipping on Delta's (possibly truncated) filename
// statistics never skips a file that holds a candidate.
func TestStatsMayHold(t *testing.T) {
	long := "s3://bucket/a-very-long-prefix/of-many-characters/part-"
	for _, tc := range []struct {
		stats string
		cands []string
		want  bool
	}{
		{"", []string{"x"}, true},
		{`{"minValues":{"filename":"b"},"maxValues":{"filename":"d"}}`, []string{"a", "c"}, true},
		{`{"minValues":{"filename":"b"},"maxValues":{"filename":"d"}}`, []string{"a", "e"}, false},
		{`{"minValues":{"filename":"b"},"maxValues":{"filename":"d"}}`, []string{"d"}, true},
		{`{"numRecords":3}`, []string{"a"}, true},
		// A truncated maximum (32 characters + U+10FFFF) still admits longer names.
		{`{"minValues":{"filename":"` + long[:32] + `"},"maxValues":{"filename":"` + long[:32] + "\U0010FFFF" + `"}}`, []string{long + "9.csv"}, true},
		{`{"minValues":{"filename":"` + long[:32] + `"},"maxValues":{"filename":"` + long[:32] + "\U0010FFFF" + `"}}`, []string{"t" + long}, false},
	} {
		if got := statsMayHold(tc.stats, "filename", tc.cands); got != tc.want {
			t.Errorf("%s %v: %v, want %v", tc.stats, tc.cands, got, tc.want)
		}
	}
}
