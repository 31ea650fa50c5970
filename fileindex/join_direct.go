package fileindex

import (
	"context"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/schema"
)

// The row-index path's direct answer. When a row index gave the matching
// rows' positions (PathRowIndex) and the join is a plain inner equi-join
// of a one-column key set with the join column, the rows read at those
// positions ARE the answer: each holds its key, so the join adds nothing
// but the key column in front (equal to the row's own value, the key and
// the column being of one type) and one copy per occurrence of the key in
// the key set. Loading those rows into DuckDB, joining there and bringing
// them back cost more than reading them (docs/fileindex.md, Benchmark), so
// the rows go straight to the result, converted to what DuckDB would have
// returned (the same schema, timestamps in UTC to the microsecond, dates
// at midnight UTC). Anything else — another join type, computed or
// exploded columns, temporal deduplication, key columns besides the join
// column, types whose round trip through DuckDB changes more than that —
// keeps DuckDB. The rows are held until every file is read (a stale row
// index, found while reading, makes the join read the files again without
// it), so the path is taken only up to directMaxRows rows.

// directMaxRows bounds the rows the direct answer holds in memory: ≈250 B
// a row of the benchmark's five columns, so up to ≈250 MB of Go heap,
// about what the DuckDB path's table of the same rows and its conversion
// cost (the benchmark's 100-key join, 590,200 rows, fits).
const directMaxRows = 1 << 20

// directPlan is a join the row-index path may answer directly: set by the
// DuckDB engine when the job qualifies (planDirect), filled by
// loadIndexSide when the row index answered (rows non-nil).
type directPlan struct {
	// cols are the result's columns' positions in the source rows (the
	// join column first).
	cols   []int
	conv   []func(any) any // per result column; nil = the value as read
	schema *schema.Struct
	// mult holds the keys that occur more than once in the key set, with
	// their count (inner join: one result row per pair).
	mult map[any]int
	// keyPos is the join column's position in the source rows.
	keyPos int
	// maxRows is the most rows the answer may hold (directMaxRows unless a
	// test sets JoinOptions.directCap).
	maxRows int64

	rows [][]any // the answer, once read
}

// planDirect returns the direct plan of job, nil when the job does not
// qualify (see the comment above).
func planDirect(job *JoinJob) *directPlan {
	pf := job.pf
	if pf == nil || job.rows == nil || job.How != Inner || len(job.On) != 1 || pf.col != job.On[0] ||
		len(job.Computed) > 0 || len(job.Exploded) > 0 || len(job.Temporal) > 0 || pf.mult == nil {
		return nil
	}
	if job.force != "" && job.force != PathRowIndex {
		return nil
	}
	ks := job.Keys.Schema()
	if len(ks.Fields) != 1 || ks.Fields[0].Name != pf.col {
		return nil
	}
	src := job.Schema
	names := src.Names()
	kf, ok := src.Field(pf.col)
	if !ok || !schema.Equal(kf.Type, ks.Fields[0].Type) {
		return nil
	}
	d := &directPlan{schema: &schema.Struct{}, mult: pf.mult, keyPos: slices.Index(names, pf.col), maxRows: directMaxRows}
	if job.directCap > 0 {
		d.maxRows = job.directCap
	}
	add := func(name string) bool {
		i := slices.Index(names, name)
		if i < 0 {
			return false
		}
		t := src.Fields[i].Type
		conv, ok := directConv(t)
		if !ok {
			return false
		}
		dt, err := duck.DuckType(t)
		if err != nil {
			return false
		}
		rt, err := duck.SparkType(dt)
		if err != nil {
			return false
		}
		d.cols = append(d.cols, i)
		d.conv = append(d.conv, conv)
		d.schema.Fields = append(d.schema.Fields, schema.Field{Name: name, Type: rt, Nullable: true})
		return true
	}
	if !add(pf.col) {
		return nil
	}
	for _, c := range job.IndexColumns {
		if c != pf.col && !add(c) {
			return nil
		}
	}
	return d
}

// directConv returns the conversion of a value read by pqrow to the value
// DuckDB returns for it (duck's toDuck then fromDuck), for the types whose
// round trip is known; ok is false for the others.
func directConv(t schema.Type) (conv func(any) any, ok bool) {
	if a, isArray := t.(*schema.Array); isArray {
		// Lists of values that need no conversion come back as read.
		if c, ok := directConv(a.Element); ok && c == nil {
			return nil, true
		}
		return nil, false
	}
	p, isPrim := t.(*schema.Primitive)
	if !isPrim {
		return nil, false
	}
	switch p.Name {
	case "string", "binary", "boolean", "byte", "short", "integer", "long", "float", "double":
		return nil, true
	case "date":
		return func(v any) any {
			tm, ok := v.(time.Time)
			if !ok {
				return v
			}
			y, m, d := tm.Date()
			if u := time.Date(y, m, d, 0, 0, 0, 0, time.UTC); !u.Equal(tm) || tm.Location() != time.UTC {
				return u
			}
			return v
		}, true
	case "timestamp", "timestamp_ntz":
		return func(v any) any {
			tm, ok := v.(time.Time)
			if !ok || tm.Location() == time.UTC && tm.Nanosecond()%1000 == 0 {
				return v // re-boxing a time.Time allocates: only when it changes
			}
			return tm.UTC().Truncate(time.Microsecond)
		}, true
	}
	return nil, false
}

// identity reports whether the result's rows are the source rows as read:
// every source column, in order, the join column first, none converted.
func (d *directPlan) identity(width int) bool {
	if len(d.cols) != width {
		return false
	}
	for i, c := range d.cols {
		if c != i {
			return false
		}
	}
	return true
}

// fits reports whether the answer to positions stays within d.maxRows
// rows (each row repeated by its key's count in the key set).
func (d *directPlan) fits(pos map[string][]RowGroupRows) bool {
	most := 1
	for _, n := range d.mult {
		most = max(most, n)
	}
	return positionRows(pos)*int64(most) <= d.maxRows
}

// collect drains the late source into the result's rows.
func (d *directPlan) collect(ctx context.Context, src *lateSource, width int) error {
	same := d.identity(width)
	out := [][]any{}
	for {
		batch, err := src.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if !same {
			slab := make([]any, len(batch)*len(d.cols))
			for j, r := range batch {
				row := slab[j*len(d.cols) : (j+1)*len(d.cols) : (j+1)*len(d.cols)]
				for i, c := range d.cols {
					row[i] = r[c]
				}
				batch[j] = row
			}
		}
		for _, r := range batch {
			for i, conv := range d.conv {
				if conv != nil {
					r[i] = conv(r[i])
				}
			}
		}
		if len(d.mult) == 0 {
			out = append(out, batch...)
			continue
		}
		for _, r := range batch {
			out = append(out, r)
			for range d.mult[normalizeKey(r[0])] - 1 {
				out = append(out, slices.Clone(r)) // rows are the caller's
			}
		}
	}
	d.rows = out
	return nil
}

// directRows is the direct answer as JoinRows: the held rows in batches of
// duck.QueryBatchRows, as a DuckDB result streams them.
type directRows struct {
	schema *schema.Struct
	rows   [][]any
}

func (r *directRows) Schema() *schema.Struct { return r.schema }

func (r *directRows) Next(context.Context) ([][]any, error) {
	if len(r.rows) == 0 {
		return nil, io.EOF
	}
	n := min(len(r.rows), duck.QueryBatchRows)
	b := r.rows[:n:n]
	r.rows = r.rows[n:]
	return b, nil
}

func (r *directRows) Close() error { r.rows = nil; return nil }

// positionRows counts the rows a row index's positions name.
func positionRows(pos map[string][]RowGroupRows) int64 {
	var n int64
	for _, p := range pos {
		for _, g := range p {
			n += int64(len(g.Rows))
		}
	}
	return n
}
