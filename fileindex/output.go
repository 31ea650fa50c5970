package fileindex

import (
	"context"
	"strings"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/store"
)

// The formats an engine writes a join's output in (JoinOptions.OutputFormat).
const (
	// OutputParquet: a folder of Parquet files (Spark's Parquet writer).
	OutputParquet = "parquet"
	// OutputDelta: a Delta table (Spark's Delta writer); its commit is
	// atomic, so readers see the whole output or none of it.
	OutputDelta = "delta"
)

// What an output that already exists gets (JoinOptions.OutputMode).
const (
	// OutputErrorIfExists fails the join when the output path holds
	// anything (the default).
	OutputErrorIfExists = "error"
	// OutputOverwrite replaces what the path holds: a new version of a
	// Delta table (older versions stay readable by time travel), or, for
	// Parquet, the folder's files deleted and written anew (not atomic).
	OutputOverwrite = "overwrite"
	// OutputAppend adds the rows: a new version of a Delta table (whose
	// schema must match), or more Parquet files in the folder.
	OutputAppend = "append"
)

// output is a join output resolved against what the path holds.
type output struct {
	Path, Format, Mode string
}

// ValidateOutput checks an output's format ("" or OutputParquet,
// OutputDelta) and mode ("" or OutputErrorIfExists, OutputOverwrite,
// OutputAppend) without looking at the path; format and mode need a path.
// The CLI calls it to refuse bad flags before any work.
func ValidateOutput(path, format, mode string) error {
	if path == "" {
		if format != "" || mode != "" {
			return aerr.Invalid("join: an output format or mode needs an output path")
		}
		return nil
	}
	switch format {
	case "", OutputParquet, OutputDelta:
	default:
		return aerr.Invalid("join: output format %q: want parquet or delta", format)
	}
	switch mode {
	case "", OutputErrorIfExists, OutputOverwrite, OutputAppend:
	default:
		return aerr.Invalid("join: output mode %q: want error, overwrite or append", mode)
	}
	return nil
}

// resolveOutput validates the output options and looks at what the path
// holds, when this process can list it (Spark may reach paths we cannot;
// then Spark's own checks apply: Parquet fails on an existing folder,
// Delta on an existing table):
//
//   - mode error (default): a path holding anything fails the join here,
//     before Spark runs, whatever the format;
//   - no format given: delta when the path holds a Delta table (a
//     _delta_log/ with an object in it), else parquet;
//   - parquet over an existing Delta table is refused: an overwrite would
//     delete the table's log with its files, an append would add files
//     the table does not list.
func (fi *FileIndex) resolveOutput(ctx context.Context, opts JoinOptions) (output, error) {
	out := output{Path: opts.Output, Format: opts.OutputFormat, Mode: opts.OutputMode}
	if err := ValidateOutput(out.Path, out.Format, out.Mode); err != nil || out.Path == "" {
		return out, err
	}
	if _, duck := opts.Engine.(duckEngine); duck || opts.Engine == nil {
		return out, aerr.Invalid("join: an output written by the engine needs the spark engine; the duckdb engine streams rows (write them with the caller's writer)")
	}
	if out.Mode == "" {
		out.Mode = OutputErrorIfExists
	}
	exists, table, ok := probeOutput(ctx, fi.res, out.Path)
	switch {
	case ok && exists && out.Mode == OutputErrorIfExists:
		return out, aerr.Invalid("join: output %s already exists; choose mode overwrite or append (--spark-out-mode) or another path", out.Path)
	case ok && table && out.Format == OutputParquet:
		return out, aerr.Invalid("join: output %s is a Delta table; Parquet written over it would %s: write it as delta", out.Path,
			map[string]string{OutputOverwrite: "delete the table's log", OutputAppend: "add files the table does not list"}[out.Mode])
	case out.Format == "" && ok && table:
		out.Format = OutputDelta
	case out.Format == "":
		out.Format = OutputParquet
	}
	return out, nil
}

// probeOutput says whether path holds any object and whether it holds a
// Delta table; ok is false when this process cannot list it.
func probeOutput(ctx context.Context, res *store.Resolver, path string) (exists, table, ok bool) {
	if res == nil {
		return false, false, false
	}
	st, key, err := res.Resolve(ctx, strings.TrimSuffix(path, "/")+"/_")
	if err != nil {
		return false, false, false
	}
	dir := strings.TrimSuffix(key, "_")
	first := func(prefix string) (bool, error) {
		for _, err := range st.List(ctx, store.ListOptions{Prefix: prefix}) {
			return err == nil, err
		}
		return false, nil
	}
	if exists, err = first(dir); err != nil {
		return false, false, false
	}
	if !exists {
		return false, false, true
	}
	if table, err = first(dir + "_delta_log/"); err != nil {
		return false, false, false
	}
	return exists, table, true
}
