package delta

import (
	"context"
	"iter"

	"github.com/ariadne-go/ariadne/schema"
)

// Overwrite replaces every row of the table with rows, which are aligned
// with st (Spark's mode=overwrite with overwriteSchema=true): one commit
// removes every active file, adds the new ones, and, when st differs from
// the table's schema, records st as the new schema — so columns may be
// renamed, retyped or dropped, which an append with MergeSchema cannot do.
// Partitioning and table configuration are kept. The transaction reads the
// whole table, so any concurrent data change conflicts with it
// (ErrConflict). Refused on tables with column mapping when the schema
// changes, and on append-only tables.
func (t *Table) Overwrite(ctx context.Context, st *schema.Struct, rows iter.Seq2[[]any, error], opts WriteOptions) (CommitResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	meta := snap.Metadata()
	if err := checkWritable(&snap.protocol, &meta, snap.schema, opModify); err != nil {
		return CommitResult{}, err
	}
	tx := newTxn(t, snap, "WRITE", opts)
	tx.opParams["mode"] = "Overwrite"
	tx.opParams["partitionBy"] = jsonList(meta.PartitionColumns)
	tx.readWholeTable = true
	if st == nil {
		st = snap.schema
	}
	if !schema.Equal(st, snap.schema) {
		if snap.colmap.mode != MappingNone {
			return CommitResult{}, &UnsupportedFeatureError{Feature: "overwriteSchema with columnMapping", Op: "write"}
		}
		md := snap.Metadata()
		md.SchemaString = st.Marshal()
		tx.newMeta = &md
		tx.actions = append(tx.actions, Action{MetaData: &md})
		tx.opParams["overwriteSchema"] = "true"
	}
	for _, f := range snap.files {
		tx.remove(f, true)
	}
	opts.Schema = nil
	sink, err := tx.newSink(st, opts)
	if err != nil {
		return CommitResult{}, err
	}
	for row, err := range rows {
		if err != nil {
			sink.abort()
			return CommitResult{}, err
		}
		if err := sink.write(ctx, row); err != nil {
			sink.abort()
			return CommitResult{}, err
		}
	}
	adds, err := sink.close(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	for i := range adds {
		tx.actions = append(tx.actions, Action{Add: &adds[i]})
	}
	return tx.finish(ctx, CommitResult{})
}
