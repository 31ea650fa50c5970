package rowindex

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// recordSlow is Record as it was before Recorder: every column of every
// row reconstructed through a schema of its own. It is the oracle the
// Recorder's direct conversions are checked against.
func recordSlow(row *Row) (map[string]any, error) {
	out := map[string]any{}
	for _, c := range row.file.Root().Columns() {
		leaves := leavesOf(c)
		pos := make(map[int]int, len(leaves))
		for k, l := range leaves {
			pos[l] = k
		}
		var sub parquet.Row
		for _, v := range row.Values {
			if k, ok := pos[v.Column()]; ok {
				sub = append(sub, v.Level(v.RepetitionLevel(), v.DefinitionLevel(), k))
			}
		}
		if len(sub) == 0 {
			continue // not projected
		}
		s := parquet.NewSchema("r", parquet.Group{c.Name(): c})
		m := map[string]any{}
		if err := s.Reconstruct(&m, sub); err != nil {
			return nil, fmt.Errorf("rowindex: column %s: %w", c.Name(), err)
		}
		out[c.Name()] = logicalValue(c, m[c.Name()])
	}
	return out, nil
}

// checkRecords checks every row of res read from a data file: rc's Record
// and Fields, and Result.Record, give what reconstruction gives, the
// values with the same Go types, Fields's names in schema order.
func checkRecords(t *testing.T, what string, rc *Recorder, res *Result) {
	t.Helper()
	for i := range res.Rows {
		row := &res.Rows[i]
		if row.Values == nil {
			continue
		}
		want, err := recordSlow(row)
		if err != nil {
			t.Fatalf("%s row %d: reconstruction: %v", what, i, err)
		}
		got, err := rc.Record(row)
		if err != nil {
			t.Fatalf("%s row %d: %v", what, i, err)
		}
		if !same(got, want) {
			t.Fatalf("%s row %d:\n got %#v\nwant %#v", what, i, got, want)
		}
		if one, err := res.Record(i); err != nil || !same(one, want) {
			t.Fatalf("%s row %d: Result.Record %#v, %v; want %#v", what, i, one, err, want)
		}
		names, vals, err := rc.Fields(row, []any{"kept"})
		if err != nil || len(vals) != len(names)+1 || vals[0] != "kept" {
			t.Fatalf("%s row %d: Fields %v %v, %v", what, i, names, vals, err)
		}
		var order []string
		for _, c := range row.file.Root().Columns() {
			if _, ok := want[c.Name()]; ok {
				order = append(order, c.Name())
			}
		}
		if !slices.Equal(names, order) {
			t.Fatalf("%s row %d: names %v, want %v (schema order)", what, i, names, order)
		}
		for k, n := range names {
			if !same(vals[k+1], want[n]) {
				t.Fatalf("%s row %d: %s = %#v, want %#v", what, i, n, vals[k+1], want[n])
			}
		}
	}
}

// same is reflect.DeepEqual with NaN equal to NaN, and with the dynamic
// types of the values and of a map's or slice's elements equal (%#v alone
// prints int32(5) and int64(5) alike).
func same(a, b any) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	switch x := a.(type) {
	case map[string]any:
		y := b.(map[string]any)
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !same(v, w) {
				return false
			}
		}
		return true
	case []any:
		y := b.([]any)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same(x[i], y[i]) {
				return false
			}
		}
		return true
	case float64:
		return x == b.(float64) && math.Signbit(x) == math.Signbit(b.(float64)) || math.IsNaN(x) && math.IsNaN(b.(float64))
	case float32:
		y := b.(float32)
		return x == y && math.Signbit(float64(x)) == math.Signbit(float64(y)) || x != x && y != y
	}
	return reflect.DeepEqual(a, b)
}

// TestRecorderOutOfOrderValues: a row whose values are not in leaf order
// (Row.Values promises column order; a Recorder does not rely on it)
// still gives each column its own values.
func TestRecorderOutOfOrderValues(t *testing.T) {
	type rec struct {
		A int64   `parquet:"a"`
		B string  `parquet:"b,optional"`
		C []int32 `parquet:"c,list"`
		D float64 `parquet:"d"`
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, []rec{{A: 7, B: "x", C: []int32{1, 2, 3}, D: 2.5}}); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]parquet.Row, 1)
	rr := f.RowGroups()[0].Rows()
	if n, _ := rr.ReadRows(rows); n != 1 {
		t.Fatal("no row")
	}
	rr.Close()
	in := rows[0].Clone()
	row := &Row{Values: in, file: f}
	want, err := recordSlow(row)
	if err != nil {
		t.Fatal(err)
	}
	var rc Recorder
	checkRecords(t, "in order", &rc, &Result{Rows: []Row{*row}})
	// The columns backwards, each column's values still in order.
	rev := slices.Clone(in)
	slices.SortStableFunc(rev, func(a, b parquet.Value) int { return b.Column() - a.Column() })
	got, err := rc.Record(&Row{Values: rev, file: f})
	if err != nil || !same(got, want) {
		t.Fatalf("reversed values: %#v, %v; want %#v", got, err, want)
	}
	if fmt.Sprint(want["c"]) != "[1 2 3]" || want["a"] != int64(7) || want["b"] != "x" || want["d"] != 2.5 {
		t.Fatalf("the oracle itself: %#v", want)
	}
	// A value of a column the file does not have, or of no column: an
	// error, not a panic.
	for _, v := range []parquet.Value{parquet.Int64Value(1).Level(0, 0, 99), parquet.Int64Value(1)} {
		bad := append(slices.Clone(in), v)
		if _, err := rc.Record(&Row{Values: bad, file: f}); err == nil {
			t.Fatalf("a value of column %d was accepted", v.Column())
		}
	}
	if !same(map[string]any{"a": int64(5)}, map[string]any{"a": int64(5)}) || same(int32(5), int64(5)) ||
		same(float32(2.5), 2.5) || same([]any{int32(1)}, []any{int64(1)}) || !same(math.NaN(), math.NaN()) {
		t.Fatal("same compares types and NaNs wrongly")
	}
}
