package metadata

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/store"
)

// FileName is the name of the metadata object in an index directory (§4.1).
const FileName = "metadata.json"

// ErrConcurrentUpdate reports that Store lost a compare-and-swap: the object
// changed (or appeared, or vanished) since the version the caller loaded, so
// writing would have silently discarded another writer's update. The caller
// reloads and re-applies its change, or reports the conflict. It is not an
// aerr kind: the original has no such error (it lost the update, §9 item 29).
var ErrConcurrentUpdate = errors.New("metadata: concurrent update")

// ConcurrentUpdateError is the error of a lost compare-and-swap. It matches
// ErrConcurrentUpdate and, through Err, store.ErrPrecondition.
type ConcurrentUpdateError struct {
	Key  string  // the metadata object
	Prev Version // the version the caller expected
	Err  error   // the store's precondition failure
}

func (e *ConcurrentUpdateError) Error() string {
	if !e.Prev.Exists() {
		return fmt.Sprintf("metadata: %s was created concurrently: %v", e.Key, e.Err)
	}
	return fmt.Sprintf("metadata: %s changed since it was loaded: %v", e.Key, e.Err)
}

// Unwrap returns the store's error.
func (e *ConcurrentUpdateError) Unwrap() error { return e.Err }

// Is matches ErrConcurrentUpdate.
func (e *ConcurrentUpdateError) Is(target error) bool { return target == ErrConcurrentUpdate }

// Version identifies one stored version of a metadata object (its ETag), for
// compare-and-swap. The zero Version means "no object": Store then creates
// the object only if it does not exist.
type Version struct{ etag string }

// Exists reports whether v names a stored version (not the zero Version).
func (v Version) Exists() bool { return v.etag != "" }

// String returns the ETag, or "none".
func (v Version) String() string {
	if v.etag == "" {
		return "none"
	}
	return v.etag
}

// unconfirmed is the ETag of a version Store wrote but could not confirm as
// current (another writer replaced it at once). It never equals a real ETag,
// so the next compare-and-swap against it fails with ErrConcurrentUpdate,
// which is right: the object no longer holds what the caller wrote.
const unconfirmed = "\x00unconfirmed"

// versionReadAttempts bounds the stat-read-stat loop of readVersioned. Each
// retry means the object was replaced while we read it; metadata is
// replaced a few times per update run, so 3 consecutive collisions already
// indicate a hot loop elsewhere rather than bad luck.
const versionReadAttempts = 3

// errUnstable: readVersioned saw the object change on every attempt.
var errUnstable = errors.New("metadata: object kept changing while being read")

// readVersioned returns the content of key together with the ETag of exactly
// that content. The store contract gives no ETag on reads, so it stats, reads
// and stats again, and accepts the content only if the ETag did not change
// (ETags change on every replacement, so equal ETags mean the bytes read are
// that version's).
func readVersioned(ctx context.Context, s store.Store, key string) ([]byte, string, error) {
	for range versionReadAttempts {
		before, err := s.Stat(ctx, key)
		if err != nil {
			return nil, "", err
		}
		data, err := store.ReadAll(ctx, s, key)
		if err != nil {
			return nil, "", err
		}
		after, err := s.Stat(ctx, key)
		if err != nil {
			if errors.Is(err, store.ErrNotExist) {
				continue // deleted right after we read it; look again
			}
			return nil, "", err
		}
		if before.ETag == after.ETag {
			return data, before.ETag, nil
		}
	}
	return nil, "", errUnstable
}

// Load reads and parses the metadata object at key (§4.6 "reading the file
// from storage"). It returns the record and the Version it was read at, for
// a later Store. A missing object, any read error and any parse error fail
// with aerr.ErrMetadataMissingOrCorrupt wrapping the cause (so
// errors.Is(err, store.ErrNotExist) or context.Canceled still work).
//
// Load only reads (three requests: stat, read, stat): a bare reconnect that
// loads metadata leaves the object's bytes and version unchanged.
func Load(ctx context.Context, s store.Store, key string) (*Metadata, Version, error) {
	data, etag, err := readVersioned(ctx, s, key)
	if err != nil {
		return nil, Version{}, aerr.MetadataMissingOrCorrupt(err)
	}
	m, err := Parse(data)
	if err != nil {
		return nil, Version{}, err
	}
	return m, Version{etag: etag}, nil
}

// Store replaces the metadata object at key with m if it is still at
// version prev, and returns the new version. It is the write rule of §4.6
// made safe on object storage:
//
//   - m is rendered with Marshal and the bytes are re-parsed with the load
//     rules before anything is written (the original validated its temporary
//     file the same way); invalid content fails with
//     aerr.ErrMetadataMissingOrCorrupt and nothing is written.
//   - The write is one conditional PUT: IfMatch prev when prev exists,
//     IfNotExist when prev is the zero Version (a new index). A single PUT
//     is all-or-nothing on every object store (readers see the old bytes or
//     the new, never a mix), and on the local file backend the store writes a
//     temporary file and renames it over the target under the object's lock,
//     so no temporary object and rename of our own are needed; the
//     compare-and-swap replaces the original's rename, which was neither
//     atomic on object stores nor protected against concurrent writers.
//   - If the object changed since prev (another writer won), Store fails
//     with a *ConcurrentUpdateError (errors.Is ErrConcurrentUpdate) and the
//     other writer's content is kept. Other store errors are returned
//     wrapped, unchanged in kind.
//
// The returned Version is read back after the write (the store contract
// returns no ETag from a write): if another writer replaced the object in
// that instant, the version returned is one no object has, so the next Store
// against it fails with ErrConcurrentUpdate.
//
// Store is safe for concurrent use; of several concurrent calls with the
// same prev, exactly one succeeds.
func Store(ctx context.Context, s store.Store, key string, m *Metadata, prev Version) (Version, error) {
	data, err := Marshal(m)
	if err != nil {
		return Version{}, aerr.MetadataMissingOrCorrupt(err)
	}
	if _, err := Parse(data); err != nil {
		return Version{}, err
	}
	opts := &store.WriteOptions{IfMatch: prev.etag, IfNotExist: !prev.Exists(), ContentType: "application/json"}
	if err := store.WriteAll(ctx, s, key, data, opts); err != nil {
		if errors.Is(err, store.ErrPrecondition) {
			return Version{}, &ConcurrentUpdateError{Key: key, Prev: prev, Err: err}
		}
		return Version{}, fmt.Errorf("metadata: writing %s: %w", key, err)
	}
	// The write committed. If the read-back fails or finds other bytes, the
	// caller's next compare-and-swap must fail rather than be checked
	// against someone else's version.
	got, etag, err := readVersioned(ctx, s, key)
	if err != nil || !bytes.Equal(got, data) {
		return Version{etag: unconfirmed}, nil
	}
	return Version{etag: etag}, nil
}
