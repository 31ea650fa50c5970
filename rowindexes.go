package ariadne

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/rowindex"
)

// This file holds the row index operations of the face: build, update,
// describe, compact, drop and forget files. They write through the row
// index's own commit protocol (package rowindex), so they are safe against
// concurrent writers in other processes; each refreshes the handle
// afterwards, so its next lookups serve what was committed.

// RowIndexDefinition defines a row index: name, key column, kind (hash or
// sorted), cover columns and per-key aggregates.
type RowIndexDefinition = rowindex.Definition

// BuildOption configures a row index build (rowindex.WithMemory,
// rowindex.WithProgress).
type BuildOption = rowindex.BuildOption

// BuildStats is what a row index build read and wrote.
type BuildStats = rowindex.BuildStats

// RowIndexInfo describes one row index: its definition and the sizes of
// the manifest version the handle serves (or the newest one, for a row
// index no query has opened yet). The command line's `describe` and the
// server's describe print it as is.
type RowIndexInfo struct {
	Name string `json:"name"`
	Key  string `json:"key"`
	Kind string `json:"kind"`
	// BucketHash names a hash row index's bucket hash ("fnv1a" for indexes
	// created before format 3, "fnv1a-fmix64" since; see
	// docs/rowindex.md, "On-disk format"); nil for a sorted row index.
	BucketHash *string `json:"bucket_hash"`
	// FormatVersion is the persisted format version of the manifest
	// described (docs/rowindex.md, "On-disk format").
	FormatVersion int      `json:"format_version"`
	Cover         []string `json:"cover"`
	Aggregates    []string `json:"aggregates"` // as on the command line: count, sum:COL, ...
	// Version is the manifest version described.
	Version int64 `json:"version"`
	// Files is the number of indexed data files (removed ones excluded).
	Files int `json:"files"`
	// Removed is the number of tombstones: removed data files whose entries
	// the fragments hold until the next compaction.
	Removed    int   `json:"removed"`
	Entries    int64 `json:"entries"`
	Fragments  int   `json:"fragments"`
	IndexBytes int64 `json:"index_bytes"`
	DataBytes  int64 `json:"data_bytes"`
	// IndexFraction is IndexBytes / DataBytes (0 with no data).
	IndexFraction float64 `json:"index_fraction"`
	// Committed is when the version was committed (RFC 3339).
	Committed string `json:"committed"`
	// Skipped are the tracked data files the row index left out because a
	// column of its definition is missing or unusable in them (a file
	// without the key column), with the reason; the other files are
	// indexed. They are tried again once deleted from the index and added
	// back.
	Skipped []RowIndexSkipped `json:"skipped"`
	// ShapeFiles is how many of the indexed data files have a shape file
	// (`warm --save-shapes`), and ShapeFileBytes their size; nil when the
	// shape files could not be listed (describe does not fail for it).
	ShapeFiles     *int   `json:"shape_files"`
	ShapeFileBytes *int64 `json:"shape_file_bytes"`
}

// RowIndexSkipped is a data file a row index left out, and why.
type RowIndexSkipped struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// rowIndexSkipped converts a build's or a manifest's skipped files.
func rowIndexSkipped(s []rowindex.SkippedFile) []RowIndexSkipped {
	out := make([]RowIndexSkipped, len(s))
	for i, f := range s {
		out[i] = RowIndexSkipped{File: f.URI, Reason: f.Reason}
	}
	return out
}

func rowIndexInfo(m *rowindex.Manifest) RowIndexInfo {
	aggs := make([]string, len(m.Aggregates))
	for i, a := range m.Aggregates {
		aggs[i] = a.String()
	}
	info := RowIndexInfo{Name: m.Name, Key: m.Key, Kind: string(m.Kind), Cover: nonNil(m.Cover), Aggregates: aggs, Version: m.Version,
		Files: len(m.Files), Removed: len(m.Removed), Entries: m.Entries(), Fragments: len(m.Fragments),
		IndexBytes: m.IndexBytes(), DataBytes: m.DataBytes(), Committed: m.Committed.UTC().Format(time.RFC3339Nano),
		Skipped: rowIndexSkipped(m.Skipped), FormatVersion: m.FormatVersion}
	if m.Kind == rowindex.KindHash {
		name := m.BucketHash.String()
		info.BucketHash = &name
	}
	if info.DataBytes > 0 {
		info.IndexFraction = float64(info.IndexBytes) / float64(info.DataBytes)
	}
	return info
}

// requireParquet refuses row index builds on indexes of other formats.
func (ix *Index) requireParquet() error {
	if f := ix.Format(); f != "parquet" {
		return aerr.Invalid("row indexes serve Parquet data files; index %s holds %s files", ix.Name(), f)
	}
	return nil
}

// trackedFiles lists the index's tracked data files, less skip.
func (ix *Index) trackedFiles(ctx context.Context, skip []string) ([]string, error) {
	files, err := ix.reg.Files(ctx)
	if err != nil {
		return nil, err
	}
	gone := make(map[string]bool, len(skip))
	for _, s := range skip {
		gone[s] = true
	}
	uris := make([]string, 0, len(files))
	for _, f := range files {
		if !gone[f.Name] {
			uris = append(uris, f.Name)
		}
	}
	return uris, nil
}

// AddRowIndex builds a new row index over the index's tracked Parquet
// files (the name defaults to the key column) and returns its description
// and the build's work. Errors: rowindex.ErrExists for a name taken,
// aerr.ErrInvalidArgument for a definition the data cannot serve or an
// index of another format.
func (ix *Index) AddRowIndex(ctx context.Context, def RowIndexDefinition, opts ...BuildOption) (RowIndexInfo, BuildStats, error) {
	if def.Name == "" {
		def.Name = def.Key
	}
	if err := ix.requireParquet(); err != nil {
		return RowIndexInfo{}, BuildStats{}, err
	}
	uris, err := ix.trackedFiles(ctx, nil)
	if err != nil {
		return RowIndexInfo{}, BuildStats{}, err
	}
	m, st, err := rowindex.Create(ctx, ix.folder(), def, ix.s.res, uris, opts...)
	if err != nil {
		return RowIndexInfo{}, st, err
	}
	_, _ = ix.listRowIndexes(ctx, false)
	return rowIndexInfo(m), st, nil
}

// AddRowIndexOptions choose where AddRowIndexWith reads the data files'
// key column.
type AddRowIndexOptions struct {
	// Engine is "duckdb" (here, the default: the name stands for "this
	// process") or "spark": Apache Spark through Spark Connect at
	// SparkRemote reads the key column and returns its runs, and the row
	// index is written here and is the same row index ("": the config
	// keys engine and sparkRemote). Row indexes with cover columns or
	// aggregates are built here only. See docs/spark-engine.md.
	Engine, SparkRemote string
	// BatchFiles is the number of files per Spark request (0:
	// rowindex.DefaultEngineBatchFiles).
	BatchFiles int
}

// AddRowIndexWith is AddRowIndex with the key column read by an engine.
func (ix *Index) AddRowIndexWith(ctx context.Context, def RowIndexDefinition, o AddRowIndexOptions, opts ...BuildOption) (RowIndexInfo, BuildStats, error) {
	eng, err := ix.s.engineFor(ctx, "add-row-index", o.Engine, o.SparkRemote)
	if err != nil {
		return RowIndexInfo{}, BuildStats{}, err
	}
	if eng != nil {
		opts = append(opts[:len(opts):len(opts)], rowindex.WithEngine(eng, o.BatchFiles))
	}
	return ix.AddRowIndex(ctx, def, opts...)
}

// UpdateRowIndexes brings every row index up to the tracked files: each
// forgets the data files the index no longer tracks and those in skip (for
// example files an update found vanished: their rows cannot be served),
// and indexes the tracked files it does not hold yet. It returns each row
// index's build by name (none for an index of another format). Update runs
// it after the file index's update.
func (ix *Index) UpdateRowIndexes(ctx context.Context, skip []string, opts ...BuildOption) (map[string]BuildStats, error) {
	if ix.Format() != "parquet" {
		return nil, nil
	}
	uris, err := ix.trackedFiles(ctx, skip)
	if err != nil {
		return nil, err
	}
	out, err := rowindex.UpdateAll(ctx, ix.folder(), ix.s.res, uris, opts...)
	if err != nil {
		return nil, err
	}
	return out, ix.refreshRowIndexes(ctx)
}

// RemoveFromRowIndexes makes every row index forget the data files uris
// (after they were deleted from the index) and returns the files each
// forgot, by name.
func (ix *Index) RemoveFromRowIndexes(ctx context.Context, uris []string) (map[string]int, error) {
	out, err := rowindex.RemoveAll(ctx, ix.folder(), uris)
	if err != nil {
		return nil, err
	}
	return out, ix.refreshRowIndexes(ctx)
}

// RowIndexCompaction is what CompactRowIndexes did to one row index.
type RowIndexCompaction struct {
	Version          int64 `json:"version"` // the manifest version committed
	FragmentsBefore  int   `json:"fragments_before"`
	FragmentsAfter   int   `json:"fragments_after"`
	EntriesBefore    int64 `json:"entries_before"`
	EntriesAfter     int64 `json:"entries_after"`
	IndexBytesBefore int64 `json:"index_bytes_before"`
	IndexBytesAfter  int64 `json:"index_bytes_after"`
	// RemovedFiles is the number of removed data files (tombstones) whose
	// entries the compaction dropped.
	RemovedFiles int `json:"removed_files"`
}

// CompactRowIndexes compacts every row index (all fragments merged into a
// fresh sequence, removed files' entries dropped) and reports each by
// name. It stops at the first failure; row indexes compacted before it
// stay compacted.
//
// The "before" numbers are of the manifest read just before the
// compaction; a writer committing in between makes it fail with
// rowindex.ErrConcurrentUpdate unless the compaction read that writer's
// version, in which case "before" may miss its last change.
func (ix *Index) CompactRowIndexes(ctx context.Context, opts ...MaintainOption) (map[string]RowIndexCompaction, error) {
	o := maintainOptions(opts)
	defs, err := ix.listRowIndexes(ctx, false)
	if err != nil {
		return nil, err
	}
	out := make(map[string]RowIndexCompaction, len(defs))
	for i, d := range defs {
		o.report(MaintainProgress{Step: "compact", RowIndex: d.Name, Done: i, Total: len(defs)})
		before, err := ix.newestManifest(ctx, d.Name)
		if err != nil {
			return out, fmt.Errorf("compact row index %s: %w", d.Name, err)
		}
		after, err := rowindex.Compact(ctx, ix.folder(), d.Name)
		if err != nil {
			return out, fmt.Errorf("compact row index %s: %w", d.Name, err)
		}
		out[d.Name] = RowIndexCompaction{
			Version:         after.Version,
			FragmentsBefore: len(before.Fragments), FragmentsAfter: len(after.Fragments),
			EntriesBefore: before.Entries(), EntriesAfter: after.Entries(),
			IndexBytesBefore: before.IndexBytes(), IndexBytesAfter: after.IndexBytes(),
			RemovedFiles: len(before.Removed),
		}
		o.report(MaintainProgress{Step: "compact", RowIndex: d.Name, Done: i + 1, Total: len(defs)})
	}
	return out, ix.refreshRowIndexes(ctx)
}

// MaintainOption configures CompactRowIndexes and VacuumRowIndexes.
type MaintainOption func(*maintainConfig)

type maintainConfig struct {
	progress func(MaintainProgress)
}

// MaintainProgress reports a maintenance operation's advance over the row
// indexes: the row index RowIndex starts (Done of Total finished before
// it) or is finished (Done counts it).
type MaintainProgress struct {
	Step        string // "compact" or "vacuum"
	RowIndex    string
	Done, Total int
}

// WithMaintainProgress makes CompactRowIndexes and VacuumRowIndexes report
// their advance to fn, before and after each row index (on the calling
// goroutine).
func WithMaintainProgress(fn func(MaintainProgress)) MaintainOption {
	return func(c *maintainConfig) { c.progress = fn }
}

func maintainOptions(opts []MaintainOption) maintainConfig {
	var c maintainConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

func (c maintainConfig) report(p MaintainProgress) {
	if c.progress != nil {
		c.progress(p)
	}
}

// newestManifest reads the newest manifest of the row index name (no
// fragment, no data file).
func (ix *Index) newestManifest(ctx context.Context, name string) (*rowindex.Manifest, error) {
	ri, err := rowindex.Open(ctx, ix.folder(), name, rowindex.Options{})
	if err != nil {
		return nil, err
	}
	return ri.Manifest(), nil
}

// DescribeRowIndex describes the newest version of the row index name.
// Errors: rowindex.ErrNotFound (naming the row indexes there are).
func (ix *Index) DescribeRowIndex(ctx context.Context, name string) (RowIndexInfo, error) {
	m, err := ix.newestManifest(ctx, name)
	if errors.Is(err, rowindex.ErrNotFound) {
		return RowIndexInfo{}, ix.rowIndexNotFound(ctx, name)
	}
	if err != nil {
		return RowIndexInfo{}, err
	}
	return ix.rowIndexInfoWithShapes(ctx, m), nil
}

// rowIndexInfoWithShapes is rowIndexInfo with the shape files counted (a
// listing of the row index's shapes/ folder; left nil if it fails).
func (ix *Index) rowIndexInfoWithShapes(ctx context.Context, m *rowindex.Manifest) RowIndexInfo {
	info := rowIndexInfo(m)
	if files, bytes, err := rowindex.ShapeFileStats(ctx, ix.folder(), m); err == nil {
		info.ShapeFiles, info.ShapeFileBytes = &files, &bytes
	}
	return info
}

// DropRowIndex deletes the row index name (its manifests and fragments;
// data files are never touched). Errors: aerr.ErrInvalidArgument for a
// path-like name, rowindex.ErrNotFound (naming the row indexes there are).
func (ix *Index) DropRowIndex(ctx context.Context, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\") {
		return aerr.Invalid("invalid row index name %q", name)
	}
	err := rowindex.Drop(ctx, ix.folder(), name)
	if errors.Is(err, rowindex.ErrNotFound) {
		return ix.rowIndexNotFound(ctx, name)
	}
	if err != nil {
		return err
	}
	return ix.refreshRowIndexes(ctx)
}

// rowIndexNotFound is the error of a row index name the index does not
// have: it names the ones it has and matches rowindex.ErrNotFound.
func (ix *Index) rowIndexNotFound(ctx context.Context, name string) error {
	var names []string
	if defs, err := ix.listRowIndexes(ctx, false); err == nil {
		for _, d := range defs {
			names = append(names, d.Name)
		}
	}
	have := "none"
	if len(names) > 0 {
		have = strings.Join(names, ", ")
	}
	return fmt.Errorf("index %s has no row index %q (row indexes: %s): %w", ix.Name(), name, have, rowindex.ErrNotFound)
}

// refreshRowIndexes relists the row indexes and moves every open one to
// its newest manifest (after this handle wrote).
func (ix *Index) refreshRowIndexes(ctx context.Context) error {
	if _, err := ix.listRowIndexes(ctx, false); err != nil {
		return err
	}
	ix.mu.Lock()
	names := make([]string, 0, len(ix.rows))
	for n := range ix.rows {
		names = append(names, n)
	}
	ix.mu.Unlock()
	var errs []error
	for _, n := range names {
		if err := ix.refreshRowIndex(ctx, n); err != nil {
			errs = append(errs, fmt.Errorf("row index %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}

// RowIndexVacuum is what VacuumRowIndexes deleted from one row index.
type RowIndexVacuum = rowindex.VacuumResult

// VacuumRowIndexes deletes, from every row index, the fragment files its
// newest manifest does not list and that were last modified more than
// retain ago (fragments replaced by compactions, debris of failed builds),
// and reports each row index by name.
func (ix *Index) VacuumRowIndexes(ctx context.Context, retain time.Duration, opts ...MaintainOption) (map[string]RowIndexVacuum, error) {
	o := maintainOptions(opts)
	defs, err := rowindex.List(ctx, ix.folder())
	if err != nil {
		return nil, err
	}
	out := make(map[string]RowIndexVacuum, len(defs))
	for i, d := range defs {
		o.report(MaintainProgress{Step: "vacuum", RowIndex: d.Name, Done: i, Total: len(defs)})
		r, err := rowindex.Vacuum(ctx, ix.folder(), d.Name, retain)
		out[d.Name] = r
		if err != nil {
			return out, err
		}
		o.report(MaintainProgress{Step: "vacuum", RowIndex: d.Name, Done: i + 1, Total: len(defs)})
	}
	return out, nil
}
