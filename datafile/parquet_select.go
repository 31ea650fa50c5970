package datafile

import (
	"context"
	"errors"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// ParquetFile is one Parquet data file opened for selective reads (late
// materialization): a key column is scanned first (MatchRows), then the
// plan's projected columns are read only at the matching rows (ReadRows).
// Only the footer is read on open; every later read is a ranged read
// through the resolver's store. Errors are *FileError, as Reader's. A
// ParquetFile is safe for concurrent use.
type ParquetFile struct {
	uri  string
	plan *Plan
	f    *pqrow.File
}

// OpenParquet opens the Parquet file at uri for selective reads with the
// plan, which must be a Parquet plan.
func (p *Plan) OpenParquet(ctx context.Context, res Resolver, uri string) (*ParquetFile, error) {
	return p.OpenParquetCached(ctx, res, uri, nil)
}

// OpenParquetCached is OpenParquet taking the file's decoded footer and
// page indexes from cache when it holds this version of the file (same
// size and ETag, from a Stat made on every open) and keeping them there
// otherwise; nil cache = OpenParquet. Every read the returned file makes
// goes through res's store for this call (ctx, request counts).
func (p *Plan) OpenParquetCached(ctx context.Context, res Resolver, uri string, cache *pqrow.FileCache) (*ParquetFile, error) {
	return p.openParquet(ctx, res, uri, nil, cache)
}

// OpenParquetSeen is OpenParquetCached with the file's attributes (size,
// ETag, modification time) from a Stat the caller made for this call, in
// place of the one every open makes: its size and its identity in cache
// are that version's. Its bytes are still read by key: an object
// replaced since that Stat is read with that version's size and footer,
// which fails as damaged unless the layout happens to match.
func (p *Plan) OpenParquetSeen(ctx context.Context, res Resolver, uri string, info store.ObjectInfo, cache *pqrow.FileCache) (*ParquetFile, error) {
	return p.openParquet(ctx, res, uri, &info, cache)
}

// openParquet opens uri, stating it unless seen gives its attributes.
func (p *Plan) openParquet(ctx context.Context, res Resolver, uri string, seen *store.ObjectInfo, cache *pqrow.FileCache) (*ParquetFile, error) {
	if p.format != Parquet {
		return nil, aerr.Invalid("datafile: selective reads need a parquet plan, not %s", p.format)
	}
	st, key, err := res.Resolve(ctx, uri)
	if err != nil {
		return nil, &FileError{URI: uri, Err: err}
	}
	var info store.ObjectInfo
	if seen != nil {
		info = *seen
	} else if info, err = st.Stat(ctx, key); err != nil {
		return nil, &FileError{URI: uri, Err: err}
	}
	r := store.NewReaderAt(ctx, st, key, info.Size)
	if cache != nil {
		f, err := cache.Open(uri, pqrow.FileID{Size: info.Size, ETag: info.ETag, ModNanos: modNanos(info.ModTime)}, r)
		if err != nil {
			return nil, &FileError{URI: uri, Err: parquetErr(uri, err)}
		}
		return &ParquetFile{uri: uri, plan: p, f: f}, nil
	}
	f, err := pqrow.OpenFile(r, info.Size)
	if err != nil {
		return nil, &FileError{URI: uri, Err: parquetErr(uri, err)}
	}
	// The page index in one request rather than two per column chunk.
	if err := f.LoadPageIndex(); err != nil {
		return nil, &FileError{URI: uri, Err: parquetErr(uri, err)}
	}
	return &ParquetFile{uri: uri, plan: p, f: f}, nil
}

// modNanos is t in Unix nanoseconds, 0 for the zero time.
func modNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// URI returns the file's URI.
func (pf *ParquetFile) URI() string { return pf.uri }

// MatchRows returns the rows whose value of column (a primitive column of
// the plan's full schema) is one of keys; see pqrow.File.MatchRows.
func (pf *ParquetFile) MatchRows(ctx context.Context, column string, keys *pqrow.KeySet, st *pqrow.ScanStats) ([]pqrow.Match, error) {
	i := fieldIndex(pf.plan.full, column)
	if i < 0 {
		return nil, aerr.ColumnNotFound(column)
	}
	m, err := pf.f.MatchRows(ctx, pf.plan.full.Fields[i], pqrow.ReadOptions{}, keys, st)
	if err != nil {
		return nil, &FileError{URI: pf.uri, Err: parquetErr(pf.uri, err)}
	}
	return m, nil
}

// ReadRows reads the plan's projected columns at m's rows, each row as
// Reader.Next would return it; keyColumn, the column m was matched on (""
// if none), is taken from m instead of being read again.
func (pf *ParquetFile) ReadRows(ctx context.Context, m pqrow.Match, keyColumn string) ([]pqrow.Row, error) {
	rows, err := pf.f.ReadMatch(ctx, pf.plan.proj, pqrow.ReadOptions{}, m, keyColumn)
	if err != nil {
		return nil, &FileError{URI: pf.uri, Err: parquetErr(pf.uri, err)}
	}
	return rows, nil
}

// PlanTyped plans the named columns of the plan's full schema for
// ReadTyped (see pqrow.File.PlanTyped); false when one has no typed form
// in this file, or is not a column of the plan: the caller reads rows.
func (pf *ParquetFile) PlanTyped(columns []string) ([]pqrow.TypedColumn, bool) {
	fields := make([]schema.Field, len(columns))
	for i, c := range columns {
		j := fieldIndex(pf.plan.full, c)
		if j < 0 {
			return nil, false
		}
		fields[i] = pf.plan.full.Fields[j]
	}
	return pf.f.PlanTyped(fields, pqrow.ReadOptions{})
}

// ReadTyped reads the columns cols (from PlanTyped) at m's rows, one
// typed vector each (see pqrow.File.ReadTypedAt); false, having read
// nothing, when the file lacks what it needs (an offset index): the caller
// reads rows. Errors are *FileError.
func (pf *ParquetFile) ReadTyped(ctx context.Context, cols []pqrow.TypedColumn, m pqrow.Match) ([]pqrow.Vector, bool, error) {
	v, ok, err := pf.f.ReadTypedAt(ctx, cols, m.RowGroup, m.Rows)
	if err != nil {
		return nil, false, &FileError{URI: pf.uri, Err: parquetErr(pf.uri, err)}
	}
	return v, ok, nil
}

// ScanTyped reads the plan's projected columns of the Parquet file at uri
// page by page in typed form (see pqrow.File.ScanTyped: int64 values for
// integers, dates and timestamps, byte strings for strings, dictionary
// pages as the dictionary and an index per value), calling fn with each
// page; col indexes the plan's projected columns. Nothing is converted to a
// row, so a consumer that takes each column on its own (a per-file summary)
// pays only for decoding. It returns false, having read only the footer,
// when some projected column has no typed form in this file (nested or
// other types): the caller reads rows instead. Errors are *FileError.
func (p *Plan) ScanTyped(ctx context.Context, res Resolver, uri string, fn func(col int, pg *pqrow.TypedPage) error) (bool, error) {
	if p.format != Parquet {
		return false, nil
	}
	st, key, err := res.Resolve(ctx, uri)
	if err != nil {
		return false, &FileError{URI: uri, Err: err}
	}
	info, err := st.Stat(ctx, key)
	if err != nil {
		return false, &FileError{URI: uri, Err: err}
	}
	f, err := pqrow.OpenFile(store.NewReaderAt(ctx, st, key, info.Size), info.Size)
	if err != nil {
		return false, &FileError{URI: uri, Err: parquetErr(uri, err)}
	}
	cols, ok := f.PlanTyped(p.proj.Fields, pqrow.ReadOptions{})
	if !ok {
		return false, nil
	}
	var fnErr error
	err = f.ScanTyped(ctx, cols, func(col int, pg *pqrow.TypedPage) error {
		fnErr = fn(col, pg)
		return fnErr
	})
	switch {
	case err == nil:
		return true, nil
	case fnErr != nil && errors.Is(err, fnErr):
		return true, fnErr // the caller's own error, as it returned it
	}
	return true, &FileError{URI: uri, Err: parquetErr(uri, err)}
}

// NumRows returns the file's number of rows (from its footer).
func (pf *ParquetFile) NumRows() int64 { return pf.f.NumRows() }
