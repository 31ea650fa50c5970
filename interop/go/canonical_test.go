package interop

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

func TestFormatFloatCases(t *testing.T) {
	cases := []struct {
		v    float64
		bits int
		want string
	}{
		{0, 64, "0.0"}, {math.Copysign(0, -1), 64, "-0.0"}, {1, 64, "1.0"}, {1e16, 64, "1e+16"},
		{9999999999999998, 64, "9999999999999998.0"}, {1e-4, 64, "0.0001"}, {1.5e-5, 64, "1.5e-05"},
		{math.Nextafter(0.3, 1), 64, "0.30000000000000004"}, {5e-324, 64, "5e-324"}, {1234567, 64, "1234567.0"},
		{-1234.5678, 64, "-1234.5678"}, {1e22, 64, "1e+22"}, {math.NaN(), 64, `"NaN"`},
		{math.Inf(1), 64, `"Infinity"`}, {math.Inf(-1), 32, `"-Infinity"`},
		{float64(float32(0.3)), 32, "0.3"}, {float64(float32(0.3)), 64, "0.30000001192092896"},
		{float64(math.MaxFloat32), 32, "3.4028235e+38"}, {float64(float32(1e-45)), 32, "1e-45"},
		{16777216, 32, "16777216.0"}, {float64(float32(1e20)), 32, "1e+20"},
	}
	for _, c := range cases {
		if got := FormatFloat(c.v, c.bits); got != c.want {
			t.Errorf("FormatFloat(%v, %d) = %s, want %s", c.v, c.bits, got, c.want)
		}
	}
}

// TestFormatFloatMatchesPython compares FormatFloat with canonical.py's
// format_float (itself checked against Python's repr) on random bit
// patterns of doubles and floats.
func TestFormatFloatMatchesPython(t *testing.T) {
	e := loadEnv(t)
	ctx := testContext(t, time.Minute)
	const n = 20000
	rng := rand.New(rand.NewPCG(5, 7))
	var in bytes.Buffer
	var want []string
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			b := rng.Uint64()
			fmt.Fprintf(&in, "64 %d\n", b)
			want = append(want, FormatFloat(math.Float64frombits(b), 64))
		} else {
			b := rng.Uint32()
			fmt.Fprintf(&in, "32 %d\n", b)
			want = append(want, FormatFloat(float64(math.Float32frombits(b)), 32))
		}
	}
	const script = `
import struct, sys
sys.path.insert(0, sys.argv[1])
import canonical
out = []
for line in sys.stdin:
    bits, b = line.split()
    if bits == "64":
        v = struct.unpack("<d", struct.pack("<Q", int(b)))[0]
    else:
        v = struct.unpack("<f", struct.pack("<I", int(b)))[0]
    out.append(canonical.format_float(v, int(bits)))
sys.stdout.write("\n".join(out) + "\n")
`
	cmd := exec.CommandContext(ctx, e.Python, "-c", script, e.Scripts)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != n {
		t.Fatalf("python answered %d of %d", len(got), n)
	}
	bad := 0
	for i := range got {
		if got[i] != want[i] {
			if bad++; bad <= 5 {
				t.Errorf("value %d: Go %s, Python %s", i, want[i], got[i])
			}
		}
	}
}

func TestRenderRow(t *testing.T) {
	st := mustSchema(`{"type":"struct","fields":[` +
		`{"name":"s","type":"string","nullable":true,"metadata":{}},` +
		`{"name":"b","type":"binary","nullable":true,"metadata":{}},` +
		`{"name":"i","type":"byte","nullable":true,"metadata":{}},` +
		`{"name":"d","type":"date","nullable":true,"metadata":{}},` +
		`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},` +
		`{"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},` +
		`{"name":"dec","type":"decimal(38,3)","nullable":true,"metadata":{}},` +
		`{"name":"m","type":{"type":"map","keyType":"string","valueType":"long","valueContainsNull":true},"nullable":true,"metadata":{}},` +
		`{"name":"a","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"x","type":"float","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}}]}`)
	huge, _ := new(big.Int).SetString("-12345678901234567890123456789012345678", 10)
	cases := []struct {
		name string
		row  []any
		want string
	}{
		{"nulls", []any{nil, nil, nil, nil, nil, nil, nil, nil, nil},
			`{"s":null,"b":null,"i":null,"d":null,"ts":null,"ntz":null,"dec":null,"m":null,"a":null}`},
		{"values", []any{"a\"\\\b\t\n\f\r\x01\x7f<>&\u2028é", []byte{0xff, 0, 1}, int8(-128),
			time.Date(-1, 12, 31, 0, 0, 0, 0, time.UTC),
			time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC),
			time.Date(9999, 12, 31, 23, 59, 59, 1000, time.UTC),
			pqrow.Decimal{Unscaled: huge, Scale: 3},
			[]pqrow.KV{{Key: "b", Value: int64(2)}, {Key: "a", Value: nil}, {Key: "A", Value: int64(-1)}},
			[]any{nil, []any{float32(0.1)}, []any{nil}}},
			`{"s":"a\"\\\b\t\n\f\r\u0001` + "\x7f<>&\u2028é" + `","b":"/wAB","i":-128,"d":"-0001-12-31",` +
				`"ts":"1969-12-31T23:59:59.999999Z","ntz":"9999-12-31T23:59:59.000001",` +
				`"dec":"-12345678901234567890123456789012345.678","m":[["A",-1],["a",null],["b",2]],` +
				`"a":[null,{"x":0.1},{"x":null}]}`},
		{"small decimal", []any{"", []byte{}, int8(0), nil, nil, nil, pqrow.NewDecimal(-5, 3), []pqrow.KV{}, []any{}},
			`{"s":"","b":"","i":0,"d":null,"ts":null,"ntz":null,"dec":"-0.005","m":[],"a":[]}`},
	}
	for _, c := range cases {
		got, err := RenderRow(st, c.row)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestRenderRowRefusesMismatches(t *testing.T) {
	cases := []struct {
		typ string
		v   any
	}{
		{`"integer"`, int64(1)},
		{`"long"`, 1},
		{`"string"`, []byte("x")},
		{`"variant"`, "x"},
		{`"decimal(10,2)"`, pqrow.NewDecimal(1, 3)},
		{`{"type":"map","keyType":"string","valueType":"string","valueContainsNull":true}`, map[string]string{}},
	}
	for _, c := range cases {
		st := mustSchema(`{"type":"struct","fields":[{"name":"c","type":` + c.typ + `,"nullable":true,"metadata":{}}]}`)
		if got, err := RenderRow(st, []any{c.v}); err == nil {
			t.Errorf("%s with %T: rendered %s, want an error", c.typ, c.v, got)
		}
	}
	if _, err := RenderRow(&schema.Struct{}, []any{1}); err == nil {
		t.Errorf("a row longer than its schema rendered")
	}
}
