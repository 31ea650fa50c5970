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
	// names are the result's columns' names (the source columns at cols).
	names []string
	// keyInt and keyStr say the join column is an integer or a string
	// column: only then are typed vectors read (readDirect), the keys
	// being checked on the key vector.
	keyInt, keyStr bool
	// same: the rows as read are the result's (identity).
	same bool

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
		d.names = append(d.names, name)
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
	switch kf.Type {
	case schema.Byte, schema.Short, schema.Integer, schema.Long:
		d.keyInt = true
	case schema.String:
		d.keyStr = true
	}
	d.same = d.identity(len(names))
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
	d   *directPlan
	src *lateSource
	lf  *lateFile
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
		batch, err := r.src.nextDirect(ctx)
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
		r.pending = batch
	}
	n := min(len(r.pending), duck.QueryBatchRows)
	b := r.pending[:n:n]
	r.pending = r.pending[n:]
	r.sent += int64(n)
	return b, nil
}

// shape turns a file's rows as read into the result's rows: the result's
// columns, converted (repeat then repeats them by their key's count).
func (d *directPlan) shape(batch []pqrow.Row) [][]any {
	if !d.same {
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
	out := make([][]any, len(batch))
	for i, row := range batch {
		out[i] = row
	}
	return out
}

// repeat returns rows with each row repeated by its key's count in the
// key set (inner join: one result row per pair).
func (d *directPlan) repeat(rows [][]any) [][]any {
	if len(d.mult) == 0 {
		return rows
	}
	out := make([][]any, 0, len(rows))
	for _, row := range rows {
		out = append(out, row)
		for range d.mult[normalizeKey(row[0])] - 1 {
			out = append(out, slices.Clone(row)) // rows are the caller's
		}
	}
	return out
}

// readDirect returns one located file's part of the direct answer: its
// rows at the row index's positions, each checked to hold one of the keys
// (a file with one that does not fails with *StaleRowIndexError, see the
// contract above) and shaped as the result's rows. Where the file allows
// (every result column has a typed form, the key column is an integer or
// string column, offset indexes), the columns are read as typed vectors
// and boxed a column at a time (pqrow.Vector); otherwise as rows.
func (lf *lateFile) readDirect(ctx context.Context, uri string) ([][]any, error) {
	d := lf.direct
	pf, matches, err := lf.match(ctx, uri)
	if err != nil {
		return nil, err
	}
	var cols []pqrow.TypedColumn
	typed := d.keyInt || d.keyStr
	if typed {
		cols, typed = pf.PlanTyped(d.names)
	}
	var out [][]any
	var stale int64
	for _, m := range matches {
		if typed {
			vecs, ok, err := pf.ReadTyped(ctx, cols, m)
			if err != nil {
				return nil, err
			}
			if ok {
				rows, n := d.fromVectors(vecs, lf.keys)
				lf.stats.mu.Lock()
				lf.stats.vectorReads++
				lf.stats.mu.Unlock()
				lf.countStale(n)
				stale += n
				if out == nil {
					out = rows
				} else {
					out = append(out, rows...)
				}
				continue
			}
		}
		rows, n, err := lf.readMatch(ctx, pf, m, nil)
		if err != nil {
			return nil, err
		}
		stale += n
		out = append(out, d.shape(rows)...)
	}
	if stale > 0 {
		return nil, &StaleRowIndexError{File: uri, Rows: stale}
	}
	return d.repeat(out), nil
}

// fromVectors returns the result's rows from the vectors read (one per
// result column, the key column first), or none and the number of rows
// whose key is not one of keys (a stale row index: no row of the file may
// go out).
func (d *directPlan) fromVectors(vecs []pqrow.Vector, keys *pqrow.KeySet) ([][]any, int64) {
	kv := &vecs[0]
	n := kv.Len()
	var stale int64
	var lastInt int64
	var lastStr string
	have := false // lastInt or lastStr is a key: a key's rows are runs
	for k := range n {
		if d.keyInt {
			x, ok := kv.Int(k)
			if ok && have && x == lastInt {
				continue
			}
			if have = ok && keys.HasInt(x); have {
				lastInt = x
			} else {
				stale++
			}
		} else {
			x, ok := kv.Str(k)
			if ok && have && x == lastStr {
				continue
			}
			if have = ok && keys.HasString(x); have {
				lastStr = x
			} else {
				stale++
			}
		}
	}
	if stale > 0 {
		return nil, stale
	}
	w := len(vecs)
	slab := make([]any, n*w)
	for i := range vecs {
		vecs[i].Box(slab, w, i)
	}
	rows := make([][]any, n)
	for k := range rows {
		rows[k] = slab[k*w : (k+1)*w : (k+1)*w]
	}
	return rows, 0
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
