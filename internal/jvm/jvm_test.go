package jvm

import (
	"math"
	"math/big"
	"testing"
	"time"
)

func TestDouble(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 4.5: "4.5", 1e10: "1.0E10", 0.01: "0.01", 0.001: "0.001", 1e-4: "1.0E-4",
		1234567: "1234567.0", 1e7: "1.0E7", -2.5: "-2.5", 100: "100.0", 4.9e-324: "4.9E-324",
		math.MaxFloat64: "1.7976931348623157E308", 0.30000000000000004: "0.30000000000000004",
	} {
		if got := Double(f); got != want {
			t.Errorf("Double(%v) = %s, want %s", f, got, want)
		}
	}
	if Double(math.NaN()) != "NaN" || Double(math.Inf(-1)) != "-Infinity" || Double(math.Copysign(0, -1)) != "-0.0" {
		t.Error("specials")
	}
	if got := Float(0.1); got != "0.1" {
		t.Errorf("Float(0.1) = %s", got)
	}
	if got := Float(1.1e-5); got != "1.1E-5" {
		t.Errorf("Float(1.1e-5) = %s", got)
	}
}

func TestBigDecimal(t *testing.T) {
	for _, tc := range []struct {
		unscaled int64
		scale    int32
		want     string
	}{
		{150, 2, "1.50"}, {5, 0, "5"}, {-5, 1, "-0.5"}, {1, 6, "0.000001"}, {1, 7, "1E-7"},
		{15, 8, "1.5E-7"}, {15, -2, "1.5E+3"}, {0, 2, "0.00"}, {12345, 2, "123.45"},
	} {
		if got := BigDecimal(big.NewInt(tc.unscaled), tc.scale); got != tc.want {
			t.Errorf("BigDecimal(%d, %d) = %s, want %s", tc.unscaled, tc.scale, got, tc.want)
		}
	}
}

func TestTimestamp(t *testing.T) {
	ts := time.Date(2024, 1, 15, 10, 0, 0, 0, time.UTC)
	if got := Timestamp(ts, time.UTC); got != "2024-01-15 10:00:00.0" {
		t.Error(got)
	}
	if got := Timestamp(ts.Add(123*time.Millisecond), time.UTC); got != "2024-01-15 10:00:00.123" {
		t.Error(got)
	}
	if got := Timestamp(ts.Add(1500*time.Microsecond), time.UTC); got != "2024-01-15 10:00:00.0015" {
		t.Error(got)
	}
	if got := Date(ts); got != "2024-01-15" {
		t.Error(got)
	}
}
