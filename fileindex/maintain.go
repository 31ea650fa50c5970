package fileindex

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/store"
)

// DefaultVacuumRetention is vacuum's default retention, 168 hours (§5.12,
// §3.10): Delta's default delta.deletedFileRetentionDuration of 7 days,
// which outlasts any reader of an older version.
const DefaultVacuumRetention = 168 * time.Hour

// MainTableName and the large-index prefix name the tables in maintenance
// results: "index" and "large_indexes/<column>", the folders under the
// index directory.
const MainTableName = "index"

// DeleteFiles removes data files from the index (spec §5.10): under the
// update lock and after the locked preflight, it deletes the files' rows
// from the main table, from every large-index table and from a leftover
// staging table, lowers total_indexed_file_size by the deleted files'
// file_size (floored at 0, only when the total is known and positive), and
// untracks the names in the FileList. Names are matched exactly; unknown
// names are ignored; an index without tables is a no-op. Blank names are
// ErrInvalidArgument.
//
// The FileList edit takes the FileList lock (§9 item 30: the library edits
// it under the update lock only, racing with AddFiles).
//
// Each table's delete is one Delta commit; a failure part-way leaves the
// tables already committed without the rows, which a retry completes (the
// deletes are idempotent).
func (fi *FileIndex) DeleteFiles(ctx context.Context, names ...string) error {
	for _, n := range names {
		if strings.TrimSpace(n) == "" {
			return aerr.Invalid("deleteFiles: file names must not be blank")
		}
	}
	if len(names) == 0 {
		return nil
	}
	keys := make([]any, len(names))
	set := make(map[string]struct{}, len(names))
	for i, n := range names {
		keys[i] = n
		set[n] = struct{}{}
	}
	return fi.ix.WithUpdateLock(ctx, func(ctx context.Context) error {
		var deleted int64
		mainTbl, err := fi.openTable(ctx, fi.ix.Paths().Main)
		if err != nil {
			return err
		}
		if mainTbl != nil {
			if deleted, err = sumFileSizes(ctx, mainTbl, set); err != nil {
				return err
			}
			if _, err := mainTbl.DeleteKeys(ctx, FilenameColumn, keys, delta.WriteOptions{}); err != nil {
				return fmt.Errorf("fileindex: deleting from the main table: %w", err)
			}
		}
		larges, err := fi.largeTables(ctx)
		if err != nil {
			return err
		}
		for _, lt := range larges {
			if _, err := lt.tbl.DeleteKeys(ctx, FilenameColumn, keys, delta.WriteOptions{}); err != nil {
				return fmt.Errorf("fileindex: deleting from %s: %w", lt.name, err)
			}
		}
		staging, err := fi.openTable(ctx, fi.ix.Paths().Staging)
		if err != nil {
			return err
		}
		if staging != nil {
			if _, err := staging.DeleteKeys(ctx, FilenameColumn, keys, delta.WriteOptions{}); err != nil {
				return fmt.Errorf("fileindex: deleting from the staging table: %w", err)
			}
		}
		if deleted > 0 {
			err := fi.ix.UpdateMetadata(ctx, func(m *metadata.Metadata) (bool, error) {
				if m.TotalIndexedFileSize <= 0 {
					return false, nil
				}
				m.TotalIndexedFileSize = max(0, m.TotalIndexedFileSize-deleted)
				return true, nil
			})
			if err != nil {
				return err
			}
		}
		if err := fi.ix.RemoveFiles(ctx, names); err != nil {
			return err
		}
		return fi.snapshotAfterCommit(ctx, nil)
	})
}

// sumFileSizes sums file_size over the main-table rows of the named files
// (0 when the column is absent).
func sumFileSizes(ctx context.Context, tbl *delta.Table, names map[string]struct{}) (int64, error) {
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return 0, err
	}
	if _, ok := snap.Schema().Field(FileSizeColumn); !ok {
		return 0, nil
	}
	var sum int64
	for row, err := range snap.Scan(ctx, delta.ScanOptions{Columns: []string{FilenameColumn, FileSizeColumn}}) {
		if err != nil {
			return 0, err
		}
		name, _ := row[0].(string)
		if _, ok := names[name]; ok {
			size, _ := row[1].(int64)
			sum += size
		}
	}
	return sum, nil
}

// CompactResult reports what Compact did to each table.
type CompactResult struct {
	// Tables maps MainTableName and "large_indexes/<column>" to the
	// OPTIMIZE metrics of that table.
	Tables map[string]delta.OptimizeMetrics
}

// Compact bin-packs the small data files of the main table and of every
// large-index table (spec §5.11) under the update lock, then resets
// batches_since_compact to 0. Staging and the FileList are not touched.
// It works, and resets the counter, on an index that was never updated.
func (fi *FileIndex) Compact(ctx context.Context) (CompactResult, error) {
	res := CompactResult{Tables: map[string]delta.OptimizeMetrics{}}
	err := fi.ix.WithUpdateLock(ctx, func(ctx context.Context) error {
		tables, err := fi.maintainedTables(ctx)
		if err != nil {
			return err
		}
		fi.updProgress(Progress{Phase: "compact", Done: 0, Total: len(tables)})
		var rewritten int64
		for i, t := range tables {
			om, err := t.tbl.Optimize(ctx, delta.OptimizeOptions{})
			if err != nil {
				return fmt.Errorf("fileindex: compacting %s: %w", t.name, err)
			}
			res.Tables[t.name] = om
			rewritten += om.BytesRemoved
			fi.updProgress(Progress{Phase: "compact", Done: i + 1, Total: len(tables), Bytes: rewritten})
		}
		err = fi.ix.UpdateMetadata(ctx, func(m *metadata.Metadata) (bool, error) {
			if m.BatchesSinceCompact == 0 {
				return false, nil
			}
			m.BatchesSinceCompact = 0
			return true, nil
		})
		if err != nil {
			return err
		}
		fi.updProgress(Progress{Phase: "snapshot", Done: 0, Total: 1})
		err = fi.snapshotAfterCommit(ctx, nil)
		fi.updProgress(Progress{Phase: "snapshot", Done: 1, Total: 1})
		return err
	})
	return res, err
}

// VacuumResult reports the files Vacuum deleted.
type VacuumResult struct {
	// Deleted maps MainTableName and "large_indexes/<column>" to the keys
	// deleted under that table's folder, ascending.
	Deleted map[string][]string
	// Temps are the abandoned temporary files of killed writes deleted
	// from the index's folders (keys under the store root; index.SweepTemps).
	Temps []string
}

// minTempAge is the least age of a temporary file Vacuum deletes, whatever
// the retention: younger ones may belong to writes in flight (add-files
// writes the FileList without the update lock).
const minTempAge = time.Hour

// Vacuum deletes the data files that the main table and every large-index
// table no longer reference and that were removed longer than retention
// ago (spec §5.12), under the update lock. Pass DefaultVacuumRetention for
// the library's default. A retention ≤ 0 deletes every unreferenced file
// at once (the library's retentionDurationCheck override, here a per-call
// decision rather than a session-wide flag, §9 item 31); a positive
// retention shorter than a table's delta.deletedFileRetentionDuration is
// refused, as Delta's check refuses it. Temporary files that killed writes
// left in the index's folders are deleted once older than the retention
// (at least an hour). No metadata is written.
func (fi *FileIndex) Vacuum(ctx context.Context, retention time.Duration) (VacuumResult, error) {
	res := VacuumResult{Deleted: map[string][]string{}}
	opts := delta.VacuumOptions{}
	if retention <= 0 {
		retention, opts.AllowShortRetention = 0, true
	}
	err := fi.ix.WithUpdateLock(ctx, func(ctx context.Context) error {
		tables, err := fi.maintainedTables(ctx)
		if err != nil {
			return err
		}
		fi.updProgress(Progress{Phase: "vacuum", Done: 0, Total: len(tables) + 1})
		for i, t := range tables {
			keys, err := t.tbl.Vacuum(ctx, retention, opts)
			if err != nil {
				return fmt.Errorf("fileindex: vacuuming %s: %w", t.name, err)
			}
			res.Deleted[t.name] = keys
			fi.updProgress(Progress{Phase: "vacuum", Done: i + 1, Total: len(tables) + 1})
		}
		res.Temps, err = fi.ix.SweepTemps(ctx, time.Now().Add(-max(retention, minTempAge)))
		fi.updProgress(Progress{Phase: "vacuum", Done: len(tables) + 1, Total: len(tables) + 1})
		return err
	})
	return res, err
}

// namedTable is an index table and its name in results.
type namedTable struct {
	name string
	tbl  *delta.Table
}

// maintainedTables returns the main table (if any) and the large tables.
func (fi *FileIndex) maintainedTables(ctx context.Context) ([]namedTable, error) {
	var out []namedTable
	mainTbl, err := fi.openTable(ctx, fi.ix.Paths().Main)
	if err != nil {
		return nil, err
	}
	if mainTbl != nil {
		out = append(out, namedTable{MainTableName, mainTbl})
	}
	larges, err := fi.largeTables(ctx)
	return append(out, larges...), err
}

// openTable opens the Delta table at key under the root, nil when there is
// none.
func (fi *FileIndex) openTable(ctx context.Context, key string) (*delta.Table, error) {
	t, err := delta.Open(ctx, store.Sub(fi.ix.Root(), key))
	if errors.Is(err, delta.ErrNotATable) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fileindex: opening %s: %w", key, err)
	}
	return t, nil
}

// largeTables returns every sub-folder of large_indexes/ that is a Delta
// table (§3.8), by folder name; other folders are skipped.
func (fi *FileIndex) largeTables(ctx context.Context) ([]namedTable, error) {
	prefix := fi.ix.Paths().LargeIndexes + "/"
	var out []namedTable
	for obj, err := range fi.ix.Root().List(ctx, store.ListOptions{Prefix: prefix, Delimiter: "/"}) {
		if err != nil {
			if errors.Is(err, store.ErrNotExist) {
				break
			}
			return nil, fmt.Errorf("fileindex: listing large indexes: %w", err)
		}
		if !obj.IsDir {
			continue
		}
		key := strings.TrimSuffix(obj.Key, "/")
		t, err := fi.openTable(ctx, key)
		if err != nil {
			return nil, err
		}
		if t != nil {
			out = append(out, namedTable{"large_indexes/" + path.Base(key), t})
		}
	}
	return out, nil
}
