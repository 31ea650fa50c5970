package fileindex

import (
	"context"
	"math"
	"math/big"
	"slices"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
)

// ColumnStats summarises the value sets of one storage column (spec
// §5.13): how many distinct values the files' arrays hold.
//
// Null cells (files whose set went to the large-index table, or exploded
// columns of files without elements) are ignored, as Spark 4 does; Spark
// 3.5 counted them as size −1 (§9 item 23). The value fields are nil when
// every cell is null.
type ColumnStats struct {
	Column    string // storage column name
	FileCount int64  // distinct filenames in the main table
	MinValues *int32 // smallest array size
	MaxValues *int32 // largest array size
	// AvgValues is the mean array size rounded half-up to one decimal,
	// decimal(10,1).
	AvgValues *pqrow.Decimal
	// MedianValues is the 50th percentile of the array sizes: the smallest
	// size at or above half of the cells (exact here; Spark's is the
	// approximate percentile, which agrees on small tables).
	MedianValues *int32
	// StdDev is the sample standard deviation, half-up to one decimal;
	// nil for fewer than two cells.
	StdDev *pqrow.Decimal
}

// StatsSchema is the schema of Stats' rows (§5.13), also the schema of
// the empty result of an index without a main table (§9 item 23: the
// library returns a frame without columns there; we keep the schema so
// that callers can render an empty table the same way).
func StatsSchema() *schema.Struct {
	d := &schema.Decimal{Precision: 10, Scale: 1}
	return &schema.Struct{Fields: []schema.Field{
		{Name: "Column", Type: schema.String, Nullable: false},
		{Name: "FileCount", Type: schema.Long, Nullable: false},
		{Name: "MinValues", Type: schema.Integer, Nullable: true},
		{Name: "MaxValues", Type: schema.Integer, Nullable: true},
		{Name: "AvgValues", Type: d, Nullable: true},
		{Name: "MedianValues", Type: schema.Integer, Nullable: true},
		{Name: "StdDev", Type: d, Nullable: true},
	}}
}

// Row returns the stats as a row of StatsSchema.
func (s ColumnStats) Row() []any {
	row := []any{s.Column, s.FileCount, nil, nil, nil, nil, nil}
	if s.MinValues != nil {
		row[2] = *s.MinValues
	}
	if s.MaxValues != nil {
		row[3] = *s.MaxValues
	}
	if s.AvgValues != nil {
		row[4] = *s.AvgValues
	}
	if s.MedianValues != nil {
		row[5] = *s.MedianValues
	}
	if s.StdDev != nil {
		row[6] = *s.StdDev
	}
	return row
}

// Stats returns one ColumnStats per storage column present in the main
// table (regular, computed, exploded alias, temporal; not bloom, range or
// auto-bloom), in metadata order; none when the index has no main table.
// It runs the storage preflight and reads the columns through the query
// view, so a warm call costs one List.
func (fi *FileIndex) Stats(ctx context.Context) ([]ColumnStats, error) {
	if err := fi.ix.EnsureStorageReady(ctx); err != nil {
		return nil, err
	}
	snap, err := fi.snapshotMain(ctx)
	if err != nil || snap == nil {
		return []ColumnStats{}, err
	}
	m := fi.ix.Metadata()
	out := []ColumnStats{}
	cols := metadata.StorageColumns(m)
	present := make([]string, 0, len(cols))
	for _, c := range cols {
		if _, ok := snap.Schema().Field(c); ok {
			present = append(present, c)
		}
	}
	if len(present) == 0 {
		return out, nil
	}
	sizes := make([][]int32, len(present))
	files := make(map[string]struct{})
	for row, err := range snap.Scan(ctx, delta.ScanOptions{Columns: append([]string{FilenameColumn}, present...)}) {
		if err != nil {
			return nil, err
		}
		if name, ok := row[0].(string); ok {
			files[name] = struct{}{}
		}
		for i, cell := range row[1:] {
			if arr, ok := cell.([]any); ok {
				sizes[i] = append(sizes[i], int32(len(arr)))
			}
		}
	}
	for i, c := range present {
		out = append(out, summarize(c, int64(len(files)), sizes[i]))
	}
	return out, nil
}

// summarize computes one column's statistics from its non-null sizes.
func summarize(column string, files int64, sizes []int32) ColumnStats {
	s := ColumnStats{Column: column, FileCount: files}
	n := len(sizes)
	if n == 0 {
		return s
	}
	slices.Sort(sizes)
	lo, hi := sizes[0], sizes[n-1]
	med := sizes[(n+1)/2-1]
	var sum int64
	for _, x := range sizes {
		sum += int64(x)
	}
	s.MinValues, s.MaxValues, s.MedianValues = &lo, &hi, &med
	avg := roundHalfUp1(new(big.Rat).SetFrac64(sum, int64(n)))
	s.AvgValues = &avg
	if n > 1 {
		mean := float64(sum) / float64(n)
		var ss float64
		for _, x := range sizes {
			d := float64(x) - mean
			ss += d * d
		}
		sd := math.Sqrt(ss / float64(n-1))
		r, _ := new(big.Rat).SetString(formatFloat(sd))
		d := roundHalfUp1(r)
		s.StdDev = &d
	}
	return s
}

// roundHalfUp1 rounds a non-negative rational half-up to one decimal.
func roundHalfUp1(r *big.Rat) pqrow.Decimal {
	tenths := new(big.Rat).Mul(r, big.NewRat(10, 1))
	tenths.Add(tenths, big.NewRat(1, 2))
	q := new(big.Int).Quo(tenths.Num(), tenths.Denom())
	return pqrow.Decimal{Unscaled: q, Scale: 1}
}

func formatFloat(f float64) string {
	return new(big.Float).SetFloat64(f).Text('f', 17)
}
