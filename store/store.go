// Package store owns every byte Ariadne reads or writes: one small interface
// over object storage (local folders, memory, S3, GCS, Azure through
// gocloud.dev/blob URLs), with ranged reads, streaming writes, atomic
// conditional writes and deletes on every backend, and per-operation counters
// of requests and bytes, which are Ariadne's main cost metric.
//
// Keys are slash-separated paths relative to a Store's root, never beginning
// with "/" and never containing "." or ".." segments (see ValidKey).
package store

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
)

// Errors returned by every Store. Backends map their own errors onto these,
// so callers test with errors.Is.
var (
	// ErrNotExist: the object does not exist.
	ErrNotExist = errors.New("store: object does not exist")
	// ErrPrecondition: a conditional write or delete lost (IfNotExist found
	// an object, or IfMatch found another version or none).
	ErrPrecondition = errors.New("store: precondition failed")
	// ErrInvalidKey: the key is empty, absolute, or escapes the root.
	ErrInvalidKey = errors.New("store: invalid key")
	// ErrStorage: a request to the storage failed on its way (network,
	// server, permissions, I/O): the object may be perfectly fine and the
	// request worth retrying. Every *OpError whose cause is none of the
	// kinds above (nor a context's error) matches it, as does a read cut
	// short by the connection; callers that decode what they read (a
	// Parquet reader) must keep this kind rather than call the object
	// corrupt.
	ErrStorage error = aerr.ErrStorage
)

// ObjectInfo describes one object.
type ObjectInfo struct {
	Key     string    // relative to the Store's root
	Size    int64     // bytes
	ModTime time.Time // last modification
	// ETag identifies this version of the object; it changes whenever the
	// object is replaced. Pass it to WriteOptions.IfMatch or
	// DeleteOptions.IfMatch for compare-and-swap. Opaque: compare it only
	// for equality. One exception, S3's own: there the ETag is a hash of
	// the content, so a replacement with identical bytes keeps it (a CAS
	// against it then succeeds, which is harmless to a caller that decides
	// by content). On file:// it is derived from inode, size and mtime in
	// nanoseconds, on mem:// a generation counter, on gs:// the object
	// generation. List returns it too.
	ETag string
	// IsDir is set only for common prefixes returned by a delimited List.
	IsDir bool
}

// WriteOptions make a write conditional. At most one of IfNotExist and
// IfMatch may be set.
type WriteOptions struct {
	// IfNotExist: the write commits only if no object exists at the key when
	// it commits; otherwise Close returns ErrPrecondition. Atomic across
	// processes on every backend (exactly one of several racing writers wins).
	IfNotExist bool
	// IfMatch: the write commits only if the object's current ETag equals
	// this value; otherwise Close returns ErrPrecondition. Atomic across
	// processes on every backend.
	IfMatch string
	// ContentType, optional.
	ContentType string
}

// DeleteOptions make a delete conditional.
type DeleteOptions struct {
	// IfMatch: delete only if the object's current ETag equals this value;
	// otherwise ErrPrecondition (ErrNotExist if it is gone).
	IfMatch string
}

// Writer streams one object. Nothing is visible at the key until Close
// returns nil; after an error from Write or Close nothing was committed and
// the caller may retry with a new Writer. Abort discards the write.
type Writer interface {
	io.Writer
	// Close commits the object (and enforces the WriteOptions conditions).
	Close() error
	// Abort discards everything written; the key is left as it was.
	Abort() error
}

// ListOptions select what List returns.
type ListOptions struct {
	// Prefix that every returned key starts with ("" lists everything).
	Prefix string
	// Delimiter, when "/", makes List return one IsDir entry per common
	// prefix ("a/b/") below Prefix instead of the keys inside it.
	Delimiter string
}

// Store is a flat namespace of objects under a root. All methods are safe for
// concurrent use. Reads never observe a partially written object.
type Store interface {
	// Stat returns the object's info, or ErrNotExist.
	Stat(ctx context.Context, key string) (ObjectInfo, error)
	// NewRangeReader reads length bytes from offset (length < 0: to the end).
	// It returns ErrNotExist for a missing object. Reading past the end
	// returns fewer bytes, never an error before io.EOF.
	NewRangeReader(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
	// NewWriter starts a streaming write; see Writer and WriteOptions.
	NewWriter(ctx context.Context, key string, opts *WriteOptions) (Writer, error)
	// Delete removes the object. Deleting a missing object returns
	// ErrNotExist.
	Delete(ctx context.Context, key string, opts *DeleteOptions) error
	// List yields objects (and with a delimiter, common prefixes) in
	// ascending key order. Iteration stops at the first error, which is
	// yielded with a zero ObjectInfo.
	List(ctx context.Context, opts ListOptions) iter.Seq2[ObjectInfo, error]
	// URL returns the URL this store was opened with (without secrets).
	URL() string
	// Close releases the store's resources.
	Close() error
}
