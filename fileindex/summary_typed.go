package fileindex

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// The typed path of the Go summaries: for a Parquet file whose summarised
// columns are top-level integers, dates, timestamps or strings (the common
// case: ids, keys, event times), the columns' pages are read in typed form
// (datafile.Plan.ScanTyped) and each column is summarised on its own —
// rows are never assembled and no value is boxed. A dictionary-encoded page
// costs one bit test per row: only a chunk's first use of a dictionary
// entry reaches the hash set (and the range). Any other file (other types,
// nested paths, temporal and exploded indexes, CSV and JSON) takes the row
// path (summarizeFile's reader), which gives the same summaries: the typed
// values are the row reader's values in their key form (valueOps.intKey:
// integers themselves, dates and timestamps in µs; strings themselves).

// typedPlan routes each projected column's pages to the summaries that
// take it.
type typedPlan struct {
	cols []typedRoute // per projected column
}

type typedRoute struct {
	bytes   bool // strings: byte-string values; else int64 keys
	date    bool // days since the epoch, keyed in µs
	storage []int
	blooms  []int
	ranges  []int
}

// typedPlan returns the plan of the typed path over rows of proj, or nil
// when some summary cannot take typed values.
func (sp *summaryPlan) typedPlan(proj *schema.Struct) *typedPlan {
	tp := &typedPlan{cols: make([]typedRoute, len(proj.Fields))}
	col := func(name string, ops *valueOps) int {
		if ops.fromKey == nil && !ops.isString {
			return -1
		}
		for i, f := range proj.Fields {
			if f.Name == name && f.Name != FilenameColumn {
				tp.cols[i].bytes = ops.isString
				tp.cols[i].date = f.Type == schema.Date
				return i
			}
		}
		return -1
	}
	for i, c := range sp.storage {
		if c.col.kind != kindRegular {
			return nil
		}
		j := col(c.col.name, c.ops)
		if j < 0 {
			return nil
		}
		tp.cols[j].storage = append(tp.cols[j].storage, i)
	}
	for i, b := range sp.blooms {
		j := col(b.col.name, b.ops)
		if j < 0 {
			return nil
		}
		tp.cols[j].blooms = append(tp.cols[j].blooms, i)
	}
	for i, r := range sp.ranges {
		j := col(r.col.name, r.ops)
		if j < 0 {
			return nil
		}
		tp.cols[j].ranges = append(tp.cols[j].ranges, i)
	}
	return tp
}

// typedState is one file's typed summarising state beside its fileState.
type typedState struct {
	tp *typedPlan
	st *fileState
	// per projected column: the dictionary seen last and which of its
	// entries were used already
	dictID []int
	seen   [][]bool
	// per range column: the typed min and max so far
	has              []bool
	imin, imax       []int64
	sminSet, smaxSet [][]byte
}

func newTypedState(tp *typedPlan, st *fileState) *typedState {
	n := len(st.sp.ranges)
	return &typedState{tp: tp, st: st, dictID: make([]int, len(tp.cols)), seen: make([][]bool, len(tp.cols)),
		has: make([]bool, n), imin: make([]int64, n), imax: make([]int64, n), sminSet: make([][]byte, n), smaxSet: make([][]byte, n)}
}

// page summarises one page of projected column c.
func (ts *typedState) page(c int, pg *pqrow.TypedPage) {
	if c == 0 {
		ts.st.rows += int64(pg.Rows)
	}
	r := &ts.tp.cols[c]
	if len(r.storage)+len(r.blooms)+len(r.ranges) == 0 {
		return
	}
	if pg.Dict != nil {
		if ts.dictID[c] != pg.DictID || len(ts.seen[c]) != pg.Dict.Len() {
			ts.dictID[c] = pg.DictID
			ts.seen[c] = make([]bool, pg.Dict.Len())
		}
		seen := ts.seen[c]
		for _, i := range pg.Index {
			if !seen[i] {
				seen[i] = true
				ts.value(r, pg.Dict, int(i))
			}
		}
		return
	}
	if pg.Values == nil {
		return
	}
	v := pg.Values
	if r.bytes {
		for i := range v.Len() {
			ts.value(r, v, i)
		}
		return
	}
	// Integers: a run of equal values (sorted or clustered columns) costs a
	// comparison, not a hash lookup.
	for i, k := range v.Ints {
		if i > 0 && k == v.Ints[i-1] {
			continue
		}
		ts.value(r, v, i)
	}
}

// value adds value i of vals to the column's summaries.
func (ts *typedState) value(r *typedRoute, vals *pqrow.TypedValues, i int) {
	st := ts.st
	if r.bytes {
		b := vals.Bytes(i)
		for _, j := range r.storage {
			st.bytes += st.sets[j].addBytes(b)
		}
		for _, j := range r.blooms {
			st.bytes += st.blooms[j].addBytes(b)
		}
		for _, j := range r.ranges {
			if !ts.has[j] {
				ts.has[j] = true
				ts.sminSet[j], ts.smaxSet[j] = bytes.Clone(b), bytes.Clone(b)
				continue
			}
			if bytes.Compare(b, ts.sminSet[j]) < 0 {
				ts.sminSet[j] = append(ts.sminSet[j][:0], b...)
			}
			if bytes.Compare(b, ts.smaxSet[j]) > 0 {
				ts.smaxSet[j] = append(ts.smaxSet[j][:0], b...)
			}
		}
		return
	}
	k := vals.Ints[i]
	if r.date {
		k *= microsPerDayKey
	}
	for _, j := range r.storage {
		st.bytes += st.sets[j].addKey(k)
	}
	for _, j := range r.blooms {
		st.bytes += st.blooms[j].addKey(k)
	}
	for _, j := range r.ranges {
		switch {
		case !ts.has[j]:
			ts.has[j] = true
			ts.imin[j], ts.imax[j] = k, k
		case k < ts.imin[j]:
			ts.imin[j] = k
		case k > ts.imax[j]:
			ts.imax[j] = k
		}
	}
}

// microsPerDayKey turns days since the epoch into the µs key of a date
// (valueOps.intKey of the UTC midnight).
const microsPerDayKey = 86_400 * 1_000_000

// done moves the ranges into the fileState.
func (ts *typedState) done() {
	st := ts.st
	for j := range st.sp.ranges {
		if !ts.has[j] {
			continue
		}
		ops := st.sp.ranges[j].ops
		if ops.isString {
			st.mins[j], st.maxs[j] = string(ts.sminSet[j]), string(ts.smaxSet[j])
		} else {
			st.mins[j], st.maxs[j] = ops.fromKey(ts.imin[j]), ops.fromKey(ts.imax[j])
		}
	}
}

// summarizeTyped summarises the file of a through the typed path. It
// returns false (having read only the footer) when the file's columns have
// no typed form; the caller then reads rows.
func (s *session) summarizeTyped(ctx context.Context, a *fileAnalysis, limit int64, buf []byte, stats *readStats, hints **setHints, read func()) (*fileSummary, []byte, bool, error) {
	st := s.sum.newState(*hints)
	ts := newTypedState(s.typed, st)
	t0 := time.Now()
	ok, err := s.read.ScanTyped(ctx, s.fi.res, a.URI, func(c int, pg *pqrow.TypedPage) error {
		ts.page(c, pg)
		if st.bytes > limit {
			return errOverflow
		}
		return nil
	})
	if !ok {
		return nil, nil, false, err
	}
	// Reading and summarising interleave page by page: the whole pass is
	// counted as reading.
	stats.read += time.Since(t0)
	if err != nil {
		if err == errOverflow {
			return nil, nil, true, err
		}
		return nil, nil, true, fmt.Errorf("fileindex: summarise %s: %w", a.URI, err)
	}
	*hints = st.hints()
	stats.typed++
	read()
	ts.done()
	t1 := time.Now()
	sum, buf, err := st.finish(a, buf)
	stats.summarize += time.Since(t1)
	return sum, buf, true, err
}
