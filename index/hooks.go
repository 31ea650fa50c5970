package index

import (
	"context"

	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/store"
)

// The methods below are the registry's services to the packages that build
// on an index (the file index and the row index): running work under the
// update lock, changing metadata safely, and editing the FileList.

// WithUpdateLock runs body while holding the index's .update.lock (spec
// §4.9) after the locked storage preflight (§4.8), with a heartbeat that
// keeps the lock fresh; body's context is cancelled if ownership is lost.
// This is how update, delete-files, compact and vacuum start (§5.3, §5.10–
// §5.12). The lock is always released.
func (ix *Index) WithUpdateLock(ctx context.Context, body func(ctx context.Context) error) error {
	return ix.withLock(ctx, ix.paths.UpdateLock, func(ctx context.Context) error {
		if err := ix.lockedPreflight(ctx, true); err != nil {
			return err
		}
		return body(ctx)
	})
}

// UpdateMetadata applies fn to a fresh copy of the metadata and stores it
// with compare-and-swap, re-reading and re-applying fn when another writer
// got there first; fn must therefore be a pure function of its input and
// report whether it changed anything (no write when it did not).
func (ix *Index) UpdateMetadata(ctx context.Context, fn func(m *metadata.Metadata) (changed bool, err error)) error {
	return ix.updateMetadata(ctx, fn)
}

// RemoveFiles untracks data files (exact names; unknown names are ignored)
// under the .filelist.lock.
func (ix *Index) RemoveFiles(ctx context.Context, names []string) error {
	return ix.removeFiles(ctx, names)
}

// Root returns the store root the index lives under; its tables are at the
// keys of Paths (use store.Sub(ix.Root(), ix.Paths().Main)).
func (ix *Index) Root() store.Store { return ix.cat.root }
