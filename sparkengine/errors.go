package sparkengine

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/spark-connect-go/spark/sparkerrors"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrSpark is the sentinel of every error this package returns for a
// failure on the Spark side or on the way to it: errors.Is(err, ErrSpark).
// errors.As(err, &*Error) gives the kind, the operation and Spark's own
// error class.
var ErrSpark = errors.New("spark engine")

// Kind classifies a Spark-side failure.
type Kind string

// The kinds of Error.
const (
	// KindConnection: the server could not be reached, or the connection
	// was lost before the result was complete (server killed, network).
	KindConnection Kind = "connection"
	// KindExecution: Spark refused or failed the work (analysis error,
	// executor failure, a file it could not read).
	KindExecution Kind = "execution"
	// KindTimeout: the operation's deadline passed.
	KindTimeout Kind = "timeout"
	// KindCanceled: the caller canceled the operation.
	KindCanceled Kind = "canceled"
)

// Error is a Spark-side failure. A join that fails with one has changed
// nothing: the index is only read.
type Error struct {
	Kind   Kind
	Remote string // the Spark Connect URL
	Op     string // what we asked Spark to do ("read located files", "join", ...)
	// ErrorClass and SQLState are Spark's own classification, when the
	// server sent one (e.g. "PATH_NOT_FOUND", "42P01").
	ErrorClass string
	SQLState   string
	Err        error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("spark engine (%s): %s: %s failure", e.Remote, e.Op, e.Kind)
	if e.ErrorClass != "" {
		s += " [" + e.ErrorClass + "]"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrSpark, the cause and, for timeouts and cancellations,
// the context's error, so errors.Is(err, context.DeadlineExceeded) holds.
func (e *Error) Unwrap() []error {
	errs := []error{ErrSpark}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	switch e.Kind {
	case KindTimeout:
		errs = append(errs, context.DeadlineExceeded)
	case KindCanceled:
		errs = append(errs, context.Canceled)
	}
	return errs
}

// rpcError classifies a gRPC error of operation op.
func rpcError(remote, op string, err error) error {
	if err == nil {
		return nil
	}
	e := &Error{Remote: remote, Op: op}
	st, _ := status.FromError(err)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || st.Code() == codes.DeadlineExceeded:
		e.Kind = KindTimeout
	case errors.Is(err, context.Canceled) || st.Code() == codes.Canceled:
		e.Kind = KindCanceled
	case st.Code() == codes.Unavailable:
		e.Kind = KindConnection
	default:
		e.Kind = KindExecution
	}
	if se := sparkerrors.FromRPCError(err); se != nil {
		e.ErrorClass, e.SQLState = se.ErrorClass, se.SqlState
		e.Err = errors.New(se.Message)
	} else {
		e.Err = err
	}
	return e
}
