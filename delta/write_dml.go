package delta

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// CommitResult describes a committed (or, when nothing changed, skipped)
// transaction.
type CommitResult struct {
	// Version is the committed version, or the read version when there was
	// nothing to commit (Committed is then false).
	Version   int64
	Committed bool
	// FilesRemoved and FilesAdded count the data files the commit removed
	// and added.
	FilesRemoved, FilesAdded int
	// RowsDeleted, RowsUpdated and RowsInserted count changed rows;
	// RowsCopied counts unchanged rows rewritten with them.
	RowsDeleted, RowsUpdated, RowsInserted, RowsCopied int64
}

// KeyFilter narrows a change to the rows whose Column holds one of Keys.
// It lets Delete, Upsert and DeleteKeys skip files whose statistics (or
// partition values) exclude every key, and lets them ignore concurrent
// appends whose files hold none of the keys.
type KeyFilter struct {
	Column string // top-level logical column name
	Keys   []any  // values of the row value model; nil keys are ignored
}

// DeleteOptions configure Delete.
type DeleteOptions struct {
	WriteOptions
	// Filter, when set, promises that the predicate matches only rows whose
	// Filter.Column is one of Filter.Keys; files that cannot hold such a
	// row are not read.
	Filter *KeyFilter
}

// Delete removes the rows for which pred returns true, copy-on-write: each
// active file holding a matching row is rewritten without it (its deletion
// vector applied) and replaced (remove + add) in one commit; files without
// a matching row are untouched. pred receives rows aligned with the table
// schema and must not retain them. With no matching row nothing is
// committed. Concurrent commits that remove a file we rewrite, add data we
// may have had to delete (see DeleteOptions.Filter) or change metadata fail
// the delete with ErrConflict. Refused on append-only tables.
func (t *Table) Delete(ctx context.Context, pred func(row []any) bool, opts DeleteOptions) (CommitResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	return t.deleteAt(ctx, snap, pred, opts)
}

// DeleteKeys deletes the rows whose keyColumn holds one of keys (the
// MERGE … WHEN MATCHED THEN DELETE of the Spark library), pruning files by
// statistics.
func (t *Table) DeleteKeys(ctx context.Context, keyColumn string, keys []any, opts WriteOptions) (CommitResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	f, ok := snap.schema.Field(keyColumn)
	if !ok {
		return CommitResult{}, fmt.Errorf("delta: key column %q is not in the table schema", keyColumn)
	}
	pos := slices.IndexFunc(snap.schema.Fields, func(g schema.Field) bool { return g.Name == keyColumn })
	set := map[string]bool{}
	for _, k := range keys {
		if k != nil {
			set[keyString(f.Type, k)] = true
		}
	}
	if len(set) == 0 {
		return CommitResult{Version: snap.Version()}, nil
	}
	pred := func(row []any) bool { return row[pos] != nil && set[keyString(f.Type, row[pos])] }
	return t.deleteAt(ctx, snap, pred, DeleteOptions{WriteOptions: opts, Filter: &KeyFilter{Column: keyColumn, Keys: keys}})
}

func (t *Table) deleteAt(ctx context.Context, snap *Snapshot, pred func([]any) bool, opts DeleteOptions) (CommitResult, error) {
	meta := snap.Metadata()
	if err := checkWritable(&snap.protocol, &meta, snap.schema, opModify); err != nil {
		return CommitResult{}, err
	}
	tx := newTxn(t, snap, "DELETE", opts.WriteOptions)
	tx.opParams["predicate"] = jsonList([]string{"<go predicate>"})
	files, err := tx.candidates(opts.Filter)
	if err != nil {
		return CommitResult{}, err
	}
	res := CommitResult{Version: snap.Version()}
	for _, f := range files {
		var deleted, copied int64
		rewrote, err := tx.rewriteFile(ctx, f, snap.schema, opts.WriteOptions, func(row []any) ([]any, bool) {
			if pred(row) {
				deleted++
				return nil, true
			}
			copied++
			return row, false
		})
		if err != nil {
			return CommitResult{}, err
		}
		if rewrote {
			res.RowsDeleted += deleted
			res.RowsCopied += copied
		}
	}
	return tx.finish(ctx, res)
}

// candidates returns the active files that may hold rows of the filter
// (all files without one), and records what the transaction read.
func (tx *txn) candidates(filter *KeyFilter) ([]AddFile, error) {
	if filter == nil {
		tx.readWholeTable = true
		return tx.snap.Files(), nil
	}
	if _, ok := tx.snap.schema.Field(filter.Column); !ok {
		return nil, fmt.Errorf("delta: filter column %q is not in the table schema", filter.Column)
	}
	tx.keyFilter = filter
	var out []AddFile
	for _, f := range tx.snap.files {
		if filter.mayContain(tx.snap, &f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// rewriteFile streams one active file through fn (which returns the row to
// write, nil to drop it, and whether it changed the row). If fn changed
// anything the file is replaced by the rewritten rows (remove + adds
// appended to tx); otherwise the partial output is discarded and rewrote
// is false.
func (tx *txn) rewriteFile(ctx context.Context, f AddFile, st *schema.Struct, opts WriteOptions, fn func([]any) ([]any, bool)) (rewrote bool, err error) {
	sk, err := tx.newSink(st, opts)
	if err != nil {
		return false, err
	}
	defer func() {
		if !rewrote || err != nil {
			sk.abort()
		}
	}()
	changed := false
	for row, err := range tx.snap.ScanFile(ctx, f, ScanOptions{}) {
		if err != nil {
			return false, err
		}
		out, ch := fn(row)
		changed = changed || ch
		if out == nil {
			continue
		}
		if err := sk.write(ctx, out); err != nil {
			return false, err
		}
	}
	if !changed {
		return false, nil
	}
	adds, err := sk.close(ctx)
	if err != nil {
		return false, err
	}
	tx.remove(f, true)
	for i := range adds {
		tx.actions = append(tx.actions, Action{Add: &adds[i]})
	}
	return true, nil
}

// remove appends the remove action of an active file, carrying its
// deletion vector so that replay reconciles the right (path, dv) pair.
func (tx *txn) remove(f AddFile, dataChange bool) {
	now := time.Now().UnixMilli()
	size := f.Size
	tx.actions = append(tx.actions, Action{Remove: &RemoveFile{
		Path: f.Path, DeletionTimestamp: &now, DataChange: dataChange, ExtendedFileMetadata: true,
		PartitionValues: f.PartitionValues, Size: &size, Stats: f.Stats, Tags: f.Tags,
		DeletionVector: f.DeletionVector, BaseRowID: f.BaseRowID, DefaultRowCommitVersion: f.DefaultRowCommitVersion,
	}})
}

// finish commits the transaction if it has actions and fills in res.
func (tx *txn) finish(ctx context.Context, res CommitResult) (CommitResult, error) {
	for _, a := range tx.actions {
		switch {
		case a.Add != nil:
			res.FilesAdded++
		case a.Remove != nil:
			res.FilesRemoved++
		}
	}
	if res.FilesAdded == 0 && res.FilesRemoved == 0 && tx.newMeta == nil {
		return res, nil
	}
	tx.opParams["numRemovedFiles"] = strconv.Itoa(res.FilesRemoved)
	v, err := tx.commit(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	res.Version, res.Committed = v, true
	return res, nil
}

// Upsert merges rows into the table by key (MERGE … WHEN MATCHED THEN
// UPDATE SET * WHEN NOT MATCHED THEN INSERT *): a target row whose key
// columns equal a source row's is replaced by the source row; source rows
// matching nothing are inserted. Only files holding a matched row are
// rewritten (copy-on-write), found by statistics on the first key column.
// Source rows are aligned with opts.Schema or the table schema; two source
// rows with the same key are an error. Concurrent commits that remove a
// file we rewrite, add files that may hold our keys, or change metadata
// fail the upsert with ErrConflict. Refused on append-only tables.
func (t *Table) Upsert(ctx context.Context, keyColumns []string, rows iter.Seq2[[]any, error], opts WriteOptions) (CommitResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	return t.upsertAt(ctx, snap, keyColumns, rows, opts)
}

func (t *Table) upsertAt(ctx context.Context, snap *Snapshot, keyColumns []string, rows iter.Seq2[[]any, error], opts WriteOptions) (CommitResult, error) {
	meta := snap.Metadata()
	if err := checkWritable(&snap.protocol, &meta, snap.schema, opModify); err != nil {
		return CommitResult{}, err
	}
	if len(keyColumns) == 0 {
		return CommitResult{}, fmt.Errorf("delta: Upsert needs at least one key column")
	}
	tx := newTxn(t, snap, "MERGE", opts)
	tx.opParams["predicate"] = jsonList(keyColumns)
	target, remap, err := tx.resolveSchema(opts)
	if err != nil {
		return CommitResult{}, err
	}
	keyPos := make([]int, len(keyColumns))
	keyTypes := make([]schema.Type, len(keyColumns))
	for i, c := range keyColumns {
		keyPos[i] = slices.IndexFunc(target.Fields, func(f schema.Field) bool { return f.Name == c })
		if keyPos[i] < 0 || !slices.ContainsFunc(snap.schema.Fields, func(f schema.Field) bool { return f.Name == c }) {
			return CommitResult{}, fmt.Errorf("delta: key column %q is not in the table schema", c)
		}
		keyTypes[i] = target.Fields[keyPos[i]].Type
	}
	key := func(row []any) (string, bool) {
		var b strings.Builder
		for i, p := range keyPos {
			if row[p] == nil {
				return "", false // a null key matches nothing (SQL equality)
			}
			b.WriteString(keyString(keyTypes[i], row[p]))
			b.WriteByte(0)
		}
		return b.String(), true
	}
	// The source, by key.
	type src struct {
		row     []any
		matched bool
	}
	source := map[string]*src{}
	var order []*src // insertion order of unmatched rows
	var firstKeys []any
	for row, err := range rows {
		if err != nil {
			return CommitResult{}, err
		}
		if remap != nil {
			row = remap(row)
		}
		if len(row) != len(target.Fields) {
			return CommitResult{}, fmt.Errorf("%w: row has %d values, the schema %d columns", ErrSchemaChange, len(row), len(target.Fields))
		}
		s := &src{row: row}
		order = append(order, s)
		k, ok := key(row)
		if !ok {
			continue
		}
		if source[k] != nil {
			return CommitResult{}, fmt.Errorf("delta: Upsert: two source rows have the key %v", keyValues(row, keyPos))
		}
		source[k] = s
		firstKeys = append(firstKeys, row[keyPos[0]])
	}
	res := CommitResult{Version: snap.Version()}
	if len(order) == 0 {
		return res, nil
	}
	var files []AddFile
	if len(source) > 0 {
		if files, err = tx.candidates(&KeyFilter{Column: keyColumns[0], Keys: firstKeys}); err != nil {
			return CommitResult{}, err
		}
	} else {
		tx.keyFilter = &KeyFilter{Column: keyColumns[0]}
	}
	var toTarget func([]any) []any
	if !schema.Equal(target, snap.schema) {
		toTarget = alignRow(snap.schema, target)
	}
	for _, f := range files {
		var updated, copied int64
		var hits []*src
		rewrote, err := tx.rewriteFile(ctx, f, target, opts, func(row []any) ([]any, bool) {
			if toTarget != nil {
				row = toTarget(row)
			}
			if k, ok := key(row); ok {
				if s := source[k]; s != nil {
					hits = append(hits, s)
					updated++
					return s.row, true
				}
			}
			copied++
			return row, false
		})
		if err != nil {
			return CommitResult{}, err
		}
		if rewrote {
			for _, s := range hits {
				s.matched = true
			}
			res.RowsUpdated += updated
			res.RowsCopied += copied
		}
	}
	ins, err := tx.newSink(target, opts)
	if err != nil {
		return CommitResult{}, err
	}
	for _, s := range order {
		if s.matched {
			continue
		}
		if err := ins.write(ctx, s.row); err != nil {
			ins.abort()
			return CommitResult{}, err
		}
		res.RowsInserted++
	}
	adds, err := ins.close(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	for i := range adds {
		tx.actions = append(tx.actions, Action{Add: &adds[i]})
	}
	return tx.finish(ctx, res)
}

func keyValues(row []any, pos []int) []any {
	out := make([]any, len(pos))
	for i, p := range pos {
		out[i] = row[p]
	}
	return out
}

// keyString renders a key value canonically for equality: values that are
// equal in the row value model (whatever their Go integer type, decimal
// scale or time zone) render alike.
func keyString(t schema.Type, v any) string {
	switch x := v.(type) {
	case string:
		return "s" + x
	case []byte:
		return "b" + string(x)
	case pqrow.Decimal:
		r := new(big.Rat).SetFrac(x.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil))
		return "d" + r.RatString()
	case time.Time:
		return "t" + strconv.FormatInt(x.UnixMicro(), 10)
	case float32:
		return "f" + strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return "f" + strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return "z" + strconv.FormatBool(x)
	}
	if i, ok := pqrow.AsInt64(v); ok {
		return "i" + strconv.FormatInt(i, 10)
	}
	return fmt.Sprintf("?%T:%v", v, v)
}

// ---- pruning by statistics and partition values ----

// fileStatsJSON is the part of an add's stats that pruning reads.
type fileStatsJSON struct {
	NumRecords *int64                     `json:"numRecords"`
	MinValues  map[string]json.RawMessage `json:"minValues"`
	MaxValues  map[string]json.RawMessage `json:"maxValues"`
	NullCount  map[string]json.RawMessage `json:"nullCount"`
}

// mayContain reports whether f may hold a row whose column is one of the
// filter's keys: false only when partition values or min/max statistics
// exclude every key.
func (kf *KeyFilter) mayContain(snap *Snapshot, f *AddFile) bool {
	field, ok := snap.schema.Field(kf.Column)
	if !ok {
		return true
	}
	phys := PhysicalName(field)
	if slices.Contains(snap.metadata.PartitionColumns, kf.Column) {
		raw, isSet := f.PartitionValues[phys]
		if !isSet {
			return true
		}
		for _, k := range kf.Keys {
			if k == nil {
				continue
			}
			sv, err := serializePartitionValue(field.Type, k)
			if err != nil || sv == nil {
				return true
			}
			if raw == nil {
				continue
			}
			pv, err1 := parsePartitionValue(field.Type, *raw)
			kv, err2 := parsePartitionValue(field.Type, *sv)
			if err1 != nil || err2 != nil || keyString(field.Type, pv) == keyString(field.Type, kv) {
				return true
			}
		}
		return false
	}
	if f.Stats == "" {
		return true
	}
	var st fileStatsJSON
	if json.Unmarshal([]byte(f.Stats), &st) != nil {
		return true
	}
	if st.NumRecords != nil && *st.NumRecords == 0 {
		return false
	}
	lo, ok1 := st.MinValues[phys]
	hi, ok2 := st.MaxValues[phys]
	if !ok1 || !ok2 {
		return true
	}
	for _, k := range kf.Keys {
		if k == nil {
			continue
		}
		c1, ok1 := compareStat(field.Type, k, lo, false)
		c2, ok2 := compareStat(field.Type, k, hi, true)
		if !ok1 || !ok2 || (c1 >= 0 && c2 <= 0) {
			return true
		}
	}
	return false
}

// compareStat compares a key with a min or max statistic: the sign of
// key − stat, ok false when they cannot be compared. A timestamp maximum
// is truncated to milliseconds by writers, so it is widened by 1 ms.
func compareStat(t schema.Type, key any, raw json.RawMessage, isMax bool) (int, bool) {
	switch t := t.(type) {
	case *schema.Decimal:
		k, ok := key.(pqrow.Decimal)
		if !ok || k.Unscaled == nil {
			return 0, false
		}
		sv, ok := new(big.Rat).SetString(strings.Trim(string(raw), `"`))
		if !ok {
			return 0, false
		}
		kv := new(big.Rat).SetFrac(k.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k.Scale)), nil))
		return kv.Cmp(sv), true
	case *schema.Primitive:
		switch t.Name {
		case "byte", "short", "integer", "long":
			k, ok := pqrow.AsInt64(key)
			if !ok {
				return 0, false
			}
			s, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil {
				return 0, false
			}
			return cmpInt(k, s), true
		case "string":
			k, ok := key.(string)
			var s string
			if !ok || json.Unmarshal(raw, &s) != nil {
				return 0, false
			}
			return strings.Compare(k, s), true
		case "date", "timestamp", "timestamp_ntz":
			k, ok := key.(time.Time)
			var s string
			if !ok || json.Unmarshal(raw, &s) != nil {
				return 0, false
			}
			var st time.Time
			var err error
			switch t.Name {
			case "date":
				st, err = time.Parse("2006-01-02", s)
				k = time.Date(k.Year(), k.Month(), k.Day(), 0, 0, 0, 0, time.UTC)
			case "timestamp_ntz":
				st, err = time.Parse("2006-01-02T15:04:05.999999999", s)
				k = time.Date(k.Year(), k.Month(), k.Day(), k.Hour(), k.Minute(), k.Second(), k.Nanosecond(), time.UTC)
			default:
				st, err = time.Parse(time.RFC3339Nano, s)
			}
			if err != nil {
				return 0, false
			}
			if isMax && t.Name != "date" {
				st = st.Add(time.Millisecond)
			}
			return k.Compare(st), true
		}
	}
	return 0, false
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
