package pqrow

import (
	"math/big"
	"testing"
	"time"
)

func TestDecimalString(t *testing.T) {
	tests := []struct {
		unscaled string
		scale    int32
		want     string
		plain    string
	}{
		{"150", 2, "1.50", "1.50"},
		{"-1", 3, "-0.001", "-0.001"},
		{"42", 0, "42", "42"},
		{"0", 2, "0.00", "0.00"},
		{"15", 8, "1.5E-7", "0.00000015"},
		{"15", -2, "1.5E+3", "1500"},
		{"123456789012345678901234567890", 10, "12345678901234567890.1234567890", "12345678901234567890.1234567890"},
	}
	for _, tc := range tests {
		u, _ := new(big.Int).SetString(tc.unscaled, 10)
		d := Decimal{Unscaled: u, Scale: tc.scale}
		if got := d.String(); got != tc.want {
			t.Errorf("Decimal(%s,%d).String() = %q, want %q", tc.unscaled, tc.scale, got, tc.want)
		}
		if got := d.PlainString(); got != tc.plain {
			t.Errorf("Decimal(%s,%d).PlainString() = %q, want %q", tc.unscaled, tc.scale, got, tc.plain)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in    string
		scale int32
		want  string
		err   bool
	}{
		{"1.5", 2, "1.50", false},
		{"-0.001", 3, "-0.001", false},
		{"7", 0, "7", false},
		{"1.234", 2, "", true},
		{"abc", 2, "", true},
		{"", 2, "", true},
	}
	for _, tc := range tests {
		d, err := ParseDecimal(tc.in, tc.scale)
		if (err != nil) != tc.err {
			t.Errorf("ParseDecimal(%q) err = %v, want err %v", tc.in, err, tc.err)
			continue
		}
		if err == nil && d.String() != tc.want {
			t.Errorf("ParseDecimal(%q) = %s, want %s", tc.in, d, tc.want)
		}
	}
}

func TestDecimalCmpRescale(t *testing.T) {
	a, b := NewDecimal(150, 2), NewDecimal(15, 1)
	if a.Cmp(b) != 0 || !Equal(a, b) {
		t.Errorf("1.50 != 1.5")
	}
	if NewDecimal(-1, 0).Cmp(NewDecimal(1, 5)) != -1 {
		t.Errorf("-1 >= 0.00001")
	}
	if _, err := NewDecimal(151, 2).Rescale(1); err == nil {
		t.Errorf("Rescale dropped a digit without error")
	}
	r, err := NewDecimal(150, 2).Rescale(1)
	if err != nil || r.String() != "1.5" {
		t.Errorf("Rescale = %v, %v", r, err)
	}
}

func TestDays(t *testing.T) {
	for _, d := range []time.Time{Date(1970, 1, 1), Date(1969, 12, 31), Date(2024, 2, 29), Date(1, 1, 1)} {
		n := DaysSinceEpoch(d)
		if got := DateFromDays(n); !got.Equal(d) {
			t.Errorf("DateFromDays(DaysSinceEpoch(%v)=%d) = %v", d, n, got)
		}
	}
	if DaysSinceEpoch(Date(1969, 12, 31)) != -1 {
		t.Errorf("1969-12-31 is day -1")
	}
}
