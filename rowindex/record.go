package rowindex

import (
	"fmt"

	"github.com/parquet-go/parquet-go"
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
		out[c.Name()] = m[c.Name()]
	}
	return out, nil
}
