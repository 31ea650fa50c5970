package infer

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// maxSampleBytes bounds how much of a CSV or JSON file is read for
// inference (with MaxSampleRows): 64 MiB covers 10,000 rows of up to 6 KiB.
const maxSampleBytes = 64 << 20

// FromFile infers the schema of a data file named by its URI: Parquet from
// its footer (two ranged reads: the tail, then the footer), CSV and JSON
// from a bounded sample with Spark's rules. readOptions are Spark reader
// options (header, sep/delimiter, quote, multiLine).
func FromFile(ctx context.Context, res *store.Resolver, uri, format string, readOptions map[string]string) (*schema.Struct, error) {
	s, key, err := res.Resolve(ctx, uri)
	if err != nil {
		return nil, err
	}
	switch format {
	case "parquet":
		info, err := s.Stat(ctx, key)
		if err != nil {
			return nil, err
		}
		f, err := pqrow.OpenFile(store.NewReaderAt(ctx, s, key, info.Size), info.Size)
		if err != nil {
			return nil, fmt.Errorf("infer: %s: %w", uri, err)
		}
		return f.Schema()
	case "csv", "json":
		r, err := s.NewRangeReader(ctx, key, 0, maxSampleBytes)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		var src io.Reader = r
		if format == "csv" {
			return CSV(src, CSVOptionsFrom(readOptions))
		}
		return JSON(src, strings.EqualFold(readOptions["multiLine"], "true"))
	}
	return nil, fmt.Errorf("infer: unsupported format %q (want csv, json or parquet)", format)
}
