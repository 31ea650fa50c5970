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
	if row.file == nil {
		return nil, fmt.Errorf("rowindex: row %d has no schema", i)
	}
	// A Recorder of its own: a Result may be read by several goroutines.
	// A stream of rows keeps one (Recorder) and pays the per-file work once.
	var rc Recorder
	return rc.Record(row)
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
			return dateTime(x)
		}
	}
	return v
}

// dateTime is the instant of a DATE's days since the epoch (UTC midnight).
func dateTime(days int32) time.Time { return time.Unix(int64(days)*86400, 0).UTC() }
