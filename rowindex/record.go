package rowindex

import (
	"fmt"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Record returns row i of the result as a map from top-level column name to
// its Go value (nested columns as maps and slices, as parquet-go
// reconstructs them), for JSON output. Covered rows map Result.Columns to
// their values.
func (r *Result) Record(i int) (map[string]any, error) {
	row := &r.Rows[i]
	if row.Values == nil {
		m := make(map[string]any, len(r.Columns))
		for j, c := range r.Columns {
			if j < len(row.Covered) {
				m[c] = row.Covered[j]
			}
		}
		return m, nil
	}
	f := row.file
	if f == nil {
		return nil, fmt.Errorf("rowindex: row %d has no schema", i)
	}
	out := map[string]any{}
	for _, c := range f.Root().Columns() {
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

// logicalValue turns the physical value of a top-level primitive column with
// a date or timestamp logical type into a time.Time (UTC), so that records
// show instants rather than day counts or epoch units; other values are
// returned as they are.
func logicalValue(n parquet.Node, v any) any {
	if !n.Leaf() {
		return v
	}
	lt := n.Type().LogicalType()
	if lt == nil {
		return v
	}
	switch t := lt.Value.(type) {
	case *format.TimestampType:
		x, ok := v.(int64)
		if !ok {
			return v
		}
		switch t.Unit.Value.(type) {
		case *format.MilliSeconds:
			return time.UnixMilli(x).UTC()
		case *format.NanoSeconds:
			return time.Unix(0, x).UTC()
		default:
			return time.UnixMicro(x).UTC()
		}
	case *format.DateType:
		if x, ok := v.(int32); ok {
			return time.Unix(int64(x)*86400, 0).UTC()
		}
	}
	return v
}
