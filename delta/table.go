// Package delta owns the Delta Lake table format: the actions of the
// transaction log, log replay from JSON commits and checkpoints (classic,
// multi-part and v2 with sidecars) into immutable snapshots, time travel,
// column mapping, deletion vectors and partition values on the read side;
// and on the write side, commits by put-if-absent of the next log entry with
// conflict detection, checkpoints, OPTIMIZE and VACUUM.
//
// A Table is a folder in a store.Store holding _delta_log/. Snapshots are
// immutable and cached per version on the Table, so a Table and its
// Snapshots are safe for concurrent use.
//
// Reader support (see features.go and docs/delta.md): reader versions 1–3,
// reader features columnMapping, deletionVectors, timestampNtz,
// v2Checkpoint and vacuumProtocolCheck. Tables needing any other reader
// feature (typeWidening, variantType, variantShredding-preview, …) are
// refused with an *UnsupportedFeatureError.
package delta

import (
	"context"
	"sync"

	"github.com/ariadne-go/ariadne/store"
)

// LogDir is the folder of the transaction log, relative to the table root.
const LogDir = "_delta_log/"

// Table is a Delta table rooted at a store.Store: the store's root is the
// table's folder, with the log under _delta_log/. A Table holds no open
// resources besides the store (which the caller owns and closes). Safe for
// concurrent use.
type Table struct {
	st store.Store

	mu    sync.Mutex
	byVer map[int64]*Snapshot // snapshots by version, bounded by maxCachedSnapshots
}

// maxCachedSnapshots bounds the per-version snapshot cache. A snapshot of a
// table with N active files holds roughly N × ~500 bytes of actions; 8 keeps
// the cache of a 100 000-file table around 400 MB in the worst case, while
// covering the usual pattern of the latest version plus a few time-travel
// versions.
const maxCachedSnapshots = 8

// Open opens the Delta table rooted at s. It lists _delta_log/ once and
// returns ErrNotATable when there is neither a commit nor a checkpoint.
// Open does not load a snapshot; call Snapshot.
func Open(ctx context.Context, s store.Store) (*Table, error) {
	if _, err := listLog(ctx, s); err != nil {
		return nil, err
	}
	return &Table{st: s, byVer: make(map[int64]*Snapshot)}, nil
}

// Store returns the store the table is rooted at.
func (t *Table) Store() store.Store { return t.st }

// Snapshot returns the latest snapshot. It lists the log once and reads
// only the objects it needs (the newest complete checkpoint and the commits
// after it); when the latest version has not changed since the last call,
// the cached snapshot is returned without further reads.
func (t *Table) Snapshot(ctx context.Context) (*Snapshot, error) {
	l, err := listLog(ctx, t.st)
	if err != nil {
		return nil, err
	}
	return t.snapshotFromListing(ctx, l, l.latest())
}

// SnapshotAt returns the snapshot at version (time travel). It returns an
// error matching ErrVersionNotFound when the version does not exist or can
// no longer be reconstructed (its commits were cleaned up and no checkpoint
// covers it).
func (t *Table) SnapshotAt(ctx context.Context, version int64) (*Snapshot, error) {
	t.mu.Lock()
	s := t.byVer[version]
	t.mu.Unlock()
	if s != nil {
		return s, nil
	}
	l, err := listLog(ctx, t.st)
	if err != nil {
		return nil, err
	}
	return t.snapshotFromListing(ctx, l, version)
}

func (t *Table) snapshotFromListing(ctx context.Context, l *logListing, version int64) (*Snapshot, error) {
	t.mu.Lock()
	s := t.byVer[version]
	t.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := replay(ctx, t.st, l, version)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.byVer[version]; old != nil {
		return old, nil // a concurrent load won; keep one shared snapshot
	}
	if len(t.byVer) >= maxCachedSnapshots {
		oldest := version
		for v := range t.byVer {
			oldest = min(oldest, v)
		}
		delete(t.byVer, oldest) // evict the oldest version
	}
	t.byVer[version] = s
	return s, nil
}
