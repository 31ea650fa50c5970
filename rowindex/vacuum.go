package rowindex

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/store"
)

// VacuumResult is what Vacuum deleted.
type VacuumResult struct {
	// Deleted are the fragment and shape files deleted, relative to the
	// row index folder; Bytes their total size.
	Deleted []string
	Bytes   int64
	// Kept counts unreferenced fragment and shape files younger than the
	// retention.
	Kept int
}

// Vacuum deletes the fragment files of row index name that its newest
// manifest does not list and that were last modified more than retain ago,
// and the shape files (SaveShapes) of data files it does not list.
// Such files are left by a writer that crashed between writing fragments
// and committing, by a commit whose outcome was uncertain (the writer keeps
// its fragments rather than risk deleting listed ones), or by a Compact that
// crashed before deleting the fragments it replaced. The retention protects
// the fragments of a writer that has written but not yet committed: with
// retain shorter than a build, Vacuum could delete them and that writer's
// commit would list missing files. Manifests are never deleted (they are
// small, and a reader of an older version needs only the fragments that
// Compact already handles).
func Vacuum(ctx context.Context, idx store.Store, name string, retain time.Duration) (VacuumResult, error) {
	var res VacuumResult
	man, err := loadManifest(ctx, idx, name, new(meter))
	if err != nil {
		return res, err
	}
	listed := make(map[string]bool, len(man.Fragments))
	for _, f := range man.Fragments {
		listed[f.Path] = true
	}
	cutoff := time.Now().Add(-retain)
	prefix := folderOf(name)
	for info, err := range idx.List(ctx, store.ListOptions{Prefix: prefix + "fragments/"}) {
		if err != nil {
			return res, err
		}
		rel := strings.TrimPrefix(info.Key, prefix)
		if listed[rel] {
			continue
		}
		if !info.ModTime.Before(cutoff) {
			res.Kept++
			continue
		}
		// Fragment names are fresh UUIDs, never reused: the file listed
		// is the file deleted.
		if err := idx.Delete(ctx, info.Key, nil); err != nil && !errors.Is(err, store.ErrNotExist) {
			return res, err
		}
		res.Deleted = append(res.Deleted, rel)
		res.Bytes += info.Size
	}
	// Shape files (shapefile.go) of data files the newest version does not
	// list, as they are: another file, or the same file rewritten.
	current := make(map[string]bool, len(man.Files))
	for i := range man.Files {
		current[shapeFileKey(name, &man.Files[i])] = true
	}
	for info, err := range idx.List(ctx, store.ListOptions{Prefix: prefix + "shapes/"}) {
		if err != nil {
			return res, err
		}
		if current[info.Key] {
			continue
		}
		if !info.ModTime.Before(cutoff) {
			res.Kept++
			continue
		}
		if err := idx.Delete(ctx, info.Key, nil); err != nil && !errors.Is(err, store.ErrNotExist) {
			return res, err
		}
		res.Deleted = append(res.Deleted, strings.TrimPrefix(info.Key, prefix))
		res.Bytes += info.Size
	}
	return res, nil
}

// VacuumAll vacuums every row index of the index folder idx (see Vacuum).
func VacuumAll(ctx context.Context, idx store.Store, retain time.Duration) (map[string]VacuumResult, error) {
	defs, err := List(ctx, idx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]VacuumResult, len(defs))
	for _, d := range defs {
		r, err := Vacuum(ctx, idx, d.Name, retain)
		out[d.Name] = r
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
