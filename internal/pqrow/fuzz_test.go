package pqrow

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// fuzzMaxRows bounds the rows a fuzz input is read for: a footer may claim
// any number.
const fuzzMaxRows = 4096

// FuzzReadParquet: a data file of any content, read as update reads it
// (rows of the file's own schema, checked against its footer; typed pages
// of the columns the typed path takes), never panics:
// it is read or refused with an error. Seeds: small files of
// parquet-testing (every encoding, page v1/v2, dictionaries, nested types)
// and testdata/fuzz/FuzzReadParquet.
func FuzzReadParquet(f *testing.F) {
	paths, _ := filepath.Glob("../../testdata/parquet-testing/data/*.parquet")
	n := 0
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || fi.Size() > 8<<10 || n >= 24 {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
			n++
		}
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRead(ctx, data)
	})
}

// fuzzRead reads data as FuzzReadParquet does (shared with
// TestReadParquetMutations).
func fuzzRead(ctx context.Context, data []byte) {
	{
		pf, err := OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		if pf.NumRows() > 1<<20 {
			return // a footer's claim, not bytes: reading it only measures memory
		}
		sch, err := pf.Schema()
		if err != nil {
			return
		}
		rows := 0
		for _, err := range pf.Rows(ctx, sch, ReadOptions{}) {
			if err != nil || rows >= fuzzMaxRows {
				break
			}
			rows++
		}
		if cols, ok := pf.PlanTyped(sch.Fields, ReadOptions{}); ok {
			_ = pf.ScanTyped(ctx, cols, func(int, *TypedPage) error { return nil })
		}
	}
}
