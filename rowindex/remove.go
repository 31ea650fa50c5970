package rowindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ariadne-go/ariadne/store"
)

// ErrStaleAggregates: a key's aggregates were stored by a build that kept
// one record per key per fragment (before removal existed), and a data file
// contributing to them was removed since, so they can no longer be
// computed exactly. Rebuild the row index (drop it and create it again):
// new builds store aggregates per (key, data file).
var ErrStaleAggregates = errors.New("rowindex: aggregates stale after a file removal")

// StaleAggregatesError reports the key whose aggregates are stale. It
// matches ErrStaleAggregates.
type StaleAggregatesError struct {
	Index string // row index name
	Key   any    // the key, decoded
}

func (e *StaleAggregatesError) Error() string {
	return fmt.Sprintf("rowindex: row index %s: aggregates of key %v include a removed data file and were stored per fragment by an older build; rebuild the row index", e.Index, e.Key)
}

// Is makes a *StaleAggregatesError match ErrStaleAggregates.
func (e *StaleAggregatesError) Is(target error) bool { return target == ErrStaleAggregates }

// Remove removes the data files uris (by URI; unknown ones are ignored) from
// the row index name and commits the next manifest version, without them
// and with their ids as tombstones: lookups skip their entries (rows, cover
// values, aggregate partials) and never read them, Compact later drops the
// entries physically. File ids are never reused; Update indexes a removed
// URI listed again afresh. With nothing to remove it commits nothing. It
// returns the manifest and the number of files removed.
//
// Remove writes no fragment, so losing the commit race to another writer is
// cheap: it re-reads the newest version and tries again, up to
// commitAttempts times, then returns ErrConcurrentUpdate.
func Remove(ctx context.Context, idx store.Store, name string, uris []string) (*Manifest, int, error) {
	drop := make(map[string]bool, len(uris))
	for _, u := range uris {
		drop[u] = true
	}
	return removeWhere(ctx, idx, name, func(uri string) bool { return drop[uri] })
}

// RemoveAll removes the data files uris from every row index of the index
// folder idx (see Remove). It is what `delete-files` runs after the file
// index. It returns the number of files removed per row index name.
func RemoveAll(ctx context.Context, idx store.Store, uris []string) (map[string]int, error) {
	defs, err := List(ctx, idx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(defs))
	for _, d := range defs {
		_, n, err := Remove(ctx, idx, d.Name, uris)
		if err != nil {
			return out, fmt.Errorf("row index %s: %w", d.Name, err)
		}
		out[d.Name] = n
	}
	return out, nil
}

// removeWhere removes the files whose URI drop reports, retrying lost
// commits against the newest version.
func removeWhere(ctx context.Context, idx store.Store, name string, drop func(uri string) bool) (*Manifest, int, error) {
	m := new(meter)
	for attempt := 1; ; attempt++ {
		cur, err := loadManifest(ctx, idx, name, m)
		if err != nil {
			return nil, 0, err
		}
		man := cur.clone()
		man.Files = man.Files[:0]
		for _, f := range cur.Files {
			if drop(f.URI) {
				man.Removed = append(man.Removed, f.ID)
			} else {
				man.Files = append(man.Files, f)
			}
		}
		man.Skipped = slices.DeleteFunc(man.Skipped, func(s SkippedFile) bool { return drop(s.URI) })
		n := len(cur.Files) - len(man.Files)
		if n == 0 && len(man.Skipped) == len(cur.Skipped) {
			return cur, 0, nil
		}
		slices.Sort(man.Removed)
		man.Version++
		err = commitManifest(ctx, idx, man)
		if err == nil {
			return man, n, nil
		}
		if !errors.Is(err, ErrConcurrentUpdate) || attempt == commitAttempts {
			return nil, 0, err
		}
	}
}

// tombstones is the set of removed file ids of a manifest.
type tombstones map[int32]struct{}

func (m *Manifest) tombstones() tombstones {
	if len(m.Removed) == 0 {
		return nil
	}
	t := make(tombstones, len(m.Removed))
	for _, id := range m.Removed {
		t[id] = struct{}{}
	}
	return t
}

func (t tombstones) has(id int32) bool {
	_, ok := t[id]
	return ok
}

// dropRemoved returns the entries of es, which are in fragment order and
// hold every entry of each of their keys within one fragment, without the
// runs and aggregate partials of removed files. A key's legacy aggregate
// record (one per key per fragment) that summarised a removed file's rows
// (the fragment holds a run of the key from that file) becomes a stale
// marker. es is not modified (it may be a cached group); with no tombstone
// it is returned as is.
func dropRemoved(es []entry, gone tombstones) []entry {
	if len(gone) == 0 {
		return es
	}
	out := make([]entry, 0, len(es))
	for i := 0; i < len(es); {
		j := i + 1
		for j < len(es) && es[j].Bucket == es[i].Bucket && bytes.Equal(es[j].Key, es[i].Key) {
			j++
		}
		touched := false
		for k := i; k < j; k++ {
			if e := &es[k]; e.File != aggFile && e.RG != aggRG && gone.has(e.File) {
				touched = true
				break
			}
		}
		for k := i; k < j; k++ {
			e := es[k]
			switch {
			case e.File != aggFile && gone.has(e.File):
				continue
			case touched && e.isLegacyAggregate():
				e = entry{Bucket: e.Bucket, Key: e.Key, File: aggFile, RG: staleRG}
			}
			out = append(out, e)
		}
		i = j
	}
	return out
}
