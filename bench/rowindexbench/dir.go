package rowindexbench

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// DirConfig configures RunDir on existing Parquet files.
type DirConfig struct {
	// Path is a local folder: every *.parquet file under it is measured,
	// except under folders and files whose names start with "." or "_"
	// (_delta_log, _SUCCESS, .crc files: what Spark skips too).
	Path string
	// Key is the key column: a top-level, non-repeated INT32/INT64 (not
	// temporal or decimal), FLOAT/DOUBLE or BYTE_ARRAY column.
	Key string
	// Kind is the row index kind (default sorted).
	Kind rowindex.Kind
	// IndexDir is where the row index is built (default: a temporary
	// folder, removed afterwards).
	IndexDir string
	Classes  ClassConfig
	Progress io.Writer
}

// RunDir measures the row index against DuckDB on a user's own files: it
// builds a row index on Key in a temporary index folder, counts the rows of
// every key with a scan of the key column, draws keys per class from the
// data and looks each up in both systems, as Run does on a generated lake.
func RunDir(ctx context.Context, cfg DirConfig) (*Report, error) {
	cfg.Classes.defaults()
	if cfg.Kind == "" {
		cfg.Kind = rowindex.KindSorted
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.Key == "" {
		return nil, aerr.Invalid("bench rowindex --dir needs --key COL")
	}
	root, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, err
	}
	uris, err := parquetFiles(root)
	if err != nil {
		return nil, err
	}
	if len(uris) == 0 {
		return nil, aerr.Invalid("%s: no .parquet file", root)
	}
	idxDir := cfg.IndexDir
	if idxDir == "" {
		if idxDir, err = os.MkdirTemp("", "ariadne-bench-index-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(idxDir)
	}
	data, err := store.Open(ctx, "file://"+root)
	if err != nil {
		return nil, err
	}
	defer data.Close()
	idx, err := store.Open(ctx, "file://"+idxDir)
	if err != nil {
		return nil, err
	}
	defer idx.Close()
	rep := &Report{Layout: "dir", Description: "existing files in " + root}
	lk := lakeRun{data: data, lakeDir: root, uris: uris, keyCol: cfg.Key, idx: idx, kind: cfg.Kind, progress: cfg.Progress}
	h, err := lk.prepare(ctx, rep)
	if err != nil {
		return nil, err
	}
	if rep.Classes, err = lk.classes(ctx, cfg.Classes, h, &rep.Index); err != nil {
		return nil, err
	}
	return rep, nil
}

// parquetFiles lists the .parquet files under root as slash-separated
// paths relative to it, in lexical order.
func parquetFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(name, ".parquet") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, aerr.Invalid("%s: %v", root, err)
	}
	slices.Sort(out)
	return out, nil
}
