package fileindex

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/ariadne-go/ariadne/aerr"
)

// LocatePlan says how a locate was answered.
type LocatePlan struct {
	// Version is the main table's Delta version the answer is of, -1 when
	// the index has no main table (or the query was empty).
	Version int64
	// Snapshot is set when the view of that version came from its locate
	// snapshot (no scan of the main table).
	Snapshot bool
	// Note says why the view scans the main table instead: no snapshot of
	// the version (an index written by the Spark library, or before this
	// version), or one that could not be used (stale, damaged).
	Note string
	// SnapshotReads and SnapshotBytes count the ranged reads of the
	// snapshot this call made (0 once what it needs is in memory).
	SnapshotReads, SnapshotBytes int64
}

// plan reports how v answers, with the snapshot reads of one call.
func (v *tableView) plan(cost *locateCost) LocatePlan {
	v.colMu.Lock()
	note := v.note
	v.colMu.Unlock()
	return LocatePlan{
		Version:       v.snap.Version(),
		Snapshot:      v.ls != nil && note == "",
		Note:          note,
		SnapshotReads: cost.reads.Load(),
		SnapshotBytes: cost.bytes.Load(),
	}
}

// LocateWithPlan is Locate, also returning how the answer was found.
func (fi *FileIndex) LocateWithPlan(ctx context.Context, q Query) ([]string, LocatePlan, error) {
	if q == nil {
		return nil, LocatePlan{}, aerr.Invalid("locate: the query must not be nil")
	}
	if err := fi.ix.EnsureStorageReady(ctx); err != nil {
		return nil, LocatePlan{}, err
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
			return nil, LocatePlan{}, err
		}
		lks = append(lks, lookup{column: name, cat: cat, values: q[c]})
	}
	return fi.locate(ctx, m, lks)
}

// KeysOptions configure LocateKeys.
type KeysOptions struct {
	// PerKey also answers each distinct key (row) on its own.
	PerKey bool
}

// KeyFiles is the answer for one key.
type KeyFiles struct {
	Key   []any    // the key's values, aligned with the columns
	Files []string // sorted, distinct
}

// KeysResult is the answer of LocateKeys.
type KeysResult struct {
	// Files is the union: without PerKey, LocateFromRows's answer (per
	// column, files holding any of its values; AND across columns); with
	// PerKey, the union of the per-key answers, which for several columns
	// can be smaller (a file must match all columns of one key).
	Files []string
	// PerKey holds, with KeysOptions.PerKey, one entry per distinct key in
	// the order of first appearance; a key with a null value matches no
	// file.
	PerKey []KeyFiles
	Plan   LocatePlan
}

// LocateKeys locates many keys at once (the CLI's locate --keys): rows are
// aligned with columns, each an index column. Per key, the columns are
// AND-ed as in Locate, with the relation form's casts (LocateFromRows).
//
// Cost: one view for every key (view.go); per key, the lookups of one
// value per column (exact columns: a search in the key's snapshot block
// or map; bloom and range columns: a test per file). Memory: the distinct
// keys and their answers.
func (fi *FileIndex) LocateKeys(ctx context.Context, columns []string, rows iter.Seq2[[]any, error], opts KeysOptions) (*KeysResult, error) {
	if !opts.PerKey {
		files, plan, err := fi.locateRows(ctx, columns, rows)
		if err != nil {
			return nil, err
		}
		return &KeysResult{Files: files, Plan: plan}, nil
	}
	if len(columns) == 0 {
		return nil, aerr.Invalid("locate: at least one column is required")
	}
	if err := fi.ix.EnsureStorageReady(ctx); err != nil {
		return nil, err
	}
	m := fi.ix.Metadata()
	cats := make([]category, len(columns))
	columns = slices.Clone(columns)
	for i, c := range columns {
		name, cat, err := routeName(m, c)
		if err != nil {
			return nil, err
		}
		columns[i], cats[i] = name, cat
	}
	res := &KeysResult{Files: []string{}, PerKey: []KeyFiles{}, Plan: LocatePlan{Version: -1}}
	seen := map[string]bool{}
	var keys [][]any
	for row, err := range rows {
		if err != nil {
			return nil, err
		}
		if len(row) != len(columns) {
			return nil, aerr.Invalid("locate: row has %d values for %d columns", len(row), len(columns))
		}
		k := fmt.Sprintf("%#v", row)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, slices.Clone(row))
		}
	}
	if len(keys) == 0 {
		return res, nil
	}
	ctx, cost := withCost(ctx)
	v, err := fi.readyView(ctx)
	if err != nil {
		return nil, err
	}
	if v != nil {
		if err := fi.preloadKeys(ctx, v, columns, cats, keys); err != nil {
			return nil, err
		}
	}
	src, _ := fi.ix.StoredSchema() // parsed once, not per key
	union := map[string]struct{}{}
	for _, key := range keys {
		files := []string{}
		if v != nil {
			lks := make([]lookup, len(columns))
			for i, c := range columns {
				lks[i] = lookup{column: c, cat: cats[i], fromRows: true}
				if key[i] != nil {
					lks[i].values = []any{key[i]}
				}
			}
			if files, err = fi.locateIn(ctx, v, m, src, lks); err != nil {
				return nil, err
			}
		}
		for _, f := range files {
			union[f] = struct{}{}
		}
		res.PerKey = append(res.PerKey, KeyFiles{Key: key, Files: files})
	}
	for f := range union {
		res.Files = append(res.Files, f)
	}
	slices.Sort(res.Files)
	if v != nil {
		res.Plan = v.plan(cost)
	}
	return res, nil
}

// preloadKeys reads, in one pass per column, the snapshot blocks that the
// per-key lookups of exact and temporal columns will search, so that they
// are read together (coalesced) rather than one request per key.
func (fi *FileIndex) preloadKeys(ctx context.Context, v *tableView, columns []string, cats []category, keys [][]any) error {
	for i, c := range columns {
		kind := viewExact
		switch {
		case cats[i] == catTemporal:
			kind = viewTemporal
		case cats[i] != catRegular:
			continue
		}
		if !v.hasColumn(c) {
			continue // each key's lookup reports it
		}
		col, err := v.column(ctx, c, kind)
		if err != nil {
			return err
		}
		if col.lazy == nil {
			continue
		}
		vals := make([]any, 0, len(keys))
		for _, k := range keys {
			if k[i] != nil {
				vals = append(vals, k[i])
			}
		}
		ks, err := inKeys(c, col.elem, vals, true)
		if err != nil {
			return err
		}
		// A damaged block is left to the per-key lookups, which fall back.
		_ = col.lazy.find(ctx, ks, func(int, []byte) error { return nil })
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}
