package prepared

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/aerr"
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

// PrepareFiles rewrites the sources as prepared files in dst: partition by
// partition (in name order), every row goes to the bucket of its key
// (Options.Buckets, Spark's pmod(murmur3(key, 42), n)), each non-empty
// bucket is sorted and written as <partition>/part-<bucket>.parquet (see
// FileName). Every source must have the same schema
// (aerr.ErrSchemaMismatch otherwise). One partition's rows are held in
// memory at once, under Options.MemoryBytes. On an error, the files this
// call already wrote are deleted (best effort) and the error returned.
func PrepareFiles(ctx context.Context, res Resolver, srcs []Source, dst store.Store, opts Options) (Stats, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Stats{}, err
	}
	byPart := map[string][]Source{}
	for _, s := range srcs {
		byPart[s.Partition] = append(byPart[s.Partition], s)
	}
	parts := make([]string, 0, len(byPart))
	for p := range byPart {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	st := Stats{Sources: len(srcs)}
	var ref *parquet.Schema
	var cols *columns
	read := 0
	var readRows int64
	fail := func(err error) (Stats, error) {
		for _, f := range st.Files {
			_ = dst.Delete(context.WithoutCancel(ctx), f.Key, nil)
		}
		return Stats{}, err
	}
	nb := max(o.Buckets, 1)
	for _, part := range parts {
		b := &budget{what: "partition " + cmp.Or(part, `""`), max: o.MemoryBytes}
		buckets := make([][]parquet.Row, nb)
		for _, src := range byPart[part] {
			f, size, err := openSource(ctx, res, src.URI)
			if err != nil {
				return fail(err)
			}
			if ref == nil {
				ref = f.Schema()
				if cols, err = resolveColumns(ref, o); err != nil {
					return fail(err)
				}
			} else if !parquet.EqualNodes(ref, f.Schema()) {
				return fail(aerr.New(aerr.ErrSchemaMismatch, "prepared: %s has schema %s, other sources %s", src.URI, f.Schema(), ref))
			}
			rr := parquet.NewReader(f)
			n, err := readAll(ctx, rr, func(r parquet.Row) error {
				k := 0
				if nb > 1 {
					k = sparkhash.Bucket(hashValue(cols.order[0].typ, valueOf(r, cols.order[0].index)), nb)
				}
				buckets[k] = append(buckets[k], r)
				return b.add(r)
			})
			rr.Close()
			if err != nil {
				return fail(fmt.Errorf("%s: %w", src.URI, err))
			}
			read++
			readRows += n
			st.SourceBytes += size
			report(o, Progress{Phase: "read", Done: read, Total: len(srcs), Rows: readRows, Bytes: st.SourceBytes})
		}
		for k, rows := range buckets {
			if len(rows) == 0 {
				continue
			}
			sortRows(cols, rows)
			bucket := k
			if nb == 1 {
				bucket = -1
			}
			fs, err := writeSorted(ctx, dst, path.Join(part, FileName(k)), cols, rows, o, bucket)
			if err != nil {
				return fail(err)
			}
			buckets[k] = nil // let the rows go before the next bucket's file
			st.Files = append(st.Files, fs)
			st.Rows += fs.Rows
			st.Bytes += fs.Bytes
			st.Keys += fs.Keys
			st.Pages += fs.Pages
			st.PageIndexBytes += fs.PageIndexBytes
			st.MaxPagesPerKey = max(st.MaxPagesPerKey, fs.MaxPagesPerKey)
			report(o, Progress{Phase: "write", Done: len(st.Files), Rows: st.Rows, Bytes: st.Bytes})
		}
	}
	return st, nil
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
	f, err := parquet.OpenFile(store.NewReaderAt(ctx, s, key, info.Size), info.Size,
		parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", uri, err)
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
