package pqrow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// This file is the selective side of the reader (late materialization): a
// key column is scanned first, skipping row groups by their statistics and
// bloom filters and pages by the column index, and the other columns are
// then decoded only for the matching rows, seeking to their pages through
// the offset index (select_read.go). Page indexes are read at once
// (LoadPageIndex) or per column chunk as needed, bloom filters only where
// they can prune, and pages through prefetched ranges (select_io.go).

// KeySet is the set of values MatchRows looks for: integers (any width,
// compared as int64) or strings, never both.
type KeySet struct {
	ints map[int64]struct{}
	strs map[string]struct{}
	// sorted copies, for range tests against statistics
	sortedInts []int64
	sortedStrs []string
}

// NewKeySet returns the set of keys, which must all be integers (int8 to
// int64, int) or all strings; nil keys are ignored (a null never matches).
func NewKeySet(keys []any) (*KeySet, error) {
	ks := &KeySet{ints: map[int64]struct{}{}, strs: map[string]struct{}{}}
	for _, k := range keys {
		switch k := k.(type) {
		case nil:
		case string:
			ks.strs[k] = struct{}{}
		default:
			i, ok := AsInt64(k)
			if !ok {
				return nil, fmt.Errorf("pqrow: key %v (%T) is neither an integer nor a string", k, k)
			}
			ks.ints[i] = struct{}{}
		}
	}
	if len(ks.ints) > 0 && len(ks.strs) > 0 {
		return nil, errors.New("pqrow: a key set mixes integers and strings")
	}
	for k := range ks.ints {
		ks.sortedInts = append(ks.sortedInts, k)
	}
	for k := range ks.strs {
		ks.sortedStrs = append(ks.sortedStrs, k)
	}
	slices.Sort(ks.sortedInts)
	slices.Sort(ks.sortedStrs)
	return ks, nil
}

// Len returns the number of distinct keys.
func (ks *KeySet) Len() int { return len(ks.ints) + len(ks.strs) }

// HasInt reports whether integer k is one of the keys.
func (ks *KeySet) HasInt(k int64) bool {
	_, ok := ks.ints[k]
	return ok
}

// HasString reports whether string k is one of the keys.
func (ks *KeySet) HasString(k string) bool {
	_, ok := ks.strs[k]
	return ok
}

// ScanStats counts what MatchRows read and skipped. Pages are counted only
// where a column index lists them.
type ScanStats struct {
	RowGroups, RowGroupsSkipped int
	Pages, PagesSkipped         int
	RowsScanned, RowsMatched    int64
}

// Add adds o to s.
func (s *ScanStats) Add(o ScanStats) {
	s.RowGroups += o.RowGroups
	s.RowGroupsSkipped += o.RowGroupsSkipped
	s.Pages += o.Pages
	s.PagesSkipped += o.PagesSkipped
	s.RowsScanned += o.RowsScanned
	s.RowsMatched += o.RowsMatched
}

// Match is the rows of one row group whose key is in the set: row indexes
// within the row group, ascending.
type Match struct {
	RowGroup int
	Rows     []int64
	// Keys holds each matching row's key, converted as Rows converts it:
	// ReadMatch fills the key column from it instead of reading it again.
	Keys []any
}

// keyColumn is how one key column compares with a KeySet.
type keyColumn struct {
	field string
	col   int
	conv  leafConv
	// phys: values compare as physical INT32/INT64 (signed) or byte arrays
	// exactly as conv would convert them, so statistics, page indexes and
	// bloom filters can prune and rows match without converting.
	phys    format.Type
	usePhys bool
	maxDef  int
}

// MatchRows scans the top-level primitive field f of every row group and
// returns, per row group that has any, the rows whose value is one of the
// keys (after the same conversion Rows applies). Row groups whose
// statistics or bloom filter exclude every key, and pages whose column
// index does, are not read. A field missing from the file matches nothing.
// Statistics are added to st.
func (f *File) MatchRows(ctx context.Context, fd schema.Field, opts ReadOptions, keys *KeySet, st *ScanStats) (out []Match, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, recovered(p)
		}
	}()
	pl := &planner{byID: opts.ByFieldID}
	n := pl.findChild(f.root, fd)
	groups := f.pf.RowGroups()
	st.RowGroups += len(groups)
	if n == nil || keys.Len() == 0 {
		st.RowGroupsSkipped += len(groups)
		return nil, nil
	}
	if !n.leaf() || n.repeated() {
		return nil, colErr([]string{fd.Name}, ErrSchemaMismatch, "a key column must be a primitive column, not %s", describe(n))
	}
	conv, err := leafConverter(fd.Type, n, []string{fd.Name})
	if err != nil {
		return nil, err
	}
	kc := &keyColumn{field: fd.Name, col: n.col, conv: conv, maxDef: n.def}
	pt, _ := n.el.Type.Get()
	switch {
	case len(keys.ints) > 0 && (pt == format.Int32 || pt == format.Int64) && !isUnsigned(n) && integral(fd.Type):
		kc.phys, kc.usePhys = pt, true
	case len(keys.strs) > 0 && pt == format.ByteArray && fd.Type == schema.String:
		kc.phys, kc.usePhys = pt, true
	}
	for gi, g := range groups {
		rows, vals, err := f.matchGroup(ctx, gi, g, kc, keys, len(groups), st)
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 {
			out = append(out, Match{RowGroup: gi, Rows: rows, Keys: vals})
		}
	}
	return out, nil
}

// bloomProbeLimit is the most keys probed in a bloom filter per row group:
// past it the probes cost more than the read they may save.
const bloomProbeLimit = 64

func (f *File) matchGroup(ctx context.Context, gi int, g parquet.RowGroup, kc *keyColumn, keys *KeySet, groups int, st *ScanStats) (match []int64, vals []any, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	chunks := g.ColumnChunks()
	if kc.col >= len(chunks) {
		return nil, nil, fmt.Errorf("%w: missing column chunk %d", ErrCorrupt, kc.col)
	}
	cc := chunks[kc.col]
	numRows := g.NumRows()
	fcc, isFile := cc.(*parquet.FileColumnChunk)
	if kc.usePhys && isFile {
		if lo, hi, ok := fcc.Bounds(); ok && !keys.anyIn(kc.phys, lo, hi) {
			st.RowGroupsSkipped++
			return nil, nil, nil
		}
		// A located file holds some key, so its only row group does too:
		// the bloom filter is worth its read only among several groups.
		if groups > 1 && keys.Len() <= bloomProbeLimit {
			if bf, err := fcc.BloomFilterFrom(f.r); err == nil && !keys.anyInBloom(kc.phys, bf) {
				st.RowGroupsSkipped++
				return nil, nil, nil
			}
		}
	}
	type span struct{ first, end int64 }
	spans := []span{{0, numRows}}
	var pages parquet.Pages
	if isFile {
		var oi parquet.OffsetIndex
		var ci parquet.ColumnIndex
		var err1, err2 error
		oi, err2 = offsetIndex(fcc, f.r)
		if kc.usePhys {
			ci, err1 = columnIndex(fcc, f.r)
		}
		var want []int
		if kc.usePhys && err1 == nil && err2 == nil && ci.NumPages() == oi.NumPages() {
			spans = spans[:0]
			st.Pages += ci.NumPages()
			for p := range ci.NumPages() {
				if ci.NullPage(p) || !keys.anyIn(kc.phys, ci.MinValue(p), ci.MaxValue(p)) {
					st.PagesSkipped++
					continue
				}
				want = append(want, p)
				first, end := oi.FirstRowIndex(p), numRows
				if p+1 < oi.NumPages() {
					end = oi.FirstRowIndex(p + 1)
				}
				if k := len(spans); k > 0 && spans[k-1].end == first {
					spans[k-1].end = end
				} else {
					spans = append(spans, span{first, end})
				}
			}
		} else if err2 == nil {
			for p := range oi.NumPages() {
				want = append(want, p)
			}
		}
		if err2 == nil && oi.NumPages() > 0 {
			if len(want) == 0 {
				return nil, nil, nil
			}
			sr, err := prefetch(f.r, pageSpans(oi, want, f.chunkStart(gi, kc.col)))
			if err != nil {
				return nil, nil, readErr([]string{kc.name()}, err)
			}
			pages = GuardPages(fcc, sr)
		}
	}
	if pages == nil {
		pages = pagesOf(cc, f.r)
	}
	defer pages.Close()
	buf := make([]parquet.Value, valueBatch)
	for _, s := range spans {
		if err := pages.SeekToRow(s.first); err != nil {
			return nil, nil, readErr([]string{kc.name()}, err)
		}
		row := s.first
		for row < s.end {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			page, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				return nil, nil, fmt.Errorf("%w: key column has %d rows, its row group %d", ErrCorrupt, row, numRows)
			}
			if err != nil {
				return nil, nil, readErr([]string{kc.name()}, err)
			}
			vr := page.Values()
			for row < s.end {
				k, rerr := vr.ReadValues(buf)
				for _, v := range buf[:k] {
					if row >= s.end {
						break
					}
					if int(v.DefinitionLevel()) == kc.maxDef && !v.IsNull() {
						if x, ok := kc.match(v, keys); ok {
							match = append(match, row)
							vals = append(vals, x)
						}
					}
					row++
				}
				if errors.Is(rerr, io.EOF) || k == 0 && rerr == nil {
					break
				}
				if rerr != nil {
					parquet.Release(page)
					return nil, nil, readErr([]string{kc.name()}, rerr)
				}
			}
			parquet.Release(page)
		}
		st.RowsScanned += s.end - s.first
	}
	st.RowsMatched += int64(len(match))
	return match, vals, nil
}

// chunkStart is the offset of a column chunk's first page (its
// dictionary, when it has one).
func (f *File) chunkStart(rg, col int) int64 {
	m := f.pf.Metadata().RowGroups[rg].Columns[col].MetaData
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < m.DataPageOffset {
		return m.DictionaryPageOffset
	}
	return m.DataPageOffset
}

// integral reports whether t is one of Spark's integer types.
func integral(t schema.Type) bool {
	return t == schema.Byte || t == schema.Short || t == schema.Integer || t == schema.Long
}

func (kc *keyColumn) name() string { return kc.field }

// match reports whether the non-null value v is a key, and returns it
// converted as Rows would.
func (kc *keyColumn) match(v parquet.Value, keys *KeySet) (any, bool) {
	if kc.usePhys {
		var ok bool
		switch kc.phys {
		case format.Int32:
			_, ok = keys.ints[int64(v.Int32())]
		case format.Int64:
			_, ok = keys.ints[v.Int64()]
		default:
			_, ok = keys.strs[string(v.ByteArray())]
		}
		if !ok {
			return nil, false
		}
	}
	x, err := kc.conv(v)
	if err != nil {
		// Not a value of the column's type: it cannot equal a key.
		return nil, false
	}
	if kc.usePhys {
		return x, true
	}
	switch k := x.(type) {
	case string:
		_, ok := keys.strs[k]
		return x, ok
	default:
		if i, ok := AsInt64(x); ok {
			_, ok = keys.ints[i]
			return x, ok
		}
	}
	return nil, false
}

// anyIn reports whether some key lies in [lo, hi] (physical values of type
// t); true when the bounds are unusable.
func (ks *KeySet) anyIn(t format.Type, lo, hi parquet.Value) bool {
	if lo.IsNull() || hi.IsNull() {
		return true
	}
	switch t {
	case format.Int32, format.Int64:
		var l, h int64
		if t == format.Int32 {
			l, h = int64(lo.Int32()), int64(hi.Int32())
		} else {
			l, h = lo.Int64(), hi.Int64()
		}
		i, _ := slices.BinarySearch(ks.sortedInts, l)
		return i < len(ks.sortedInts) && ks.sortedInts[i] <= h
	case format.ByteArray:
		// Byte-wise order, as the Parquet spec orders UTF-8 strings;
		// truncated bounds still bound.
		l, h := string(lo.ByteArray()), string(hi.ByteArray())
		i, _ := slices.BinarySearch(ks.sortedStrs, l)
		return i < len(ks.sortedStrs) && strings.Compare(ks.sortedStrs[i], h) <= 0
	}
	return true
}

// anyInBloom reports whether the filter may hold some key; true on any
// error (the filter can only prune).
func (ks *KeySet) anyInBloom(t format.Type, bf parquet.BloomFilter) bool {
	check := func(v parquet.Value) bool {
		ok, err := bf.Check(v)
		return ok || err != nil
	}
	switch t {
	case format.Int32:
		for _, k := range ks.sortedInts {
			if k == int64(int32(k)) && check(parquet.Int32Value(int32(k))) {
				return true
			}
		}
		return false
	case format.Int64:
		for _, k := range ks.sortedInts {
			if check(parquet.Int64Value(k)) {
				return true
			}
		}
		return false
	case format.ByteArray:
		for _, k := range ks.sortedStrs {
			if check(parquet.ByteArrayValue([]byte(k))) {
				return true
			}
		}
		return false
	}
	return true
}
