package prepared

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/store"
)

// FileStats describes one written prepared file.
type FileStats struct {
	Key       string // store key of the file
	Bucket    int    // bucket id (-1 when not bucketed)
	Rows      int64
	Bytes     int64 // file size
	RowGroups int
	// Keys counts the key groups (runs of equal keys) over all row groups.
	Keys int64
	// Pages counts data pages over all columns; PagesPerColumn per leaf
	// column.
	Pages          int64
	PagesPerColumn []int64
	// MaxPagesPerKey is the most pages one key spans in one column (1
	// unless a key alone exceeds PageBytes).
	MaxPagesPerKey int
	// PageIndexBytes is the size of the column and offset indexes.
	PageIndexBytes int64
	// Frames and FramePaddingBytes count the ZSTD frames holding values
	// and the skippable frames' bytes of a framed file (Options.Frames);
	// CopyBytes its interleaved copies (FrameOptions.Interleave).
	Frames, FramePaddingBytes, CopyBytes int64
}

// Write sorts the rows of rows (in schema) by (key, sort columns) and writes
// them as one prepared file at key in st. Rows past half of
// Options.MemoryBytes are sorted in runs spilled to Options.TempDir and
// merged. The file is committed by the store's atomic Close: on any error
// nothing is left under key. An unknown key or sort column is
// aerr.ErrColumnNotFound; a nested or repeated one aerr.ErrInvalidArgument;
// one key whose rows alone exceed the budget ErrMemoryBudget. Write cannot
// choose settings from data it has not seen: unset, PageBytes is
// DefaultPageBytes and RowGroupRows DefaultRowGroupRows.
func Write(ctx context.Context, st store.Store, key string, schema *parquet.Schema, rows parquet.RowReader, opts Options) (FileStats, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return FileStats{}, err
	}
	o = o.writeDefaults()
	cols, err := resolveColumns(schema, o)
	if err != nil {
		return FileStats{}, err
	}
	var ss sortStats
	s := newSorter(cols, 1, o, &ss)
	defer s.cleanup()
	n, err := readAll(ctx, rows, func(r parquet.Row) error { return s.add(ctx, 0, r) })
	if err != nil {
		return FileStats{}, err
	}
	report(o, Progress{Phase: "read", Done: 1, Total: 1, Rows: n})
	bucket := -1
	if o.Buckets > 1 {
		bucket = o.Bucket
	}
	if o.pageBuffers, err = s.finish(ctx); err != nil {
		return FileStats{}, err
	}
	stream, err := s.stream(0)
	if err != nil {
		return FileStats{}, err
	}
	fs, err := writeSorted(ctx, st, key, cols, stream, o, bucket)
	if cerr := stream.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return FileStats{}, err
	}
	report(o, Progress{Phase: "write", Done: 1, Total: 1, Rows: fs.Rows, Bytes: fs.Bytes})
	return fs, s.cleanup()
}

func report(o Options, p Progress) {
	if o.Progress != nil {
		o.Progress(p)
	}
}

// pageBufferSize is parquet-go's page buffer size for a target: parquet-go
// cuts a page only at the end of a WriteRowValues call whose buffer passed
// 98% of it, and our calls end at key boundaries (or row boundaries inside
// an oversized key), so even its own cuts could not split a key. 4× the
// target (our estimate of value bytes ignores levels and length prefixes'
// framing) makes sure it never cuts at all and our packing decides; with
// one page per key we flush after every key and 1 MiB only sizes the
// initial buffer.
func pageBufferSize(target int) int {
	if target <= 0 {
		return 1 << 20
	}
	return 4 * target
}

// writeSorted writes a stream of sorted rows as one prepared file. It holds
// one key's rows at a time.
func writeSorted(ctx context.Context, st store.Store, key string, cols *columns, rows rowStream, o Options, bucket int) (FileStats, error) {
	var blobKV []parquet.WriterOption
	if o.Blob != nil {
		// Rows are sorted in the source's schema (the sort columns may be
		// in the blob) and turned into blob rows only here.
		bp := o.blobPlan
		if bp == nil {
			var err error
			if bp, err = planBlob(cols, o.Blob, o); err != nil {
				return FileStats{Key: key, Bucket: bucket}, err
			}
		}
		bm, err := json.Marshal(bp.marker)
		if err != nil {
			return FileStats{Key: key, Bucket: bucket}, err
		}
		blobKV = append(blobKV, parquet.KeyValueMetadata(BlobKey, string(bm)))
		if o.Blob.Codec == BlobCodecZstdDict {
			if !o.framing {
				return FileStats{Key: key, Bucket: bucket}, aerr.Invalid("prepared: a %s blob is written framed (WriteFramed, or PrepareFiles)", o.Blob.Codec)
			}
			kc := cols.order[0]
			ko, _ := bp.out.schema.Lookup(o.Key)
			cols, rows = bp.out, &blockStream{keyRuns: keyRuns{rowStream: rows, keyLeaf: kc.index, keyType: kc.typ}, p: bp, keyOut: ko.ColumnIndex}
		} else {
			cols, rows = bp.out, &blobStream{rowStream: rows, p: bp}
		}
	}
	if o.CoGroup {
		if o.framing { // WriteFramed: the lists' repeated leaves are not framed
			return FileStats{Key: key, Bucket: bucket}, aerr.Invalid("prepared: co-grouping as nested lists is not combined with frames")
		}
		// Rows are sorted in the source's schema and nested only here
		// (nest.go).
		np, err := planNest(cols, o)
		if err != nil {
			return FileStats{Key: key, Bucket: bucket}, err
		}
		cm, err := json.Marshal(np.marker)
		if err != nil {
			return FileStats{Key: key, Bucket: bucket}, err
		}
		blobKV = append(blobKV, parquet.KeyValueMetadata(CoGroupKey, string(cm)))
		cols, rows = np.out, &nestStream{keyRuns: keyRuns{rowStream: rows, keyLeaf: np.keyLeaf, keyType: cols.order[0].typ}, p: np}
	}
	fs := FileStats{Key: key, Bucket: bucket, PagesPerColumn: make([]int64, cols.leaves)}
	marker, err := json.Marshal(o.marker(bucket, cols))
	if err != nil {
		return fs, err
	}
	var wopts *store.WriteOptions
	if !o.Overwrite {
		wopts = &store.WriteOptions{IfNotExist: true}
	}
	sw, err := st.NewWriter(ctx, key, wopts)
	if err != nil {
		return fs, err
	}
	committed := false
	defer func() {
		if !committed {
			sw.Abort()
		}
	}()
	cw := &store.CountingWriter{W: sw}
	bw := bufio.NewWriterSize(cw, 1<<20)
	sorting := make([]parquet.SortingColumn, len(cols.order))
	for i, c := range cols.order {
		sorting[i] = parquet.NullsFirst(parquet.Ascending(c.name))
	}
	wopt := []parquet.WriterOption{
		parquet.Compression(o.Compression), // also set on every column by resolveColumns
		parquet.PageBufferSize(pageBufferSize(o.PageBytes)),
		parquet.BloomFilters(parquet.SplitBlockFilter(bloomBitsPerValue, o.Key)),
		parquet.SortingWriterConfig(parquet.SortingColumns(sorting...)),
		parquet.KeyValueMetadata(MarkerKey, string(marker)),
		parquet.CreatedBy("ariadne-prepared", fmt.Sprint(FormatVersion), ""),
	}
	wopt = append(wopt, blobKV...)
	if o.pageBuffers != nil {
		wopt = append(wopt, parquet.ColumnPageBuffers(o.pageBuffers))
	}
	// No statistics in page headers: the column index already holds every
	// page's bounds (truncated to 16 bytes), while parquet-go's headers
	// repeat the full min and max twice (the deprecated and the current
	// fields). For the lake's ≈150-byte JSON context that is ≈600 bytes per
	// page: a quarter of an 8 KiB page compressed, 15× the 40 bytes of a
	// light key's row.
	for _, path := range cols.schema.Columns() {
		wopt = append(wopt, parquet.SkipPageStatistics(path...))
	}
	pw := parquet.NewWriter(bw, append(wopt, cols.schema)...)
	kw := newKeyWriter(pw, cols, o.PageBytes, &fs)
	if err := writeKeys(ctx, kw, cols, rows, o, key, &fs); err != nil {
		return fs, err
	}
	if fs.Rows > 0 {
		kw.countPending()
		fs.RowGroups++
	}
	if kr, ok := rows.(interface{ sourceRows() int64 }); ok {
		// Rows are the source's (fs.Keys counts key groups as before); a
		// co-grouped file (blob or nested) stores one row per run of them.
		fs.Rows = kr.sourceRows()
	}
	if err := pw.Close(); err != nil {
		return fs, err
	}
	if err := bw.Flush(); err != nil {
		return fs, err
	}
	for _, rg := range pw.File().Metadata().RowGroups {
		for _, cc := range rg.Columns {
			fs.PageIndexBytes += int64(cc.ColumnIndexLength) + int64(cc.OffsetIndexLength)
		}
	}
	if err := sw.Close(); err != nil {
		return fs, err
	}
	committed = true
	fs.Bytes = cw.N
	for _, p := range fs.PagesPerColumn {
		fs.Pages += p
	}
	return fs, nil
}

// writeKeys streams the sorted rows into kw key group by key group, ending
// row groups at key boundaries after o.RowGroupRows. Rows are not held
// (the key writer keeps a page's worth of values per column), except with
// one page per key, where a key's rows are its page and must fit half the
// budget (ErrMemoryBudget).
func writeKeys(ctx context.Context, kw *keyWriter, cols *columns, rows rowStream, o Options, key string, fs *FileStats) error {
	keyCol := cols.order[0]
	var rgRows int64
	var first parquet.Value // key of the current group
	inGroup := false
	b := &budget{what: "one key's rows in " + key, max: o.MemoryBytes / 2}
	endGroup := func() error {
		if err := kw.endGroup(); err != nil {
			return err
		}
		fs.Keys++
		return nil
	}
	for {
		r, err := rows.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		k := valueOf(r, keyCol.index)
		if !inGroup || !sameKey(keyCol.typ, first, k) {
			if inGroup {
				if err := endGroup(); err != nil {
					return err
				}
			}
			if fs.Keys%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if rgRows >= o.RowGroupRows { // rows follow: end the row group at this key boundary
				if err := kw.endRowGroup(); err != nil {
					return err
				}
				rgRows = 0
			}
			kw.beginGroup()
			first, inGroup, b.used = k, true, 0
		}
		if o.PageBytes <= 0 {
			if err := b.add(r); err != nil {
				return err
			}
		}
		if err := kw.addRow(r); err != nil {
			return err
		}
		fs.Rows++
		if ns, ok := rows.(*nestStream); ok {
			// A stored row of nested lists holds a block of source
			// rows: row groups are sized in source rows.
			rgRows += ns.last
		} else {
			rgRows++
		}
	}
	if inGroup {
		return endGroup()
	}
	return nil
}

// sameKey reports whether two key values are equal (two nulls are).
func sameKey(t parquet.Type, a, b parquet.Value) bool { return compareValues(t, a, b) == 0 }
