package fileindex

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ariadne-go/ariadne/bloom"
	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// batchResult is what one batch build produces: one row per file of the
// batch aligned with schema (the main-table columns of §4.2), and the
// auto-bloom columns detected in this batch (§3.9).
type batchResult struct {
	schema   *schema.Struct
	rows     [][]any
	detected []string
	bytes    int64
	// values counts the inline array elements: what the merge of this
	// batch holds in memory.
	values int64
	// lazy are the cells decoded from the summary spill, per row: after
	// staging they can be released and decoded again for the merge (see
	// release).
	lazy map[int][]lazyCell
}

// lazyCell is a row's cell at col holding storage column ci0's summary.
type lazyCell struct {
	col, ci0 int
	a        *fileAnalysis
}

// release drops the batch's cells that the summary spill can restore and
// returns the batch as the merge will need it: its value arrays would
// otherwise stay on the heap until the merge, where the garbage collector
// scans them over and over while the next files are read.
//
// ok is false when the batch has files the engine summarised: their cells
// are not in the spill.
func (s *session) release(br *batchResult, batch []*fileAnalysis) (sb stagedBatch, ok bool) {
	for _, a := range batch {
		if a.sum == nil {
			return stagedBatch{}, false
		}
	}
	for i, cells := range br.lazy {
		for _, c := range cells {
			br.rows[i][c.col] = nil
		}
	}
	lazy := br.lazy
	return stagedBatch{schema: br.schema, rows: br.rows, fill: func(i int, row []any) error {
		for _, c := range lazy[i] {
			cell, err := s.summaryCell(c.a, c.ci0)
			if err != nil {
				return err
			}
			row[c.col] = cell
		}
		return nil
	}}, true
}

// buildBatch computes the index rows of one batch (§5.3.4 as amended by
// §12 items 1 and 2): it loads the batch's files into the engine, computes
// the per-file value sets, temporal pairs, ranges and bloom filters, and
// streams large (file, column) pairs — classified from the pre-flight
// counts — straight into large_indexes/<c>/ (the inline cell stays null).
func (s *session) buildBatch(ctx context.Context, batch []*fileAnalysis) (*batchResult, error) {
	p := s.plan
	uris := make([]string, len(batch))
	pos := make(map[string]int, len(batch))
	var engineURIs []string
	for i, a := range batch {
		uris[i] = a.URI
		pos[a.URI] = i
		if a.sum == nil {
			engineURIs = append(engineURIs, a.URI)
		}
	}
	// Only the files the engine summarises are loaded into it; the others'
	// cells come from their Go summaries.
	engine := len(engineURIs) > 0
	if engine {
		if err := s.loadBatch(ctx, engineURIs); err != nil {
			return nil, err
		}
		defer func() {
			s.unload(ctx)
			s.built(ctx, engineURIs)
		}()
	}

	// Auto-bloom (§3.9): columns already registered plus those this batch
	// detects (some file holds ≥ L distinct values).
	auto := slices.Clone(p.autoBloom)
	var detected []string
	for _, c := range p.storage {
		if !autoBloomEligible(c) || slices.Contains(auto, c.name) {
			continue
		}
		for _, a := range batch {
			if a.largeFor(c.name, p.largeL) {
				auto = append(auto, c.name)
				detected = append(detected, c.name)
				break
			}
		}
	}
	out := p.outputSchema(auto)
	colIdx := map[string]int{}
	for i, f := range out.Fields {
		colIdx[f.Name] = i
	}
	rows := make([][]any, len(batch))
	var bytes int64
	for i, a := range batch {
		rows[i] = make([]any, len(out.Fields))
		rows[i][0] = a.URI
		rows[i][colIdx[FileSizeColumn]] = a.Size
		bytes += a.Size
	}
	// autoFilters[c][file] are the auto-bloom filters of column c, sized
	// from each file's distinct count.
	autoFilters := map[string][]*bloom.Filter{}
	for _, c := range auto {
		fs := make([]*bloom.Filter, len(batch))
		for i, a := range batch {
			if n := a.Counts[c]; n > 0 {
				f, err := bloom.New(n, p.autoFPR)
				if err != nil {
					return nil, &BloomBuildError{Column: c, FPR: p.autoFPR, Err: err}
				}
				fs[i] = f
			}
		}
		autoFilters[c] = fs
	}
	str := bloom.Stringifier{}
	var nvalues int64
	lazy := map[int][]lazyCell{}

	for ci0, c := range p.storage {
		var large []string
		for _, a := range batch {
			if a.largeFor(c.name, p.largeL) {
				large = append(large, a.URI)
			}
		}
		ci := colIdx[c.name]
		fs := autoFilters[c.name]
		// Inline cells: every non-large file gets its set (empty when the
		// file has no non-null value; exploded: null without elements).
		for i, a := range batch {
			if slices.Contains(large, a.URI) {
				continue
			}
			if a.sum == nil {
				if c.kind != kindExploded {
					rows[i][ci] = []any{}
				}
				continue
			}
			cell, err := s.summaryCell(a, ci0)
			if err != nil {
				return nil, err
			}
			if cell == nil {
				continue
			}
			rows[i][ci] = cell
			lazy[i] = append(lazy[i], lazyCell{col: ci, ci0: ci0, a: a})
			nvalues += int64(len(cell))
			if fs != nil && fs[i] != nil {
				for _, v := range cell {
					fs[i].AddString(str.String(v, c.typ))
				}
			}
		}
		if engine {
			if err := s.query(ctx, inlineSQL(c, large), func(r []any) error {
				i, ok := pos[r[0].(string)]
				if !ok || r[1] == nil {
					return nil
				}
				rows[i][ci] = r[1]
				nvalues += int64(len(r[1].([]any)))
				if fs != nil && fs[i] != nil {
					for _, v := range r[1].([]any) {
						fs[i].AddString(str.String(v, c.typ))
					}
				}
				return nil
			}); err != nil {
				return nil, s.wrapColumnErr(c, err)
			}
		}
		if len(large) > 0 {
			if err := s.writeLarge(ctx, c, ci0, batch, large, pos, fs); err != nil {
				return nil, s.wrapColumnErr(c, err)
			}
		}
	}
	for _, c := range auto {
		ci := colIdx[AutoBloomColumn(c)]
		for i, f := range autoFilters[c] {
			if f != nil {
				rows[i][ci] = f.Marshal()
			}
		}
	}
	for bi, b := range p.blooms {
		ci := colIdx[BloomColumn(b.name)]
		for i, a := range batch {
			if a.sum == nil || a.sum.blooms[bi].n == 0 {
				continue
			}
			f, err := s.spill.read(a.sum.blooms[bi])
			if err != nil {
				return nil, err
			}
			rows[i][ci] = f
		}
		if engine {
			if err := s.buildBloom(ctx, b, batch, pos, rows, ci); err != nil {
				return nil, err
			}
		}
	}
	for ri, r := range p.ranges {
		ci := colIdx[RangeColumn(r.name)]
		for i, a := range batch {
			rows[i][ci] = []any{nil, nil}
			if a.sum != nil {
				mm := a.sum.ranges[ri]
				rows[i][ci] = []any{mm[0], mm[1]}
			}
		}
		if !engine {
			continue
		}
		q := fmt.Sprintf("SELECT filename, min(v), max(v) FROM %s s GROUP BY filename", valuesFrom(r))
		if err := s.query(ctx, q, func(row []any) error {
			if i, ok := pos[row[0].(string)]; ok {
				rows[i][ci] = []any{row[1], row[2]}
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return &batchResult{schema: out, rows: rows, detected: detected, bytes: bytes, values: nvalues, lazy: lazy}, nil
}

// summaryCell returns storage column i's cell of summarised file a (nil:
// a null cell).
func (s *session) summaryCell(a *fileAnalysis, i int) ([]any, error) {
	b, err := s.spill.read(a.sum.storage[i])
	if err != nil {
		return nil, err
	}
	return s.sum.decodeCell(i, b)
}

// inlineSQL collects each non-large file's distinct values of c (§3.2,
// §3.4) or (value, max_ts) pairs (§3.7).
func inlineSQL(c valueCol, large []string) string {
	where := ""
	if len(large) > 0 {
		where = " WHERE filename NOT IN " + sqlInList(large)
	}
	if c.kind == kindTemporal {
		return fmt.Sprintf("SELECT filename, list({'value': v, 'max_ts': m}) FROM (SELECT filename, v, max(ts) AS m FROM %s s%s GROUP BY filename, v) g GROUP BY filename", valuesFrom(c), where)
	}
	return fmt.Sprintf("SELECT filename, list(DISTINCT v) FILTER (WHERE v IS NOT NULL) FROM %s s%s GROUP BY filename", valuesFrom(c), where)
}

// writeLarge streams the large pairs of column c (storage column ci0) into
// its large-index table (§3.8, §12 item 1): the batch's rows are
// MERGE-deleted first (so a retried batch replaces, never duplicates), then
// one (filename, value) row per distinct value is appended — from the Go
// summaries of summarised files, then from the engine for the others —
// feeding the auto-bloom filters on the way.
func (s *session) writeLarge(ctx context.Context, c valueCol, ci0 int, batch []*fileAnalysis, large []string, pos map[string]int, filters []*bloom.Filter) error {
	var engineLarge []string
	var summarised []*fileAnalysis
	for _, u := range large {
		if a := batch[pos[u]]; a.sum != nil {
			summarised = append(summarised, a)
		} else {
			engineLarge = append(engineLarge, u)
		}
	}
	st := store.Sub(s.fi.ix.Root(), s.fi.ix.Paths().LargeIndex(c.name))
	want := &schema.Struct{Fields: []schema.Field{
		{Name: FilenameColumn, Type: schema.String, Nullable: true},
		{Name: c.name, Type: largeValueType(c), Nullable: true},
	}}
	t, err := delta.Open(ctx, st)
	switch {
	case errors.Is(err, delta.ErrNotATable):
		if t, err = delta.Create(ctx, st, want, delta.CreateOptions{}); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		keys := make([]any, len(batch))
		for i, a := range batch {
			keys[i] = a.URI
		}
		if _, err := t.DeleteKeys(ctx, FilenameColumn, keys, delta.WriteOptions{}); err != nil {
			return err
		}
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return err
	}
	// The union with the main arrays is positional (§3.8): an existing
	// table keeps its (possibly legacy) second column name.
	opts := delta.WriteOptions{TargetFileSize: largeTargetFileSize, Schema: snap.Schema()}
	str := bloom.Stringifier{}
	tap := func(r []any) {
		if filters == nil {
			return
		}
		if i, ok := pos[r[0].(string)]; ok && filters[i] != nil && r[1] != nil {
			filters[i].AddString(str.String(r[1], c.typ))
		}
	}
	seq := func(yield func([]any, error) bool) {
		for _, a := range summarised {
			cell, err := s.summaryCell(a, ci0)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, v := range cell {
				r := []any{a.URI, v}
				tap(r)
				if !yield(r, nil) {
					return
				}
			}
		}
		if len(engineLarge) == 0 {
			return
		}
		var q string
		if c.kind == kindTemporal {
			q = fmt.Sprintf("SELECT filename, {'value': v, 'max_ts': max(ts)} FROM %s s WHERE filename IN %s GROUP BY filename, v", valuesFrom(c), sqlInList(engineLarge))
		} else {
			q = fmt.Sprintf("SELECT DISTINCT filename, v FROM %s s WHERE filename IN %s AND v IS NOT NULL", valuesFrom(c), sqlInList(engineLarge))
		}
		for r, err := range s.querySeq(ctx, q, tap) {
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
	_, err = t.Append(ctx, seq, opts)
	return err
}

// buildBloom builds each engine file's filter of bloom index b by streaming the
// values through it (§12 item 2): memory is the filters' size, ~1.2 bytes per
// distinct value at 1% FPR, never the values. A file without a non-null
// value gets a null cell (§3.5).
func (s *session) buildBloom(ctx context.Context, b bloomCol, batch []*fileAnalysis, pos map[string]int, rows [][]any, ci int) error {
	filters := make([]*bloom.Filter, len(batch))
	for i, a := range batch {
		if a.sum != nil {
			continue // summarised in Go
		}
		if n := a.Counts[b.name]; n > 0 {
			f, err := bloom.New(n, b.fpr)
			if err != nil {
				return &BloomBuildError{Column: b.name, FPR: b.fpr, Err: err}
			}
			filters[i] = f
		}
	}
	str := bloom.Stringifier{}
	q := fmt.Sprintf("SELECT filename, v FROM %s s WHERE v IS NOT NULL", valuesFrom(b.valueCol))
	if err := s.query(ctx, q, func(r []any) error {
		if i, ok := pos[r[0].(string)]; ok && filters[i] != nil {
			filters[i].AddString(str.String(r[1], b.typ))
		}
		return nil
	}); err != nil {
		return err
	}
	for i, f := range filters {
		if f != nil {
			rows[i][ci] = f.Marshal()
		}
	}
	return nil
}
