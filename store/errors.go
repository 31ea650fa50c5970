package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
)

// OpError records a failed Store operation with its key. It wraps the
// underlying error, so errors.Is(err, ErrNotExist) and the like see through
// it.
type OpError struct {
	Op  string // "stat", "read", "write", "delete", "list"
	Key string
	Err error
}

func (e *OpError) Error() string { return "store: " + e.Op + " " + e.Key + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *OpError) Unwrap() error { return e.Err }

// Is makes an OpError match ErrStorage when its cause is a failure of the
// request itself (see ErrStorage), not an answer about the object.
func (e *OpError) Is(target error) bool {
	return target == ErrStorage && IsFailure(e.Err)
}

// IsFailure reports whether err, returned by a storage request, is a
// failure of the request (network, server, I/O) rather than an answer (the
// object is missing, a precondition lost, a bad key) or the caller's
// cancellation.
func IsFailure(err error) bool {
	if err == nil {
		return false
	}
	for _, answer := range []error{ErrNotExist, ErrPrecondition, ErrInvalidKey, context.Canceled, context.DeadlineExceeded, io.EOF} {
		if errors.Is(err, answer) {
			return false
		}
	}
	return true
}

// readFailure wraps an error of reading key's body (other than io.EOF) as
// an *OpError, so that it matches ErrStorage. A body that ends before the
// length the backend promised (io.ErrUnexpectedEOF from an HTTP client) is
// the connection's fault, not the object's.
func readFailure(key string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	var oe *OpError
	if errors.As(err, &oe) {
		return err
	}
	return &OpError{Op: "read", Key: key, Err: err}
}

func notExist(op, key string) error { return &OpError{Op: op, Key: key, Err: ErrNotExist} }

func precondition(op, key, why string) error {
	return &OpError{Op: op, Key: key, Err: fmt.Errorf("%s: %w", why, ErrPrecondition)}
}

// errWriterDone is returned by a Writer used after Close or Abort.
var errWriterDone = errors.New("store: writer already closed")

func checkWriteOptions(key string, opts *WriteOptions) error {
	if opts != nil && opts.IfNotExist && opts.IfMatch != "" {
		return &OpError{Op: "write", Key: key, Err: errors.New("IfNotExist and IfMatch are exclusive")}
	}
	return nil
}

func checkRange(key string, offset int64) error {
	if offset < 0 {
		return &OpError{Op: "read", Key: key, Err: fmt.Errorf("negative offset %d", offset)}
	}
	return nil
}

func checkDelimiter(d string) error {
	if d != "" && d != "/" {
		return &OpError{Op: "list", Err: fmt.Errorf("unsupported delimiter %q (only \"/\")", d)}
	}
	return nil
}

// delimit turns a sorted list of objects under opts.Prefix into what a
// List with opts returns: unchanged without a delimiter, otherwise with
// every key that has a "/" after the prefix folded into one IsDir entry per
// common prefix, in order.
func delimit(infos []ObjectInfo, opts ListOptions) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		lastDir := ""
		for _, info := range infos {
			if opts.Delimiter != "" {
				rest := info.Key[len(opts.Prefix):]
				if i := strings.Index(rest, opts.Delimiter); i >= 0 {
					dir := info.Key[:len(opts.Prefix)+i+len(opts.Delimiter)]
					if dir == lastDir {
						continue
					}
					lastDir = dir
					info = ObjectInfo{Key: dir, IsDir: true}
				}
			}
			if !yield(info, nil) {
				return
			}
		}
	}
}
