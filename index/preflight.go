package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// fileSizeColumn is the main and staging tables' column of data file sizes.
const fileSizeColumn = "file_size"

// EnsureStorageReady is the preflight's fast path (spec §4.8): it validates
// the declared version markers and, when they are not current, takes the
// update lock and runs the locked preflight, which migrates the persisted
// layout. On a current index it returns at once without touching storage.
// Versions newer than this build fail with ErrUnsupportedMetadataVersion or
// ErrUnsupportedStorageFormatVersion before anything is written.
func (ix *Index) EnsureStorageReady(ctx context.Context) error {
	m := ix.state.Load().m
	if err := metadata.ValidateDeclaredVersions(m); err != nil {
		return err
	}
	if !metadata.NeedsMigration(m) {
		return nil
	}
	return ix.withLock(ctx, ix.paths.UpdateLock, func(ctx context.Context) error {
		return ix.lockedPreflight(ctx, true)
	})
}

// lockedPreflight validates and migrates the layout; the caller holds the
// update lock, kept fresh by withLock's heartbeat. Each step is idempotent
// and verified; the version markers are written only after every step
// verified, so a failure leaves the index declared at its old version and
// the next run resumes.
func (ix *Index) lockedPreflight(ctx context.Context, reload bool) error {
	if reload {
		if err := ix.RefreshMetadata(ctx); err != nil {
			return err
		}
	}
	m := ix.state.Load().m
	if err := metadata.ValidateDeclaredVersions(m); err != nil {
		return err
	}
	declared := m.DeclaredStorageFormatVersion()

	tables := []string{ix.paths.Main, ix.paths.Staging}
	var open []*delta.Table
	for _, key := range tables {
		t, err := ix.openIndexTable(ctx, key)
		if err != nil {
			return err
		}
		open = append(open, t)
	}

	// Step 2–5: file_size.
	fileSizeNeeded := declared < 2
	for _, t := range open {
		if t == nil || fileSizeNeeded {
			continue
		}
		ok, err := fileSizesComplete(ctx, t)
		if err != nil {
			return ix.migrationErr(err, "cannot inspect %s", t.Store().URL())
		}
		fileSizeNeeded = !ok
	}
	migrated := false
	if fileSizeNeeded {
		for _, t := range open {
			if t == nil {
				continue
			}
			did, err := ix.migrateFileSizes(ctx, t)
			if err != nil {
				return err
			}
			migrated = migrated || did
		}
	}
	for _, t := range open {
		if t == nil {
			continue
		}
		ok, err := fileSizesComplete(ctx, t)
		if err != nil {
			return ix.migrationErr(err, "cannot verify file_size of %s", t.Store().URL())
		}
		if !ok {
			return aerr.New(aerr.ErrStorageMigration, "Index '%s': table %s does not have a non-null long file_size column after migration", ix.name, t.Store().URL())
		}
	}

	// Step 3, 6, 7: exploded alias names.
	legacy := legacyMappings(m)
	explodedNeeded := declared < 3
	if !explodedNeeded {
		for _, t := range open {
			if t == nil {
				continue
			}
			snap, err := t.Snapshot(ctx)
			if err != nil {
				return ix.migrationErr(err, "cannot read %s", t.Store().URL())
			}
			for _, e := range legacy {
				_, hasArr := snap.Schema().Field(e.ArrayColumn)
				_, hasAs := snap.Schema().Field(e.AsColumn)
				if hasArr && !hasAs {
					explodedNeeded = true
				}
			}
		}
		for _, e := range legacy {
			ok, err := prefixExists(ctx, ix.cat.root, ix.paths.LargeIndex(e.ArrayColumn)+"/")
			if err != nil {
				return err
			}
			explodedNeeded = explodedNeeded || ok
		}
	}
	if explodedNeeded {
		for _, t := range open {
			if t == nil {
				continue
			}
			did, err := ix.migrateExplodedColumns(ctx, t, m)
			if err != nil {
				return err
			}
			migrated = migrated || did
		}
		did, err := ix.migrateLargeIndexDirs(ctx, m)
		if err != nil {
			return err
		}
		migrated = migrated || did
	}
	if err := ix.verifyExploded(ctx, open, m); err != nil {
		return err
	}

	// Step 8: markers, only after everything verified.
	if !migrated && !metadata.NeedsMigration(m) {
		return nil
	}
	return ix.updateMetadata(ctx, func(m *metadata.Metadata) (bool, error) {
		if !metadata.NeedsMigration(m) {
			return false, nil
		}
		m.SetVersions(metadata.CurrentMetadataVersion, metadata.CurrentStorageFormatVersion)
		return true, nil
	})
}

func (ix *Index) migrationErr(cause error, format string, args ...any) error {
	if errors.Is(cause, aerr.ErrStorageMigration) {
		return cause
	}
	return aerr.Wrap(aerr.ErrStorageMigration, cause, "Storage migration of index '%s': %s", ix.name, fmt.Sprintf(format, args...))
}

// openIndexTable opens an index table for the preflight: nil when nothing is
// stored at key; a StorageMigration error when objects exist there but do
// not form a Delta table (the Spark library's fast path deletes such a
// folder, §9 item 27; we never delete what we cannot read).
func (ix *Index) openIndexTable(ctx context.Context, key string) (*delta.Table, error) {
	t, err := delta.Open(ctx, store.Sub(ix.cat.root, key))
	if err == nil {
		return t, nil
	}
	if !errors.Is(err, delta.ErrNotATable) {
		return nil, ix.migrationErr(err, "cannot open %s", key)
	}
	exists, lerr := prefixExists(ctx, ix.cat.root, key+"/")
	if lerr != nil {
		return nil, lerr
	}
	if exists {
		return nil, aerr.New(aerr.ErrStorageMigration, "Index '%s': %s is not a valid Delta table", ix.name, key)
	}
	return nil, nil
}

// fileSizesComplete reports whether the table has a long file_size column
// with no nulls.
func fileSizesComplete(ctx context.Context, t *delta.Table) (bool, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return false, err
	}
	f, ok := snap.Schema().Field(fileSizeColumn)
	if !ok {
		return false, nil
	}
	if f.Type != schema.Long {
		return false, aerr.New(aerr.ErrStorageMigration, "column file_size of %s has type %s, not long", t.Store().URL(), f.Type)
	}
	for row, err := range snap.Scan(ctx, delta.ScanOptions{Columns: []string{fileSizeColumn}}) {
		if err != nil {
			return false, err
		}
		if row[0] == nil {
			return false, nil
		}
	}
	return true, nil
}

// migrateFileSizes adds file_size where it is missing or null, measuring
// each data file with the store that holds it (its own filesystem, as the
// Spark library's migration does). Any missing or unreadable data file
// fails the step with the Spark library's message.
func (ix *Index) migrateFileSizes(ctx context.Context, t *delta.Table) (bool, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return false, ix.migrationErr(err, "cannot read %s", t.Store().URL())
	}
	st := snap.Schema()
	rows, err := collectRows(ctx, snap)
	if err != nil {
		return false, ix.migrationErr(err, "cannot read %s", t.Store().URL())
	}
	sizeIdx := slices.Index(st.Names(), fileSizeColumn)
	newSchema := st
	if sizeIdx < 0 {
		newSchema = &schema.Struct{Fields: append(slices.Clone(st.Fields), schema.Field{Name: fileSizeColumn, Type: schema.Long, Nullable: true})}
		sizeIdx = len(st.Fields)
		for i := range rows {
			rows[i] = append(rows[i], nil)
		}
	}
	nameIdx := slices.Index(st.Names(), "filename")
	if nameIdx < 0 {
		return false, aerr.New(aerr.ErrStorageMigration, "Index '%s': table %s has no filename column", ix.name, t.Store().URL())
	}
	changed := sizeIdx == len(st.Fields)
	sizes := map[string]int64{}
	for _, r := range rows {
		if r[sizeIdx] != nil {
			continue
		}
		name, _ := r[nameIdx].(string)
		size, ok := sizes[name]
		if !ok {
			size, err = ix.dataFileSize(ctx, name)
			if err != nil {
				return false, aerr.Wrap(aerr.ErrStorageMigration, err, "Cannot migrate file_size for index '%s': source file '%s' is missing or unreadable (%v)", ix.name, name, err)
			}
			sizes[name] = size
		}
		r[sizeIdx] = size
		changed = true
	}
	if !changed {
		return false, nil
	}
	if _, err := t.Overwrite(ctx, newSchema, delta.Rows(rows), delta.WriteOptions{OperationParameters: map[string]string{"ariadneMigration": "file_size"}}); err != nil {
		return false, ix.migrationErr(err, "cannot write %s", t.Store().URL())
	}
	return true, nil
}

// dataFileSize measures a data file named by its URI.
func (ix *Index) dataFileSize(ctx context.Context, uri string) (int64, error) {
	s, key, err := ix.cat.opts.Resolver.Resolve(ctx, uri)
	if err != nil {
		return 0, err
	}
	info, err := s.Stat(ctx, key)
	if err != nil {
		return 0, err
	}
	return info.Size, nil
}

// legacyMappings are the exploded mappings whose storage column was once
// named after the array column: array ≠ alias and the array column is not
// itself a regular index.
func legacyMappings(m *metadata.Metadata) []metadata.ExplodedFieldIndex {
	var out []metadata.ExplodedFieldIndex
	for _, e := range m.ExplodedFieldIndexes {
		if e.ArrayColumn != e.AsColumn && !slices.Contains(m.Indexes, e.ArrayColumn) {
			out = append(out, e)
		}
	}
	return out
}

// migrateExplodedColumns renames legacy array-named columns to their alias
// (§4.8 step 6), refusing ambiguous or colliding layouts.
func (ix *Index) migrateExplodedColumns(ctx context.Context, t *delta.Table, m *metadata.Metadata) (bool, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return false, ix.migrationErr(err, "cannot read %s", t.Store().URL())
	}
	st := snap.Schema()
	has := func(c string) bool { _, ok := st.Field(c); return ok }
	uses := map[string]int{}
	for _, e := range m.ExplodedFieldIndexes {
		uses[e.ArrayColumn]++
	}
	renames := map[string]string{}
	for _, e := range m.ExplodedFieldIndexes {
		if e.ArrayColumn == e.AsColumn {
			continue
		}
		regular := slices.Contains(m.Indexes, e.ArrayColumn)
		switch {
		case has(e.ArrayColumn) && has(e.AsColumn) && !regular:
			return false, aerr.New(aerr.ErrStorageMigration, "Index '%s': table %s contains both legacy exploded column '%s' and current column '%s'", ix.name, t.Store().URL(), e.ArrayColumn, e.AsColumn)
		case has(e.ArrayColumn) && !has(e.AsColumn) && regular:
			return false, aerr.New(aerr.ErrStorageMigration, "Index '%s': table %s is missing exploded alias '%s' for regular array column '%s'; run a column backfill before migration", ix.name, t.Store().URL(), e.AsColumn, e.ArrayColumn)
		case has(e.ArrayColumn) && !has(e.AsColumn):
			if uses[e.ArrayColumn] > 1 {
				return false, aerr.New(aerr.ErrStorageMigration, "Index '%s': table %s has an ambiguous legacy exploded column mapping for '%s'", ix.name, t.Store().URL(), e.ArrayColumn)
			}
			renames[e.ArrayColumn] = e.AsColumn
		}
	}
	if len(renames) == 0 {
		return false, nil
	}
	newSchema := &schema.Struct{Fields: slices.Clone(st.Fields)}
	for i, f := range newSchema.Fields {
		if to, ok := renames[f.Name]; ok {
			newSchema.Fields[i].Name = to
		}
	}
	rows, err := collectRows(ctx, snap)
	if err != nil {
		return false, ix.migrationErr(err, "cannot read %s", t.Store().URL())
	}
	if _, err := t.Overwrite(ctx, newSchema, delta.Rows(rows), delta.WriteOptions{OperationParameters: map[string]string{"ariadneMigration": "exploded_alias"}}); err != nil {
		return false, ix.migrationErr(err, "cannot write %s", t.Store().URL())
	}
	return true, nil
}

// migrateLargeIndexDirs moves large_indexes/<array> to large_indexes/<alias>.
// Object stores have no rename, so the move copies every object and then
// deletes the source; a crash in between leaves a complete copy, which the
// next run recognises (same keys and sizes) and finishes by deleting the
// source, instead of reporting a collision.
func (ix *Index) migrateLargeIndexDirs(ctx context.Context, m *metadata.Metadata) (bool, error) {
	root := ix.cat.root
	moved := false
	for _, e := range legacyMappings(m) {
		from := ix.paths.LargeIndex(e.ArrayColumn) + "/"
		to := ix.paths.LargeIndex(e.AsColumn) + "/"
		src, err := listSizes(ctx, root, from)
		if err != nil || len(src) == 0 {
			if err != nil {
				return false, err
			}
			continue
		}
		dst, err := listSizes(ctx, root, to)
		if err != nil {
			return false, err
		}
		if len(dst) > 0 && !sameSizes(src, dst) {
			return false, aerr.New(aerr.ErrStorageMigration, "Index '%s': both legacy large index '%s' and current large index '%s' exist", ix.name, from, to)
		}
		if len(dst) == 0 {
			for _, k := range slices.Sorted(maps.Keys(src)) {
				if err := copyObject(ctx, root, from+k, to+k); err != nil {
					return false, aerr.Wrap(aerr.ErrStorageMigration, err, "Index '%s': cannot move large index '%s' to '%s'", ix.name, from, to)
				}
			}
		}
		if _, err := store.DeleteAll(ctx, root, from); err != nil {
			return false, aerr.Wrap(aerr.ErrStorageMigration, err, "Index '%s': cannot remove legacy large index '%s'", ix.name, from)
		}
		moved = true
	}
	return moved, nil
}

// verifyExploded checks that no legacy column or folder remains (§4.8 step 7).
func (ix *Index) verifyExploded(ctx context.Context, open []*delta.Table, m *metadata.Metadata) error {
	for _, e := range legacyMappings(m) {
		for _, t := range open {
			if t == nil {
				continue
			}
			snap, err := t.Snapshot(ctx)
			if err != nil {
				return ix.migrationErr(err, "cannot read %s", t.Store().URL())
			}
			if _, ok := snap.Schema().Field(e.ArrayColumn); ok {
				if _, ok := snap.Schema().Field(e.AsColumn); !ok {
					return aerr.New(aerr.ErrStorageMigration, "Index '%s': table %s still has legacy exploded column '%s'", ix.name, t.Store().URL(), e.ArrayColumn)
				}
			}
		}
		ok, err := prefixExists(ctx, ix.cat.root, ix.paths.LargeIndex(e.ArrayColumn)+"/")
		if err != nil {
			return err
		}
		if ok {
			return aerr.New(aerr.ErrStorageMigration, "Index '%s': legacy large index folder '%s' still exists", ix.name, ix.paths.LargeIndex(e.ArrayColumn))
		}
	}
	return nil
}

func collectRows(ctx context.Context, snap *delta.Snapshot) ([][]any, error) {
	var rows [][]any
	for row, err := range snap.Scan(ctx, delta.ScanOptions{}) {
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func listSizes(ctx context.Context, s store.Store, prefix string) (map[string]int64, error) {
	out := map[string]int64{}
	for info, err := range s.List(ctx, store.ListOptions{Prefix: prefix}) {
		if err != nil {
			return nil, err
		}
		out[strings.TrimPrefix(info.Key, prefix)] = info.Size
	}
	return out, nil
}

func sameSizes(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// copyObject streams one object to a new key (never buffering it whole).
func copyObject(ctx context.Context, s store.Store, from, to string) error {
	r, err := s.NewRangeReader(ctx, from, 0, -1)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := s.NewWriter(ctx, to, &store.WriteOptions{IfNotExist: true})
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}
