package prepared

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/internal/sparkhash"
	"github.com/ariadne-go/ariadne/store"
)

// Resolver maps a file URI to the store holding it and its key there.
// *store.Resolver satisfies it.
type Resolver interface {
	Resolve(ctx context.Context, uri string) (store.Store, string, error)
}

// Source is one input Parquet file and the partition its rows go to.
type Source struct {
	URI string
	// Partition is the output folder of its rows, relative to the output
	// store ("date=2024-06-01"); "" is the output's root.
	Partition string
}

// Sources expands file and folder URIs (anything res resolves) into
// sources. A file is its own source in partition "". A folder (a prefix
// with objects below it) contributes every .parquet file below it, in key
// order, each in the partition of its folder relative to the given one, so
// date=.../ folders are kept. Hidden names (starting with '.' or '_', such
// as Spark's _SUCCESS and .crc files) are skipped, as Spark skips them.
func Sources(ctx context.Context, res Resolver, uris []string) ([]Source, error) {
	var out []Source
	for _, u := range uris {
		st, key, err := res.Resolve(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u, err)
		}
		if key != "" {
			if _, err := st.Stat(ctx, key); err == nil {
				out = append(out, Source{URI: u})
				continue
			} else if !errors.Is(err, store.ErrNotExist) {
				return nil, fmt.Errorf("%s: %w", u, err)
			}
		}
		prefix := ""
		if key != "" {
			prefix = strings.TrimSuffix(key, "/") + "/"
		}
		n := 0
		for info, err := range st.List(ctx, store.ListOptions{Prefix: prefix}) {
			if err != nil {
				return nil, fmt.Errorf("%s: %w", u, err)
			}
			rel := strings.TrimPrefix(info.Key, prefix)
			if !strings.HasSuffix(rel, ".parquet") || hidden(rel) {
				continue
			}
			part := path.Dir(rel)
			if part == "." {
				part = ""
			}
			uri := rel
			if u != "" {
				uri = strings.TrimSuffix(u, "/") + "/" + rel
			}
			out = append(out, Source{URI: uri, Partition: part})
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: no Parquet file: %w", u, store.ErrNotExist)
		}
	}
	return out, nil
}

func hidden(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") || strings.HasPrefix(seg, "_") {
			return true
		}
	}
	return false
}

// Stats describes a PrepareFiles run.
type Stats struct {
	Files          []FileStats
	Sources        int
	Rows, Bytes    int64 // rows and bytes written
	SourceBytes    int64 // bytes of the source files
	Keys, Pages    int64 // key groups and data pages over all files
	PageIndexBytes int64
	MaxPagesPerKey int
	// Choices are the settings used, chosen from the data where not set.
	Choices *Choices
	// Runs and SpillBytes count the sorted runs spilled to the temporary
	// folder (0 when every partition fitted half the memory budget).
	Runs       int
	SpillBytes int64
	// Frames and FramePaddingBytes sum the files' (Options.Frames), and
	// CopyBytes their interleaved copies (FrameOptions.Interleave).
	Frames, FramePaddingBytes, CopyBytes int64
	// Notice says what this run replaced in the output (an unfinished
	// prepare it resumed over, or a finished one it overwrote); "" if
	// nothing.
	Notice string
}

// PagesPerKey is the mean number of data pages per key group and column.
func (s Stats) PagesPerKey() float64 {
	cols := 0
	if len(s.Files) > 0 {
		cols = len(s.Files[0].PagesPerColumn)
	}
	if s.Keys == 0 || cols == 0 {
		return 0
	}
	return float64(s.Pages) / float64(s.Keys) / float64(cols)
}

// FileName is the name of a bucket's file in its partition.
func FileName(bucket int) string { return fmt.Sprintf("part-%05d.parquet", bucket) }

// PrepareFiles rewrites the sources as prepared files in dst. A first pass
// reads every source's footer and key column (and samples the first
// source's rows) and chooses what the options leave unset: page size,
// buckets, row group size, codec and per-column encodings (see Choices;
// recorded in every file's marker). Then, partition by partition (in name
// order), sources are read in parallel and their rows, in source order, go
// to the bucket of their key (Options.Buckets, Spark's
// pmod(murmur3(key, 42), n)); each non-empty bucket is sorted (externally
// past half of Options.MemoryBytes) and written as
// <partition>/part-<bucket>.parquet (see FileName). Every source must have
// the same schema (aerr.ErrSchemaMismatch otherwise). On an error, the
// files this call already wrote and its spilled runs are deleted (best
// effort) and the error returned.
func PrepareFiles(ctx context.Context, res Resolver, srcs []Source, dst store.Store, opts Options) (Stats, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Stats{}, err
	}
	if len(srcs) > 0 {
		// The columns the options name (key, sort, encodings, blob
		// fields) are checked against the first source's schema, one
		// footer read, before the scan reads every source's keys.
		if f, _, err := openSource(ctx, res, srcs[0].URI); err == nil {
			cols, err := resolveColumns(f.Schema(), o)
			if err != nil {
				return Stats{}, err
			}
			if o.Blob != nil {
				if _, err := planBlob(cols, o.Blob, o); err != nil {
					return Stats{}, err
				}
			}
			if o.CoGroup {
				if _, err := planNest(cols, o); err != nil {
					return Stats{}, err
				}
			}
		}
	}
	sc, err := scan(ctx, res, srcs, o)
	if err != nil {
		return Stats{}, err
	}
	if _, err := resolveColumns(sc.schema, o); err != nil { // unknown columns before any choice
		return Stats{}, err
	}
	if o.Frames != nil && len(o.Frames.Interleave) > 0 {
		if _, err := interleaveLeaves(sc.schema, o.Key, o.Frames.Interleave); err != nil {
			return Stats{}, err
		}
	}
	o, ch, err := choose(o, sc)
	if err != nil {
		return Stats{}, err
	}
	if o.Frames != nil {
		// Written PLAIN and uncompressed, then framed (writeSortedFramed);
		// the marker records ZSTD and the framing.
		o.Compression = &parquet.Uncompressed
	}
	cols, err := resolveColumns(sc.schema, o)
	if err != nil {
		return Stats{}, err
	}
	if o.Blob != nil { // planned once, shared by every file's writer
		if o.blobPlan, err = planBlob(cols, o.Blob, o); err != nil {
			return Stats{}, err
		}
	}
	byPart := map[string][]Source{}
	for _, s := range srcs {
		byPart[s.Partition] = append(byPart[s.Partition], s)
	}
	parts := slices.Sorted(maps.Keys(byPart))
	st := Stats{Sources: len(srcs), Choices: ch}
	// The output is published as a set (see ManifestKey): a pending marker
	// first, the manifest last.
	overwrite, notice, err := begin(ctx, dst, o.Overwrite)
	if err != nil {
		return Stats{}, err
	}
	o.Overwrite = overwrite
	if notice != "" {
		st.Notice = notice
		report(o, Progress{Phase: "notice", Message: notice})
	}
	var ss sortStats
	fail := func(err error) (Stats, error) {
		for _, f := range st.Files {
			_ = dst.Delete(context.WithoutCancel(ctx), f.Key, nil)
		}
		_ = dst.Delete(context.WithoutCancel(ctx), PendingKey, nil)
		return Stats{}, err
	}
	nb := max(o.Buckets, 1)
	read := 0
	var readRows int64
	for _, part := range parts {
		s := newSorter(cols, nb, o, &ss)
		err := readPartition(ctx, res, byPart[part], sc.schema, cols, nb, o,
			func(k int, r parquet.Row) error { return s.add(ctx, k, r) },
			func(rows, bytes int64) {
				read++
				readRows += rows
				st.SourceBytes += bytes
				report(o, Progress{Phase: "read", Done: read, Total: len(srcs), Rows: readRows, Bytes: st.SourceBytes})
			})
		if err == nil {
			err = writeBuckets(ctx, dst, part, s, cols, nb, o, &st)
		}
		if cerr := s.cleanup(); err == nil && cerr != nil {
			err = fmt.Errorf("prepared: removing sorted runs: %w", cerr)
		}
		if err != nil {
			return fail(err)
		}
	}
	st.Runs, st.SpillBytes = ss.Runs, ss.SpillBytes
	if err := commit(ctx, dst, o, &st); err != nil {
		return fail(err)
	}
	return st, nil
}

// writeBuckets writes the sorted buckets of one partition, up to
// Options.Parallelism files at once (each from its own merge of its runs).
// A file written is in st.Files as soon as it is committed, so that a
// failure deletes it; the partition's files are then put in bucket order.
func writeBuckets(ctx context.Context, dst store.Store, part string, s *sorter, cols *columns, nb int, o Options, st *Stats) error {
	var ks []int
	for k := range nb {
		if !s.empty(k) {
			ks = append(ks, k)
		}
	}
	pages, err := s.finish(ctx)
	if err != nil {
		return err
	}
	o.pageBuffers = pages
	first := len(st.Files)
	out := make([]FileStats, len(ks))
	err = parallel(ctx, len(ks), o.Parallelism, func(ctx context.Context, i int) error {
		k := ks[i]
		bucket := k
		if nb == 1 {
			bucket = -1
		}
		stream, err := s.stream(k)
		if err != nil {
			return err
		}
		var fs FileStats
		if o.Frames != nil {
			fs, err = writeSortedFramed(ctx, dst, path.Join(part, FileName(k)), cols, stream, o, bucket)
		} else {
			fs, err = writeSorted(ctx, dst, path.Join(part, FileName(k)), cols, stream, o, bucket)
		}
		if cerr := stream.close(); err == nil {
			err = cerr
		}
		out[i] = fs
		return err
	}, func(_, i int) {
		fs := out[i]
		st.Files = append(st.Files, fs)
		st.Rows += fs.Rows
		st.Bytes += fs.Bytes
		st.Keys += fs.Keys
		st.Pages += fs.Pages
		st.PageIndexBytes += fs.PageIndexBytes
		st.MaxPagesPerKey = max(st.MaxPagesPerKey, fs.MaxPagesPerKey)
		st.Frames += fs.Frames
		st.FramePaddingBytes += fs.FramePaddingBytes
		st.CopyBytes += fs.CopyBytes
		report(o, Progress{Phase: "write", Done: len(st.Files), Rows: st.Rows, Bytes: st.Bytes})
	})
	slices.SortFunc(st.Files[first:], func(a, b FileStats) int { return strings.Compare(a.Key, b.Key) })
	return err
}

// rowBatch is a batch of rows read from a source with their buckets.
type rowBatch struct {
	rows    []parquet.Row
	buckets []int
}

// readBatchesAhead is how many batches a source's reader may decode ahead
// of the sorter.
const readBatchesAhead = 4

// readPartition reads the sources of a partition, up to o.Parallelism at a
// time, and passes every row with its bucket to add in source order (so the
// stable sort's ties are the same as reading them one by one); done is
// called after each source with its rows and bytes.
func readPartition(ctx context.Context, res Resolver, srcs []Source, ref *parquet.Schema, cols *columns, nb int, o Options,
	add func(k int, r parquet.Row) error, done func(rows, bytes int64)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		rows, bytes int64
		err         error
	}
	batches := make([]chan rowBatch, len(srcs))
	results := make([]chan result, len(srcs))
	for i := range srcs {
		batches[i] = make(chan rowBatch, readBatchesAhead)
		results[i] = make(chan result, 1)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // runs before wg.Wait: blocked readers give up
	for range min(o.Parallelism, len(srcs)) {
		wg.Go(func() {
			for i := range next {
				rows, size, err := readSource(ctx, res, srcs[i].URI, ref, cols, nb, batches[i])
				close(batches[i])
				results[i] <- result{rows, size, err}
			}
		})
	}
	go func() {
		defer close(next)
		for i := range srcs {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for i := range srcs {
		for b := range batches[i] {
			for j, r := range b.rows {
				if err := add(b.buckets[j], r); err != nil {
					return err
				}
			}
		}
		r := <-results[i]
		if r.err != nil {
			return r.err
		}
		done(r.rows, r.bytes)
	}
	return nil
}

// readSource reads one source's rows, cloned, in batches with their
// buckets, and returns its rows and size.
func readSource(ctx context.Context, res Resolver, uri string, ref *parquet.Schema, cols *columns, nb int, out chan<- rowBatch) (int64, int64, error) {
	f, size, err := openSource(ctx, res, uri)
	if err != nil {
		return 0, 0, err
	}
	if !parquet.EqualNodes(ref, f.Schema()) {
		return 0, 0, aerr.New(aerr.ErrSchemaMismatch, "prepared: %s has schema %s, other sources %s", uri, f.Schema(), ref)
	}
	chk, err := pqrow.NewChecker(f)
	if err != nil {
		return 0, 0, aerr.CorruptDataFile(uri, err)
	}
	key := cols.order[0]
	var b rowBatch
	send := func() error {
		select {
		case out <- b:
			b = rowBatch{}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// Row group by row group, every value checked against what the footer
	// promises for its chunk (counts, nulls, min/max): a file that lies is
	// refused, never rewritten with made-up values.
	var n int64
	for g, rg := range f.RowGroups() {
		if rg.NumRows() == 0 {
			// A row group of no rows holds nothing to rewrite. Writers
			// such as Arrow's give it chunks whose data page offset is 0
			// (no data page), on which parquet-go's row reader seeks
			// before the chunk's start ("Seek: invalid offset"); the
			// footer checks of NewChecker have already vetted it.
			continue
		}
		checks := make([]*pqrow.ChunkCheck, len(rg.ColumnChunks()))
		for c := range checks {
			checks[c] = chk.Chunk(g, c)
		}
		rows := rg.Rows()
		m, rerr := readAll(ctx, rows, func(r parquet.Row) error {
			for _, v := range r {
				if c := v.Column(); c >= 0 && c < len(checks) {
					if err := checks[c].Value(v); err != nil {
						return err
					}
				}
			}
			k := 0
			if nb > 1 {
				k = sparkhash.Bucket(hashValue(key.typ, valueOf(r, key.index)), nb)
			}
			b.rows = append(b.rows, r)
			b.buckets = append(b.buckets, k)
			if len(b.rows) == readBatch {
				return send()
			}
			return nil
		})
		rows.Close()
		n += m
		if rerr == nil {
			for _, k := range checks {
				if rerr = k.Done(); rerr != nil {
					break
				}
			}
		}
		if ie := (*pqrow.IntegrityError)(nil); errors.As(rerr, &ie) {
			return n, size, aerr.CorruptDataFile(uri, rerr)
		}
		if rerr != nil {
			err = rerr
			break
		}
	}
	if err == nil && len(b.rows) > 0 {
		err = send()
	}
	if err != nil {
		return n, size, fmt.Errorf("%s: %w", uri, err)
	}
	return n, size, nil
}

// openSource opens a Parquet file through its store (ranged reads).
func openSource(ctx context.Context, res Resolver, uri string) (*parquet.File, int64, error) {
	s, key, err := res.Resolve(ctx, uri)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", uri, err)
	}
	info, err := s.Stat(ctx, key)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", uri, err)
	}
	f, err := pqrow.OpenParquet(store.NewReaderAt(ctx, s, key, info.Size), info.Size,
		parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", uri, err)
	}
	if _, err := pqrow.NewChecker(f); err != nil {
		return nil, 0, aerr.CorruptDataFile(uri, err)
	}
	return f, info.Size, nil
}

// julianUnixEpoch is the Julian day of 1970-01-01 (INT96 timestamps count
// Julian days and nanoseconds of the day).
const julianUnixEpoch = 2_440_588

// hashValue is Spark's hash() of a key value as Spark reads the column: ints,
// dates and booleans as ints; longs, timestamps (in microseconds, as Spark
// holds them) and decimals of up to 18 digits as longs (their unscaled
// value); floats and doubles by their bits; strings and binaries by their
// bytes; null as the seed. Not reproduced: unsigned 64-bit integers and
// decimals stored as byte arrays, which Spark hashes as Java BigDecimals
// (their files still get consistent buckets, just not Spark's).
func hashValue(t parquet.Type, v parquet.Value) int32 {
	if v.IsNull() {
		return sparkhash.Seed
	}
	var ltv format.LogicalTypeValue
	if lt := t.LogicalType(); lt != nil {
		ltv = lt.Value
	}
	switch v.Kind() {
	case parquet.Boolean:
		if v.Boolean() {
			return sparkhash.Int(1, sparkhash.Seed)
		}
		return sparkhash.Int(0, sparkhash.Seed)
	case parquet.Int32:
		switch lt := ltv.(type) {
		case *format.DecimalType:
			return sparkhash.Long(int64(v.Int32()), sparkhash.Seed)
		case *format.IntType:
			if !lt.IsSigned && lt.BitWidth == 32 { // Spark reads UINT_32 as a long
				return sparkhash.Long(int64(uint32(v.Int32())), sparkhash.Seed)
			}
		}
		return sparkhash.Int(v.Int32(), sparkhash.Seed)
	case parquet.Int64:
		x := v.Int64()
		if ts, ok := ltv.(*format.TimestampType); ok {
			switch ts.Unit.Value.(type) {
			case *format.MilliSeconds:
				x *= 1000
			case *format.NanoSeconds:
				x /= 1000
			}
		}
		return sparkhash.Long(x, sparkhash.Seed)
	case parquet.Int96:
		return sparkhash.Long(int96Micros(v.Int96()), sparkhash.Seed)
	case parquet.Float:
		return sparkhash.Float(v.Float(), sparkhash.Seed)
	case parquet.Double:
		return sparkhash.Double(v.Double(), sparkhash.Seed)
	default:
		return sparkhash.Bytes(v.ByteArray(), sparkhash.Seed)
	}
}

func int96Micros(x deprecated.Int96) int64 {
	nanos := int64(uint64(x[1])<<32 | uint64(x[0]))
	return (int64(x[2])-julianUnixEpoch)*86_400_000_000 + nanos/1000
}
