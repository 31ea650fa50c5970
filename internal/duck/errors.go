package duck

import (
	"errors"
	"strings"
)

// ErrSQL is the kind of every error DuckDB reports for a statement: syntax
// errors, unknown columns or functions (a malformed computed-index
// expression), conversion failures during execution. It is wrapped by
// *SQLError, which keeps DuckDB's message.
var ErrSQL = errors.New("duck: SQL error")

// ErrUnsupportedType: a Spark type without a DuckDB counterpart (variant),
// or a DuckDB result type without a Spark one (INTERVAL, TIME, UNION, …).
var ErrUnsupportedType = errors.New("duck: unsupported type")

// SQLError is a statement that DuckDB refused or failed to run.
type SQLError struct {
	Query string // the statement, as sent
	Err   error  // DuckDB's error
}

func (e *SQLError) Error() string {
	return "duck: " + e.Err.Error() + " (in: " + abbreviate(e.Query) + ")"
}

// Unwrap returns ErrSQL and DuckDB's error.
func (e *SQLError) Unwrap() []error { return []error{ErrSQL, e.Err} }

func sqlErr(query string, err error) error {
	if err == nil {
		return nil
	}
	var se *SQLError
	if errors.As(err, &se) {
		return err
	}
	// A refusal raised while DuckDB binds (spark_refuse) comes back typed.
	if msg := err.Error(); strings.Contains(msg, unsupportedMarker) {
		rest := msg[strings.Index(msg, unsupportedMarker)+len(unsupportedMarker):]
		if parts := strings.SplitN(rest, "\x1f", 3); len(parts) == 3 {
			return &SQLError{Query: query, Err: &UnsupportedFunctionError{Func: parts[0], Reason: parts[1]}}
		}
	}
	return &SQLError{Query: query, Err: err}
}

func abbreviate(s string) string {
	const max = 200
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
