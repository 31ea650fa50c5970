package delta

import (
	"context"
	"strconv"
)

// OptimizeOptions configure Optimize.
type OptimizeOptions struct {
	WriteOptions
	// MinFileSize: files at least this large (bytes on storage) are left
	// alone (default DefaultOptimizeMinFileSize).
	MinFileSize int64
	// MinFilesPerBin: a partition's small files are compacted only if
	// there are at least this many (default 2).
	MinFilesPerBin int
}

// DefaultOptimizeMinFileSize is the size below which a file is "small":
// 64 MiB, half the default target, so that compacted output files (which
// are about TargetFileSize uncompressed, less on storage) are not
// recompacted on the next run.
const DefaultOptimizeMinFileSize = 64 << 20

// OptimizeMetrics report what Optimize did.
type OptimizeMetrics struct {
	Version           int64 // committed version (the read version when nothing was done)
	Committed         bool
	FilesRemoved      int
	FilesAdded        int
	PartitionsTouched int
	BytesRemoved      int64
	BytesAdded        int64
}

// Optimize bin-packs small files: per partition, files smaller than
// MinFileSize are read in log order (rows in file order, deletion vectors
// applied) and written into new files of about TargetFileSize; the commit
// removes the sources and adds the results with dataChange=false, so
// readers of the change feed and streaming readers see no data change.
// Optimize conflicts only with a concurrent commit that removes one of its
// source files (or changes metadata); concurrent appends are fine.
func (t *Table) Optimize(ctx context.Context, opts OptimizeOptions) (OptimizeMetrics, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return OptimizeMetrics{}, err
	}
	meta := snap.Metadata()
	if err := checkWritable(&snap.protocol, &meta, snap.schema, opOptimize); err != nil {
		return OptimizeMetrics{}, err
	}
	minSize := opts.MinFileSize
	if minSize <= 0 {
		minSize = DefaultOptimizeMinFileSize
	}
	minFiles := opts.MinFilesPerBin
	if minFiles <= 0 {
		minFiles = 2
	}
	tx := newTxn(t, snap, "OPTIMIZE", opts.WriteOptions)
	tx.dataChange = false
	tx.opParams["predicate"] = "[]"
	tx.opParams["zOrderBy"] = "[]"
	// Small files by partition, in the snapshot's (path) order.
	byPart := map[string][]AddFile{}
	var parts []string
	for _, f := range snap.files {
		if f.Size >= minSize {
			continue
		}
		k := partitionKey(f.PartitionValues)
		if _, ok := byPart[k]; !ok {
			parts = append(parts, k)
		}
		byPart[k] = append(byPart[k], f)
	}
	m := OptimizeMetrics{Version: snap.Version()}
	for _, k := range parts {
		files := byPart[k]
		if len(files) < minFiles {
			continue
		}
		sk, err := tx.newSink(snap.schema, opts.WriteOptions)
		if err != nil {
			return OptimizeMetrics{}, err
		}
		for _, f := range files {
			for row, err := range snap.ScanFile(ctx, f, ScanOptions{}) {
				if err != nil {
					sk.abort()
					return OptimizeMetrics{}, err
				}
				if err := sk.write(ctx, row); err != nil {
					sk.abort()
					return OptimizeMetrics{}, err
				}
			}
		}
		adds, err := sk.close(ctx)
		if err != nil {
			return OptimizeMetrics{}, err
		}
		for _, f := range files {
			tx.remove(f, false)
			m.BytesRemoved += f.Size
			m.FilesRemoved++
		}
		for i := range adds {
			adds[i].DataChange = false
			tx.actions = append(tx.actions, Action{Add: &adds[i]})
			m.BytesAdded += adds[i].Size
			m.FilesAdded++
		}
		m.PartitionsTouched++
	}
	if m.FilesRemoved == 0 {
		return m, nil
	}
	tx.opParams["numRemovedFiles"] = strconv.Itoa(m.FilesRemoved)
	v, err := tx.commit(ctx)
	if err != nil {
		return OptimizeMetrics{}, err
	}
	m.Version, m.Committed = v, true
	return m, nil
}

// partitionKey renders partition values canonically (sorted keys).
func partitionKey(p PartitionValues) string {
	k := ""
	for _, c := range sortedKeys(p) {
		v := "\x00null"
		if s := p[c]; s != nil {
			v = *s
		}
		k += c + "=" + v + "\x01"
	}
	return k
}

func sortedKeys(p PartitionValues) []string {
	out := make([]string, 0, len(p))
	for k := range p {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
