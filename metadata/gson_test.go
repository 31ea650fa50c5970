package metadata

import (
	"math"
	"testing"
)

// TestFormatJavaDouble pins Java's Double.toString output for the values
// metadata.json holds (FPRs) and for the boundaries of its two notations.
func TestFormatJavaDouble(t *testing.T) {
	point1, point2 := 0.1, 0.2 // variables: constant arithmetic would be exact
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0.01, "0.01"},
		{0.001, "0.001"},
		{0.05, "0.05"},
		{1e-4, "1.0E-4"},
		{0.0001234, "1.234E-4"},
		{0.00099999, "9.9999E-4"},
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{0.5, "0.5"},
		{100, "100.0"},
		{123.456, "123.456"},
		{9999999, "9999999.0"},
		{1e7, "1.0E7"},
		{12345678.9, "1.23456789E7"},
		{point1 + point2, "0.30000000000000004"},
		{-0.25, "-0.25"},
		{1e21, "1.0E21"},
		{1.5e300, "1.5E300"},
		{math.MaxFloat64, "1.7976931348623157E308"},
		{math.SmallestNonzeroFloat64, "4.9E-324"},     // Java's two-digit rule
		{2 * math.SmallestNonzeroFloat64, "9.9E-324"}, // JDK 19+; older JDKs print 1.0E-323
	} {
		if got := FormatJavaDouble(tc.in); got != tc.want {
			t.Errorf("FormatJavaDouble(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestQuoteGson pins Gson's HTML-safe string escaping.
func TestQuoteGson(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"<b>&x='y'", `"\u003cb\u003e\u0026x\u003d\u0027y\u0027"`},
		{"tab\tnl\ncr\rbs\bff\f", `"tab\tnl\ncr\rbs\bff\f"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f" + `"`},
		{"line\u2028para\u2029", `"line\u2028para\u2029"`},
		{"é€😀/", "\"é€😀/\""},
		{"bad\xffutf8", "\"bad\uFFFDutf8\""},
		{"", `""`},
	} {
		if got := QuoteGson(tc.in); got != tc.want {
			t.Errorf("QuoteGson(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestMarshalEscapesEverywhere checks that names in every position go
// through the Gson escaping and survive a round trip.
func TestMarshalEscapesEverywhere(t *testing.T) {
	m := NewMetadata("csv", `{"a":"<&>"}`)
	m.Indexes = []string{"a=b"}
	m.ComputedIndexes.Set("c'", "x > 1 AND y <> 'z'")
	m.ReadOptions.Set("sep", "\t")
	m.ExplodedFieldIndexes = []ExplodedFieldIndex{{"arr", "f", "as"}}
	m.BloomIndexes = []BloomIndex{{"b", 1e-5}}
	m.TemporalIndexes = []TemporalIndex{{"k", "meta.ts"}}
	m.RangeIndexes = []RangeIndex{{"r"}}
	m.AutoBloomIndexes = []string{"a=b"}
	m.TotalIndexedFileSize = 1 << 40
	m.BatchesSinceCompact = 7
	out, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"format":"csv","schema":"{\"a\":\"\u003c\u0026\u003e\"}","indexes":["a\u003db"],` +
		`"computed_indexes":{"c\u0027":"x \u003e 1 AND y \u003c\u003e \u0027z\u0027"},` +
		`"exploded_field_indexes":[{"array_column":"arr","field_path":"f","as_column":"as"}],` +
		`"bloom_indexes":[{"column":"b","fpr":1.0E-5}],"temporal_indexes":[{"column":"k","timestamp_column":"meta.ts"}],` +
		`"read_options":{"sep":"\t"},"range_indexes":[{"column":"r"}],"auto_bloom_indexes":["a\u003db"],` +
		`"total_indexed_file_size":1099511627776,"batches_since_compact":7,"metadata_version":10,"storage_format_version":3}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if !Equal(back, m) {
		t.Errorf("round trip: got %+v\nwant %+v", *back, *m)
	}
}

func TestMarshalRejectsNonFinite(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		m := NewMetadata("csv", "s")
		m.BloomIndexes = []BloomIndex{{"b", f}}
		if out, err := Marshal(m); err == nil {
			t.Errorf("Marshal with fpr %v = %s, want error", f, out)
		}
	}
}

func TestStringMap(t *testing.T) {
	m := NewStringMap("b", "1", "a", "2")
	m.Set("c", "3")
	m.Set("b", "4") // in place
	m.Delete("a")
	m.Delete("missing")
	if got := m.Keys(); len(got) != 2 || got[0] != "b" || got[1] != "c" {
		t.Fatalf("keys = %v", got)
	}
	if v, ok := m.Get("b"); !ok || v != "4" {
		t.Errorf("Get(b) = %q, %v", v, ok)
	}
	if _, ok := m.Get("a"); ok {
		t.Error("deleted key present")
	}
	if m.Equal(NewStringMap("c", "3", "b", "4")) {
		t.Error("order must matter")
	}
}
