package fileindex

import (
	"context"
	"fmt"
	"slices"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/store"
)

// The join's row-index path. When the face has a row index on the join
// column that the prefilter picked, it can say where each key's rows are
// (data file, row group, row) from the row index's key directory, without
// reading any data file. The late path then skips its first step (decoding
// the key column of every located file) and reads only the matching rows
// of the files that hold them. The file index does not know row indexes
// (data flows from the face down): the face passes a RowLocator in
// JoinOptions, and the file index asks it once the located files and the
// key set are known.

// PathRowIndex: a row index on the join column gave the matching rows'
// positions; only those rows were read (see RowLocator).
const PathRowIndex JoinPath = "rowindex"

// RowGroupRows are rows of one row group of a data file, as positions in
// the row group (0-based, ascending).
type RowGroupRows struct {
	RowGroup int
	Rows     []int64
}

// LocatedRows is a RowLocator's answer.
type LocatedRows struct {
	// Rows are the matching rows by file; files absent from the map hold
	// no such row.
	Rows map[string][]RowGroupRows
	// Seen holds, for files of Rows, the object attributes (size, ETag,
	// modification time) the locator got from the store for this join
	// when it checked the file against its row index. Opening such a file
	// takes them instead of asking the store again: one request less per
	// file on an object store, and the file's size and footer-cache
	// identity are those the row index was checked against. Reads still go
	// by key: a file replaced after the check is read with the checked
	// version's size and footer against the new bytes, which fails as
	// damaged unless the layout happens to match (the race any stat-then-
	// read open has, over a longer window). Optional (nil: each file is
	// stated when opened).
	Seen map[string]store.ObjectInfo
}

// RowLocator finds the rows of a join's keys through a row index (the
// face implements it over package rowindex).
type RowLocator interface {
	// LocateRows returns, for the distinct keys of join column col
	// (integers or strings, as the data files' rows carry them), the rows
	// of the data files in files whose key is one of them, by file
	// (LocatedRows.Rows). It returns nil Rows and the reason when it
	// cannot or should not answer (no row index on col, a located file
	// the row index does not hold or that changed since it was indexed,
	// too many rows for the path to pay off); the join then plans as
	// without a locator. why is the plan's reason either way. direct says
	// the rows read will be the join's answer as they are (join_direct.go:
	// no DuckDB load, join or conversion back), which pays off at any
	// share of matching rows; otherwise the rows are loaded into DuckDB
	// like the other paths' and the path pays off only while they are
	// few.
	LocateRows(ctx context.Context, col string, keys []any, files []string, direct bool) (rows LocatedRows, why string, err error)
}

// locateByRowIndex asks the locator for the prefilter's keys' rows in the
// located files; nil Rows (and the reason) when it does not answer.
func locateByRowIndex(ctx context.Context, loc RowLocator, pf *prefilter, files []string, direct bool) (LocatedRows, string, error) {
	keys := make([]any, 0, len(pf.keys))
	for k := range pf.keys {
		if k != nil {
			keys = append(keys, k)
		}
	}
	rows, why, err := loc.LocateRows(ctx, pf.col, keys, files, direct)
	if err != nil {
		return LocatedRows{}, "", fmt.Errorf("join: row index on %s: %w", pf.col, err)
	}
	return rows, why, nil
}

// positionMatches turns a file's row positions into the late path's
// matches: one per row group, rows ascending and distinct. Keys are left
// unset so the key column is read from the file and checked (see
// lateFile.read): a row whose key is not in the set is dropped.
func positionMatches(pos []RowGroupRows) []pqrow.Match {
	byGroup := map[int][]int64{}
	for _, p := range pos {
		byGroup[p.RowGroup] = append(byGroup[p.RowGroup], p.Rows...)
	}
	groups := make([]int, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	out := make([]pqrow.Match, 0, len(groups))
	for _, g := range groups {
		rows := byGroup[g]
		slices.Sort(rows)
		out = append(out, pqrow.Match{RowGroup: g, Rows: slices.Compact(rows)})
	}
	return out
}

func (s *lateStats) staleCount() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mismatched
}
