package rowindex

import (
	"bytes"
	"context"
	"slices"

	"github.com/ariadne-go/ariadne/store"
)

// Compact merges every fragment of a row index into new fragments (one
// aggregate record per key, runs in one sorted sequence) and commits them as
// the next manifest version; the old fragment files are deleted after the
// commit. Handles opened on an older version must Refresh before their next
// cold read of a fragment. A concurrent Update makes Compact fail with
// ErrConcurrentUpdate (and leaves the index as the Update committed it).
func Compact(ctx context.Context, idx store.Store, name string) (*Manifest, error) {
	ri, err := Open(ctx, idx, name, Options{CacheBytes: 1 << 62})
	if err != nil {
		return nil, err
	}
	cur := ri.Manifest()
	m := new(meter)
	var es []entry
	for i := range cur.Fragments {
		fr := &cur.Fragments[i]
		for gi := range fr.Groups {
			g, err := ri.group(ctx, m, fr, gi)
			if err != nil {
				return nil, err
			}
			es = append(es, g...)
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return compareEntries(&a, &b) })
	// Merge the aggregate records of each key (they sort first among the
	// key's entries: file -1).
	out := es[:0]
	for i := 0; i < len(es); {
		e := es[i]
		j := i + 1
		if e.File == aggFile {
			acc, err := decodeAggState(cur.Aggregates, e.Cover)
			if err != nil {
				return nil, err
			}
			for ; j < len(es) && es[j].File == aggFile && bytes.Equal(es[j].Key, e.Key); j++ {
				s, err := decodeAggState(cur.Aggregates, es[j].Cover)
				if err != nil {
					return nil, err
				}
				acc.merge(cur.Aggregates, s)
			}
			e.Cover = acc.encode(cur.Aggregates)
		}
		out = append(out, e)
		i = j
	}
	man := cur.clone()
	man.Version++
	frags, _, err := writeFragments(ctx, idx, name, man.Kind, out)
	if err != nil {
		return nil, err
	}
	man.Fragments = frags
	if err := commitManifest(ctx, idx, man); err != nil {
		for _, f := range frags {
			_ = idx.Delete(ctx, folderOf(name)+f.Path, nil)
		}
		return nil, err
	}
	for _, f := range cur.Fragments {
		_ = idx.Delete(ctx, folderOf(name)+f.Path, nil) // best effort; unreferenced either way
	}
	return man, nil
}
