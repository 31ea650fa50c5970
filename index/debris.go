package index

import (
	"context"
	"time"

	"github.com/ariadne-go/ariadne/store"
)

// SweepTemps deletes the temporary files that killed writes left in the
// index's folders (its tables, row indexes and FileList) and that were last
// modified before cutoff (store.SweepTemps; only local folders have them).
// It returns their keys under the store root. Vacuum calls it with its
// retention.
func (ix *Index) SweepTemps(ctx context.Context, cutoff time.Time) ([]string, error) {
	var all []string
	for _, dir := range []string{ix.paths.Dir, ix.paths.FileList} {
		keys, err := store.SweepTemps(ctx, ix.cat.root, dir, cutoff)
		all = append(all, keys...)
		if err != nil {
			return all, err
		}
	}
	return all, nil
}
