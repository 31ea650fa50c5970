package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/store"
)

// parquetSource reads a Parquet file through pqrow, which matches the
// projected fields to the file's columns by name and reads missing columns
// as null; only the projected columns' pages are fetched.
type parquetSource struct {
	uri   string
	next_ func() (pqrow.Row, error, bool)
	stop  func()
}

func openParquet(ctx context.Context, st store.Store, key, uri string, p *Plan) (source, error) {
	info, err := st.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	f, err := pqrow.OpenFile(store.NewReaderAt(ctx, st, key, info.Size), info.Size)
	if err != nil {
		return nil, parquetErr(uri, err)
	}
	next, stop := iter.Pull2(f.Rows(ctx, p.proj, pqrow.ReadOptions{}))
	return &parquetSource{uri: uri, next_: next, stop: stop}, nil
}

// parquetErr maps pqrow's kinds onto ours, keeping the cause. A file that
// contradicts its footer is also an aerr.ErrCorruptDataFile naming uri.
func parquetErr(uri string, err error) error {
	var ie *pqrow.IntegrityError
	switch {
	case errors.Is(err, store.ErrStorage):
		// The request failed (network, server), not the file: kept as
		// is, so that it reads as a storage error worth a retry.
		return err
	case errors.As(err, &ie):
		return fmt.Errorf("%w: %w", ErrCorruptFile, aerr.CorruptDataFile(uri, err))
	case errors.Is(err, pqrow.ErrCorrupt):
		return fmt.Errorf("%w: %w", ErrCorruptFile, err)
	case errors.Is(err, pqrow.ErrUnsupported):
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	case errors.Is(err, store.ErrNotExist):
		return err
	case errors.Is(err, io.ErrUnexpectedEOF):
		// The object is shorter than its stat said: truncated under us.
		return fmt.Errorf("%w: %w", ErrCorruptFile, err)
	}
	return err
}

func (s *parquetSource) next(ctx context.Context) (pqrow.Row, error) {
	row, err, ok := s.next_()
	if !ok {
		return nil, io.EOF
	}
	if err != nil {
		return nil, parquetErr(s.uri, err)
	}
	return row, nil
}

func (s *parquetSource) close() error {
	s.stop()
	return nil
}
