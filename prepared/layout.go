package prepared

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/pqrow"
)

// The rules of the choices made from the data (docs/prepared.md, "Defaults
// chosen from the data").
const (
	// TargetFileBytes is the output file size the bucket count aims at:
	// large enough that engines scan few files and a lookup opens one file
	// per partition, small enough to write and cache whole.
	TargetFileBytes = 128 << 20

	// targetRowGroupBytes is the uncompressed (PLAIN) size a row group aims
	// at; minRowGroupRows and maxRowGroupRows bound the rows.
	targetRowGroupBytes = 128 << 20
	minRowGroupRows     = 16 << 10
	maxRowGroupRows     = 8 << 20

	// pageOverheadBytes is what a data page costs besides its values,
	// measured on the benchmark lake: ≈48 bytes of page header, ≈37 of page
	// index and ≈300 of a ZSTD frame relearning its tables (docs).
	pageOverheadBytes = 400
	// maxPageOverhead is the share of a compressed page that overhead may
	// take: a compressed page must be ≥ 400 / 0.03 ≈ 13 KB.
	maxPageOverhead = 0.03
	// minAutoPageBytes and maxAutoPageBytes bound the chosen page target: a
	// light-key lookup decodes about one page per column.
	minAutoPageBytes = 16 << 10
	maxAutoPageBytes = 64 << 10

	// sampleRows is the number of rows of the first source sampled for the
	// per-column encoding choice; sampleDistinct caps the distinct values
	// tracked per column.
	sampleRows     = 64 << 10
	sampleDistinct = 16 << 10
	// dictMinRepeat: a dictionary is kept only if values repeat at least
	// this many times on average in the sample.
	dictMinRepeat = 4

	// kmvSize is the number of smallest key hashes kept to estimate the
	// number of distinct keys (k minimum values; ≈1.6 % standard error).
	kmvSize = 4096
)

// Choices are the layout settings of a PrepareFiles run, each either set by
// an option or chosen from the data, with what they were chosen from. They
// are printed by `ariadne prepare` and recorded in every file's marker.
type Choices struct {
	PageBytes    int    `json:"pageBytes"` // PageBytesPerKey (-1): one page per key
	Buckets      int    `json:"buckets"`
	RowGroupRows int64  `json:"rowGroupRows"`
	Codec        string `json:"codec"`
	// Columns is the encoding of every leaf column, in schema order.
	Columns []ColumnChoice `json:"columns"`
	// Chosen names the settings chosen from the data ("page_bytes",
	// "buckets", "row_group_rows", "codec", "encodings"); the others were
	// set by options.
	Chosen []string `json:"chosen"`
	// Why explains each chosen setting by name.
	Why   map[string]string `json:"why,omitempty"`
	Basis Basis             `json:"basis"`
	// Frames is the framing (Options.Frames), nil for unframed files.
	Frames *FrameChoice `json:"frames,omitempty"`
	// Blob is the blob column (Options.Blob), nil for files without one.
	Blob *BlobChoice `json:"blob,omitempty"`
	// CoGroup is the nested co-grouping (Options.CoGroup), nil otherwise.
	CoGroup *CoGroupChoice `json:"coGroup,omitempty"`
}

// ColumnChoice is the encoding of one leaf column.
type ColumnChoice struct {
	Column   string `json:"column"` // dotted path
	Encoding string `json:"encoding"`
	// Set is true when Options.Encodings named the column.
	Set bool `json:"set,omitempty"`
	// Sampled and Distinct count the values in the sample and their
	// distinct values (Distinct stops counting at 16,384); DictBytes is
	// the PLAIN size of those distinct values.
	Sampled   int64 `json:"sampled"`
	Distinct  int64 `json:"distinct"`
	DictBytes int64 `json:"dictBytes"`
}

// Basis is what the first pass measured: the sources' footers, their key
// column, and a sample of the first source's rows.
type Basis struct {
	Sources     int   `json:"sources"`
	SourceBytes int64 `json:"sourceBytes"`
	Rows        int64 `json:"rows"`
	Partitions  int   `json:"partitions"`
	// MaxPartitionBytes and MaxPartitionSources describe the largest
	// partition by bytes.
	MaxPartitionBytes   int64 `json:"maxPartitionBytes"`
	MaxPartitionSources int   `json:"maxPartitionSources"`
	// KeyGroups estimates the distinct keys summed over partitions (the
	// key groups the output holds); RowsPerKey is Rows / KeyGroups.
	KeyGroups  int64   `json:"keyGroups"`
	RowsPerKey float64 `json:"rowsPerKey"`
	// RowBytes is the mean PLAIN size of a sampled row.
	RowBytes float64 `json:"rowBytes"`
	// WidestColumn has the most uncompressed bytes in the footers;
	// WidestRatio is its uncompressed / compressed size there.
	WidestColumn string  `json:"widestColumn"`
	WidestRatio  float64 `json:"widestRatio"`
}

// scanned is the first pass over the sources.
type scanned struct {
	schema *parquet.Schema // of the first source; all are equal
	basis  Basis
	sample []colSample // per leaf column
}

type colSample struct {
	values, plainBytes int64
	distinct           map[string]struct{}
	distinctBytes      int64
	full               bool // stopped counting distinct values
}

// fileScan is what the first pass learns from one source.
type fileScan struct {
	schema       *parquet.Schema
	size, rows   int64
	uncompressed []int64 // per leaf column, from the footer
	compressed   []int64
	keys         *kmv
	sample       []colSample // first source only
}

// scan is the first pass: every source's footer and key column, read
// sources in parallel, and a sample of the first source's rows.
func scan(ctx context.Context, res Resolver, srcs []Source, o Options) (*scanned, error) {
	if len(srcs) == 0 {
		return nil, aerr.Invalid("prepared: no sources")
	}
	out := make([]*fileScan, len(srcs))
	var doneBytes int64
	err := parallel(ctx, len(srcs), o.Parallelism, func(ctx context.Context, i int) error {
		fsc, err := scanSource(ctx, res, srcs[i].URI, o.Key, i == 0)
		out[i] = fsc
		return err
	}, func(done, i int) {
		doneBytes += out[i].size
		report(o, Progress{Phase: "scan", Done: done, Total: len(srcs), Bytes: doneBytes})
	})
	if err != nil {
		return nil, err
	}

	s := &scanned{schema: out[0].schema, sample: out[0].sample}
	b := &s.basis
	b.Sources = len(srcs)
	leaves := len(s.schema.Columns())
	unc, comp := make([]int64, leaves), make([]int64, leaves)
	type part struct {
		bytes   int64
		sources int
		keys    *kmv
	}
	parts := map[string]*part{}
	for i, f := range out {
		if !parquet.EqualNodes(s.schema, f.schema) {
			return nil, aerr.New(aerr.ErrSchemaMismatch, "prepared: %s has schema %s, other sources %s", srcs[i].URI, f.schema, s.schema)
		}
		b.SourceBytes += f.size
		b.Rows += f.rows
		for c := range leaves {
			unc[c] += f.uncompressed[c]
			comp[c] += f.compressed[c]
		}
		p := parts[srcs[i].Partition]
		if p == nil {
			p = &part{keys: newKMV()}
			parts[srcs[i].Partition] = p
		}
		p.bytes += f.size
		p.sources++
		p.keys.merge(f.keys)
	}
	b.Partitions = len(parts)
	for _, p := range parts {
		if p.bytes > b.MaxPartitionBytes || (p.bytes == b.MaxPartitionBytes && p.sources > b.MaxPartitionSources) {
			b.MaxPartitionBytes, b.MaxPartitionSources = p.bytes, p.sources
		}
		b.KeyGroups += p.keys.estimate()
	}
	if b.KeyGroups > 0 {
		b.RowsPerKey = float64(b.Rows) / float64(b.KeyGroups)
	}
	var sampled int64
	var plain int64
	for _, c := range s.sample {
		plain += c.plainBytes
	}
	if sampled = min(b.Rows, out[0].rows, sampleRows); sampled > 0 {
		b.RowBytes = float64(plain) / float64(sampled)
	}
	widest := 0
	for c := range leaves {
		if unc[c] > unc[widest] {
			widest = c
		}
	}
	b.WidestColumn = strings.Join(s.schema.Columns()[widest], ".")
	b.WidestRatio = 1
	if comp[widest] > 0 && unc[widest] > comp[widest] {
		b.WidestRatio = float64(unc[widest]) / float64(comp[widest])
	}
	return s, nil
}

// scanSource reads one source's footer and key column (and, for the first
// source, a sample of its rows).
func scanSource(ctx context.Context, res Resolver, uri, key string, sample bool) (*fileScan, error) {
	f, size, err := openSource(ctx, res, uri)
	if err != nil {
		return nil, err
	}
	schema := f.Schema()
	leaf, ok := schema.Lookup(key)
	if !ok {
		// resolveColumns reports the error with the columns.
		return &fileScan{schema: schema, size: size, rows: f.NumRows(), keys: newKMV(),
			uncompressed: make([]int64, len(schema.Columns())), compressed: make([]int64, len(schema.Columns()))}, nil
	}
	fs := &fileScan{schema: schema, size: size, rows: f.NumRows(), keys: newKMV(),
		uncompressed: make([]int64, len(schema.Columns())), compressed: make([]int64, len(schema.Columns()))}
	for _, rg := range f.Metadata().RowGroups {
		for c, cc := range rg.Columns {
			if c < len(fs.uncompressed) {
				fs.uncompressed[c] += cc.MetaData.TotalUncompressedSize
				fs.compressed[c] += cc.MetaData.TotalCompressedSize
			}
		}
	}
	buf := make([]parquet.Value, readBatch)
	chk, err := pqrow.NewChecker(f)
	if err != nil {
		return nil, aerr.CorruptDataFile(uri, err)
	}
	for g, rg := range f.RowGroups() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		kc := chk.Chunk(g, leaf.ColumnIndex)
		pages := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
		for {
			p, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				pages.Close()
				return nil, fmt.Errorf("%s: %w", uri, err)
			}
			if err := kc.Page(p); err != nil {
				parquet.Release(p)
				pages.Close()
				return nil, aerr.CorruptDataFile(uri, err)
			}
			vr := p.Values()
			for {
				n, err := vr.ReadValues(buf)
				for _, v := range buf[:n] {
					fs.keys.add(hashKey(v))
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					parquet.Release(p)
					pages.Close()
					return nil, fmt.Errorf("%s: %w", uri, err)
				}
			}
			parquet.Release(p)
		}
		pages.Close()
		if err := kc.Done(); err != nil {
			return nil, aerr.CorruptDataFile(uri, err)
		}
	}
	if sample {
		fs.sample, err = sampleSource(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", uri, err)
		}
	}
	return fs, nil
}

// sampleSource counts the values, PLAIN bytes and distinct values of every
// leaf column over the first sampleRows rows of f.
func sampleSource(ctx context.Context, f *parquet.File) ([]colSample, error) {
	out := make([]colSample, len(f.Schema().Columns()))
	for c := range out {
		out[c].distinct = map[string]struct{}{}
	}
	rr := parquet.NewReader(f)
	defer rr.Close()
	buf := make([]parquet.Row, readBatch)
	for seen := 0; seen < sampleRows; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := rr.ReadRows(buf[:min(len(buf), sampleRows-seen)])
		for _, r := range buf[:n] {
			for _, v := range r {
				s := &out[v.Column()]
				if v.IsNull() {
					continue
				}
				sz := valueSize(v)
				s.values++
				s.plainBytes += sz
				if s.full {
					continue
				}
				k := string(v.Bytes())
				if _, ok := s.distinct[k]; !ok {
					if len(s.distinct) == sampleDistinct {
						s.full = true
						continue
					}
					s.distinct[k] = struct{}{}
					s.distinctBytes += sz
				}
			}
		}
		seen += n
		if errors.Is(err, io.EOF) || n == 0 {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// hashKey is a 64-bit hash of a key value, uniform enough for the distinct
// count (FNV-1a finished by splitmix64's mixer); all nulls hash alike.
func hashKey(v parquet.Value) uint64 {
	if v.IsNull() {
		return 0x9e3779b97f4a7c15
	}
	h := fnv.New64a()
	h.Write(v.Bytes())
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// kmv estimates a number of distinct values from the kmvSize smallest
// distinct hashes seen (Bar-Yossef et al.'s k minimum values).
type kmv struct {
	set  map[uint64]struct{}
	heap []uint64 // max-heap of the kept hashes
}

func newKMV() *kmv { return &kmv{set: map[uint64]struct{}{}} }

func (k *kmv) add(h uint64) {
	if _, ok := k.set[h]; ok {
		return
	}
	if len(k.heap) == kmvSize {
		if h >= k.heap[0] {
			return
		}
		delete(k.set, k.heap[0])
		k.heap[0] = h
		k.down(0)
	} else {
		k.heap = append(k.heap, h)
		k.up(len(k.heap) - 1)
	}
	k.set[h] = struct{}{}
}

func (k *kmv) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if k.heap[p] >= k.heap[i] {
			return
		}
		k.heap[p], k.heap[i] = k.heap[i], k.heap[p]
		i = p
	}
}

func (k *kmv) down(i int) {
	for {
		l, m := 2*i+1, i
		if l < len(k.heap) && k.heap[l] > k.heap[m] {
			m = l
		}
		if l+1 < len(k.heap) && k.heap[l+1] > k.heap[m] {
			m = l + 1
		}
		if m == i {
			return
		}
		k.heap[m], k.heap[i] = k.heap[i], k.heap[m]
		i = m
	}
}

func (k *kmv) merge(o *kmv) {
	for _, h := range o.heap {
		k.add(h)
	}
}

// estimate is exact below kmvSize distinct values.
func (k *kmv) estimate() int64 {
	if len(k.heap) < kmvSize {
		return int64(len(k.heap))
	}
	frac := float64(k.heap[0]) / math.Exp2(64)
	return int64(math.Round(float64(kmvSize-1) / frac))
}

// choose fills the unset options from the first pass and returns them with
// the choices recorded.
func choose(o Options, s *scanned) (Options, *Choices, error) {
	b := s.basis
	ch := &Choices{Basis: b, Why: map[string]string{}}
	chosen := func(name, why string, args ...any) {
		ch.Chosen = append(ch.Chosen, name)
		ch.Why[name] = fmt.Sprintf(why, args...)
	}
	ch.Blob = o.Blob.choice()
	ch.CoGroup = o.coGroupChoice()
	// Codec: the sources' codec is never kept.
	ch.Codec = o.Compression.CompressionCodec().String()
	if o.Frames != nil {
		// The frames are the codec: ZSTD per run of whole keys, values
		// PLAIN (FrameFile reads PLAIN values to cut frames at keys).
		ch.Codec = parquet.Zstd.CompressionCodec().String()
		ch.Frames = o.Frames.choice()
	} else if o.choseCodec {
		chosen("codec", "ZSTD unless set (the sources' codecs are not kept)")
	}
	// Page size: a compressed page should carry its ≈400 bytes of overhead
	// at ≤3 %, so ≈13 KB compressed, that is 13 KB × the compression ratio
	// of the widest column uncompressed, to the nearest power of two,
	// within [16 KiB, 64 KiB] (a light key's lookup decodes about one page
	// per column).
	if o.PageBytes == 0 {
		need := pageOverheadBytes / maxPageOverhead * b.WidestRatio
		o.PageBytes = min(max(1<<int(math.Round(math.Log2(need))), minAutoPageBytes), maxAutoPageBytes)
		chosen("page_bytes", "pages of %.0f B compressed (%d B of overhead per page at ≤ %.0f %%) × %.2f, the compression ratio of the widest column %s, to the nearest power of two within [%d, %d]",
			pageOverheadBytes/maxPageOverhead, pageOverheadBytes, maxPageOverhead*100, b.WidestRatio, b.WidestColumn, minAutoPageBytes, maxAutoPageBytes)
	}
	ch.PageBytes = o.PageBytes
	// Buckets: output files of ≈TargetFileBytes (the largest partition's
	// bytes / 128 MiB, rounded up), and never fewer files than the
	// partition has when its files are already ≥ half that size.
	if o.Buckets == 0 {
		n := int((b.MaxPartitionBytes + TargetFileBytes - 1) / TargetFileBytes)
		if b.MaxPartitionSources > 0 && b.MaxPartitionBytes/int64(b.MaxPartitionSources) >= TargetFileBytes/2 {
			n = max(n, b.MaxPartitionSources)
		}
		o.Buckets = max(n, 1)
		chosen("buckets", "files of ≈%d MiB: the largest partition's %d bytes (%d sources) / %d MiB, rounded up; its file count kept when its files average ≥ %d MiB",
			TargetFileBytes>>20, b.MaxPartitionBytes, b.MaxPartitionSources, TargetFileBytes>>20, TargetFileBytes>>21)
	}
	ch.Buckets = o.Buckets
	// Row groups of ≈128 MiB of PLAIN values.
	if o.RowGroupRows == 0 {
		o.RowGroupRows = DefaultRowGroupRows
		if b.RowBytes > 0 {
			o.RowGroupRows = min(max(int64(targetRowGroupBytes/b.RowBytes), minRowGroupRows), maxRowGroupRows)
		}
		chosen("row_group_rows", "row groups of ≈%d MiB uncompressed: %d / %.1f sampled bytes per row, within [%d, %d]",
			targetRowGroupBytes>>20, targetRowGroupBytes, b.RowBytes, minRowGroupRows, maxRowGroupRows)
	}
	ch.RowGroupRows = o.RowGroupRows
	// Encodings: a dictionary only where values repeat (≥4× on average in
	// the sample) and the dictionary is no larger than a page; otherwise a
	// lookup would read a dictionary larger than the values it wants.
	dictLimit := int64(cmp.Or(max(o.PageBytes, 0), DefaultPageBytes))
	var auto, framedPlain bool
	if o.Encodings == nil {
		o.Encodings = map[string]encoding.Encoding{}
	}
	for c, path := range s.schema.Columns() {
		name := strings.Join(path, ".")
		leaf, _ := s.schema.Lookup(path...)
		cs := s.sample[c]
		cc := ColumnChoice{Column: name, Sampled: cs.values, Distinct: int64(len(cs.distinct)), DictBytes: cs.distinctBytes}
		e, set := o.Encodings[name]
		if !set && o.Frames != nil {
			framedPlain = true
			e = &parquet.Plain
			o.Encodings[name] = e
		} else if !set {
			auto = true
			kind := leaf.Node.Type().Kind()
			dict := kind != parquet.Boolean && !cs.full && cs.values > 0 &&
				int64(len(cs.distinct))*dictMinRepeat <= cs.values && cs.distinctBytes <= dictLimit
			if dict {
				e = &parquet.RLEDictionary
			} else {
				e = effectiveEncoding(kind, nil)
			}
			o.Encodings[name] = e
		}
		cc.Set = set
		cc.Encoding = e.Encoding().String()
		ch.Columns = append(ch.Columns, cc)
	}
	if framedPlain {
		chosen("encodings", "PLAIN for every column: frames are cut from PLAIN values at key boundaries")
	}
	if auto {
		chosen("encodings", "a dictionary where the sampled values repeat ≥ %d× and their distinct values take ≤ %d bytes (the page target); otherwise PLAIN (DELTA_LENGTH_BYTE_ARRAY for byte arrays)",
			dictMinRepeat, dictLimit)
	}
	slices.Sort(ch.Chosen)
	o.choices = ch
	return o, ch, nil
}
