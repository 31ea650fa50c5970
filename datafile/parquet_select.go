package datafile

import (
	"context"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/pqrow"
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
	if p.format != Parquet {
		return nil, aerr.Invalid("datafile: selective reads need a parquet plan, not %s", p.format)
	}
	st, key, err := res.Resolve(ctx, uri)
	if err != nil {
		return nil, &FileError{URI: uri, Err: err}
	}
	info, err := st.Stat(ctx, key)
	if err != nil {
		return nil, &FileError{URI: uri, Err: err}
	}
	f, err := pqrow.OpenFile(store.NewReaderAt(ctx, st, key, info.Size), info.Size)
	if err != nil {
		return nil, &FileError{URI: uri, Err: parquetErr(uri, err)}
	}
	// The page index in one request rather than two per column chunk.
	if err := f.LoadPageIndex(); err != nil {
		return nil, &FileError{URI: uri, Err: parquetErr(uri, err)}
	}
	return &ParquetFile{uri: uri, plan: p, f: f}, nil
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
