package fileindex

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/bloom"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// The Go summariser: while a file's projected columns stream from our
// reader, each index's per-file summary is computed in Go — distinct value
// sets with exact counts (regular, exploded, temporal with the newest
// timestamp per value), explicit bloom filters, min/max ranges — so the
// rows never go through the engine. The summaries match the engine's
// aggregates value for value (summary_values.go); the engine keeps what Go
// does not do: computed expressions, nested index values, and files whose
// value sets outgrow the memory budget (summarizeOverflow).

// summaryPlan says how the summariser draws each index's values from a
// projected row. It is derived once per update and shared by the workers.
type summaryPlan struct {
	storage []storageSum // aligned with buildPlan.storage
	blooms  []bloomSum   // aligned with buildPlan.blooms
	ranges  []rangeSum   // aligned with buildPlan.ranges
}

// getter draws one value from a projected row (nil: null, or a null
// struct on the way).
type getter func(row pqrow.Row) any

type storageSum struct {
	col valueCol
	ops *valueOps
	get getter // the value (regular, temporal) or the array (exploded)
	// field draws the exploded field from one element of the array.
	field func(elem any) any
	// ts and tsOps draw and order a temporal column's timestamp.
	ts    getter
	tsOps *valueOps
}

type bloomSum struct {
	col bloomCol
	ops *valueOps
	get getter
}

type rangeSum struct {
	col valueCol
	ops *valueOps
	get getter
}

// reads reports whether summarising needs any data at all: without an index
// column, a file's summary is its size alone and nothing is read.
func (sp *summaryPlan) reads() bool {
	return len(sp.storage)+len(sp.blooms)+len(sp.ranges) > 0
}

// newSummaryPlan returns the Go summary plan of p over rows of proj (the
// reader's projected schema), or false when some index must be built by
// the engine: a computed index, a value type the Go summaries do not
// cover (nested values, variant, null), or a column named like the
// relation's filename column (which the engine's relation replaces).
func newSummaryPlan(p *buildPlan, proj *schema.Struct) (*summaryPlan, bool) {
	if len(p.computed) > 0 {
		return nil, false
	}
	sp := &summaryPlan{}
	for _, c := range p.storage {
		ops, ok := opsFor(c.typ)
		if !ok {
			return nil, false
		}
		s := storageSum{col: c, ops: ops}
		switch c.kind {
		case kindRegular:
			if s.get, ok = pathGetter(proj, c.name); !ok {
				return nil, false
			}
		case kindExploded:
			if s.get, ok = pathGetter(proj, c.arrayPath); !ok {
				return nil, false
			}
			at, _ := proj.Resolve(c.arrayPath)
			elem := at.Type.(*schema.Array).Element.(*schema.Struct)
			if s.field, ok = structGetter(elem, c.fieldPath); !ok {
				return nil, false
			}
		case kindTemporal:
			if s.tsOps, ok = opsFor(c.tsType); !ok {
				return nil, false
			}
			if s.get, ok = pathGetter(proj, c.name); !ok {
				return nil, false
			}
			if s.ts, ok = pathGetter(proj, c.tsPath); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
		sp.storage = append(sp.storage, s)
	}
	for _, b := range p.blooms {
		ops, ok := opsFor(b.typ)
		if !ok {
			return nil, false
		}
		get, ok := pathGetter(proj, b.name)
		if !ok {
			return nil, false
		}
		sp.blooms = append(sp.blooms, bloomSum{col: b, ops: ops, get: get})
	}
	for _, r := range p.ranges {
		ops, ok := opsFor(r.typ)
		if !ok {
			return nil, false
		}
		get, ok := pathGetter(proj, r.name)
		if !ok {
			return nil, false
		}
		sp.ranges = append(sp.ranges, rangeSum{col: r, ops: ops, get: get})
	}
	return sp, true
}

// pathGetter draws the value at a dotted path from a row of proj.
func pathGetter(proj *schema.Struct, path string) (getter, bool) {
	segs := strings.Split(path, ".")
	if segs[0] == FilenameColumn {
		return nil, false
	}
	top := -1
	for i, f := range proj.Fields {
		if f.Name == segs[0] {
			top = i
		}
	}
	if top < 0 {
		return nil, false
	}
	if len(segs) == 1 {
		return func(row pqrow.Row) any { return row[top] }, true
	}
	st, ok := proj.Fields[top].Type.(*schema.Struct)
	if !ok {
		return nil, false
	}
	rest, ok := structGetter(st, strings.Join(segs[1:], "."))
	if !ok {
		return nil, false
	}
	return func(row pqrow.Row) any { return rest(row[top]) }, true
}

// structGetter draws the field at a dotted path from a struct value of st
// (positional []any); a null struct on the way yields null, as field
// access does in the engine.
func structGetter(st *schema.Struct, path string) (func(any) any, bool) {
	var idx []int
	cur := st
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		j := -1
		for k, f := range cur.Fields {
			if f.Name == seg {
				j = k
			}
		}
		if j < 0 {
			return nil, false
		}
		idx = append(idx, j)
		if i < len(segs)-1 {
			next, ok := cur.Fields[j].Type.(*schema.Struct)
			if !ok {
				return nil, false
			}
			cur = next
		}
	}
	return func(v any) any {
		for _, j := range idx {
			s, ok := v.([]any)
			if !ok || j >= len(s) {
				return nil
			}
			v = s[j]
		}
		return v
	}, true
}

// valueSet is a file's distinct values of one column in first-seen order
// (the first value of an equality class represents it, as the engine's
// DISTINCT keeps it), with each entry's newest timestamp for temporal
// columns.
type valueSet struct {
	ops  *valueOps
	ints map[int64]int32
	strs map[string]int32
	// The entries in first-seen order: boxed values, or (sets without
	// timestamps of a type whose key is its value) the keys themselves,
	// which spare the garbage collector a pointer per entry.
	vals  []any
	ikeys []int64
	skeys []string
	// hashes replaces the map and the entries in a bloom column's set of
	// strings: the filter needs the count and the hashes only.
	hashes *hashSet
	maxTS  []any // temporal only
	null   int32 // entry of the null key (temporal), -1 if none
	// raw keeps the first value of each distinct rendering when equal
	// values render differently in a bloom filter (-0.0 and 0.0).
	raw map[int64]any
	// last is the entry of the previous non-null value with its key:
	// files sorted or clustered by a column repeat a value over many rows,
	// and a comparison is far cheaper than a map lookup.
	last    int32
	lastInt int64
	lastStr string
	hasLast bool
}

// newValueSet returns an empty set sized for hint values (the previous
// file's count: files of a table tend to be alike, and growing a map
// rehashes it a dozen times on the way to 100,000 entries).
func newValueSet(ops *valueOps, temporal, bloom bool, hint int) *valueSet {
	s := &valueSet{ops: ops, null: -1}
	if bloom && !temporal && ops.isString {
		s.hashes = newHashSet(hint)
		return s
	}
	switch {
	case !temporal && ops.fromKey != nil:
		s.ikeys = make([]int64, 0, hint)
	case !temporal && ops.isString:
		s.skeys = make([]string, 0, hint)
	default:
		s.vals = make([]any, 0, hint)
	}
	if ops.intKey != nil {
		s.ints = make(map[int64]int32, hint)
	} else {
		s.strs = make(map[string]int32, hint)
	}
	if temporal {
		s.maxTS = make([]any, 0, hint)
	}
	if bloom && ops.rawKey != nil {
		s.raw = map[int64]any{}
	}
	return s
}

// entryBytes estimates the memory of one set entry beyond its key bytes:
// the map slot, the representative's interface, the boxed value.
// Measured against the heap (Go's swiss maps hold 7/8 of their slots at
// most and double as they grow; the entry slices double too): an integer
// entry takes 45–60 B (map slot and key slice), a string entry 70–120 B
// plus its bytes (a 24-byte slot, the string header in the key slice, the
// string's own allocation). The estimate is the upper end, so that the
// budget bounds the heap rather than a part of it.
const entryBytes = 64

// strEntryBytes is entryBytes for a string or binary entry (plus its
// bytes).
const strEntryBytes = 112

// add records canonical v (nil only for temporal columns) and returns its
// entry and the memory the set grew by.
func (s *valueSet) add(v any) (int32, int64) {
	if s.raw != nil {
		if k := s.ops.rawKey(v); s.raw[k] == nil {
			s.raw[k] = v
		}
	}
	if s.hashes != nil { // v is a non-null string
		if s.hashes.add(bloom.HashString(v.(string))) {
			return 0, hashEntryBytes
		}
		return 0, 0
	}
	if v == nil {
		if s.null < 0 {
			s.null = s.push(nil)
			return s.null, entryBytes
		}
		return s.null, 0
	}
	if s.ints != nil {
		k := s.ops.intKey(v)
		if s.hasLast && k == s.lastInt {
			return s.last, 0
		}
		i, ok := s.ints[k]
		grew := int64(0)
		if !ok {
			if s.ikeys != nil {
				s.ikeys = append(s.ikeys, k)
				i = int32(len(s.ikeys) - 1)
			} else {
				i = s.push(v)
			}
			s.ints[k] = i
			grew = entryBytes
		}
		s.last, s.lastInt, s.hasLast = i, k, true
		return i, grew
	}
	k := s.ops.strKey(v)
	if s.hasLast && k == s.lastStr {
		return s.last, 0
	}
	i, ok := s.strs[k]
	grew := int64(0)
	if !ok {
		if s.skeys != nil {
			s.skeys = append(s.skeys, k)
			i = int32(len(s.skeys) - 1)
		} else {
			i = s.push(v)
		}
		s.strs[k] = i
		grew = strEntryBytes + int64(len(k))
	}
	s.last, s.lastStr, s.hasLast = i, k, true
	return i, grew
}

// addKey records the non-null value whose key is k, in a set of a type
// whose key is its value (ops.fromKey set, not temporal, no raw map), and
// returns the memory the set grew by.
func (s *valueSet) addKey(k int64) int64 {
	if s.hasLast && k == s.lastInt {
		return 0
	}
	i, ok := s.ints[k]
	grew := int64(0)
	if !ok {
		s.ikeys = append(s.ikeys, k)
		i = int32(len(s.ikeys) - 1)
		s.ints[k] = i
		grew = entryBytes
	}
	s.last, s.lastInt, s.hasLast = i, k, true
	return grew
}

// addBytes records the non-null string b in a string set (not temporal),
// and returns the memory the set grew by. b is copied only when new.
func (s *valueSet) addBytes(b []byte) int64 {
	if s.hashes != nil {
		if s.hashes.add(bloom.Murmur3x64_128(b, 0)) {
			return hashEntryBytes
		}
		return 0
	}
	if s.hasLast && string(b) == s.lastStr {
		return 0
	}
	i, ok := s.strs[string(b)] // no allocation for the lookup
	grew := int64(0)
	if !ok {
		k := string(b)
		s.skeys = append(s.skeys, k)
		i = int32(len(s.skeys) - 1)
		s.strs[k] = i
		grew = strEntryBytes + int64(len(k))
		s.lastStr = k
	} else {
		s.lastStr = s.skeys[i]
	}
	s.last, s.hasLast = i, true
	return grew
}

// len returns the number of entries.
func (s *valueSet) len() int {
	n := len(s.vals) + len(s.ikeys) + len(s.skeys)
	if s.hashes != nil {
		n += s.hashes.n
	}
	return n
}

// each calls fn with every entry's index and value, in first-seen order.
func (s *valueSet) each(fn func(j int, v any)) {
	switch {
	case s.ikeys != nil:
		for j, k := range s.ikeys {
			fn(j, s.ops.fromKey(k))
		}
	case s.skeys != nil:
		for j, k := range s.skeys {
			fn(j, k)
		}
	default:
		for j, v := range s.vals {
			fn(j, v)
		}
	}
}

func (s *valueSet) push(v any) int32 {
	s.vals = append(s.vals, v)
	if s.maxTS != nil {
		s.maxTS = append(s.maxTS, nil)
	}
	return int32(len(s.vals) - 1)
}

// fileState is the summaries of one file being read.
type fileState struct {
	sp     *summaryPlan
	sets   []*valueSet // per storage column
	blooms []*valueSet // per bloom column
	mins   []any       // per range column
	maxs   []any
	rows   int64
	bytes  int64 // estimated memory of the sets
}

// setHints are the previous file's distinct counts per storage and bloom
// column, which size the next file's sets.
type setHints struct{ storage, blooms []int }

// newState starts a file's summaries, its sets sized by h (nil: empty).
func (sp *summaryPlan) newState(h *setHints) *fileState {
	st := &fileState{sp: sp, mins: make([]any, len(sp.ranges)), maxs: make([]any, len(sp.ranges))}
	hint := func(n []int, i int) int {
		if i < len(n) {
			return n[i]
		}
		return 0
	}
	var hs, hb []int
	if h != nil {
		hs, hb = h.storage, h.blooms
	}
	for i, c := range sp.storage {
		st.sets = append(st.sets, newValueSet(c.ops, c.col.kind == kindTemporal, false, hint(hs, i)))
	}
	for i, b := range sp.blooms {
		st.blooms = append(st.blooms, newValueSet(b.ops, false, true, hint(hb, i)))
	}
	return st
}

// hints returns st's counts.
func (st *fileState) hints() *setHints {
	h := &setHints{}
	for _, set := range st.sets {
		h.storage = append(h.storage, set.len())
	}
	for _, set := range st.blooms {
		h.blooms = append(h.blooms, set.len())
	}
	return h
}

// add summarises one row.
func (st *fileState) add(row pqrow.Row) error {
	st.rows++
	sp := st.sp
	for i := range sp.storage {
		c := &sp.storage[i]
		set := st.sets[i]
		switch c.col.kind {
		case kindRegular:
			v := c.get(row)
			if v == nil {
				continue
			}
			v, err := c.ops.canon(v)
			if err != nil {
				return err
			}
			if v != nil {
				_, n := set.add(v)
				st.bytes += n
			}
		case kindExploded:
			arr, _ := c.get(row).([]any)
			for _, e := range arr {
				v, err := c.ops.canon(c.field(e))
				if err != nil {
					return err
				}
				if v != nil {
					_, n := set.add(v)
					st.bytes += n
				}
			}
		case kindTemporal:
			v, err := c.ops.canon(c.get(row))
			if err != nil {
				return err
			}
			ts, err := c.tsOps.canon(c.ts(row))
			if err != nil {
				return err
			}
			j, n := set.add(v)
			st.bytes += n
			if ts != nil && (set.maxTS[j] == nil || c.tsOps.cmp(ts, set.maxTS[j]) > 0) {
				set.maxTS[j] = ts
			}
		}
	}
	for i := range sp.blooms {
		b := &sp.blooms[i]
		v := b.get(row)
		if v == nil {
			continue
		}
		v, err := b.ops.canon(v)
		if err != nil {
			return err
		}
		if v != nil {
			_, n := st.blooms[i].add(v)
			st.bytes += n
		}
	}
	for i := range sp.ranges {
		r := &sp.ranges[i]
		v, err := r.ops.canon(r.get(row))
		if err != nil {
			return err
		}
		if v == nil {
			continue
		}
		// Strictly smaller or greater only: the first of equal values
		// (-0.0, 0.0) stays, as the engine's min and max keep it.
		if st.mins[i] == nil || r.ops.cmp(v, st.mins[i]) < 0 {
			st.mins[i] = v
		}
		if st.maxs[i] == nil || r.ops.cmp(v, st.maxs[i]) > 0 {
			st.maxs[i] = v
		}
	}
	return nil
}

// fileSummary is a summarised file's result: its storage cells and bloom
// filters live in the update's spill file (they wait there for their
// batch, as the read cache's tables did in the engine), its ranges in
// memory (two values per file).
type fileSummary struct {
	storage []spillRef // per storage column: the encoded cell
	blooms  []spillRef // per bloom column: the filter bytes, empty: null cell
	ranges  [][2]any   // per range column: min and max (nil: no value)
}

// finish computes the counts of a (the pre-flight analysis, §5.3.1), builds
// the bloom filters, and encodes the cells and filters into buf for the
// spill. The refs of the returned summary are relative to buf's start.
func (st *fileState) finish(a *fileAnalysis, buf []byte) (*fileSummary, []byte, error) {
	sp := st.sp
	a.Rows = st.rows
	sum := &fileSummary{}
	for i, c := range sp.storage {
		set := st.sets[i]
		n := int64(set.len())
		a.Counts[c.col.name] = n
		if n > a.MaxDistinct {
			a.MaxDistinct = n
		}
		start := len(buf)
		// A regular or temporal cell is an array (empty without values);
		// an exploded one is null without a non-null field value (the
		// engine's list(DISTINCT) FILTER over no value is null).
		if c.col.kind == kindExploded && n == 0 {
			buf = append(buf, 0)
		} else {
			buf = append(buf, 1)
		}
		buf = binary.AppendUvarint(buf, uint64(n))
		switch {
		case set.ikeys != nil: // enc writes the key as a varint
			for _, k := range set.ikeys {
				buf = binary.AppendVarint(buf, k)
			}
		case set.skeys != nil: // as the string codec writes them, unboxed
			for _, k := range set.skeys {
				buf = binary.AppendUvarint(buf, uint64(len(k)))
				buf = append(buf, k...)
			}
		case c.col.kind == kindTemporal:
			for j, v := range set.vals {
				buf = c.ops.encNullable(buf, v)
				buf = c.tsOps.encNullable(buf, set.maxTS[j])
			}
		default:
			set.each(func(_ int, v any) { buf = c.ops.enc(buf, v) })
		}
		sum.storage = append(sum.storage, spillRef{off: int64(start), n: len(buf) - start})
	}
	str := bloom.Stringifier{}
	for i, b := range sp.blooms {
		set := st.blooms[i]
		n := int64(set.len())
		a.Counts[b.col.name] = n
		start := len(buf)
		if n > 0 {
			f, err := bloom.New(n, b.col.fpr)
			if err != nil {
				return nil, nil, &BloomBuildError{Column: b.col.name, FPR: b.col.fpr, Err: err}
			}
			if set.hashes != nil {
				set.hashes.addTo(f)
			} else if set.raw != nil {
				for _, v := range set.raw {
					f.AddString(str.String(v, b.col.typ))
				}
			} else if set.skeys != nil {
				for _, k := range set.skeys { // a string renders as itself
					f.AddString(k)
				}
			} else {
				set.each(func(_ int, v any) { f.AddString(str.String(v, b.col.typ)) })
			}
			buf = append(buf, f.Marshal()...)
		}
		sum.blooms = append(sum.blooms, spillRef{off: int64(start), n: len(buf) - start})
	}
	for i := range sp.ranges {
		sum.ranges = append(sum.ranges, [2]any{st.mins[i], st.maxs[i]})
	}
	return sum, buf, nil
}

// decodeCell decodes storage column i's cell of a summarised file: the
// value array (temporal: [value, max_ts] structs), or nil for a null cell.
func (sp *summaryPlan) decodeCell(i int, b []byte) ([]any, error) {
	c := &sp.storage[i]
	if len(b) < 1 {
		return nil, errSpill
	}
	isNull := b[0] == 0
	n, k := binary.Uvarint(b[1:])
	if k <= 0 {
		return nil, errSpill
	}
	b = b[1+k:]
	if isNull {
		return nil, nil
	}
	out := make([]any, 0, n)
	for range n {
		var v any
		var err error
		if c.col.kind == kindTemporal {
			var ts any
			if v, b, err = c.ops.decNullable(b); err != nil {
				return nil, err
			}
			if ts, b, err = c.tsOps.decNullable(b); err != nil {
				return nil, err
			}
			v = []any{v, ts}
		} else if v, b, err = c.ops.dec(b); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// errOverflow stops summarising a file whose value sets outgrow its share
// of the memory budget: the engine (which spills) summarises it instead.
var errOverflow = errors.New("fileindex: summary over budget")

// readStats are the time one file's summariser waited for rows from its
// reader, and the time it spent summarising.
type readStats struct {
	read, summarize time.Duration
	typed           int // files summarised from typed pages
}

// summarizeFile streams the file of a through the reader — decoded ahead
// by its own goroutine (summarizeReadAhead batches), so that reading and
// summarising overlap — and summarises it, appending the encoded cells to
// buf. read is called once the file is read through. It fails with
// errOverflow when the sets exceed limit bytes.
func (s *session) summarizeFile(ctx context.Context, a *fileAnalysis, limit int64, buf []byte, stats *readStats, hints **setHints, read func()) (*fileSummary, []byte, error) {
	if s.typed != nil {
		sum, buf, ok, err := s.summarizeTyped(ctx, a, limit, buf, stats, hints, read)
		if ok {
			return sum, buf, err
		}
		if err != nil {
			return nil, nil, err
		}
	}
	r, err := s.read.Open(ctx, s.fi.res, a.URI)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	pre := newPrefetch(ctx, r)
	defer pre.close() // before r.Close
	st := s.sum.newState(*hints)
	defer func() { *hints = st.hints() }()
	t0 := time.Now()
	for {
		rows, err := pre.Next(ctx)
		t1 := time.Now()
		stats.read += t1.Sub(t0)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		for _, row := range rows {
			if err := st.add(row); err != nil {
				return nil, nil, fmt.Errorf("fileindex: summarise %s: %w", a.URI, err)
			}
		}
		if st.bytes > limit {
			return nil, nil, errOverflow
		}
		t0 = time.Now()
		stats.summarize += t0.Sub(t1)
	}
	read()
	t1 := time.Now()
	sum, buf, err := st.finish(a, buf)
	stats.summarize += time.Since(t1)
	return sum, buf, err
}
