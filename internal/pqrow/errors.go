package pqrow

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ariadne-go/ariadne/aerr"
)

// Errors of this package. Every error it returns matches one of them with
// errors.Is (or is a context error).
var (
	// ErrCorrupt: the Parquet file is truncated or malformed. The error
	// wraps parquet-go's description (or a recovered panic) when there is
	// one.
	ErrCorrupt = errors.New("pqrow: corrupt parquet file")
	// ErrUnsupported: the file or the schema uses a type or feature this
	// package does not read or write (variant, INTERVAL, encryption, ...).
	ErrUnsupported = errors.New("pqrow: unsupported")
	// ErrSchemaMismatch: a requested Spark type cannot be read from the
	// file's column, or a written value does not fit its Spark type.
	ErrSchemaMismatch = errors.New("pqrow: schema mismatch")
)

// ColumnError reports a problem with one column, naming it by its path.
type ColumnError struct {
	Path []string // the column's path (Spark field names, or Parquet names)
	Err  error    // wraps one of the package's sentinels
}

func (e *ColumnError) Error() string {
	return fmt.Sprintf("column %s: %v", strings.Join(e.Path, "."), e.Err)
}

// Unwrap returns the cause.
func (e *ColumnError) Unwrap() error { return e.Err }

func colErr(path []string, kind error, format string, args ...any) error {
	return &ColumnError{Path: append([]string(nil), path...), Err: fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)}
}

// corrupt wraps cause as ErrCorrupt, unless the cause is not the file's:
// a failed storage request (store.ErrStorage: the network, the server) or
// the caller's cancellation keeps its own kind, so that a retry is not
// mistaken for a damaged file.
func corrupt(cause error) error {
	if cause == nil || errors.Is(cause, ErrCorrupt) || notTheFile(cause) {
		return cause
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, cause)
}

// notTheFile reports whether err says nothing about the file's bytes.
func notTheFile(err error) bool {
	return errors.Is(err, aerr.ErrStorage) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// readErr is colErr(path, ErrCorrupt, ...) for an error of reading a
// column's pages, keeping a storage failure's or cancellation's kind.
func readErr(path []string, err error) error {
	if notTheFile(err) {
		return &ColumnError{Path: append([]string(nil), path...), Err: err}
	}
	return colErr(path, ErrCorrupt, "%v", err)
}

// recovered turns a panic value into an ErrCorrupt error.
func recovered(r any) error {
	if err, ok := r.(error); ok {
		return fmt.Errorf("%w: panic: %w", ErrCorrupt, err)
	}
	return fmt.Errorf("%w: panic: %v", ErrCorrupt, r)
}
