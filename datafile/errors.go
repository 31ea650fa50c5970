package datafile

import (
	"errors"
	"fmt"
)

// Errors of this package. Every error about one data file is a *FileError
// naming it; test its kind with errors.Is.
var (
	// ErrCorruptFile: the file is not a readable file of its format
	// (truncated or malformed Parquet, a broken gzip stream, a multi-line
	// JSON document that is not well-formed).
	ErrCorruptFile = errors.New("datafile: corrupt file")
	// ErrMalformedRecord: a record could not be parsed or converted to the
	// schema in FAILFAST mode. In PERMISSIVE mode such a record yields nulls
	// and in DROPMALFORMED mode it is skipped, never an error.
	ErrMalformedRecord = errors.New("datafile: malformed record")
	// ErrUnsupported: the schema has a type the format cannot read (for
	// example an array column in CSV, as in Spark), or the file uses a
	// feature we do not decode (an encrypted Parquet file, a codec).
	ErrUnsupported = errors.New("datafile: unsupported")
)

// FileError is an error reading one data file. Err wraps the cause: one of
// this package's sentinels, store.ErrNotExist for a missing file, or the
// context's error.
type FileError struct {
	URI string // the file's URI as the caller passed it
	Err error
}

func (e *FileError) Error() string { return "datafile: " + e.URI + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }

// RecordError describes a malformed record (FAILFAST mode). It wraps
// ErrMalformedRecord and sits inside a *FileError.
type RecordError struct {
	Record int64  // 1-based record number in the file (header and skipped lines excluded)
	Column string // the column whose value failed, "" for the record as a whole
	Err    error  // what was wrong
}

func (e *RecordError) Error() string {
	if e.Column != "" {
		return fmt.Sprintf("malformed record %d: column %q: %v", e.Record, e.Column, e.Err)
	}
	return fmt.Sprintf("malformed record %d: %v", e.Record, e.Err)
}

// Unwrap returns ErrMalformedRecord and the cause.
func (e *RecordError) Unwrap() []error { return []error{ErrMalformedRecord, e.Err} }
