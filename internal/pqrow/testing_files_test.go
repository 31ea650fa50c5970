package pqrow

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const parquetTesting = "../../testdata/parquet-testing"

// readAll opens path and reads every row with the file's inferred schema.
func readAll(t *testing.T, path string) (rows []Row, f *File, err error) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	f, err = OpenFile(fh, st.Size())
	if err != nil {
		return nil, nil, err
	}
	sch, err := f.Schema()
	if err != nil {
		return nil, f, err
	}
	for r, err := range f.Rows(context.Background(), sch, ReadOptions{}) {
		if err != nil {
			return rows, f, err
		}
		rows = append(rows, r)
	}
	return rows, f, nil
}

func isTyped(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsupported) || errors.Is(err, ErrSchemaMismatch)
}

// TestParquetTestingData reads every unencrypted file of parquet-testing's
// data/: each either reads all its rows or fails with a typed error.
func TestParquetTestingData(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(parquetTesting, "data", "*.parquet"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no test files: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			rows, f, err := readAll(t, p)
			if err != nil {
				if !isTyped(err) {
					t.Fatalf("untyped error: %v", err)
				}
				// No valid file is refused as lying or corrupt. One that
				// parquet-go v0.32.0 would decode wrongly (upstream issue
				// 608: empty strings where pyarrow reads 10,000 UUIDs) is
				// refused before it is read, naming the cause.
				var ie *IntegrityError
				var pe *PageError
				if filepath.Base(p) == "lz4_raw_compressed_larger.parquet" {
					if !strings.Contains(err.Error(), "issue 608") {
						t.Fatalf("want the refusal of upstream issue 608, got %v", err)
					}
				} else if !malformed[filepath.Base(p)] && (errors.As(err, &ie) || errors.As(err, &pe) || strings.Contains(err.Error(), "corrupt page")) {
					t.Fatalf("valid file refused: %v", err)
				}
				t.Logf("typed error: %v", err)
				return
			}
			if int64(len(rows)) != f.NumRows() {
				t.Fatalf("read %d rows, footer says %d", len(rows), f.NumRows())
			}
		})
	}
}

// undetectedBadData lists bad_data/ files whose corruption parquet-go
// decodes without complaint (their levels and value counts are
// self-consistent, so no check of ours catches them either). Any other
// bad file must fail.
var undetectedBadData = map[string]bool{
	"ARROW-GH-43605.parquet": true, // dictionary-encoded INT(16,false): bad RLE run decodes as zeros
}

// TestParquetTestingBadData: every file of bad_data/ fails with a typed
// error, never a panic or an untyped error.
func TestParquetTestingBadData(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(parquetTesting, "bad_data", "*"))
	if len(paths) == 0 {
		t.Skip("no bad_data directory")
	}
	for _, p := range paths {
		if strings.HasSuffix(p, ".md") {
			continue
		}
		name := filepath.Base(p)
		t.Run(name, func(t *testing.T) {
			_, _, err := readAll(t, p)
			switch {
			case err == nil && undetectedBadData[name]:
				t.Logf("known limitation: corruption not detected")
			case err == nil:
				t.Fatalf("bad file read without error")
			case !isTyped(err):
				t.Fatalf("untyped error: %v", err)
			}
		})
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
