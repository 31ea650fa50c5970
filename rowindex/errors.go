package rowindex

import (
	"context"
	"errors"
	"fmt"

	"github.com/ariadne-go/ariadne/store"
)

// Errors of the row index. Callers test with errors.Is; the typed errors
// below carry details for errors.As.
var (
	// ErrNotFound: no row index of that name exists under the index folder.
	ErrNotFound = errors.New("rowindex: row index not found")
	// ErrExists: Create found a row index of that name already.
	ErrExists = errors.New("rowindex: row index already exists")
	// ErrConcurrentUpdate: another writer committed the manifest version this
	// writer meant to create. Nothing was committed; reopen and retry.
	ErrConcurrentUpdate = errors.New("rowindex: concurrent manifest update")
	// ErrDataFileChanged: a data file was replaced or truncated since it was
	// indexed. No rows are returned from it; rebuild the row index.
	ErrDataFileChanged = errors.New("rowindex: data file changed since indexing")
	// ErrNotParquet: a data file given to a build is not a readable Parquet
	// file (bad magic, footer or length).
	ErrNotParquet = errors.New("rowindex: not a Parquet file")
	// ErrBadKeyColumn: the key (or a cover or aggregate) column is missing
	// from a data file or is not a top-level primitive column.
	ErrBadKeyColumn = errors.New("rowindex: unusable column")
	// ErrBadQuery: the query is malformed (range on a hash index, unknown
	// column, bad cursor, ...).
	ErrBadQuery = errors.New("rowindex: bad query")
	// ErrCorrupt: a manifest or fragment could not be decoded.
	ErrCorrupt = errors.New("rowindex: corrupt row index")
)

// FileChangedError reports a data file whose size or footer no longer match
// what the manifest recorded. It matches ErrDataFileChanged.
type FileChangedError struct {
	URI    string
	Reason string // "truncated", "size", "footer checksum", "bad magic", ...
	Err    error  // underlying read error, may be nil
}

func (e *FileChangedError) Error() string {
	s := fmt.Sprintf("rowindex: data file %s changed since indexing (%s)", e.URI, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is makes a *FileChangedError match ErrDataFileChanged.
func (e *FileChangedError) Is(target error) bool { return target == ErrDataFileChanged }

// Unwrap returns the underlying read error.
func (e *FileChangedError) Unwrap() error { return e.Err }

// fileChanged is a *FileChangedError for a data file whose read failed
// with err, unless the read failed on its way (store.ErrStorage: network,
// server) or was cancelled: then err itself, as the file may be intact.
func fileChanged(uri, reason string, err error) error {
	if errors.Is(err, store.ErrStorage) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &FileChangedError{URI: uri, Reason: reason, Err: err}
}

// corruptReason starts the Reason of a FileChangedError about a data file
// whose footer reads but whose schema, offset index or page headers do
// not: at a build, the file is refused as corrupt (aerr.ErrCorruptDataFile);
// at a lookup, it changed since it was indexed.
const corruptReason = "corrupt "

// ColumnError reports an unusable column in one data file. It matches
// ErrBadKeyColumn.
type ColumnError struct {
	URI    string
	Column string
	Reason string
}

func (e *ColumnError) Error() string {
	return fmt.Sprintf("rowindex: column %q of %s: %s", e.Column, e.URI, e.Reason)
}

// Is makes a *ColumnError match ErrBadKeyColumn.
func (e *ColumnError) Is(target error) bool { return target == ErrBadKeyColumn }

func badQuery(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadQuery}, args...)...)
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// NotParquetError reports a data file that a build could not read as Parquet.
// It matches ErrNotParquet. (The same failure on a file indexed earlier is a
// FileChangedError: the file changed since.)
type NotParquetError struct {
	URI    string
	Reason string
	Err    error // underlying error, may be nil
}

func (e *NotParquetError) Error() string {
	s := "rowindex: " + e.URI + " is not a Parquet file (" + e.Reason + ")"
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is makes a *NotParquetError match ErrNotParquet.
func (e *NotParquetError) Is(target error) bool { return target == ErrNotParquet }

// Unwrap returns the underlying error.
func (e *NotParquetError) Unwrap() error { return e.Err }

// FragmentError reports a fragment that the row index's manifest lists but
// that is missing, truncated or undecodable: the row index itself is
// damaged (not a data file, which is what a FileChangedError reports).
// It matches ErrCorrupt; its message says how to rebuild the row index.
// Rebuilding (drop-row-index, then add-row-index with the same options)
// reads only the data files, which are intact.
type FragmentError struct {
	RowIndex string // the row index's name
	Key      string // its key column (for the rebuild command)
	Path     string // the fragment, relative to the row index's folder
	Reason   string // "missing", "truncated", "undecodable"
	Err      error  // what the read said, may be nil
}

func (e *FragmentError) Error() string {
	s := fmt.Sprintf("rowindex: row index %s is damaged: its fragment %s is %s", e.RowIndex, e.Path, e.Reason)
	if e.Err != nil {
		s += " (" + e.Err.Error() + ")"
	}
	return s + fmt.Sprintf("; the data files are not affected: rebuild the row index with "+
		"`ariadne drop-row-index INDEX %s` and `ariadne add-row-index INDEX --key %s --name %s` (with its former --cover, --aggregate and --kind)",
		e.RowIndex, e.Key, e.RowIndex)
}

// Is makes a *FragmentError match ErrCorrupt (and, when the fragment is
// missing, errFragmentGone, on which a lookup first refreshes its
// manifest: a Compact may have replaced the fragment meanwhile). The
// cause is deliberately not unwrapped: a missing object or a short read
// describe the damage, they are not its kind.
func (e *FragmentError) Is(target error) bool {
	return target == ErrCorrupt || target == errFragmentGone && e.Reason == fragMissing
}

// Fragment damage reasons.
const (
	fragMissing     = "missing"
	fragTruncated   = "truncated"
	fragUndecodable = "undecodable"
)
