package fileindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/pqrow"
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
// keeps DuckDB.
//
// The answer streams: the caller gets each located file's rows, in file
// order, as soon as that file is read, so memory holds at most the files
// read ahead (lateReadConcurrency) and no row count limits the path. A
// stale row index must therefore be found before any row is handed out,
// which is the contract:
//
//  1. Up front, before reading a data file: the RowLocator answers only
//     when its row index holds every located file with the size (and
//     ETag, where the store gives one) the file has now; the face's
//     locator checks each located file against the store. Otherwise the
//     join takes the other paths and nothing went out.
//  2. While reading: every row read at a position must hold one of the
//     keys. A file with a row that does not is never handed out. If no
//     row has gone to the caller yet, the join is read again without the
//     row index (the DuckDB paths; JoinStats.Plan says "row index stale"),
//     with the same rows as a fresh index gives.
//  3. Once rows have gone out, a stale file fails the join with a
//     *StaleRowIndexError (errors.Is aerr.ErrAriadne); rows already
//     returned are correct rows of the answer (their keys were checked),
//     the answer is incomplete. A data file changed in the middle of the
//     read can only get here (it passed step 1 moments before); one that
//     cannot be read fails as any read does (aerr.ErrCorruptDataFile,
//     aerr.ErrStorage). Callers writing a file write it whole or not at
//     all (the CLI's --out writes a temporary file and renames it).

// StaleRowIndexError reports that the row index pointed at rows holding
// other keys in File after the join had already returned rows (see the
// contract above): the data file changed after its rows were indexed. The
// rows returned before it are correct; the rest of the answer is missing.
// Joining again reads the files without the row index (the stale file no
// longer matches the index's record) or through a rebuilt one.
type StaleRowIndexError struct {
	File string
	// Rows is the number of rows of File at the row index's positions
	// that hold other keys.
	Rows int64
}

func (e *StaleRowIndexError) Error() string {
	return fmt.Sprintf("join: the row index is stale for %s: %d row(s) at its positions hold other keys (the file changed during the join); rows already returned are correct, the rest is missing — join again", e.File, e.Rows)
}

// Is makes the error an aerr.ErrAriadne, as every error of ours on data.
func (e *StaleRowIndexError) Is(target error) bool { return target == aerr.ErrAriadne }

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

	// rows is the answer, set by loadIndexSide when the row index
	// answered; nil when the join takes DuckDB.
	rows *directStream
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
	d := &directPlan{schema: &schema.Struct{}, mult: pf.mult, keyPos: slices.Index(names, pf.col)}
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

// directStream is the direct answer as JoinRows: each located file's rows
// as the late source hands them over, cut into batches of at most
// duck.QueryBatchRows rows, as a DuckDB result streams them.
type directStream struct {
	d    *directPlan
	src  *lateSource
	lf   *lateFile
	same bool // the rows as read are the result's (directPlan.identity)
	// pending are the current file's rows not yet returned.
	pending [][]any
	// sent counts the rows returned; while 0 a stale row index may still
	// be answered by reading again (fallback).
	sent int64
	// finish records the read's statistics (once).
	finish func()
	// fallback reads the join again without the row index, as DuckDB
	// answers it; stale is the rows found at wrong positions.
	fallback func(ctx context.Context, stale int64) (JoinRows, error)
	// other is the fallback's result once taken.
	other JoinRows
}

func (r *directStream) Schema() *schema.Struct { return r.d.schema }

// Next returns the next batch of the answer.
func (r *directStream) Next(ctx context.Context) ([][]any, error) {
	if r.other != nil {
		return r.other.Next(ctx)
	}
	for len(r.pending) == 0 {
		if r.src == nil {
			return nil, io.EOF
		}
		batch, err := r.src.Next(ctx)
		if errors.Is(err, io.EOF) {
			r.close()
			return nil, io.EOF
		}
		var stale *StaleRowIndexError
		if err == nil && r.sent == 0 && r.lf.stats.staleCount() > 0 {
			// A file read ahead is stale: nothing has gone out yet, so
			// the whole answer can still come from the files.
			stale = &StaleRowIndexError{}
		} else if err != nil && !errors.As(err, &stale) {
			r.close()
			return nil, err
		}
		if stale != nil {
			if r.sent > 0 {
				r.close()
				return nil, err
			}
			r.close()
			other, ferr := r.fallback(ctx, r.lf.stats.staleCount())
			if ferr != nil {
				return nil, ferr
			}
			r.other = other
			return other.Next(ctx)
		}
		r.pending = r.shape(batch)
	}
	n := min(len(r.pending), duck.QueryBatchRows)
	b := r.pending[:n:n]
	r.pending = r.pending[n:]
	r.sent += int64(n)
	return b, nil
}

// shape turns a file's rows as read into the result's rows: the result's
// columns, converted, each repeated by its key's count in the key set.
func (r *directStream) shape(batch []pqrow.Row) [][]any {
	d := r.d
	if !r.same {
		slab := make([]any, len(batch)*len(d.cols))
		for j, row := range batch {
			out := slab[j*len(d.cols) : (j+1)*len(d.cols) : (j+1)*len(d.cols)]
			for i, c := range d.cols {
				out[i] = row[c]
			}
			batch[j] = out
		}
	}
	for _, row := range batch {
		for i, conv := range d.conv {
			if conv != nil {
				row[i] = conv(row[i])
			}
		}
	}
	if len(d.mult) == 0 {
		return batch
	}
	out := make([][]any, 0, len(batch))
	for _, row := range batch {
		out = append(out, row)
		for range d.mult[normalizeKey(row[0])] - 1 {
			out = append(out, slices.Clone(row)) // rows are the caller's
		}
	}
	return out
}

// close stops the reads and records their statistics.
func (r *directStream) close() {
	if r.src != nil {
		r.src.Close()
		r.src = nil
		r.finish()
	}
	r.pending = nil
}

// Close releases the stream (or the fallback's result).
func (r *directStream) Close() error {
	r.close()
	if r.other != nil {
		return r.other.Close()
	}
	return nil
}
