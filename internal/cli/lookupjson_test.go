package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne"
)

// TestLookupJSONRowsAreEncodingJSON: lookup --json writes each row as
// encoding/json (without HTML escaping) writes the face's Row — key,
// file, row_group, row, values in name order — for every kind of value:
// text that needs escaping, nulls, floats, dates and timestamps, binary,
// lists, structs and maps, in files of two schemas (a column missing
// from one), whole and projected.
func TestLookupJSONRowsAreEncodingJSON(t *testing.T) {
	type inner struct {
		A int32  `parquet:"a"`
		B string `parquet:"b,optional"`
	}
	type wide struct {
		K     int64            `parquet:"k"`
		Text  string           `parquet:"text"`
		Opt   *string          `parquet:"opt,optional"`
		F64   float64          `parquet:"f64"`
		F32   float32          `parquet:"f32"`
		Flag  bool             `parquet:"flag"`
		I32   int32            `parquet:"i32"`
		Day   int32            `parquet:"day,date"`
		TS    time.Time        `parquet:"ts,timestamp(microsecond)"`
		TSms  time.Time        `parquet:"ts_ms,timestamp(millisecond),optional"`
		Raw   []byte           `parquet:"raw"`
		List  []int64          `parquet:"list,list"`
		Inner inner            `parquet:"inner"`
		Tags  map[string]int32 `parquet:"tags"`
	}
	type narrow struct {
		K     int64   `parquet:"k"`
		Text  string  `parquet:"text"`
		Extra *string `parquet:"extra,optional"`
	}
	s := func(x string) *string { return &x }
	data := t.TempDir()
	var rows []wide
	for i := range 300 {
		w := wide{K: int64(i % 3), Text: []string{"plain", "a\"b<c>&d\\e\n\t\x01", "é日本\u2028x\u2029"}[i%3],
			F64: []float64{1.5, 1e21, 1e-7, -0.0, 123456.789}[i%5], F32: float32(i) / 3, Flag: i%2 == 0, I32: int32(-i),
			Day: int32(19000 + i), TS: time.UnixMicro(1717243384123456 + int64(i)*1e6).UTC(), Raw: []byte{byte(i), 0xff},
			List: []int64{int64(i), math.MaxInt64}, Inner: inner{A: int32(i)}, Tags: map[string]int32{"x<": int32(i)}}
		if i%4 == 0 {
			w.Opt, w.Inner.B = s("<opt>"), "b&"
			w.TSms = time.UnixMilli(1717243384123 + int64(i)).UTC()
		}
		rows = append(rows, w)
	}
	if err := parquet.WriteFile(filepath.Join(data, "wide.parquet"), rows, parquet.MaxRowsPerRowGroup(100)); err != nil {
		t.Fatal(err)
	}
	if err := parquet.WriteFile(filepath.Join(data, "narrow.parquet"), []narrow{{K: 1, Text: "n1", Extra: s("e")}, {K: 0, Text: "n0"}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	runOK(t, dir, "create", "w", "--format", "parquet", "--infer-from", filepath.Join(data, "wide.parquet"))
	runOK(t, dir, "add-files", "w", data)
	runOK(t, dir, "add-row-index", "w", "--key", "k")

	ctx := context.Background()
	st, err := ariadne.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ix, err := st.Index(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	for _, cols := range [][]string{nil, {"text", "k"}} {
		for _, k := range []int64{0, 1} {
			args := []string{"--json", "lookup", "w", "--key", "k=" + string(rune('0'+k))}
			if cols != nil {
				args = append(args, "--columns", strings.Join(cols, ","))
			}
			code, out, errs := run(t, dir, args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s %s", args, code, out, errs)
			}
			got := rowLines(out)
			var want []string
			lr, err := ix.LookupRows(ctx, ariadne.LookupRequest{Column: "k", Key: k, Columns: cols})
			if err != nil {
				t.Fatal(err)
			}
			for lr.Next() {
				// Values, in Columns order, are Row's values by name (nil
				// for a column the row's file lacks).
				vals, m := lr.Values(), lr.Row().Values
				for j, c := range lr.Columns() {
					if !reflect.DeepEqual(vals[j], m[c]) {
						t.Fatalf("k=%d %v: Values()[%d] = %#v, Row().Values[%q] = %#v", k, cols, j, vals[j], c, m[c])
					}
				}
				var buf bytes.Buffer
				enc := json.NewEncoder(&buf)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(lr.Row()); err != nil {
					t.Fatal(err)
				}
				want = append(want, strings.TrimSuffix(buf.String(), "\n"))
			}
			if err := lr.Err(); err != nil {
				t.Fatal(err)
			}
			lr.Close()
			if len(want) < 2 || len(got) != len(want) {
				t.Fatalf("k=%d %v: %d rows, want %d", k, cols, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("k=%d %v row %d:\n got %s\nwant %s", k, cols, i, got[i], want[i])
				}
			}
		}
	}
}

// rowLines returns the lines of lookup --json's "rows" array, one row each,
// without their indentation and separating commas.
func rowLines(out string) []string {
	var rows []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, `  "rows": [`):
			in = true
		case in && strings.HasPrefix(l, "    {"):
			rows = append(rows, strings.TrimSuffix(strings.TrimPrefix(l, "    "), ","))
		case in && strings.HasPrefix(l, "  ]"):
			in = false
		}
	}
	return rows
}
