package delta

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// checkpointSchema is the schema of a classic checkpoint as Spark writes
// it (PROTOCOL.md, "Checkpoint Schema"): one nullable struct column per
// action type, exactly one non-null per row.
var checkpointSchema = func() *schema.Struct {
	st, err := schema.Parse(`{"type":"struct","fields":[
{"name":"txn","type":{"type":"struct","fields":[
 {"name":"appId","type":"string","nullable":true,"metadata":{}},
 {"name":"version","type":"long","nullable":true,"metadata":{}},
 {"name":"lastUpdated","type":"long","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
{"name":"add","type":{"type":"struct","fields":[
 {"name":"path","type":"string","nullable":true,"metadata":{}},
 {"name":"partitionValues","type":{"type":"map","keyType":"string","valueType":"string","valueContainsNull":true},"nullable":true,"metadata":{}},
 {"name":"size","type":"long","nullable":true,"metadata":{}},
 {"name":"modificationTime","type":"long","nullable":true,"metadata":{}},
 {"name":"dataChange","type":"boolean","nullable":true,"metadata":{}},
 {"name":"tags","type":{"type":"map","keyType":"string","valueType":"string","valueContainsNull":true},"nullable":true,"metadata":{}},
 {"name":"deletionVector","type":{"type":"struct","fields":[
  {"name":"storageType","type":"string","nullable":true,"metadata":{}},
  {"name":"pathOrInlineDv","type":"string","nullable":true,"metadata":{}},
  {"name":"offset","type":"integer","nullable":true,"metadata":{}},
  {"name":"sizeInBytes","type":"integer","nullable":true,"metadata":{}},
  {"name":"cardinality","type":"long","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
 {"name":"baseRowId","type":"long","nullable":true,"metadata":{}},
 {"name":"defaultRowCommitVersion","type":"long","nullable":true,"metadata":{}},
 {"name":"stats","type":"string","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
{"name":"remove","type":{"type":"struct","fields":[
 {"name":"path","type":"string","nullable":true,"metadata":{}},
 {"name":"deletionTimestamp","type":"long","nullable":true,"metadata":{}},
 {"name":"dataChange","type":"boolean","nullable":true,"metadata":{}},
 {"name":"extendedFileMetadata","type":"boolean","nullable":true,"metadata":{}},
 {"name":"partitionValues","type":{"type":"map","keyType":"string","valueType":"string","valueContainsNull":true},"nullable":true,"metadata":{}},
 {"name":"size","type":"long","nullable":true,"metadata":{}},
 {"name":"deletionVector","type":{"type":"struct","fields":[
  {"name":"storageType","type":"string","nullable":true,"metadata":{}},
  {"name":"pathOrInlineDv","type":"string","nullable":true,"metadata":{}},
  {"name":"offset","type":"integer","nullable":true,"metadata":{}},
  {"name":"sizeInBytes","type":"integer","nullable":true,"metadata":{}},
  {"name":"cardinality","type":"long","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
 {"name":"baseRowId","type":"long","nullable":true,"metadata":{}},
 {"name":"defaultRowCommitVersion","type":"long","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
{"name":"metaData","type":{"type":"struct","fields":[
 {"name":"id","type":"string","nullable":true,"metadata":{}},
 {"name":"name","type":"string","nullable":true,"metadata":{}},
 {"name":"description","type":"string","nullable":true,"metadata":{}},
 {"name":"format","type":{"type":"struct","fields":[
  {"name":"provider","type":"string","nullable":true,"metadata":{}},
  {"name":"options","type":{"type":"map","keyType":"string","valueType":"string","valueContainsNull":true},"nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
 {"name":"schemaString","type":"string","nullable":true,"metadata":{}},
 {"name":"partitionColumns","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},
 {"name":"configuration","type":{"type":"map","keyType":"string","valueType":"string","valueContainsNull":true},"nullable":true,"metadata":{}},
 {"name":"createdTime","type":"long","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
{"name":"protocol","type":{"type":"struct","fields":[
 {"name":"minReaderVersion","type":"integer","nullable":true,"metadata":{}},
 {"name":"minWriterVersion","type":"integer","nullable":true,"metadata":{}},
 {"name":"readerFeatures","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},
 {"name":"writerFeatures","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
{"name":"domainMetadata","type":{"type":"struct","fields":[
 {"name":"domain","type":"string","nullable":true,"metadata":{}},
 {"name":"configuration","type":"string","nullable":true,"metadata":{}},
 {"name":"removed","type":"boolean","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}
]}`)
	if err != nil {
		panic(err)
	}
	return st
}()

// Column positions in checkpointSchema.
const (
	cpTxn = iota
	cpAdd
	cpRemove
	cpMetaData
	cpProtocol
	cpDomainMetadata
	cpColumns
)

// LastCheckpointKey is the key of the _last_checkpoint hint.
const LastCheckpointKey = LogDir + "_last_checkpoint"

// Checkpoint writes a classic single-file Parquet checkpoint of the given
// version (_delta_log/<version>.checkpoint.parquet) and then points
// _last_checkpoint at it, unless _last_checkpoint already names a newer
// version. The checkpoint object is written atomically, so a crash leaves
// either no checkpoint or a complete one, and readers ignore a
// _last_checkpoint that is missing or stale. Tables with the v2Checkpoint
// feature are refused (ErrUnsupportedFeature): they need v2 checkpoints.
func (t *Table) Checkpoint(ctx context.Context, version int64) error {
	snap, err := t.SnapshotAt(ctx, version)
	if err != nil {
		return err
	}
	if slices.Contains(snap.protocol.WriterFeatures, "v2Checkpoint") {
		return &UnsupportedFeatureError{Feature: "v2Checkpoint (writing v2 checkpoints)", Op: "write"}
	}
	var buf bytes.Buffer
	w := pqrow.NewWriter(&buf, checkpointSchema, pqrow.WriterOptions{StatsColumns: pqrow.StatsNone, CreatedBy: EngineInfo})
	n := int64(0)
	put := func(col int, v []any) error {
		row := make([]any, cpColumns)
		row[col] = v
		n++
		return w.Write(row)
	}
	p := snap.protocol
	if err := put(cpProtocol, []any{int32(p.MinReaderVersion), int32(p.MinWriterVersion), strList(p.ReaderFeatures), strList(p.WriterFeatures)}); err != nil {
		return err
	}
	md := snap.metadata
	if err := put(cpMetaData, []any{md.ID, nonEmpty(md.Name), nonEmpty(md.Description),
		[]any{md.Format.Provider, strMap(md.Format.Options)}, md.SchemaString, strList(md.PartitionColumns),
		strMap(md.Configuration), ptrInt64(md.CreatedTime)}); err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(snap.txns)) {
		tx := snap.txns[id]
		if err := put(cpTxn, []any{tx.AppID, tx.Version, ptrInt64(tx.LastUpdated)}); err != nil {
			return err
		}
	}
	for _, d := range slices.Sorted(maps.Keys(snap.domains)) {
		dm := snap.domains[d]
		if dm.Removed {
			continue
		}
		if err := put(cpDomainMetadata, []any{dm.Domain, dm.Configuration, dm.Removed}); err != nil {
			return err
		}
	}
	adds := int64(0)
	for _, a := range snap.files {
		adds++
		if err := put(cpAdd, []any{a.Path, partMap(a.PartitionValues), a.Size, a.ModificationTime, a.DataChange,
			strMap(a.Tags), dvValue(a.DeletionVector), ptrInt64(a.BaseRowID), ptrInt64(a.DefaultRowCommitVersion), nonEmpty(a.Stats)}); err != nil {
			return err
		}
	}
	for _, r := range snap.tombs {
		if err := put(cpRemove, []any{r.Path, ptrInt64(r.DeletionTimestamp), r.DataChange, r.ExtendedFileMetadata,
			partMap(r.PartitionValues), ptrInt64(r.Size), dvValue(r.DeletionVector), ptrInt64(r.BaseRowID), ptrInt64(r.DefaultRowCommitVersion)}); err != nil {
			return err
		}
	}
	if _, err := w.Close(); err != nil {
		return fmt.Errorf("delta: writing checkpoint %d: %w", version, err)
	}
	key := fmt.Sprintf("%s%020d.checkpoint.parquet", LogDir, version)
	if err := store.WriteAll(ctx, t.st, key, buf.Bytes(), nil); err != nil {
		return fmt.Errorf("delta: writing checkpoint %d: %w", version, err)
	}
	// Point _last_checkpoint at it unless it already names a newer one.
	if old, err := store.ReadAll(ctx, t.st, LastCheckpointKey); err == nil {
		var lc struct {
			Version int64 `json:"version"`
		}
		if json.Unmarshal(old, &lc) == nil && lc.Version >= version {
			return nil
		}
	}
	hint, _ := json.Marshal(map[string]any{"version": version, "size": n, "sizeInBytes": buf.Len(), "numOfAddFiles": adds})
	if err := store.WriteAll(ctx, t.st, LastCheckpointKey, hint, nil); err != nil {
		return fmt.Errorf("delta: writing %s: %w", LastCheckpointKey, err)
	}
	return nil
}

func strList(s []string) any {
	if s == nil {
		return nil
	}
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func strMap(m map[string]string) any {
	if m == nil {
		return nil
	}
	out := make([]pqrow.KV, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, pqrow.KV{Key: k, Value: m[k]})
	}
	return out
}

func partMap(p PartitionValues) any {
	out := make([]pqrow.KV, 0, len(p))
	for _, k := range slices.Sorted(maps.Keys(p)) {
		var v any
		if s := p[k]; s != nil {
			v = *s
		}
		out = append(out, pqrow.KV{Key: k, Value: v})
	}
	return out
}

func dvValue(d *DeletionVectorDescriptor) any {
	if d == nil {
		return nil
	}
	var off any
	if d.Offset != nil {
		off = *d.Offset
	}
	return []any{d.StorageType, d.PathOrInlineDV, off, d.SizeInBytes, d.Cardinality}
}

func ptrInt64(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
