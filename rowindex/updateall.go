package rowindex

import (
	"context"
	"fmt"

	"github.com/ariadne-go/ariadne/store"
)

// UpdateAll brings every row index of the index folder idx up to date with
// uris (the index's tracked data files): each appends a fragment for the
// files it does not list yet. It is what `update` runs after the file index,
// so files added to an index are row-indexed by the same update. It returns
// the build statistics per row index name.
func UpdateAll(ctx context.Context, idx store.Store, res Resolver, uris []string) (map[string]BuildStats, error) {
	defs, err := List(ctx, idx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]BuildStats, len(defs))
	for _, d := range defs {
		_, st, err := Update(ctx, idx, d.Name, res, uris)
		if err != nil {
			return out, fmt.Errorf("row index %s: %w", d.Name, err)
		}
		out[d.Name] = st
	}
	return out, nil
}
