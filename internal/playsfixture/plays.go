// Package playsfixture builds the small listening-history lake with an index
// and row indexes that the face, server and example tests share. It is not
// in internal/testfixture because it imports index, whose own tests import
// that package.
package playsfixture

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/infer"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// PlaysIndex is the name of the index Plays creates.
const PlaysIndex = "plays"

// PlaysLake is a small generated listening-history lake (package lakegen)
// with an index over some of its files: a bloom index on user_id, a hash
// row index "user_id" (cover ts and duration_ms, aggregate count) and a
// sorted row index "ts" on ts (cover user_id).
type PlaysLake struct {
	// StoreURL is the store root holding the index.
	StoreURL string
	// Files are the lake's data file URIs, in key order.
	Files []string
	// Hot is the most active user, with rows in every file.
	Hot int64

	root store.Store
	res  *store.Resolver
	cat  *index.Catalog
}

// Plays generates the lake under dir (2 days × 2 files, ≈2 MB) and indexes
// its first n files. Close releases it.
func Plays(ctx context.Context, dir string, n int) (*PlaysLake, error) {
	return PlaysWrittenBy(ctx, dir, n, "")
}

// PlaysWrittenBy is Plays with the files written by writer (lakegen's
// Config.Writer: "" parquet-go with ZSTD, lakegen.WriterArrow,
// lakegen.WriterPyArrow).
func PlaysWrittenBy(ctx context.Context, dir string, n int, writer string) (*PlaysLake, error) {
	lakeDir := filepath.Join(dir, "lake")
	lst, err := store.Open(ctx, "file://"+lakeDir)
	if err != nil {
		return nil, err
	}
	defer lst.Close()
	gen, err := lakegen.Generate(ctx, lst, lakegen.Config{Seed: 7, TargetBytes: 2 << 20, Days: 2, FilesPerDay: 2, Users: 500, Tracks: 1000, Sorted: true, Writer: writer})
	if err != nil {
		return nil, err
	}
	l := &PlaysLake{StoreURL: "file://" + filepath.Join(dir, "store"), Hot: lakegen.UserID(0)}
	for _, f := range gen {
		l.Files = append(l.Files, "file://"+filepath.ToSlash(filepath.Join(lakeDir, f.Key)))
	}
	if l.root, err = store.Open(ctx, l.StoreURL); err != nil {
		return nil, err
	}
	l.res = store.NewResolver(store.ResolverOptions{})
	l.cat = index.NewCatalog(l.root, index.Options{Resolver: l.res})
	st, err := infer.FromFile(ctx, l.res, l.Files[0], "parquet", nil)
	if err != nil {
		return nil, err
	}
	ix, err := l.cat.Open(ctx, PlaysIndex, index.OpenOptions{Schema: st, Format: "parquet"})
	if err != nil {
		return nil, err
	}
	if err := ix.AddBloomIndex(ctx, "user_id", index.DefaultBloomFPR); err != nil {
		return nil, err
	}
	if err := l.AddFiles(ctx, l.Files[:n]...); err != nil {
		return nil, err
	}
	if _, err := fileindex.New(ix, fileindex.Options{}).Update(ctx, fileindex.UpdateOptions{}); err != nil {
		return nil, err
	}
	folder := store.Sub(ix.Root(), ix.Paths().Dir)
	for _, def := range []rowindex.Definition{
		{Name: "user_id", Key: "user_id", Kind: rowindex.KindHash, Cover: []string{"ts", "duration_ms"}, Aggregates: []rowindex.Aggregate{{Op: "count"}}},
		{Name: "ts", Key: "ts", Kind: rowindex.KindSorted, Cover: []string{"user_id"}},
	} {
		if _, _, err := rowindex.Create(ctx, folder, def, l.res, l.Files[:n]); err != nil {
			return nil, fmt.Errorf("row index %s: %w", def.Name, err)
		}
	}
	return l, nil
}

// AddFiles tracks more data files in the index (as `ariadne add-files`
// does); an update indexes them.
func (l *PlaysLake) AddFiles(ctx context.Context, uris ...string) error {
	ix, err := l.cat.Get(ctx, PlaysIndex)
	if err != nil {
		return err
	}
	_, err = ix.AddFiles(ctx, uris...)
	return err
}

// Close releases the lake's store handles (the files stay).
func (l *PlaysLake) Close() error {
	l.res.Close()
	return l.root.Close()
}

// UpdateFileIndex brings the file index (only: no row index) up to the
// tracked files, so tests can make a row index fall behind it.
func (l *PlaysLake) UpdateFileIndex(ctx context.Context) error {
	ix, err := l.cat.Get(ctx, PlaysIndex)
	if err != nil {
		return err
	}
	_, err = fileindex.New(ix, fileindex.Options{}).Update(ctx, fileindex.UpdateOptions{})
	return err
}
