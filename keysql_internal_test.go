package ariadne

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// faceRows is a Source of rows given in the face's value model, brought to
// the appender's model by pqValue as LookupSQL does.
type faceRows struct {
	st   *schema.Struct
	rows [][]any
	done bool
}

func (f *faceRows) Schema() *schema.Struct { return f.st }

func (f *faceRows) Next(context.Context) ([]pqrow.Row, error) {
	if f.done {
		return nil, io.EOF
	}
	f.done = true
	var out []pqrow.Row
	for _, r := range f.rows {
		row := make(pqrow.Row, len(r))
		for i, v := range r {
			x, err := pqValue(f.st.Fields[i].Type, v)
			if err != nil {
				return nil, err
			}
			row[i] = x
		}
		out = append(out, row)
	}
	return out, nil
}

// TestSQLValuesExact: every column type's values, in the face's value
// model, go into the table rows and come back out of SELECT * unchanged
// (decimals to the last digit, integers above 2^53, microsecond times,
// nested values), so a query sees the key's rows as the lookup returns
// them.
func TestSQLValuesExact(t *testing.T) {
	st := &schema.Struct{Fields: []schema.Field{
		{Name: "l", Type: schema.Long}, {Name: "i", Type: schema.Integer}, {Name: "s", Type: schema.Short}, {Name: "b", Type: schema.Byte},
		{Name: "f", Type: schema.Float}, {Name: "d", Type: schema.Double}, {Name: "str", Type: schema.String}, {Name: "bin", Type: schema.Binary},
		{Name: "ok", Type: schema.Boolean}, {Name: "day", Type: schema.Date}, {Name: "ts", Type: schema.Timestamp},
		{Name: "dec", Type: &schema.Decimal{Precision: 38, Scale: 10}},
		{Name: "st", Type: &schema.Struct{Fields: []schema.Field{{Name: "a", Type: schema.Long}, {Name: "b", Type: schema.String}}}},
		{Name: "arr", Type: &schema.Array{Element: schema.Integer}},
		{Name: "m", Type: &schema.Map{Key: schema.String, Value: schema.Long}},
	}}
	rows := [][]any{
		{int64(9007199254740993), int64(-2147483648), int64(-32768), int64(127), float32(1.5), 0.1, "héllo", []byte{0, 1, 255}, true,
			time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2024, 6, 1, 0, 4, 20, 379001000, time.UTC),
			json.Number("1234567890123456789012345678.0123456789"), map[string]any{"a": int64(-1), "b": "x"}, []any{int64(1), nil, int64(3)},
			map[string]any{"k": int64(1)}},
		make([]any, 15), // all nulls
	}
	sb, err := duck.OpenSandbox(duck.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	res, err := sb.Run(context.Background(), SQLTable, &faceRows{st: st, rows: rows}, "SELECT * FROM rows ORDER BY l NULLS LAST", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	for r := range rows {
		for i, f := range res.Schema.Fields {
			got := faceValue(f.Type, res.Rows[r][i])
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(rows[r][i])
			if string(gj) != string(wj) {
				t.Errorf("row %d column %s (%s as %s): got %s (%T), want %s", r, f.Name, st.Fields[i].Type, f.Type, gj, got, wj)
			}
		}
	}
}
