package rowindex

import (
	"context"
	"fmt"

	"github.com/ariadne-go/ariadne/store"
)

// UpdateAll brings every row index of the index folder idx in line with
// uris, the index's tracked data files: each removes the files it lists that
// uris no longer holds (see Remove) and appends a fragment for the files of
// uris it does not list yet (see Update). It is what `update` runs after the
// file index, so files added to or dropped from an index are row-indexed or
// forgotten by the same update. It returns the build statistics per row
// index name (BuildStats.Removed counts the files removed). opts apply to
// each row index's build.
//
// A row index whose update fails stops the run: the row indexes before it
// are committed, the rest untouched; running UpdateAll again completes it.
func UpdateAll(ctx context.Context, idx store.Store, res Resolver, uris []string, opts ...BuildOption) (map[string]BuildStats, error) {
	defs, err := List(ctx, idx)
	if err != nil {
		return nil, err
	}
	keep := make(map[string]bool, len(uris))
	for _, u := range uris {
		keep[u] = true
	}
	out := make(map[string]BuildStats, len(defs))
	for _, d := range defs {
		_, removed, err := removeWhere(ctx, idx, d.Name, func(uri string) bool { return !keep[uri] })
		if err != nil {
			return out, fmt.Errorf("row index %s: %w", d.Name, err)
		}
		_, st, err := Update(ctx, idx, d.Name, res, uris, opts...)
		st.Removed = removed
		out[d.Name] = st
		if err != nil {
			return out, fmt.Errorf("row index %s: %w", d.Name, err)
		}
	}
	return out, nil
}
