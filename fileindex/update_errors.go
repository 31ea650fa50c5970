package fileindex

import (
	"errors"
	"fmt"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/duck"
)

// ErrComputedExpression is the kind of a computed index whose SQL
// expression the engine cannot plan or evaluate (the Spark library's
// analysis error at update time, §3.3). Match it with errors.Is; the
// *ComputedIndexError carries the details and the engine's error.
var ErrComputedExpression = errors.New("fileindex: computed index expression failed")

// ErrUnsupportedFunction is matched (errors.Is) by a *ComputedIndexError
// whose expression uses a Spark function Ariadne refuses: one whose value
// DuckDB cannot reproduce, or that depends on the clock, the session time
// zone or chance (docs/compatibility.md, "Computed index functions"). Its
// Err is an *UnsupportedFunctionError naming the function and the reason.
// It is reported when the index is added (the command line checks first)
// and at every update or join of an index that already has one (a store
// written by the Spark library).
var ErrUnsupportedFunction = duck.ErrUnsupportedFunction

// UnsupportedFunctionError names a refused Spark function and says why.
type UnsupportedFunctionError = duck.UnsupportedFunctionError

// ComputedIndexError reports a computed index whose expression failed.
// Nothing has been written when Update returns it from planning.
type ComputedIndexError struct {
	Name string // the computed index name
	Expr string // its SQL expression as registered
	Err  error  // the engine's error (internal/duck's ErrSQL)
}

func (e *ComputedIndexError) Error() string {
	return fmt.Sprintf("fileindex: computed index %q = %q: %v", e.Name, e.Expr, e.Err)
}

// Unwrap returns ErrComputedExpression and the engine's error.
func (e *ComputedIndexError) Unwrap() []error { return []error{ErrComputedExpression, e.Err} }

// ColumnError reports an index definition that names a column the stored
// schema does not have (aerr.ErrColumnNotFound), or whose type cannot carry
// the definition, such as an exploded index over a non-array column
// (aerr.ErrInvalidArgument). Definitions are validated when registered;
// this arises when the stored schema was replaced afterwards (§5.14).
type ColumnError struct {
	Column string
	Reason string // "" = not found
}

func (e *ColumnError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("fileindex: column '%s' not found in the stored schema", e.Column)
	}
	return fmt.Sprintf("fileindex: column '%s' %s", e.Column, e.Reason)
}

// Unwrap returns the aerr kind.
func (e *ColumnError) Unwrap() error {
	if e.Reason == "" {
		return aerr.ErrColumnNotFound
	}
	return aerr.ErrInvalidArgument
}

// BloomBuildError reports a bloom filter that cannot be created for a
// column, e.g. a false-positive rate so close to 1 that the filter would
// have zero bits (§9 item 22), or an fpr of 0 loaded from old metadata
// (§9 item 21). The update fails before staging the batch.
type BloomBuildError struct {
	Column string
	FPR    float64
	Err    error // bloom.ErrZeroBits or the sizing error
}

func (e *BloomBuildError) Error() string {
	return fmt.Sprintf("fileindex: bloom filter for column '%s' (fpr %v): %v", e.Column, e.FPR, e.Err)
}

// Unwrap returns the bloom package's error.
func (e *BloomBuildError) Unwrap() error { return e.Err }
