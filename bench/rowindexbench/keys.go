package rowindexbench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/store"
)

// keyKind is how a key column's values become Go values for both systems:
// the row index (rowindex.EncodeKey) and DuckDB (a bound parameter).
type keyKind int

const (
	keyInt    keyKind = iota // INT32/INT64 without a temporal logical type: int64
	keyFloat                 // FLOAT/DOUBLE: float64
	keyString                // BYTE_ARRAY with a STRING logical type: string
	keyBinary                // other BYTE_ARRAY/FIXED_LEN_BYTE_ARRAY: []byte
)

// histogram is the exact number of rows of every key of a lake, from a
// scan of its key column: the reference every system's answer is checked
// against, and the population keys are sampled from.
type histogram struct {
	kind   keyKind
	keys   []any   // distinct keys (int64, float64 or string), by count then value
	counts []int64 // rows per key, parallel to keys
	rows   int64   // rows with a non-null key
	exact  map[any]int64
	// stored, if set, is the stored rows per key of the measured files
	// where those are not rows (LayoutCoGrouped: key blocks): what DuckDB
	// returns from them.
	stored map[any]int64
}

// storedRows is the number of stored rows DuckDB returns for key k from
// the measured files, at most limit (0: no limit).
func (h *histogram) storedRows(k any, limit int) int64 {
	n := h.exact[k]
	if h.stored != nil {
		n = h.stored[k]
	}
	if limit > 0 {
		n = min(n, int64(limit))
	}
	return n
}

// keyKindOf checks that col can be a benchmark key and says how.
func keyKindOf(col *parquet.Column, name string) (keyKind, error) {
	if col == nil || !col.Leaf() || col.Repeated() {
		return 0, aerr.Invalid("key column %q: want a top-level, non-repeated primitive column", name)
	}
	var lt format.LogicalTypeValue
	if l := col.Type().LogicalType(); l != nil {
		lt = l.Value
	}
	switch col.Type().Kind() {
	case parquet.Int32, parquet.Int64:
		switch lt.(type) {
		case *format.TimestampType, *format.DateType, *format.TimeType, *format.DecimalType:
			return 0, aerr.Invalid("key column %q: temporal and decimal keys are not supported by the benchmark", name)
		}
		return keyInt, nil
	case parquet.Float, parquet.Double:
		return keyFloat, nil
	case parquet.ByteArray, parquet.FixedLenByteArray:
		switch lt.(type) {
		case *format.StringType, *format.EnumType, *format.JsonType:
			return keyString, nil
		}
		if ct := col.Type().ConvertedType(); ct != nil && *ct == deprecated.UTF8 {
			return keyString, nil
		}
		return keyBinary, nil
	}
	return 0, aerr.Invalid("key column %q: %s keys are not supported by the benchmark", name, col.Type())
}

// goValue converts a non-null Parquet value of kind k to its histogram key.
func goValue(v parquet.Value, k keyKind) any {
	switch k {
	case keyInt:
		if v.Kind() == parquet.Int32 {
			return int64(v.Int32())
		}
		return v.Int64()
	case keyFloat:
		if v.Kind() == parquet.Float {
			return float64(v.Float())
		}
		return v.Double()
	}
	return string(v.ByteArray())
}

// queryValue is a histogram key as both systems take it.
func (h *histogram) queryValue(k any) any {
	if s, ok := k.(string); ok && h.kind == keyBinary {
		return []byte(s)
	}
	return k
}

// scanKeys counts the rows of every key of the key column in files (keys
// of st): every page of the column, decoded by parquet-go.
func scanKeys(ctx context.Context, st store.Store, files []string, keyCol string) (*histogram, error) {
	h := &histogram{exact: map[any]int64{}}
	for i, key := range files {
		attrs, err := st.Stat(ctx, key)
		if err != nil {
			return nil, err
		}
		f, err := parquet.OpenFile(store.NewReaderAt(ctx, st, key, attrs.Size), attrs.Size, parquet.SkipBloomFilters(true),
			parquet.SkipPageIndex(true), parquet.ReadBufferSize(1<<20))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		col := f.Root().Column(keyCol)
		if col == nil {
			return nil, aerr.Invalid("%s: no column %q", key, keyCol)
		}
		kind, err := keyKindOf(col, keyCol)
		if err != nil {
			return nil, err
		}
		if i > 0 && kind != h.kind {
			return nil, aerr.Invalid("%s: column %q has another type than in the first file", key, keyCol)
		}
		h.kind = kind
		vals := make([]parquet.Value, 4096)
		for _, g := range f.RowGroups() {
			pages := g.ColumnChunks()[col.Index()].Pages()
			for {
				p, err := pages.ReadPage()
				if err == io.EOF {
					break
				}
				if err != nil {
					pages.Close()
					return nil, fmt.Errorf("%s: %w", key, err)
				}
				r := p.Values()
				for {
					n, err := r.ReadValues(vals)
					for _, v := range vals[:n] {
						if !v.IsNull() {
							h.exact[goValue(v, kind)]++
							h.rows++
						}
					}
					if err == io.EOF {
						break
					}
					if err != nil {
						pages.Close()
						return nil, fmt.Errorf("%s: %w", key, err)
					}
				}
				parquet.Release(p)
			}
			pages.Close()
		}
	}
	type kc struct {
		k any
		n int64
	}
	all := make([]kc, 0, len(h.exact))
	for k, n := range h.exact {
		all = append(all, kc{k, n})
	}
	slices.SortFunc(all, func(a, b kc) int { return cmp.Or(cmp.Compare(b.n, a.n), cmpKey(a.k, b.k)) })
	for _, x := range all {
		h.keys = append(h.keys, x.k)
		h.counts = append(h.counts, x.n)
	}
	return h, nil
}

func cmpKey(a, b any) int {
	switch x := a.(type) {
	case int64:
		return cmp.Compare(x, b.(int64))
	case float64:
		return cmp.Compare(x, b.(float64))
	}
	return cmp.Compare(a.(string), b.(string))
}

// Class is a key class: the keys whose row count lies in [Min, Max], or
// absent keys, or the single key with the most rows.
type Class struct {
	Name     string
	Min, Max int64
}

// Classes are the key classes of the report, by rows per key. The top key
// is a class of its own (it also falls in one of these).
var Classes = []Class{
	{"absent", 0, 0},
	{"1-100", 1, 100},
	{"101-1k", 101, 1_000},
	{"1k-10k", 1_001, 10_000},
	{"10k-100k", 10_001, 100_000},
	{">100k", 100_001, 1 << 62},
}

// Class names of the keys that are not a range of rows per key.
const (
	ClassTop = "top key"
	ClassAll = "all"
)

// Sampling names how a class's keys are drawn.
const (
	// SamplingRows draws the key of a random row: a key is drawn as often as
	// it has rows, as traffic that asks for hot keys more often does.
	SamplingRows = "rows"
	// SamplingDistinct draws uniformly over distinct keys.
	SamplingDistinct = "distinct"
	// SamplingFixed is one given key (the top key), or generated absent keys.
	SamplingFixed = "fixed"
)

// span returns the indexes [lo, hi) of h.keys in class c (keys are sorted
// by count, descending).
func (h *histogram) span(c Class) (int, int) {
	lo := sort.Search(len(h.counts), func(i int) bool { return h.counts[i] <= c.Max })
	hi := sort.Search(len(h.counts), func(i int) bool { return h.counts[i] < c.Min })
	return lo, hi
}

// sample draws n keys among h.keys[lo:hi]: by rows (with replacement,
// weighted by rows) or distinct (without replacement while keys last).
func (h *histogram) sample(rng *rand.Rand, lo, hi, n int, sampling string) []any {
	if hi <= lo || n <= 0 {
		return nil
	}
	var out []any
	switch sampling {
	case SamplingRows:
		cum := make([]int64, hi-lo)
		var total int64
		for i := lo; i < hi; i++ {
			total += h.counts[i]
			cum[i-lo] = total
		}
		for range n {
			r := rng.Int64N(total)
			j := sort.Search(len(cum), func(i int) bool { return cum[i] > r })
			out = append(out, h.keys[lo+j])
		}
	default:
		perm := rng.Perm(hi - lo)
		for i := range min(n, len(perm)) {
			out = append(out, h.keys[lo+perm[i]])
		}
	}
	return out
}

// absent returns n keys of the column's type that no row holds.
func (h *histogram) absent(rng *rand.Rand, n int) []any {
	var out []any
	for len(out) < n {
		var k any
		switch h.kind {
		case keyInt:
			k = rng.Int64()
		case keyFloat:
			k = rng.NormFloat64() * 1e9
		default:
			k = fmt.Sprintf("ariadne-absent-%016x", rng.Uint64())
		}
		if _, ok := h.exact[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}
