package ariadne

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/internal/infer"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// KeySource is a stream of key rows with a schema: the keys side of a
// join read from somewhere other than memory (a keys file opened with
// package datafile, a DuckDB query through fileindex.SQLSource). Its rows
// are in the data files' row model (see fileindex.KeySource).
type KeySource = fileindex.KeySource

// JoinRequest is one join of a key set with the rows of the data files
// that can hold its keys.
type JoinRequest struct {
	// Keys is the key set by column: every list has the same length, and
	// row i of the key set is the i-th value of each list. Values are typed
	// by the index's column of the same name as lookup keys are (text is
	// parsed by the column's type; a value of the wrong Go type is an
	// error); a column the index does not have is typed by its values. A
	// nil value is a null key. Give Keys or Source.
	Keys map[string][]any
	// Source streams the key set instead (e.g. a keys file); its schema
	// types the keys.
	Source KeySource
	// On are the join columns (USING semantics); default: every column of
	// Keys, sorted. At least one must be an index column: it prunes the
	// files read.
	On []string
	// How is the join type: inner (default), left, right, full, semi, anti
	// (Spark's names are accepted too).
	How string
	// Select restricts the index side to these columns (it must contain
	// the join columns); nil: every column.
	Select []string
	// IndexOnLeft puts the index side on the left.
	IndexOnLeft bool
	// Engine reads the located files and joins: EngineDuckDB (embedded)
	// or EngineSpark (Spark through Spark Connect at SparkRemote); "" =
	// the Store's config (key engine, default duckdb). See
	// docs/spark-engine.md.
	Engine string
	// SparkRemote is the Spark Connect URL, sc://host:port; "" = the
	// Store's config (key sparkRemote).
	SparkRemote string
	// RowIndex says whether the DuckDB engine may read the index side
	// through a row index on the join column (the matching rows' positions
	// from its key directory, then only those rows read): "auto" (or "")
	// when one holds every located file unchanged and few rows match,
	// "force" whenever one holds every located file unchanged, "off"
	// never. JoinStats.Plan says what was decided and why.
	RowIndex string
	// Output, with the Spark engine, has Spark write the joined rows to
	// this path (file:///..., s3://...) instead of streaming them back:
	// the result then has the schema and no rows.
	Output string
	// OutputFormat is how Spark writes Output: "parquet" (a folder of
	// Parquet files) or "delta" (a Delta table, committed atomically by
	// Spark's Delta writer); "": delta when Output holds a Delta table,
	// else parquet.
	OutputFormat string
	// OutputMode says what an existing Output gets: "error" (or ""; the
	// join fails), "overwrite" or "append". Parquet is never written over
	// a Delta table. See docs/spark-engine.md.
	OutputMode string
}

// JoinStats is how a join read its index side (see fileindex.JoinStats).
type JoinStats struct {
	// Engine is the engine that read the located files and joined:
	// "duckdb" or "spark".
	Engine string `json:"engine"`
	// Path is how the located files were read: "late" (key columns first,
	// other columns only for matching rows), "rowindex" (a row index on
	// the join column gave the matching rows: only they were read), "scan"
	// (DuckDB read the located files itself: many rows match), "filtered"
	// or "full";
	// "engine" when another engine than DuckDB read them.
	Path string `json:"path"`
	// Plan says why the join took "rowindex", "late" or "scan" (the row
	// index's answer or why it was not used, the share of sampled rows that
	// match, or what kept the engine from reading the files).
	Plan string `json:"plan,omitempty"`
	// FilesLocated is the number of data files the file index located.
	FilesLocated int `json:"files_located"`
	// RowGroups and Pages seen and skipped by the late path.
	RowGroups        int `json:"row_groups"`
	RowGroupsSkipped int `json:"row_groups_skipped"`
	Pages            int `json:"pages"`
	PagesSkipped     int `json:"pages_skipped"`
	// RowsScanned were decoded (the key column only, on the late path);
	// RowsLoaded were handed to the join engine.
	RowsScanned int64 `json:"rows_scanned"`
	RowsLoaded  int64 `json:"rows_loaded"`
	// Requests and BytesRead are the data-file reads.
	Requests  int64 `json:"requests"`
	BytesRead int64 `json:"bytes_read"`
	// EngineFilesRead and EngineBytesRead are what Spark's scans reported
	// reading (the located files, whole); 0 with DuckDB.
	EngineFilesRead int64 `json:"engine_files_read,omitempty"`
	EngineBytesRead int64 `json:"engine_bytes_read,omitempty"`
	// OutputFormat is the format Spark wrote JoinRequest.Output in
	// ("parquet" or "delta", after inference); "" when rows streamed back.
	OutputFormat string `json:"output_format,omitempty"`
}

// JoinRows is a join's streaming result: rows arrive a batch at a time
// from the join engine, so a result of any size passes through bounded
// memory. It is not safe for concurrent use; Close releases the engine (an
// in-memory DuckDB database and its spill folder).
type JoinRows struct {
	ctx    context.Context
	res    *fileindex.Result
	schema *schema.Struct
	cols   []string
	batch  [][]any
	i      int
	row    []any
	err    error
	done   bool
}

// Join joins the key set with the rows of the data files the file index
// locates for its keys (only those files are read; see fileindex.Join for
// the semantics: USING columns first, then the left side's other columns,
// then the right side's; a repeated column name is renamed name_2, ...).
// Rows are in the face's value model, as Lookup's. The caller must Close
// the result. Errors: aerr.ErrInvalidArgument for a malformed key set,
// wrong key types or a join without an index column;
// aerr.ErrColumnNotFound for unknown columns.
func (ix *Index) Join(ctx context.Context, req JoinRequest) (*JoinRows, error) {
	src := req.Source
	if (src == nil) == (req.Keys == nil) {
		return nil, aerr.Invalid("join: give exactly one of a key set (keys) and a key source")
	}
	if src == nil {
		var err error
		if src, err = ix.keySet(req.Keys); err != nil {
			return nil, err
		}
	}
	on := req.On
	if len(on) == 0 {
		on = src.Schema().Names()
		slices.Sort(on)
	}
	how := fileindex.Inner
	if req.How != "" {
		var err error
		if how, err = fileindex.ParseJoinType(req.How); err != nil {
			return nil, err
		}
	}
	fo := fileindex.JoinOptions{Select: req.Select, IndexOnLeft: req.IndexOnLeft, Output: req.Output, OutputFormat: req.OutputFormat, OutputMode: req.OutputMode}
	eng, err := ix.s.joinEngine(ctx, req.Engine, req.SparkRemote)
	if err != nil {
		return nil, err
	}
	fo.Engine = eng
	if fo.Rows, err = ix.rowLocator(req.RowIndex); err != nil {
		return nil, err
	}
	res, err := ix.fi.Join(ctx, src, on, how, fo)
	if err != nil {
		return nil, err
	}
	st := uniqueNames(res.Schema())
	return &JoinRows{ctx: ctx, res: res, schema: st, cols: st.Names()}, nil
}

// keySet turns a posted key set into a key source typed by the index's
// columns.
func (ix *Index) keySet(keys map[string][]any) (KeySource, error) {
	if len(keys) == 0 {
		return nil, aerr.Invalid("join: the key set has no column")
	}
	cols := make([]string, 0, len(keys))
	for c := range keys {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	n := len(keys[cols[0]])
	st := &schema.Struct{}
	for _, c := range cols {
		if len(keys[c]) != n {
			return nil, aerr.Invalid("join: key column %s has %d values, %s has %d: every column needs one per key row", c, len(keys[c]), cols[0], n)
		}
		t := ix.columnType(c)
		if t == nil {
			t = inferType(keys[c])
		}
		if _, ok := t.(*schema.Primitive); !ok {
			return nil, aerr.Invalid("join: key column %s of type %s: only primitive key columns can be posted", c, t)
		}
		st.Fields = append(st.Fields, schema.Field{Name: c, Type: t, Nullable: true})
	}
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = make([]any, len(cols))
	}
	for j, c := range cols {
		t := st.Fields[j].Type
		for i, v := range keys[c] {
			if v == nil {
				continue
			}
			rv, err := rowModelValue(c, t, v)
			if err != nil {
				return nil, err
			}
			rows[i][j] = rv
		}
	}
	return fileindex.RowsSource(st, rows), nil
}

// inferType types a posted key column the index does not have by its
// values: text, integers, other numbers, booleans.
func inferType(vs []any) schema.Type {
	var t schema.Type
	for _, v := range vs {
		var vt schema.Type
		switch x := v.(type) {
		case nil:
			continue
		case string, []byte:
			vt = schema.String
		case bool:
			vt = schema.Boolean
		case float32, float64:
			vt = schema.Double
		case time.Time:
			vt = schema.Timestamp
		default:
			if n, ok := x.(interface{ Int64() (int64, error) }); ok {
				if _, err := n.Int64(); err == nil {
					vt = schema.Long
				} else {
					vt = schema.Double
				}
			} else {
				vt = schema.Long
			}
		}
		switch {
		case t == nil:
			t = vt
		case t == schema.Long && vt == schema.Double:
			t = schema.Double
		case t == schema.Double && vt == schema.Long:
		case t != vt:
			return schema.String // mixed: compared as text
		}
	}
	if t == nil {
		return schema.String
	}
	return t
}

// rowModelValue converts a posted key to the data files' row model for a
// column of type t (int32 for integer, time.Time for dates, ...).
func rowModelValue(col string, t schema.Type, v any) (any, error) {
	if t == schema.String {
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
		if s, ok := textOf(v, schema.Long); ok {
			// A number posted for a column the key set types as text (mixed).
			return s, nil
		}
	}
	k, _, err := keyValue(col, t, v)
	if err != nil {
		return nil, err
	}
	switch {
	case t == schema.Binary:
		if s, ok := k.(string); ok {
			return []byte(s), nil
		}
	case t == schema.Integer, t == schema.Short, t == schema.Byte:
		i := k.(int64)
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		switch t {
		case schema.Short:
			lo, hi = math.MinInt16, math.MaxInt16
		case schema.Byte:
			lo, hi = math.MinInt8, math.MaxInt8
		}
		if i < lo || i > hi {
			return nil, aerr.Invalid("key %d for column %s: out of the range of a %s", i, col, t)
		}
		switch t {
		case schema.Short:
			return int16(i), nil
		case schema.Byte:
			return int8(i), nil
		}
		return int32(i), nil
	case t == schema.Float:
		return float32(k.(float64)), nil
	case t == schema.Date:
		return time.Unix(k.(int64)*86400, 0).UTC(), nil
	}
	return k, nil
}

// uniqueNames renames repeated top-level field names to name_2, name_3, …
// (skipping names already taken), so rows can be objects by column name.
func uniqueNames(st *schema.Struct) *schema.Struct {
	seen := map[string]bool{}
	for _, f := range st.Fields {
		seen[f.Name] = false
	}
	out := &schema.Struct{Fields: slices.Clone(st.Fields)}
	for i, f := range out.Fields {
		if !seen[f.Name] {
			seen[f.Name] = true
			continue
		}
		for n := 2; ; n++ {
			name := f.Name + "_" + strconv.Itoa(n)
			if _, taken := seen[name]; !taken {
				out.Fields[i].Name = name
				seen[name] = true
				break
			}
		}
	}
	return out
}

// Schema returns the result's schema (repeated names renamed): the same
// whether or not any file was located.
func (j *JoinRows) Schema() *schema.Struct { return j.schema }

// Columns returns the result's column names, in order.
func (j *JoinRows) Columns() []string { return j.cols }

// Next advances to the next row; false at the end or on an error (see
// Err).
func (j *JoinRows) Next() bool {
	for j.i >= len(j.batch) {
		if j.done || j.err != nil {
			return false
		}
		b, err := j.res.Next(j.ctx)
		if errors.Is(err, io.EOF) {
			j.done = true
			return false
		}
		if err != nil {
			j.err = err
			return false
		}
		j.batch, j.i = b, 0
	}
	raw := j.batch[j.i]
	j.batch[j.i] = nil
	j.i++
	j.row = make([]any, len(j.schema.Fields))
	for k, f := range j.schema.Fields {
		if k < len(raw) {
			j.row[k] = faceValue(f.Type, raw[k])
		}
	}
	return true
}

// Values returns the current row, aligned with Columns, in the face's
// value model.
func (j *JoinRows) Values() []any { return j.row }

// Record returns the current row as a map by column name.
func (j *JoinRows) Record() map[string]any {
	m := make(map[string]any, len(j.cols))
	for i, c := range j.cols {
		m[c] = j.row[i]
	}
	return m
}

// Err returns the error that ended the stream, if any.
func (j *JoinRows) Err() error { return j.err }

// Files returns the data files the join read (the located files).
func (j *JoinRows) Files() []string { return j.res.Files() }

// Stats returns how the join read its index side.
func (j *JoinRows) Stats() JoinStats {
	s := j.res.Stats()
	return JoinStats{Engine: s.Engine, Path: string(s.Path), Plan: s.Plan, FilesLocated: s.FilesLocated, RowGroups: s.RowGroups, RowGroupsSkipped: s.RowGroupsSkipped,
		Pages: s.Pages, PagesSkipped: s.PagesSkipped, RowsScanned: s.RowsScanned, RowsLoaded: s.RowsLoaded,
		Requests: s.Requests, BytesRead: s.Bytes, EngineFilesRead: s.EngineFilesRead, EngineBytesRead: s.EngineBytesRead,
		OutputFormat: s.OutputFormat}
}

// Close releases the join engine.
func (j *JoinRows) Close() error { return j.res.Close() }

// OpenKeys opens a keys file as a join's Source: a CSV (with a header),
// JSON lines or Parquet file at uri (a canonical URI or a local path),
// read through the store's resolver with the reader options given (for CSV,
// header defaults to true), its schema inferred from the file.
func (ix *Index) OpenKeys(ctx context.Context, uri, format string, options map[string]string) (KeySource, error) {
	c, err := store.Canonical(uri)
	if err != nil {
		return nil, err
	}
	ro := map[string]string{}
	if format == "csv" {
		ro["header"] = "true"
	}
	maps.Copy(ro, options)
	st, err := infer.FromFile(ctx, ix.s.res, c, format, ro)
	if err != nil {
		return nil, fmt.Errorf("keys %s: %w", uri, err)
	}
	return datafile.Open(ctx, ix.s.res, c, datafile.Spec{Format: format, Schema: st, Options: ro}, nil)
}
