package fileindex

import (
	"context"
	"fmt"
	"iter"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/bloom"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
)

// Query is a lookup by literal values (spec §5.5): index column → the
// values any of which a file must hold in that column. Columns are
// AND-combined, values of one column OR-combined; nil values never match.
// Columns are the index's lookup columns (regular, computed, exploded alias,
// bloom, temporal, range), named as the user registered them.
type Query map[string][]any

// Limits of the relation form (§3.6, §3.10).
const (
	// RangeExactLimit: a range lookup from a relation with at most this many
	// distinct values tests each; with more it tests the bounding box
	// [min, max] of all values, a superset of the exact answer.
	RangeExactLimit = 1000
	// RangeCollectCap bounds the distinct range values collected from a
	// relation (the bounding box still covers every value): 10,000 values
	// of ≤ 40 B each keep the collection under half a MiB.
	RangeCollectCap = 10000
)

// category is the routing class of a lookup column (§5.5 step 2).
type category int

const (
	catBloom category = iota
	catTemporal
	catRange
	catRegular
)

// lookup is one column of a query.
type lookup struct {
	column string
	cat    category
	values []any // literal form: as given; relation form: distinct non-null
	// fromRows selects the relation form's join semantics (strings cast
	// to the index type, §5.6) for exact and temporal matching.
	fromRows bool
	// box, set for a relation range lookup over more than
	// RangeExactLimit values, is the [min, max] of all values.
	box []any
	// skipBloom, set when a relation held more distinct bloom values than
	// a filter can usefully test, lets every non-null filter match.
	skipBloom bool
}

// route classifies a lookup column with the precedence of §5.5 step 2:
// bloom, temporal, range, then the exact columns. A name that is none of
// them is aerr.ErrColumnNotFound (§9 item 15: the library fails with a raw
// engine analysis error instead).
func route(m *metadata.Metadata, column string) (category, error) {
	for _, b := range m.BloomIndexes {
		if b.Column == column {
			return catBloom, nil
		}
	}
	for _, t := range m.TemporalIndexes {
		if t.Column == column {
			return catTemporal, nil
		}
	}
	for _, r := range m.RangeIndexes {
		if r.Column == column {
			return catRange, nil
		}
	}
	if slices.Contains(metadata.StorageColumns(m), column) {
		return catRegular, nil
	}
	return 0, aerr.New(aerr.ErrColumnNotFound, "Column '%s' is not an index column (indexes: %v)", column, metadata.IndexColumns(m))
}

// routeName is route for a lookup column as the library resolves it: a
// name registered exactly as given routes as itself; otherwise it is sent
// to the main table, where Spark resolves columns case-insensitively (its
// default), so a unique case-insensitive match among the regular, computed
// and exploded storage columns is that column ("id" finds the index on
// "Id", measured with 0.1.8-beta). Bloom, range and temporal columns are
// matched exactly, as the library's routing does (their storage columns,
// bloom_<c> and range_<c>, never resolve from the bare name). Two
// case-insensitive matches are ErrInvalidArgument (Spark's ambiguous
// reference).
func routeName(m *metadata.Metadata, column string) (string, category, error) {
	cat, err := route(m, column)
	if err == nil {
		return column, cat, nil
	}
	temporal := map[string]bool{}
	for _, t := range m.TemporalIndexes {
		temporal[t.Column] = true
	}
	var found []string
	for _, c := range metadata.StorageColumns(m) {
		if !temporal[c] && strings.EqualFold(c, column) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		return "", 0, err
	case 1:
		return found[0], catRegular, nil
	}
	return "", 0, aerr.Invalid("Column '%s' is ambiguous: it matches the index columns %v without regard to case", column, found)
}

// Locate returns the data files that may hold rows matching q (spec §5.5):
// sorted, distinct file URIs as the index rows record them. Exact columns
// (regular, computed, exploded, temporal) never return a file without a
// match; bloom columns may return false positives; range columns return
// every file whose [min, max] holds a value.
//
// Semantics: per column, nulls are dropped and the rest OR-ed; columns and
// categories are AND-ed, so a column matching nothing empties the result
// (§9 item 15: so does a regular column given only nulls). A temporal
// column yields, per value, only the file holding its newest version
// (§3.7). Literals are coerced as Spark 3.5 does (coerce.go); bloom values
// are not (§3.5). An empty query, or an index never updated, locates
// nothing.
//
// Errors: ErrInvalidArgument for a nil query or a value Spark could not
// compare with the column; ErrColumnNotFound for a column that is not an
// index column, or one registered but not yet built by an update; the
// preflight's errors (§4.8); storage errors.
//
// Cost: see view.go. Locate is safe for concurrent use.
func (fi *FileIndex) Locate(ctx context.Context, q Query) ([]string, error) {
	if q == nil {
		return nil, aerr.Invalid("locate: the query must not be nil")
	}
	if err := fi.ix.EnsureStorageReady(ctx); err != nil {
		return nil, err
	}
	m := fi.ix.Metadata()
	cols := make([]string, 0, len(q))
	for c := range q {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	lks := make([]lookup, 0, len(cols))
	for _, c := range cols {
		name, cat, err := routeName(m, c)
		if err != nil {
			return nil, err
		}
		lks = append(lks, lookup{column: name, cat: cat, values: q[c]})
	}
	files, _, err := fi.locate(ctx, m, lks)
	return files, err
}

// LocateFromRows is Locate with the values taken from a relation (spec
// §5.6, the DataFrame form): rows are aligned with columns, each an index
// column; the distinct non-null values of each column are looked up. It
// differs from Locate in three ways: values of a range column beyond
// RangeExactLimit are matched by their bounding box; a string value joined
// with a numeric or date column is cast to the column type (so "03" matches
// 3); a column holding more distinct values than its bloom filters can
// usefully test (bloom.MaxUsefulProbes) skips the bloom test rather than
// truncating the values (§12 item 3).
//
// Memory: the distinct values of each exact, temporal and bloom column are
// held while the rows are read (range columns: at most RangeCollectCap).
func (fi *FileIndex) LocateFromRows(ctx context.Context, columns []string, rows iter.Seq2[[]any, error]) ([]string, error) {
	files, _, err := fi.locateRows(ctx, columns, rows)
	return files, err
}

// locateRows is LocateFromRows with the plan (LocateKeys' union form).
func (fi *FileIndex) locateRows(ctx context.Context, columns []string, rows iter.Seq2[[]any, error]) ([]string, LocatePlan, error) {
	if len(columns) == 0 {
		return nil, LocatePlan{}, aerr.Invalid("locate: at least one column is required")
	}
	if err := fi.ix.EnsureStorageReady(ctx); err != nil {
		return nil, LocatePlan{}, err
	}
	m := fi.ix.Metadata()
	lks, err := collectLookups(m, fi.cfg.AutoBloomFPR, columns, rows)
	if err != nil {
		return nil, LocatePlan{}, err
	}
	return fi.locate(ctx, m, lks)
}

// collectLookups reads the relation once and builds one lookup per column.
func collectLookups(m *metadata.Metadata, autoFPR float64, columns []string, rows iter.Seq2[[]any, error]) ([]lookup, error) {
	type acc struct {
		lookup
		seen     map[string]struct{}
		min, max any
		bound    int // bloom: the useful probe count
	}
	accs := make([]*acc, len(columns))
	for i, c := range columns {
		c, cat, err := routeName(m, c)
		if err != nil {
			return nil, err
		}
		a := &acc{lookup: lookup{column: c, cat: cat, fromRows: true}, seen: make(map[string]struct{}), bound: math.MaxInt}
		if cat == catBloom {
			a.bound = probeBound(bloomFPR(m, c))
		}
		accs[i] = a
	}
	for row, err := range rows {
		if err != nil {
			return nil, err
		}
		if len(row) != len(columns) {
			return nil, aerr.Invalid("locate: row has %d values for %d columns", len(row), len(columns))
		}
		for i, v := range row {
			a := accs[i]
			if v == nil || a.skipBloom {
				continue
			}
			if a.cat == catRange {
				if a.min == nil {
					a.min, a.max = v, v
				} else {
					if c, ok := compareValues(v, a.min); ok && c < 0 {
						a.min = v
					}
					if c, ok := compareValues(v, a.max); ok && c > 0 {
						a.max = v
					}
				}
				if len(a.values) >= RangeCollectCap {
					continue
				}
			}
			k := fmt.Sprintf("%T\x00%v", v, v)
			if _, dup := a.seen[k]; dup {
				continue
			}
			a.seen[k] = struct{}{}
			a.values = append(a.values, v)
			if a.cat == catBloom && len(a.values) > a.bound {
				a.skipBloom, a.values, a.seen = true, nil, nil
			}
		}
	}
	out := make([]lookup, len(accs))
	for i, a := range accs {
		if a.cat == catRange && len(a.values) > RangeExactLimit {
			a.box, a.values = []any{a.min, a.max}, nil
		}
		out[i] = a.lookup
	}
	return out, nil
}

// bloomFPR returns the configured FPR of a bloom column.
func bloomFPR(m *metadata.Metadata, column string) float64 {
	for _, b := range m.BloomIndexes {
		if b.Column == column {
			return b.FPR
		}
	}
	return 0
}

// probeBound is the largest useful probe count of filters built at fpr
// (§12 item 3); an invalid fpr (a metadata entry without one) bounds
// nothing.
func probeBound(fpr float64) int {
	if !(fpr > 0 && fpr < 1) {
		return math.MaxInt
	}
	return bloom.MaxUsefulProbes(fpr)
}

// locate evaluates the lookups on the view of the latest version.
func (fi *FileIndex) locate(ctx context.Context, m *metadata.Metadata, lks []lookup) ([]string, LocatePlan, error) {
	plan := LocatePlan{Version: -1}
	if len(lks) == 0 {
		return []string{}, plan, nil
	}
	ctx, cost := withCost(ctx)
	v, err := fi.readyView(ctx)
	if err != nil || v == nil {
		return []string{}, plan, err
	}
	src, _ := fi.ix.StoredSchema() // types of bloom columns; nil tolerated
	files, err := fi.locateIn(ctx, v, m, src, lks)
	return files, v.plan(cost), err
}

// readyView returns the view of the latest version with its file list
// loaded, nil when the index has no main table.
func (fi *FileIndex) readyView(ctx context.Context) (*tableView, error) {
	v, err := fi.currentView(ctx)
	if err != nil || v == nil {
		return nil, err
	}
	if err := v.base(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// locateIn evaluates the lookups on v: categories in routing order, AND-ed.
// src gives the types of bloom columns (nil tolerated).
func (fi *FileIndex) locateIn(ctx context.Context, v *tableView, m *metadata.Metadata, src *schema.Struct, lks []lookup) ([]string, error) {
	slices.SortStableFunc(lks, func(a, b lookup) int { return int(a.cat) - int(b.cat) })
	var result fileSet
	for _, lk := range lks {
		var s fileSet
		var err error
		switch lk.cat {
		case catBloom:
			s, err = fi.evalBloom(ctx, v, m, src, lk)
		case catTemporal:
			s, err = fi.evalTemporal(ctx, v, lk)
		case catRange:
			s, err = fi.evalRange(ctx, v, lk)
		default:
			s, err = fi.evalRegular(ctx, v, m, lk)
		}
		if err != nil {
			return nil, err
		}
		if result == nil {
			result = s
		} else {
			result = result.intersect(s)
		}
		if len(result) == 0 {
			return []string{}, nil // AND: nothing can come back
		}
	}
	return v.names(result), nil
}

// notBuilt reports a registered index column that the main table does not
// have yet (registered after the last update).
func notBuilt(column string) error {
	return aerr.New(aerr.ErrColumnNotFound, "Column '%s' is registered but not built yet; run update to index it", column)
}

// stringProbes renders the distinct non-null values with the one bloom
// stringification (§3.5: each with its own Go type, not cast) and hashes
// them.
func stringProbes(values []any, t schema.Type) []probe {
	var st bloom.Stringifier
	seen := make(map[string]struct{}, len(values))
	ps := make([]probe, 0, len(values))
	for _, v := range values {
		if v == nil {
			continue
		}
		s := st.String(v, t)
		if _, dup := seen[s]; dup {
			continue
		}
		seen[s] = struct{}{}
		ps = append(ps, newProbe(s))
	}
	return ps
}

// evalBloom is §3.5's lookup with §12 item 3's bound: files whose filter
// may hold a value; null filters never match; with more values than the
// filters can usefully test, every non-null filter matches.
func (fi *FileIndex) evalBloom(ctx context.Context, v *tableView, m *metadata.Metadata, src *schema.Struct, lk lookup) (fileSet, error) {
	name := BloomColumn(lk.column)
	if !v.hasColumn(name) {
		return fileSet{}, nil
	}
	col, err := v.column(ctx, name, viewBloom)
	if err != nil {
		return nil, err
	}
	var t schema.Type
	if src != nil {
		if f, ok := src.Field(lk.column); ok {
			t = f.Type
		}
	}
	ps := stringProbes(lk.values, t)
	skip := lk.skipBloom || len(ps) > probeBound(bloomFPR(m, lk.column))
	if len(ps) == 0 && !skip {
		return fileSet{}, nil
	}
	out := make(fileSet)
	for id, f := range col.blooms {
		if f != nil && (skip || f.mightContainAny(ps)) {
			out[int32(id)] = struct{}{}
		}
	}
	return out, nil
}

// evalTemporal is §3.7's lookup: per queried value, the one file holding
// its greatest max_ts (nulls last; ties go to the smallest filename, so the
// answer is deterministic).
func (fi *FileIndex) evalTemporal(ctx context.Context, v *tableView, lk lookup) (fileSet, error) {
	if !v.hasColumn(lk.column) {
		return nil, notBuilt(lk.column)
	}
	col, err := v.column(ctx, lk.column, viewTemporal)
	if err != nil {
		return nil, err
	}
	keys, err := inKeys(lk.column, col.elem, lk.values, lk.fromRows)
	if err != nil {
		return nil, err
	}
	best := make(map[string]temporalEntry, len(keys))
	consider := func(k string, e temporalEntry) {
		b, ok := best[k]
		if !ok || newer(e, b, v.files) {
			best[k] = e
		}
	}
	col, found, err := v.temporalEntries(ctx, lk.column, col, keys)
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		for _, e := range found[i] {
			consider(k, e)
		}
	}
	if len(keys) > 0 && len(col.nullIDs) > 0 {
		want := make(map[string]struct{}, len(keys))
		for _, k := range keys {
			want[k] = struct{}{}
		}
		cands := make([]string, len(col.nullIDs))
		for i, id := range col.nullIDs {
			cands[i] = v.files[id]
		}
		slices.Sort(cands)
		err := fi.scanLarge(ctx, lk.column, cands, func(filename string, value any) {
			s, _ := value.([]any)
			if len(s) != 2 || s[0] == nil {
				return
			}
			k, ok := valueKey(s[0], col.elem)
			if !ok {
				return
			}
			if _, ok := want[k]; ok {
				consider(k, temporalEntry{file: v.ids[filename], maxTS: s[1]})
			}
		})
		if err != nil {
			return nil, err
		}
	}
	out := make(fileSet, len(best))
	for _, e := range best {
		out[e.file] = struct{}{}
	}
	return out, nil
}

// newer reports whether a ranks before b: a greater max_ts, nulls last,
// ties to the smaller filename.
func newer(a, b temporalEntry, files []string) bool {
	switch {
	case a.maxTS == nil && b.maxTS == nil:
	case b.maxTS == nil:
		return true
	case a.maxTS == nil:
		return false
	default:
		if c, ok := compareValues(a.maxTS, b.maxTS); ok && c != 0 {
			return c > 0
		}
	}
	return files[a.file] < files[b.file]
}

// evalRange is §3.6's lookup: files whose min and max are non-null and
// hold some value (inclusive), or, for a bounding box, overlap it.
func (fi *FileIndex) evalRange(ctx context.Context, v *tableView, lk lookup) (fileSet, error) {
	name := RangeColumn(lk.column)
	if !v.hasColumn(name) {
		return fileSet{}, nil
	}
	col, err := v.column(ctx, name, viewRange)
	if err != nil {
		return nil, err
	}
	out := make(fileSet)
	if lk.box != nil {
		lo, ok1 := rangeLiteral(lk.box[0], col.elem)
		hi, ok2 := rangeLiteral(lk.box[1], col.elem)
		if !ok1 || !ok2 {
			return out, nil
		}
		for id, r := range col.ranges {
			if r.min == nil || r.max == nil {
				continue
			}
			c1, ok1 := compareValues(r.max, lo)
			c2, ok2 := compareValues(r.min, hi)
			if ok1 && ok2 && c1 >= 0 && c2 <= 0 {
				out[int32(id)] = struct{}{}
			}
		}
		return out, nil
	}
	lits := make([]any, 0, len(lk.values))
	for _, l := range lk.values {
		if x, ok := rangeLiteral(l, col.elem); ok {
			lits = append(lits, x)
		}
	}
	if len(lits) == 0 {
		return out, nil
	}
	// Sorted literals: per file, the first literal ≥ min decides, so a
	// lookup costs files × log(values) comparisons.
	sort.SliceStable(lits, func(i, j int) bool {
		c, _ := compareValues(lits[i], lits[j])
		return c < 0
	})
	for id, r := range col.ranges {
		if r.min == nil || r.max == nil {
			continue
		}
		i := sort.Search(len(lits), func(i int) bool {
			c, ok := compareValues(lits[i], r.min)
			return ok && c >= 0
		})
		if i < len(lits) {
			if c, ok := compareValues(lits[i], r.max); ok && c <= 0 {
				out[int32(id)] = struct{}{}
			}
		}
	}
	return out, nil
}

// evalRegular is §3.2's lookup for regular, computed and exploded columns:
// files whose value set holds a queried value, from the main-table arrays
// and the large-index rows of candidate files (view_large.go).
func (fi *FileIndex) evalRegular(ctx context.Context, v *tableView, m *metadata.Metadata, lk lookup) (fileSet, error) {
	if !v.hasColumn(lk.column) {
		return nil, notBuilt(lk.column)
	}
	col, err := v.column(ctx, lk.column, viewExact)
	if err != nil {
		return nil, err
	}
	keys, err := inKeys(lk.column, col.elem, lk.values, lk.fromRows)
	if err != nil {
		return nil, err
	}
	col, found, err := v.exactIDs(ctx, lk.column, col, keys)
	if err != nil {
		return nil, err
	}
	out := make(fileSet)
	for _, ids := range found {
		for _, id := range ids {
			out[id] = struct{}{}
		}
	}
	if len(keys) == 0 || len(col.nullIDs) == 0 {
		return out, nil
	}
	cands, err := fi.largeCandidates(ctx, v, m, lk, col)
	if err != nil || len(cands) == 0 {
		return out, err
	}
	want := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		want[k] = struct{}{}
	}
	err = fi.scanLarge(ctx, lk.column, cands, func(filename string, value any) {
		if k, ok := valueKey(value, col.elem); ok {
			if _, ok := want[k]; ok {
				out[v.ids[filename]] = struct{}{}
			}
		}
	})
	return out, err
}

// largeCandidates returns the sorted filenames whose large-index rows a
// regular lookup must read: files with a null main cell, narrowed by the
// auto-bloom filters when the column has them (§3.9, §12 items 3 and 5).
func (fi *FileIndex) largeCandidates(ctx context.Context, v *tableView, m *metadata.Metadata, lk lookup, col *viewColumn) ([]string, error) {
	ids := col.nullIDs
	auto := AutoBloomColumn(lk.column)
	if slices.Contains(m.AutoBloomIndexes, lk.column) && v.hasColumn(auto) {
		ps := stringProbes(lk.values, col.elem)
		if len(ps) <= probeBound(fi.cfg.AutoBloomFPR) {
			ab, err := v.column(ctx, auto, viewBloom)
			if err != nil {
				return nil, err
			}
			kept := make([]int32, 0, len(ids))
			for _, id := range ids {
				// A null auto-bloom cell: the file was never large, so it
				// stays a candidate.
				if f := ab.blooms[id]; f == nil || f.mightContainAny(ps) {
					kept = append(kept, id)
				}
			}
			ids = kept
		}
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = v.files[id]
	}
	slices.Sort(names)
	return names, nil
}
