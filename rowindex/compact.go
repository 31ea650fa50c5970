package rowindex

import (
	"bytes"
	"context"
	"slices"

	"github.com/ariadne-go/ariadne/store"
)

// Compact merges every fragment of a row index into new fragments (runs in
// one sorted sequence) and commits them as the next manifest version; the
// old fragment files are deleted after the commit. It drops the entries of
// removed data files (Remove) and forgets their tombstones, so the index
// shrinks by what the removed files held. Aggregate partials stay one
// record per (key, data file), so later removals stay exact; legacy records
// (one per key per fragment, from builds before removal existed) are merged
// into one per key, or into a stale marker when a removal touched any of
// them (lookups of the key then fail with ErrStaleAggregates: rebuild).
//
// Handles opened on an older version must Refresh before their next cold
// read of a fragment. A concurrent Update or Remove makes Compact fail with
// ErrConcurrentUpdate (and leaves the index as that writer committed it).
func Compact(ctx context.Context, idx store.Store, name string) (*Manifest, error) {
	ri, err := Open(ctx, idx, name, Options{CacheBytes: 1 << 62})
	if err != nil {
		return nil, err
	}
	cur := ri.Manifest()
	gone := cur.tombstones()
	m := new(meter)
	var es []entry
	for i := range cur.Fragments {
		fr := &cur.Fragments[i]
		for gi := range fr.Groups {
			g, err := ri.group(ctx, m, fr, gi)
			if err != nil {
				return nil, err
			}
			// Per group: a key's entries of one fragment are all in one
			// group, which dropRemoved needs to judge legacy records.
			es = append(es, dropRemoved(g, gone)...)
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return compareEntries(&a, &b) })
	// Merge the legacy aggregate records of each key (they sort first among
	// the key's entries: file -1, a stale marker before them).
	out := es[:0]
	for i := 0; i < len(es); {
		e := es[i]
		j := i + 1
		if e.File == aggFile {
			for ; j < len(es) && es[j].File == aggFile && bytes.Equal(es[j].Key, e.Key); j++ {
			}
			merged, err := mergeLegacy(cur.Aggregates, es[i:j])
			if err != nil {
				return nil, err
			}
			e = merged
		}
		out = append(out, e)
		i = j
	}
	man := cur.clone()
	man.Version++
	man.Removed = nil // no fragment left references a removed file
	frags, _, err := writeFragments(ctx, idx, name, man.Kind, out)
	if err != nil {
		return nil, err
	}
	man.Fragments = frags
	if err := commitManifest(ctx, idx, man); err != nil {
		abandonFragments(ctx, idx, name, frags, err)
		return nil, err
	}
	deleteFragments(ctx, idx, name, cur.Fragments) // unreferenced either way
	return man, nil
}

// mergeLegacy merges one key's legacy aggregate records (and stale markers)
// into one record: a stale marker if any of them is one.
func mergeLegacy(aggs []Aggregate, rs []entry) (entry, error) {
	if i := slices.IndexFunc(rs, func(e entry) bool { return e.isStale() }); i >= 0 {
		return rs[i], nil
	}
	acc, err := decodeAggState(aggs, rs[0].Cover)
	if err != nil {
		return entry{}, err
	}
	for _, r := range rs[1:] {
		s, err := decodeAggState(aggs, r.Cover)
		if err != nil {
			return entry{}, err
		}
		acc.merge(aggs, s)
	}
	e := rs[0]
	e.Cover = acc.encode(aggs)
	return e, nil
}
