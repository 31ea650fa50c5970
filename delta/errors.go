package delta

import (
	"errors"
	"fmt"
	"strconv"
)

// Errors of package delta. Every error the package returns for one of these
// conditions matches the sentinel with errors.Is; the typed structs below
// carry the details (errors.As).
var (
	// ErrNotATable: there is no _delta_log/ with a commit or checkpoint
	// under the store's root.
	ErrNotATable = errors.New("delta: not a Delta table")
	// ErrVersionNotFound: the requested version does not exist or can no
	// longer be reconstructed (its log was cleaned up).
	ErrVersionNotFound = errors.New("delta: version not found")
	// ErrCorruptLog: the log cannot be read (a line that is not JSON, a gap
	// in the versions, a missing checkpoint part, an unreadable checkpoint
	// or deletion vector). See *CorruptLogError.
	ErrCorruptLog = errors.New("delta: corrupt log")
	// ErrUnsupportedFeature: the table needs a protocol feature this
	// package does not implement. See *UnsupportedFeatureError.
	ErrUnsupportedFeature = errors.New("delta: unsupported feature")
	// ErrConflict: a concurrent commit conflicts with ours. See
	// *ConflictError.
	ErrConflict = errors.New("delta: conflicting commit")
)

// CorruptLogError reports an unreadable log object. It matches ErrCorruptLog.
type CorruptLogError struct {
	Key  string // store key of the object (or of the missing object)
	Line int    // 1-based line in a JSON commit; 0 when not applicable
	Err  error  // cause
}

func (e *CorruptLogError) Error() string {
	s := "delta: corrupt log: " + e.Key
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *CorruptLogError) Unwrap() error { return e.Err }

// Is reports whether target is ErrCorruptLog.
func (e *CorruptLogError) Is(target error) bool { return target == ErrCorruptLog }

// UnsupportedFeatureError names a protocol feature (a reader or writer
// table feature such as "variantType", or a description such as
// "minReaderVersion 4") that this package does not implement. It matches
// ErrUnsupportedFeature.
type UnsupportedFeatureError struct {
	Feature string
	// Op is "read" or "write": the side that refuses it.
	Op string
}

func (e *UnsupportedFeatureError) Error() string {
	op := e.Op
	if op == "" {
		op = "read"
	}
	return fmt.Sprintf("delta: unsupported feature: cannot %s a table that uses %q", op, e.Feature)
}

// Is reports whether target is ErrUnsupportedFeature.
func (e *UnsupportedFeatureError) Is(target error) bool { return target == ErrUnsupportedFeature }

// ConflictError reports that the commit at Version, written concurrently by
// another writer, conflicts with the transaction being committed. It
// matches ErrConflict.
type ConflictError struct {
	Version int64
	Reason  string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("delta: conflicting commit at version %d: %s", e.Version, e.Reason)
}

// Is reports whether target is ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// corrupt returns a *CorruptLogError.
func corrupt(key string, line int, err error) error {
	return &CorruptLogError{Key: key, Line: line, Err: err}
}
