package bloom

import (
	"math/big"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

func TestStringify(t *testing.T) {
	var s Stringifier
	ts := time.Date(2024, 1, 15, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		v    any
		t    schema.Type
		want string
	}{
		{"abc", schema.String, "abc"},
		{int32(1), schema.Integer, "1"},
		{int64(1), schema.Long, "1"},
		{1, nil, "1"},
		{1.0, schema.Double, "1.0"},
		{4.5, schema.Double, "4.5"},
		{1e10, schema.Double, "1.0E10"},
		{float32(0.1), schema.Float, "0.1"},
		{true, schema.Boolean, "true"},
		{pqrow.Decimal{Unscaled: big.NewInt(150), Scale: 2}, &schema.Decimal{Precision: 5, Scale: 2}, "1.50"},
		{ts, schema.Date, "2024-01-15"},
		{ts, schema.Timestamp, "2024-01-15 10:00:00.0"},
		{[]any{int32(1), int32(2)}, &schema.Array{Element: schema.Integer}, "WrappedArray(1, 2)"},
		{[]any{int32(100), "Alice"}, &schema.Struct{Fields: []schema.Field{{Name: "id", Type: schema.Integer}, {Name: "n", Type: schema.String}}}, "[100,Alice]"},
	} {
		if got := s.String(tc.v, tc.t); got != tc.want {
			t.Errorf("String(%#v, %v) = %q, want %q", tc.v, tc.t, got, tc.want)
		}
	}
	if got := (Stringifier{Scala213: true}).String([]any{int32(1)}, &schema.Array{Element: schema.Integer}); got != "ArraySeq(1)" {
		t.Error(got)
	}
}
