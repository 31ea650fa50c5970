package ariadne

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/fileindex"
)

// LocateRequest asks which data files can hold keys.
type LocateRequest struct {
	// Keys maps index columns to values: a file is returned when, for every
	// column, it can hold one of the column's values (AND across columns,
	// OR within a column). Values are coerced to the column's type as
	// Spark does; text is accepted for every type.
	Keys map[string][]any
	// PerKey also answers, for each column and value alone, the files that
	// can hold it.
	PerKey bool
}

// KeyFiles are the files that can hold one value of one column.
type KeyFiles struct {
	Column string   `json:"column"`
	Key    any      `json:"key"`
	Files  []string `json:"files"`
}

// LocateResult is Locate's answer.
type LocateResult struct {
	// Files are the data file URIs that can hold the keys, sorted.
	Files []string
	// PerKey is set when the request asked for it, in column then value
	// order.
	PerKey []KeyFiles
}

// Locate returns the data files that can hold the keys, from the file
// index's newest version (no data file is read). Errors: aerr's
// ErrInvalidArgument for an empty request or values the column cannot
// compare with, ErrColumnNotFound for a column the index does not index.
func (ix *Index) Locate(ctx context.Context, req LocateRequest) (*LocateResult, error) {
	if len(req.Keys) == 0 {
		return nil, aerr.Invalid("locate: give at least one column and its values")
	}
	q := make(fileindex.Query, len(req.Keys))
	for c, vs := range req.Keys {
		if len(vs) == 0 {
			return nil, aerr.Invalid("locate: column %s has no values", c)
		}
		q[c] = locateValues(vs)
	}
	files, err := ix.fi.Locate(ctx, q)
	if err != nil {
		return nil, err
	}
	res := &LocateResult{Files: nonNil(files)}
	if !req.PerKey {
		return res, nil
	}
	cols := make([]string, 0, len(q))
	for c := range q {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	for _, c := range cols {
		for i, v := range q[c] {
			f, err := ix.fi.Locate(ctx, fileindex.Query{c: {v}})
			if err != nil {
				return nil, err
			}
			res.PerKey = append(res.PerKey, KeyFiles{Column: c, Key: req.Keys[c][i], Files: nonNil(f)})
		}
	}
	return res, nil
}

// locateValues passes JSON numbers as text, which the file index coerces
// to the column's type.
func locateValues(vs []any) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		if n, ok := v.(json.Number); ok {
			v = string(n)
		}
		out[i] = v
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
