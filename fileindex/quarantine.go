package fileindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// QuarantinedFile is a tracked data file that an update set aside because
// its index values cannot enter the main table: the stored schema changed
// a column's type (create --allow-schema-mismatch) and the main table keeps
// the former type. It is listed (UpdateResult.Quarantined, Quarantined,
// `describe`), not indexed, and tried again by an update with
// UpdateOptions.RetryQuarantined once the cause is fixed.
type QuarantinedFile struct {
	File   string    `json:"file"`
	Reason string    `json:"reason"`
	At     time.Time `json:"quarantined_at"`
}

// quarantineName is the object, in the index folder, that lists the
// quarantined files (ours only: the Spark library ignores it).
const quarantineName = "_ariadne_quarantine.json"

func (fi *FileIndex) quarantineKey() string { return fi.ix.Paths().Dir + "/" + quarantineName }

// Quarantined returns the files set aside by earlier updates.
func (fi *FileIndex) Quarantined(ctx context.Context) ([]QuarantinedFile, error) {
	b, err := store.ReadAll(ctx, fi.ix.Root(), fi.quarantineKey())
	if errors.Is(err, store.ErrNotExist) {
		return []QuarantinedFile{}, nil
	}
	if err != nil {
		return nil, err
	}
	var q struct {
		Files []QuarantinedFile `json:"files"`
	}
	if err := json.Unmarshal(b, &q); err != nil {
		return nil, fmt.Errorf("fileindex: %s: %w", fi.quarantineKey(), err)
	}
	return q.Files, nil
}

// setQuarantined replaces the list (under the update lock: no other
// writer of it).
func (fi *FileIndex) setQuarantined(ctx context.Context, files []QuarantinedFile) error {
	if len(files) == 0 {
		err := fi.ix.Root().Delete(ctx, fi.quarantineKey(), nil)
		if errors.Is(err, store.ErrNotExist) {
			return nil
		}
		return err
	}
	b, err := json.MarshalIndent(struct {
		Files []QuarantinedFile `json:"files"`
	}{files}, "", "  ")
	if err != nil {
		return err
	}
	return store.WriteAll(ctx, fi.ix.Root(), fi.quarantineKey(), b, nil)
}

// addQuarantined adds files to the list (a file already listed keeps its
// first entry).
func (fi *FileIndex) addQuarantined(ctx context.Context, add []QuarantinedFile) error {
	cur, err := fi.Quarantined(ctx)
	if err != nil {
		return err
	}
	for _, f := range add {
		if !slices.ContainsFunc(cur, func(c QuarantinedFile) bool { return c.File == f.File }) {
			cur = append(cur, f)
		}
	}
	return fi.setQuarantined(ctx, cur)
}

// typeConflicts returns, for each column of ours whose name the main table
// has with another type, its position in ours and a sentence saying so.
func typeConflicts(main, ours *schema.Struct) map[int]string {
	out := map[int]string{}
	for i, f := range ours.Fields {
		j := slices.IndexFunc(main.Fields, func(g schema.Field) bool { return g.Name == f.Name })
		if j >= 0 && !schema.Equal(main.Fields[j].Type, f.Type) {
			out[i] = fmt.Sprintf("index column %s holds %s values where the main table has %s (the stored schema changed the column's type, create --allow-schema-mismatch); "+
				"restore the former type and run update --retry-quarantined, or rebuild the index (remove, create, add-files, update)",
				f.Name, f.Type, main.Fields[j].Type)
		}
	}
	return out
}

// quarantineRows filters staged rows (in ours's order) whose cells in a
// conflicting column are not null: their files are quarantined (collected
// into q), the others pass with the conflicting cells (all null) kept.
func quarantineRows(ours *schema.Struct, conflicts map[int]string, rows func(yield func([]any, error) bool), q map[string]string) func(yield func([]any, error) bool) {
	fileAt := slices.IndexFunc(ours.Fields, func(f schema.Field) bool { return f.Name == FilenameColumn })
	cols := make([]int, 0, len(conflicts))
	for c := range conflicts {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	return func(yield func([]any, error) bool) {
		for r, err := range rows {
			if err != nil {
				yield(nil, err)
				return
			}
			var why []string
			for _, c := range cols {
				if c < len(r) && !emptyCell(r[c]) {
					why = append(why, conflicts[c])
				}
			}
			if len(why) > 0 && fileAt >= 0 {
				if f, ok := r[fileAt].(string); ok {
					q[f] = strings.Join(why, "; ")
					continue
				}
			}
			if !yield(r, nil) {
				return
			}
		}
	}
}

// emptyCell reports a cell that holds no value of its type: null, or an
// empty list (a file whose column is all null has no distinct values).
// Such a cell fits the main table's column whatever its type.
func emptyCell(v any) bool {
	if v == nil {
		return true
	}
	if l, ok := v.([]any); ok {
		return len(l) == 0
	}
	return false
}
