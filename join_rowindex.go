package ariadne

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// A join can read its index side through a row index on the join column:
// the row index's key directory says where each key's rows are (file, row
// group, row) without reading a data file, so the join reads only those
// rows instead of decoding the key column of every located file (see
// fileindex.RowLocator). The face owns both indexes, so it is the face
// that hands the file index a locator over the row index (the file index
// never imports the row index).

// The values of JoinRequest.RowIndex.
const (
	// JoinRowIndexAuto (or "") uses a row index on the join column when
	// one holds every located file unchanged and few rows match, or when
	// the rows it finds are the answer as they are (a plain inner join:
	// fileindex's direct answer).
	JoinRowIndexAuto = "auto"
	// JoinRowIndexForce uses it whenever one holds every located file
	// unchanged, however many rows match.
	JoinRowIndexForce = "force"
	// JoinRowIndexOff never uses one.
	JoinRowIndexOff = "off"
)

// rowIndexMatchFraction is the share of the located files' rows above
// which the auto mode leaves a join to the file index's own plan (late
// materialization or the engine's scan). Both the row-index path and late
// materialization read each matching row's pages; the row-index path
// saves decoding the key column of the located files but pays a key
// directory lookup per key and a read per run of rows, so it wins while
// matching rows are few. The file index's planner hands the located files
// to the engine's scan above 5 % (fileindex.scanMatchFraction); the row
// index path stops at the same share. A join the file index answers
// directly from the rows read (fileindex's direct answer) has no such
// limit: it skips DuckDB altogether, which the scan does not.
const rowIndexMatchFraction = 0.05

// maxDirectRowIndexRows caps the matching rows of a join answered directly
// in auto mode (no share limit applies to it): the answer streams, but the
// positions are held while it does, 8 B a row (256 MiB at the cap).
const maxDirectRowIndexRows = 1 << 25

// maxRowIndexJoinKeys caps the distinct keys the auto mode looks up in
// the row index (in one batched lookup, rowindex.LocateKeys).
const maxRowIndexJoinKeys = 10000

// statConcurrency bounds the stats the freshness check (covered) has in
// flight: on an object store each is a request of tens of milliseconds,
// and a many-key join locates up to every file (300 stats one after
// another for a 1,000-key join on the bench lake).
const statConcurrency = 16

// joinRowLocator implements fileindex.RowLocator over the index's row
// indexes.
type joinRowLocator struct {
	ix    *Index
	force bool
	// stats bounds the concurrent stats of covered (0: statConcurrency).
	stats int
}

// rowLocator returns the locator for a join's RowIndex mode (nil: off).
func (ix *Index) rowLocator(mode string) (fileindex.RowLocator, error) {
	switch strings.ToLower(mode) {
	case "", JoinRowIndexAuto:
		if ix.Format() != "parquet" {
			return nil, nil
		}
		return &joinRowLocator{ix: ix}, nil
	case JoinRowIndexForce:
		return &joinRowLocator{ix: ix, force: true}, nil
	case JoinRowIndexOff:
		return nil, nil
	}
	return nil, aerr.Invalid("join: row index mode %q: want auto, force or off", mode)
}

// LocateRows looks the keys up in the first row index (by name) on col;
// see fileindex.RowLocator.
func (l *joinRowLocator) LocateRows(ctx context.Context, col string, keys []any, files []string, direct bool) (fileindex.LocatedRows, string, error) {
	defs, err := l.ix.RowIndexes(ctx)
	if err != nil {
		return fileindex.LocatedRows{}, "", err
	}
	var def *rowindex.Definition
	for i := range defs {
		if defs[i].Key == col {
			def = &defs[i]
			break
		}
	}
	if def == nil {
		return fileindex.LocatedRows{}, "no row index on " + col, nil
	}
	if !l.force && len(keys) > maxRowIndexJoinKeys {
		return fileindex.LocatedRows{}, fmt.Sprintf("row index %s not used: %d keys (over %d)", def.Name, len(keys), maxRowIndexJoinKeys), nil
	}
	ri, err := l.ix.rowIndex(ctx, def.Name)
	if err != nil {
		return fileindex.LocatedRows{}, "", err
	}
	man := ri.Manifest()
	entries, infos, why, err := l.covered(ctx, man, files)
	if err != nil {
		return fileindex.LocatedRows{}, "", err
	}
	if entries == nil && strings.HasPrefix(why, "missing") {
		// The handle may serve an older version than the newest (another
		// process indexed the file since): read the newest manifest once.
		if err := l.ix.refreshRowIndex(ctx, def.Name); err != nil {
			return fileindex.LocatedRows{}, "", err
		}
		if ri, err = l.ix.rowIndex(ctx, def.Name); err != nil {
			return fileindex.LocatedRows{}, "", err
		}
		man = ri.Manifest()
		if entries, infos, why, err = l.covered(ctx, man, files); err != nil {
			return fileindex.LocatedRows{}, "", err
		}
	}
	if entries == nil {
		return fileindex.LocatedRows{}, fmt.Sprintf("row index %s v%d not used: %s", def.Name, man.Version, why), nil
	}
	var located int64
	for _, fe := range entries {
		located += fe.Rows
	}
	budget := int64(rowIndexMatchFraction * float64(located))
	// Every key in one batched lookup: each fragment group is read and
	// decoded once for all the keys it may hold.
	lk := make([]any, len(keys))
	for i, k := range keys {
		if n, ok := pqrow.AsInt64(k); ok {
			lk[i] = n
		} else if s, ok := k.(string); ok {
			lk[i] = s
		} else {
			return fileindex.LocatedRows{}, fmt.Sprintf("row index %s not used: key %v (%T) is neither an integer nor a string", def.Name, k, k), nil
		}
	}
	runs, cost, err := ri.LocateKeys(ctx, lk)
	if err != nil {
		return fileindex.LocatedRows{}, "", err
	}
	index := cost.Requests
	var rows int64
	for _, r := range runs {
		if fe, ok := entries[r.File]; ok {
			if r.RowGroup < 0 || r.RowGroup >= len(fe.RowGroupStarts) {
				return fileindex.LocatedRows{}, fmt.Sprintf("row index %s not used: row group %d of %s out of range", def.Name, r.RowGroup, r.File), nil
			}
			rows += r.N
		}
	}
	if !l.force && !direct && rows > budget {
		return fileindex.LocatedRows{}, fmt.Sprintf("row index %s not used: over %d of the %d located rows match (%.0f %% limit)",
			def.Name, rows, located, 100*rowIndexMatchFraction), nil
	}
	if !l.force && direct && rows > maxDirectRowIndexRows {
		return fileindex.LocatedRows{}, fmt.Sprintf("row index %s not used: %d rows match (over %d positions to hold)",
			def.Name, rows, maxDirectRowIndexRows), nil
	}
	// Runs in file, row group and row order, rows listed per row group.
	slices.SortFunc(runs, func(a, b rowindex.KeyRun) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.RowGroup, b.RowGroup), cmp.Compare(a.Row, b.Row))
	})
	out := map[string][]fileindex.RowGroupRows{}
	for _, r := range runs {
		if _, ok := entries[r.File]; !ok {
			continue // a file the file index did not locate
		}
		pos := out[r.File]
		if n := len(pos); n == 0 || pos[n-1].RowGroup != r.RowGroup {
			pos = append(pos, fileindex.RowGroupRows{RowGroup: r.RowGroup})
		}
		g := &pos[len(pos)-1]
		g.Rows = slices.Grow(g.Rows, int(r.N))
		for i := range r.N {
			g.Rows = append(g.Rows, r.Row+i)
		}
		out[r.File] = pos
	}
	seen := make(map[string]store.ObjectInfo, len(out))
	for f := range out {
		seen[f] = infos[f]
	}
	return fileindex.LocatedRows{Rows: out, Seen: seen}, fmt.Sprintf("row index %s v%d: %d keys, %d rows in %d of %d located files (%d index requests)",
		def.Name, man.Version, len(keys), rows, len(out), len(files), index), nil
}

// covered returns the row index's entries of the located files and what
// the store says of each now, or nil and why when one is missing from the
// row index (not indexed yet, or skipped) or changed since it was indexed
// (another size or ETag). Each located file is stated, up to l.stats at
// once; the first file in order that is missing, changed or fails decides
// the answer, as if they were stated one after another, and no file after
// one known to decide is stated.
func (l *joinRowLocator) covered(ctx context.Context, man *rowindex.Manifest, files []string) (map[string]*rowindex.FileEntry, map[string]store.ObjectInfo, string, error) {
	byURI := make(map[string]*rowindex.FileEntry, len(man.Files))
	for i := range man.Files {
		byURI[man.Files[i].URI] = &man.Files[i]
	}
	entries := make([]*rowindex.FileEntry, len(files))
	last := len(files) // files[last:] need no stat: one before is missing
	for i, f := range files {
		fe, ok := byURI[f]
		if !ok {
			last = i
			break
		}
		entries[i] = fe
	}
	type statResult struct {
		info    store.ObjectInfo
		changed bool
		err     error
	}
	res := make([]statResult, last)
	limit := l.stats
	if limit <= 0 {
		limit = statConcurrency
	}
	// decided is the first file known to decide the answer (changed or
	// failed) so far: files after it are not stated.
	var decided atomic.Int64
	decided.Store(int64(last))
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range last {
		sem <- struct{}{}
		if int64(i) > decided.Load() {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := &res[i]
			st, key, err := l.ix.s.res.Resolve(ctx, files[i])
			if err == nil {
				r.info, err = st.Stat(ctx, key)
			}
			fe := entries[i]
			r.err = err
			r.changed = err == nil && (r.info.Size != fe.Size || (r.info.ETag != "" && fe.ETag != "" && r.info.ETag != fe.ETag))
			if r.err != nil || r.changed {
				for {
					d := decided.Load()
					if d <= int64(i) || decided.CompareAndSwap(d, int64(i)) {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	out := make(map[string]*rowindex.FileEntry, len(files))
	infos := make(map[string]store.ObjectInfo, len(files))
	for i, r := range res {
		switch {
		case r.err != nil:
			return nil, nil, "", r.err
		case r.changed:
			return nil, nil, "changed since indexed: " + files[i], nil
		}
		out[files[i]] = entries[i]
		infos[files[i]] = r.info
	}
	if last < len(files) {
		return nil, nil, "missing located file " + files[last], nil
	}
	return out, infos, "", nil
}

// JoinRowLocator returns the row locator Join uses for a RowIndex mode
// (auto, force, off; nil for off), for callers that join through package
// fileindex directly (the benchmark) and want the row-index path.
func (ix *Index) JoinRowLocator(mode string) (fileindex.RowLocator, error) {
	return ix.rowLocator(mode)
}
