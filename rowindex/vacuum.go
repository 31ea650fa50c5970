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
	prefix := folderOf(name)
	listed := make(map[string]bool, len(man.Fragments)+len(man.Files))
	for _, f := range man.Fragments {
		listed[prefix+f.Path] = true
	}
	// Shape files (shapefile.go) of data files the newest version does not
	// list go too, as they are: another file, or the same file rewritten.
	for i := range man.Files {
		listed[shapeFileKey(name, &man.Files[i])] = true
	}
	cutoff := time.Now().Add(-retain)
	for _, folder := range []string{"fragments/", "shapes/"} {
		if err := deleteUnlisted(ctx, idx, prefix, folder, listed, cutoff, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// deleteUnlisted deletes the files under prefix+folder that listed does
// not hold and that were last modified before cutoff, adding them to res.
// Fragment names are fresh UUIDs, never reused, and a shape file's name
// says which data it describes: the file listed is the file deleted.
func deleteUnlisted(ctx context.Context, idx store.Store, prefix, folder string, listed map[string]bool, cutoff time.Time, res *VacuumResult) error {
	for info, err := range idx.List(ctx, store.ListOptions{Prefix: prefix + folder}) {
		if err != nil {
			return err
		}
		if listed[info.Key] {
			continue
		}
		if !info.ModTime.Before(cutoff) {
			res.Kept++
			continue
		}
		if err := idx.Delete(ctx, info.Key, nil); err != nil && !errors.Is(err, store.ErrNotExist) {
			return err
		}
		res.Deleted = append(res.Deleted, strings.TrimPrefix(info.Key, prefix))
		res.Bytes += info.Size
	}
	return nil
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
