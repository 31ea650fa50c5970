package store

import (
	"context"
	"errors"
	"io"
)

// ReadAll reads the whole object at key.
func ReadAll(ctx context.Context, s Store, key string) ([]byte, error) {
	r, err := s.NewRangeReader(ctx, key, 0, -1)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(r)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return data, nil
}

// WriteAll writes data as the object at key, with opts (may be nil). On
// error nothing was committed; with a condition that failed, the error is
// ErrPrecondition.
func WriteAll(ctx context.Context, s Store, key string, data []byte, opts *WriteOptions) error {
	w, err := s.NewWriter(ctx, key, opts)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// Exists reports whether an object exists at key (one Stat).
func Exists(ctx context.Context, s Store, key string) (bool, error) {
	_, err := s.Stat(ctx, key)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotExist):
		return false, nil
	default:
		return false, err
	}
}

// DeleteAll deletes every object whose key starts with prefix (so a folder
// is "prefix/") and returns how many it deleted. Objects that vanish while
// it runs are not counted and are no error. It lists first and then
// deletes, so objects written under prefix meanwhile may survive. An empty
// prefix deletes everything in the store.
func DeleteAll(ctx context.Context, s Store, prefix string) (int, error) {
	var keys []string
	for info, err := range s.List(ctx, ListOptions{Prefix: prefix}) {
		if err != nil {
			return 0, err
		}
		keys = append(keys, info.Key)
	}
	n := 0
	for _, k := range keys {
		err := s.Delete(ctx, k, nil)
		if errors.Is(err, ErrNotExist) {
			continue
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// NewReaderAt returns an io.ReaderAt over the object at key, whose size the
// caller knows (from Stat or a listing). Each ReadAt is exactly one ranged
// read of the store (none when the range is empty or past size), and
// ReadAt may be called concurrently. It is what parquet-go's OpenFile needs:
// parquet.OpenFile(store.NewReaderAt(ctx, s, key, size), size).
//
// As io.ReaderAt requires, a ReadAt that returns fewer than len(p) bytes
// returns an error: io.EOF at the end of the object (size), or
// io.ErrUnexpectedEOF if the object is shorter than size.
func NewReaderAt(ctx context.Context, s Store, key string, size int64) io.ReaderAt {
	return &readerAt{ctx: ctx, s: s, key: key, size: size}
}

type readerAt struct {
	ctx  context.Context
	s    Store
	key  string
	size int64
}

func (r *readerAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("store: ReadAt: negative offset")
	}
	if off >= r.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	want := p
	if rest := r.size - off; int64(len(want)) > rest {
		want = want[:rest]
	}
	if len(want) == 0 {
		return 0, nil
	}
	rc, err := r.s.NewRangeReader(r.ctx, r.key, off, int64(len(want)))
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	n, err := io.ReadFull(rc, want)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		err = io.ErrUnexpectedEOF // the object is shorter than size
	case err != nil:
		err = readFailure(r.key, err) // the request's failure, not the object's
	}
	if err != nil {
		return n, err
	}
	if len(want) < len(p) {
		return n, io.EOF
	}
	return n, nil
}
