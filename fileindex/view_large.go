package fileindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/store"
)

// Large-index tables (§3.8, §4.4) hold (filename, value) rows for the
// (file, column) pairs too large to inline. They can be far larger than
// memory, so they are never loaded whole: a lookup reads only the rows of
// candidate files, which are
//
//   - files whose main-table cell for the column is null: a large pair's
//     inline cell is always null (§3.8, §12 item 1), so no other file has
//     rows in the large table;
//   - of those, for auto-bloom columns, files whose auto-bloom filter might
//     hold a query value or whose filter cell is null (§3.9, §12 items 3
//     and 5).
//
// An empty candidate set skips the large table entirely (no request). For
// a non-empty one, the table's data files whose filename statistics
// (Delta's per-file min/max, kept for the leading column) exclude every
// candidate are not read; the others are read (the filename and value
// columns only) and their rows filtered to the candidates. The writers keep
// each source file's rows contiguous (bin-packing preserves it), so a few
// candidates touch few data files.
//
// Cost per lookup: one List of the large table's _delta_log/ plus the reads
// of the candidate data files. Nothing is cached across queries, since the
// rows are data-sized; the large table's snapshot is cached per version by
// its delta.Table.

// largeTable returns the opened large-index table of column, nil when it
// does not exist.
func (fi *FileIndex) largeTable(ctx context.Context, column string) (*delta.Table, error) {
	c := &fi.views
	c.mu.Lock()
	t := c.large[column]
	c.mu.Unlock()
	if t != nil {
		return t, nil
	}
	t, err := delta.Open(ctx, store.Sub(fi.ix.Root(), fi.ix.Paths().LargeIndex(column)))
	if errors.Is(err, delta.ErrNotATable) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fileindex: opening large index %q: %w", column, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.large == nil {
		c.large = make(map[string]*delta.Table)
	}
	if c.large[column] == nil {
		c.large[column] = t
	}
	return c.large[column], nil
}

// scanLarge calls fn with the (filename, value) rows of column's large
// table whose filename is one of candidates (sorted, distinct). The value
// column is read by position (§3.8: after a legacy migration it may carry
// the old name).
func (fi *FileIndex) scanLarge(ctx context.Context, column string, candidates []string, fn func(filename string, value any)) error {
	if len(candidates) == 0 {
		return nil
	}
	tbl, err := fi.largeTable(ctx, column)
	if err != nil || tbl == nil {
		return err
	}
	snap, err := tbl.Snapshot(ctx)
	if errors.Is(err, delta.ErrNotATable) {
		fi.views.mu.Lock()
		delete(fi.views.large, column)
		fi.views.mu.Unlock()
		return nil
	}
	if err != nil {
		return fmt.Errorf("fileindex: reading large index %q: %w", column, err)
	}
	fields := snap.Schema().Fields
	if len(fields) < 2 {
		return fmt.Errorf("fileindex: large index %q has %d columns, want (filename, value)", column, len(fields))
	}
	cand := make(map[string]struct{}, len(candidates))
	for _, c := range candidates {
		cand[c] = struct{}{}
	}
	physical := delta.PhysicalName(fields[0])
	opts := delta.ScanOptions{Columns: []string{fields[0].Name, fields[1].Name}}
	for _, f := range snap.Files() {
		if !statsMayHold(f.Stats, physical, candidates) {
			continue
		}
		for row, err := range snap.ScanFile(ctx, f, opts) {
			if err != nil {
				return fmt.Errorf("fileindex: scanning large index %q: %w", column, err)
			}
			name, _ := row[0].(string)
			if _, ok := cand[name]; ok && row[1] != nil {
				fn(name, row[1])
			}
		}
	}
	return nil
}

// statsMayHold reports whether a data file whose stats JSON gives the
// min/max of column may hold one of the sorted candidates. Files without
// usable statistics may hold anything. Delta truncates string statistics to
// pqrow.StringPrefixLength characters: the minimum then is a prefix of the
// true minimum (still a lower bound) and a truncated maximum is compared on
// its prefix.
func statsMayHold(statsJSON, column string, candidates []string) bool {
	if statsJSON == "" {
		return true
	}
	var st struct {
		Min map[string]any `json:"minValues"`
		Max map[string]any `json:"maxValues"`
	}
	if json.Unmarshal([]byte(statsJSON), &st) != nil {
		return true
	}
	lo, ok1 := st.Min[column].(string)
	hi, ok2 := st.Max[column].(string)
	if !ok1 || !ok2 {
		return true
	}
	truncated := utf8.RuneCountInString(hi) >= pqrow.StringPrefixLength
	if truncated {
		hi = prefixRunes(hi, pqrow.StringPrefixLength)
	}
	i, _ := slices.BinarySearch(candidates, lo)
	for _, c := range candidates[i:] {
		if truncated {
			c = prefixRunes(c, pqrow.StringPrefixLength)
		}
		// Candidates are sorted, and so are their prefixes: the first one
		// above hi decides.
		return strings.Compare(c, hi) <= 0
	}
	return false
}

// prefixRunes returns the first n runes of s, dropping a U+10FFFF or
// U+FFFF tie-breaker a truncating writer may have appended.
func prefixRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return strings.TrimRight(s, "\U0010FFFF\uFFFF")
}
