package pqrow

import (
	"bytes"
	"math"
	"testing"
)

func TestWriteJSONFloat(t *testing.T) {
	for _, c := range []struct {
		f    float64
		bits int
		want string
	}{
		{1.5, 64, "1.5"},
		{0.1, 64, "0.1"},
		{float64(float32(0.1)), 32, "0.1"},
		{1e21, 64, "1e+21"},
		{math.NaN(), 64, `"NaN"`},
		{math.Inf(1), 32, `"Infinity"`},
		{math.Inf(-1), 64, `"-Infinity"`},
	} {
		var b bytes.Buffer
		WriteJSONFloat(&b, c.f, c.bits)
		if b.String() != c.want {
			t.Errorf("WriteJSONFloat(%v, %d) = %s, want %s", c.f, c.bits, b.String(), c.want)
		}
	}
}
