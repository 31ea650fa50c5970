package fileindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/schema"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/store"
)

// mainTargetFileSize and stagingTargetFileSize are the data file sizes of
// main-table and staging writes. A merge streams staged rows from a
// staging file into a main-table file; the reader decodes a staging row
// group whole and the writer buffers a file's rows until it closes, and
// rows carrying value arrays take ~5× their estimated size as Go values.
// At 8 MiB each, a merge holds ~100 MB whatever the lake's size (measured
// with BenchmarkUpdateLake, bench/fileindexbench: 32 MiB main files and
// 128 MiB staging files held ~530 MB live during the merges of a 1.5 GB
// lake).
const (
	mainTargetFileSize    = 8 << 20
	stagingTargetFileSize = 8 << 20
)

// consolidate merges staging/ into index/ (§5.3.6) and deletes staging/:
// one row per filename is selected (§5.3.5), then upserted by filename into
// the main table with schema evolution, or the main table is created from
// them. It reports whether staging existed.
//
// Unlike the Spark library, the main table is never overwritten when no
// index column is configured (§9 item 17 fixed): rows are always upserted,
// so previously indexed files keep their rows.
//
// Crash safety: the upsert is one Delta commit; a crash before it leaves
// staging intact for the next update's recovery, a crash after it leaves a
// staging table whose rows are already in index/, which recovery upserts
// again with the same content. deleteStaging never leaves a non-table.
func (fi *FileIndex) updConsolidate(ctx context.Context) (bool, error) {
	return fi.consolidateStaged(ctx, nil, nil, nil)
}

// stagedBatch is a batch this update staged since the last merge: its
// payload schema and rows, kept so that the merge can take them from
// memory instead of reading staging/ back.
type stagedBatch struct {
	schema *schema.Struct
	rows   [][]any
	// fill, when set, restores the cells of row i released after staging.
	fill func(i int, row []any) error
}

// consolidateStaged is updConsolidate, given the batches this update staged
// since staging/ was last empty. When staging/ holds exactly those rows (its
// record count says so) and their filenames are distinct, the merge appends
// them from memory — the same rows a read-back would give, without the
// read. Otherwise (recovery, a count that does not match, duplicates) it
// ranks staging/ as §5.3.5 says.
//
// feed, when not nil, is given the rows of a blind append from memory (the
// view the locate snapshot is built from, locsnap_feed.go), and switched
// off by any other merge.
//
// Staged rows whose index values have another type than the main table's
// column (the stored schema changed a column's type) are not merged: their
// files are quarantined (listed with the reason, appended to *quarantined
// when not nil) so that the other files are indexed and staging/ never
// stays stuck.
func (fi *FileIndex) consolidateStaged(ctx context.Context, pending []stagedBatch, feed *viewFeed, quarantined *[]QuarantinedFile) (bool, error) {
	st := fi.updStagingStore()
	t, err := delta.Open(ctx, st)
	if errors.Is(err, delta.ErrNotATable) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return false, err
	}
	payload := payloadSchema(snap.Schema())
	staged, files := pendingRows(snap, payload, pending)
	fromMemory := staged != nil
	if staged == nil {
		var keep map[int]bool
		if keep, files, err = selectStaged(ctx, snap); err != nil {
			return false, err
		}
		staged = stagedRows(ctx, snap, keep)
	}
	if len(files) > 0 {
		main, err := openOrCreate(ctx, fi.updMainStore(), payload)
		if err != nil {
			return false, err
		}
		msnap, err := main.Snapshot(ctx)
		if err != nil {
			return false, err
		}
		merged, align, changed := mergedSchema(msnap.Schema(), payload)
		q := map[string]string{}
		if conflicts := typeConflicts(msnap.Schema(), payload); len(conflicts) > 0 {
			staged = quarantineRows(payload, conflicts, staged, q)
			fromMemory = false // the locate snapshot is built by a scan
		}
		rows := func(yield func([]any, error) bool) {
			for r, err := range staged {
				if err != nil {
					yield(nil, err)
					return
				}
				if !yield(align(r), nil) {
					return
				}
			}
		}
		opts := delta.WriteOptions{Schema: merged, MergeSchema: changed, TargetFileSize: mainTargetFileSize}
		overlap, err := holdsAny(ctx, msnap, files)
		if err != nil {
			return false, err
		}
		if !overlap {
			// New files only (the common case): a blind append. An
			// upsert would rewrite every main-table file whose filename
			// statistics overlap the new names, i.e. most of them.
			var in iter.Seq2[[]any, error] = rows
			if fromMemory {
				if err := feed.seed(ctx, fi.locSnapStore(), msnap); err != nil {
					return false, err
				}
				in = feed.tee(msnap, fi.ix.Metadata(), merged, in)
			} else {
				feed.stop()
			}
			if _, err := main.Append(ctx, in, opts); err != nil {
				feed.stop()
				return false, err
			}
		} else {
			feed.stop()
			if _, err := main.Upsert(ctx, []string{FilenameColumn}, rows, opts); err != nil {
				return false, err
			}
		}
		if len(q) > 0 {
			add := make([]QuarantinedFile, 0, len(q))
			now := time.Now().UTC()
			for f, why := range q {
				add = append(add, QuarantinedFile{File: f, Reason: why, At: now})
			}
			slices.SortFunc(add, func(a, b QuarantinedFile) int { return strings.Compare(a.File, b.File) })
			if err := fi.addQuarantined(ctx, add); err != nil {
				return false, err
			}
			if quarantined != nil {
				*quarantined = append(*quarantined, add...)
			}
		}
	}
	return true, deleteStaging(ctx, st)
}

// updLargeTables lists the Delta tables under large_indexes/ (§3.8: every
// sub-folder that is a valid Delta table).
func (fi *FileIndex) updLargeTables(ctx context.Context) ([]*delta.Table, error) {
	prefix := fi.ix.Paths().LargeIndexes + "/"
	var out []*delta.Table
	for info, err := range fi.ix.Root().List(ctx, store.ListOptions{Prefix: prefix, Delimiter: "/"}) {
		if err != nil {
			return nil, err
		}
		if !info.IsDir {
			continue
		}
		t, err := delta.Open(ctx, store.Sub(fi.ix.Root(), strings.TrimSuffix(info.Key, "/")))
		if errors.Is(err, delta.ErrNotATable) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// updAutoCompact compacts the main table and every large-index table (§5.3.8,
// the body of §5.11 without taking the lock again: we hold it).
func (fi *FileIndex) updAutoCompact(ctx context.Context) error {
	tables, err := fi.updLargeTables(ctx)
	if err != nil {
		return err
	}
	if m, err := delta.Open(ctx, fi.updMainStore()); err == nil {
		tables = append([]*delta.Table{m}, tables...)
	} else if !errors.Is(err, delta.ErrNotATable) {
		return err
	}
	for _, t := range tables {
		if _, err := t.Optimize(ctx, delta.OptimizeOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// updMainSizeTotal sums the main table's file_size column (§5.3 step 7): 0
// when the table or the column is absent.
func (fi *FileIndex) updMainSizeTotal(ctx context.Context) (int64, bool, error) {
	t, err := delta.Open(ctx, fi.updMainStore())
	if errors.Is(err, delta.ErrNotATable) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return 0, false, err
	}
	if _, ok := snap.Schema().Field(FileSizeColumn); !ok {
		return 0, true, nil
	}
	var total int64
	for row, err := range snap.Scan(ctx, delta.ScanOptions{Columns: []string{FileSizeColumn}}) {
		if err != nil {
			return 0, false, err
		}
		if n, ok := row[0].(int64); ok {
			total += n
		}
	}
	return total, true, nil
}

// stagedAutoBloom returns the columns c for which the main table has an
// auto_bloom_<c> column.
func (fi *FileIndex) stagedAutoBloom(ctx context.Context) ([]string, error) {
	t, err := delta.Open(ctx, fi.updMainStore())
	if errors.Is(err, delta.ErrNotATable) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range snap.Schema().Fields {
		if c, ok := strings.CutPrefix(f.Name, AutoBloomColumn("")); ok && c != "" {
			out = append(out, c)
		}
	}
	return out, nil
}

// holdsAny reports whether the main table has a row for any of files (a
// scan of its filename column).
func holdsAny(ctx context.Context, snap *delta.Snapshot, files map[string]bool) (bool, error) {
	if snap.NumFiles() == 0 {
		return false, nil
	}
	for row, err := range snap.Scan(ctx, delta.ScanOptions{Columns: []string{FilenameColumn}}) {
		if err != nil {
			return false, err
		}
		if fn, ok := row[0].(string); ok && files[fn] {
			return true, nil
		}
	}
	return false, nil
}

// pendingRows returns the rows of pending aligned with payload, and their
// filenames, when staging/ (snap) holds exactly those rows and the
// filenames are distinct; nil otherwise.
func pendingRows(snap *delta.Snapshot, payload *schema.Struct, pending []stagedBatch) (iter.Seq2[[]any, error], map[string]bool) {
	if len(pending) == 0 {
		return nil, nil
	}
	var n int64
	for _, f := range snap.Files() {
		var st struct {
			NumRecords *int64 `json:"numRecords"`
		}
		if json.Unmarshal([]byte(f.Stats), &st) != nil || st.NumRecords == nil {
			return nil, nil
		}
		n += *st.NumRecords
	}
	files := map[string]bool{}
	var rows int64
	for _, b := range pending {
		for _, r := range b.rows {
			fn, _ := r[0].(string)
			if files[fn] {
				return nil, nil
			}
			files[fn] = true
			rows++
		}
	}
	if rows != n {
		return nil, nil
	}
	seq := func(yield func([]any, error) bool) {
		for _, b := range pending {
			idx := make([]int, len(b.schema.Fields))
			for i, f := range b.schema.Fields {
				idx[i] = slices.IndexFunc(payload.Fields, func(g schema.Field) bool { return g.Name == f.Name })
				if idx[i] < 0 {
					yield(nil, fmt.Errorf("fileindex: staged column %s missing from staging", f.Name))
					return
				}
			}
			for ri, r := range b.rows {
				if b.fill != nil {
					r = slices.Clone(r)
					if err := b.fill(ri, r); err != nil {
						yield(nil, err)
						return
					}
				}
				out := make([]any, len(payload.Fields))
				for i, v := range r {
					out[idx[i]] = v
				}
				if !yield(out, nil) {
					return
				}
			}
		}
	}
	return seq, files
}
