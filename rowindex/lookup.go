package rowindex

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parquet-go/parquet-go"
)

// Query is one lookup.
type Query struct {
	// KeyColumn, if set, must name the row index's key column (as the
	// command line's --key COL=... does).
	KeyColumn string
	// Key selects the rows whose key equals it (see EncodeKey for the Go
	// types accepted). Exactly one of Key, KeyText, or a range (Low/High or
	// LowText/HighText, sorted row indexes only) must be set.
	Key any
	// KeyText is Key in text form, parsed by the key column's class
	// (ParseKey), as given on a command line.
	KeyText string
	// Low and High bound a range query, inclusive; a nil bound is open.
	Low, High any
	// LowText and HighText are Low and High in text form ("" is open).
	LowText, HighText string
	// Range marks a range query (needed when both bounds are open).
	Range bool

	// Columns are the top-level columns returned (nil: all of them). If
	// every one is a cover column the lookup reads no data file.
	Columns []string
	// Where filters rows on cover columns before any data read.
	Where []Filter
	// NoRows returns aggregates only (no row is read, from the index or the
	// data).
	NoRows bool
	// Limit caps the rows returned (0: no limit); Cursor continues after the
	// last row of a previous page (Result.Cursor).
	Limit  int
	Cursor string
}

// ParseKeyFlag parses the command line's --key argument, COL=VALUE or
// COL=LOW..HIGH (either bound may be empty), into the key fields of a
// Query.
func ParseKeyFlag(s string) (Query, error) {
	col, v, ok := strings.Cut(s, "=")
	if !ok || col == "" {
		return Query{}, badQuery("--key wants COL=VALUE or COL=LOW..HIGH, got %q", s)
	}
	if lo, hi, isRange := strings.Cut(v, ".."); isRange {
		return Query{KeyColumn: col, LowText: lo, HighText: hi, Range: true}, nil
	}
	return Query{KeyColumn: col, KeyText: v}, nil
}

// Filter is a comparison of a cover column with a value.
type Filter struct {
	Column string
	Op     string // =, !=, <, <=, >, >=
	Value  any
}

// Row is one returned row.
type Row struct {
	// Key is the row's key (bool, int64, float64 or string).
	Key any
	// File is the data file's URI, RowGroup its row group and Row its row
	// number in the file (0-based).
	File     string
	RowGroup int
	Row      int64
	// Values holds the leaf values of the requested columns, in column
	// order, when the row was read from the data file.
	Values parquet.Row
	// Covered holds the values of Result.Columns when the row was served
	// from cover columns (no data read).
	Covered []any

	file *parquet.File // the data file's schema, for Record
}

// KeyAggregates is the aggregates of one key.
type KeyAggregates struct {
	Key any `json:"key"`
	// Values maps the aggregate's name ("count", "sum:duration_ms",
	// "count-by:kind") to its value: int64 or float64 for count and sum, the
	// column's value for min and max, map[string]int64 for count-by.
	Values map[string]any `json:"values"`
}

// Result is a lookup's answer.
type Result struct {
	Columns    []string
	Rows       []Row
	Aggregates []KeyAggregates
	// Cursor continues after the last row ("" when no row is left).
	Cursor string
	Plan   Plan
}

// Cost counts the storage work of part of a lookup.
type Cost struct {
	Requests  int64 // storage requests (list, reads)
	BytesRead int64
	CacheHits int64
	// Misses are reads that fell through the prefetched ranges during
	// decoding (zero on the normal path).
	Misses, MissBytes int64
}

func (m *meter) cost() Cost {
	return Cost{
		Requests: m.requests.Load(), BytesRead: m.bytes.Load(), CacheHits: m.hits.Load(),
		Misses: m.misses.Load(), MissBytes: m.missBytes.Load(),
	}
}

// Plan explains a lookup: what the index found and what reading it cost.
type Plan struct {
	Kind          Kind
	Entries       int  // index entries (runs) matching the key(s)
	Files         int  // data files read
	RowRanges     int  // row runs read from data files
	ByteRanges    int  // ranges fetched after coalescing
	Rows          int  // rows returned
	Covered       bool // served from the index alone
	Index         Cost // manifest and fragments
	Data          Cost // data files
	BytesReturned int64
	Elapsed       time.Duration
}

// Requests is the total number of storage requests.
func (p Plan) Requests() int64 { return p.Index.Requests + p.Data.Requests }

// BytesRead is the total number of bytes read.
func (p Plan) BytesRead() int64 { return p.Index.BytesRead + p.Data.BytesRead }

// piece is a run of consecutive selected rows of one row group.
type piece struct {
	key   []byte
	file  int32
	rg    int32
	row   int64
	n     int64
	cover [][]any // per row, the cover values (when decoded)
	out   []Row   // rows read from the data file
}

// cursor is the position of the last row returned.
type cursor struct {
	Key  []byte `json:"k"`
	File int32  `json:"f"`
	RG   int32  `json:"g"`
	Row  int64  `json:"r"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (*cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, badQuery("bad cursor")
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, badQuery("bad cursor")
	}
	return &c, nil
}

// cmpPos orders positions (key, file, rg, row).
func cmpPos(k []byte, f, g int32, r int64, c *cursor) int {
	return cmp.Or(bytes.Compare(k, c.Key), cmp.Compare(f, c.File), cmp.Compare(g, c.RG), cmp.Compare(r, c.Row))
}

// keyBounds returns the encoded [lo, hi] of the query (nil = open) and
// whether it is a range query.
func (q *Query) keyBounds(class KeyClass) (lo, hi []byte, isRange bool, err error) {
	enc := func(v any, text string) ([]byte, error) {
		if v != nil {
			return EncodeKey(v)
		}
		if text != "" {
			return ParseKey(text, class)
		}
		return nil, nil
	}
	if q.Key != nil || q.KeyText != "" {
		k, err := enc(q.Key, q.KeyText)
		return k, k, false, err
	}
	if !q.Range && q.Low == nil && q.High == nil && q.LowText == "" && q.HighText == "" {
		return nil, nil, false, badQuery("no key")
	}
	if lo, err = enc(q.Low, q.LowText); err != nil {
		return nil, nil, false, err
	}
	if hi, err = enc(q.High, q.HighText); err != nil {
		return nil, nil, false, err
	}
	return lo, hi, true, nil
}

// Lookup answers a query: the rows holding the key (or key range), in
// (key, file id, row group, row) order, with the key's aggregates and a
// Plan. An unknown key returns an empty result without reading any data
// file. A data file replaced or truncated since indexing is an error
// matching ErrDataFileChanged; no rows from it are returned.
//
// A handle whose manifest was superseded by a Compact refreshes itself and
// retries once when it finds a fragment gone.
func (ri *RowIndex) Lookup(ctx context.Context, q Query) (*Result, error) {
	res, err := ri.lookup(ctx, q)
	if errors.Is(err, errFragmentGone) {
		if rerr := ri.Refresh(ctx); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		res, err = ri.lookup(ctx, q)
	}
	return res, err
}

func (ri *RowIndex) lookup(ctx context.Context, q Query) (*Result, error) {
	start := time.Now()
	man, ids := ri.snapshot()
	im, dm := new(meter), new(meter)
	res := &Result{Plan: Plan{Kind: man.Kind}}
	defer func() {
		res.Plan.Index, res.Plan.Data = im.cost(), dm.cost()
		res.Plan.Elapsed = time.Since(start)
	}()
	if q.KeyColumn != "" && q.KeyColumn != man.Key {
		return nil, badQuery("row index %s is on column %q, not %q", man.Name, man.Key, q.KeyColumn)
	}
	if man.KeyClass == "" {
		// Nothing indexed yet (an index with no data files): no key can
		// match, and the key column's class, which parses KeyText, is
		// not known.
		return res, nil
	}
	lo, hi, isRange, err := q.keyBounds(man.KeyClass)
	if err != nil {
		return nil, err
	}
	if isRange && man.Kind != KindSorted {
		return nil, badQuery("row index %s is a hash index: range lookups need kind sorted", man.Name)
	}
	var cur *cursor
	if q.Cursor != "" {
		if cur, err = decodeCursor(q.Cursor); err != nil {
			return nil, err
		}
	}
	coverIdx := map[string]int{}
	for i, c := range man.Cover {
		coverIdx[c] = i
	}
	for _, f := range q.Where {
		if _, ok := coverIdx[f.Column]; !ok {
			return nil, badQuery("filter on %q: only cover columns %v can be filtered", f.Column, man.Cover)
		}
	}
	// Covered: every requested column is a cover column or the key itself.
	covered := len(q.Columns) > 0
	for _, c := range q.Columns {
		if _, ok := coverIdx[c]; !ok && c != man.Key {
			covered = false
		}
	}
	res.Columns = q.Columns

	// 1. Index entries.
	es, err := ri.entries(ctx, im, man, lo, hi, isRange)
	if err != nil {
		return nil, err
	}
	aggs := map[string]*aggState{}
	var runs []entry
	for _, e := range es {
		if e.isStale() {
			kv, _ := DecodeKey(e.Key)
			return nil, &StaleAggregatesError{Index: man.Name, Key: kv}
		}
		if e.isAggregate() {
			s, err := decodeAggState(man.Aggregates, e.Cover)
			if err != nil {
				return nil, err
			}
			if acc, ok := aggs[string(e.Key)]; ok {
				acc.merge(man.Aggregates, s)
			} else {
				aggs[string(e.Key)] = s
			}
			continue
		}
		runs = append(runs, e)
	}
	for _, k := range slicesSortedKeys(aggs) {
		kv, _ := DecodeKey([]byte(k))
		res.Aggregates = append(res.Aggregates, KeyAggregates{Key: kv, Values: aggs[k].values(man.Aggregates)})
	}
	res.Plan.Entries = len(runs)
	if q.NoRows {
		return res, nil
	}
	slices.SortFunc(runs, func(a, b entry) int {
		return cmp.Or(bytes.Compare(a.Key, b.Key), cmp.Compare(a.File, b.File), cmp.Compare(a.RG, b.RG), cmp.Compare(a.Row, b.Row))
	})

	// 2. Hoisted filters, cursor and limit: select rows before any read.
	needCover := covered && len(man.Cover) > 0 || len(q.Where) > 0
	var pieces []*piece
	total := 0
	for _, e := range runs {
		if q.Limit > 0 && total >= q.Limit {
			res.Cursor = pieceCursor(pieces)
			break
		}
		if _, ok := ids[e.File]; !ok {
			return nil, corrupt("entry names unknown file id %d", e.File)
		}
		var cov [][]any
		if needCover {
			vals, err := decodeValues(e.Cover)
			if err != nil {
				return nil, err
			}
			w := len(man.Cover)
			if int64(len(vals)) != e.N*int64(w) {
				return nil, corrupt("cover of %d values for %d rows × %d columns", len(vals), e.N, w)
			}
			cov = make([][]any, e.N)
			for i := range cov {
				cov[i] = vals[i*w : (i+1)*w]
			}
		}
		var p *piece
		for i := range e.N {
			row := e.Row + i
			keep := cur == nil || cmpPos(e.Key, e.File, e.RG, row, cur) > 0
			if keep && len(q.Where) > 0 {
				keep, err = match(q.Where, coverIdx, cov[i])
				if err != nil {
					return nil, err
				}
			}
			if keep && q.Limit > 0 && total >= q.Limit {
				res.Cursor = pieceCursor(pieces)
				break
			}
			if !keep {
				p = nil
				continue
			}
			if p == nil {
				p = &piece{key: e.Key, file: e.File, rg: e.RG, row: row}
				pieces = append(pieces, p)
			}
			p.n++
			if cov != nil {
				p.cover = append(p.cover, cov[i])
			}
			total++
		}
	}
	if res.Cursor != "" && total == 0 {
		res.Cursor = ""
	}

	// 3. Covered: answer from the index.
	if covered {
		res.Plan.Covered = true
		for _, p := range pieces {
			fe := ids[p.file]
			kv, _ := DecodeKey(p.key)
			for i := range p.n {
				vals := make([]any, len(q.Columns))
				for j, c := range q.Columns {
					if k, ok := coverIdx[c]; ok {
						vals[j] = p.cover[i][k]
					} else {
						vals[j] = kv // the key column
					}
					res.Plan.BytesReturned += sizeOfValue(vals[j])
				}
				res.Rows = append(res.Rows, Row{Key: kv, File: fe.URI, RowGroup: int(p.rg), Row: rowInFile(fe, p.rg, p.row+i), Covered: vals})
			}
		}
		res.Plan.Rows = len(res.Rows)
		return res, nil
	}

	// 4. Data reads.
	rows, err := ri.readPieces(ctx, dm, man, ids, pieces, q.Columns, &res.Plan)
	if err != nil {
		return nil, err
	}
	res.Rows = rows
	res.Plan.Rows = len(rows)
	if res.Columns == nil && len(pieces) > 0 {
		if fm, ok := ri.cache.get(dataMetaKey{pieces[0].file}); ok {
			for _, c := range fm.(*fileMeta).f.Root().Columns() {
				res.Columns = append(res.Columns, c.Name())
			}
		}
	}
	return res, nil
}

func pieceCursor(ps []*piece) string {
	if len(ps) == 0 {
		return ""
	}
	p := ps[len(ps)-1]
	return cursor{Key: p.key, File: p.file, RG: p.rg, Row: p.row + p.n - 1}.encode()
}

func rowInFile(fe *FileEntry, rg int32, row int64) int64 {
	if int(rg) < len(fe.RowGroupStarts) {
		return fe.RowGroupStarts[rg] + row
	}
	return row
}

func slicesSortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func sizeOfValue(v any) int64 {
	if s, ok := v.(string); ok {
		return int64(len(s))
	}
	return 8
}

// normalize brings a filter value to the hoisted value types.
func normalize(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		return int64(x)
	case float32:
		return float64(x)
	case []byte:
		return string(x)
	}
	return v
}

// match applies filters to one row's cover values. Null never matches.
func match(fs []Filter, idx map[string]int, vals []any) (bool, error) {
	for _, f := range fs {
		v := vals[idx[f.Column]]
		if v == nil {
			return false, nil
		}
		c := compareValues(v, normalize(f.Value))
		var ok bool
		switch f.Op {
		case "=", "==":
			ok = c == 0
		case "!=":
			ok = c != 0
		case "<":
			ok = c < 0
		case "<=":
			ok = c <= 0
		case ">":
			ok = c > 0
		case ">=":
			ok = c >= 0
		default:
			return false, badQuery("unknown filter operator %q", f.Op)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// entries returns the fragment entries whose key lies in [lo, hi] (nil:
// open), reading one row group per fragment for an equality lookup on a hash
// index, and the overlapping row groups on a sorted one, without the
// entries of removed files (dropRemoved). Fragments are read concurrently.
func (ri *RowIndex) entries(ctx context.Context, m *meter, man *Manifest, lo, hi []byte, isRange bool) ([]entry, error) {
	var bucket int32 = -1
	if !isRange && man.Kind == KindHash {
		bucket = bucketOf(lo)
	}
	type job struct {
		fr *FragmentEntry
		gi int
	}
	var jobs []job
	for i := range man.Fragments {
		fr := &man.Fragments[i]
		for gi, g := range fr.Groups {
			if bucket >= 0 {
				if bucket < g.BucketLo || bucket > g.BucketHi {
					continue
				}
			} else if man.Kind == KindSorted {
				if lo != nil && bytes.Compare(g.KeyHi, lo) < 0 || hi != nil && bytes.Compare(g.KeyLo, hi) > 0 {
					continue
				}
			}
			jobs = append(jobs, job{fr, gi})
		}
	}
	gone := man.tombstones()
	out := make([][]entry, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			es, err := ri.group(ctx, m, j.fr, j.gi)
			if err != nil {
				errs[i] = err
				return
			}
			// Entries are sorted by (bucket, key): binary search the range.
			from := 0
			if lo != nil {
				from = sort.Search(len(es), func(k int) bool {
					return cmp.Or(cmp.Compare(es[k].Bucket, max(bucket, 0)), bytes.Compare(es[k].Key, lo)) >= 0
				})
			}
			for k := from; k < len(es); k++ {
				e := es[k]
				if bucket >= 0 && e.Bucket != bucket {
					break
				}
				if hi != nil && bytes.Compare(e.Key, hi) > 0 {
					break
				}
				if lo != nil && bytes.Compare(e.Key, lo) < 0 {
					continue
				}
				out[i] = append(out[i], e)
			}
			// Removed files: their runs and aggregate partials are skipped
			// here, before anything is read from them.
			out[i] = dropRemoved(out[i], gone)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var all []entry
	for _, o := range out {
		all = append(all, o...)
	}
	return all, nil
}

// fileWork is the data reading of one file for one lookup.
type fileWork struct {
	fe      *FileEntry
	fm      *fileMeta
	o       object
	pieces  []*piece
	leaves  []int
	keyLeaf int
	ranges  []brange
	dicts   []dictKey
	fetch   []*fetch
	sp      spans
	err     error
}

// readPieces reads the selected rows from the data files: metadata first
// (cached), then every page range of every file at once.
func (ri *RowIndex) readPieces(ctx context.Context, m *meter, man *Manifest, ids map[int32]*FileEntry, pieces []*piece, columns []string, plan *Plan) ([]Row, error) {
	byFile := map[int32]*fileWork{}
	var works []*fileWork
	for _, p := range pieces {
		w, ok := byFile[p.file]
		if !ok {
			w = &fileWork{fe: ids[p.file]}
			byFile[p.file] = w
			works = append(works, w)
		}
		w.pieces = append(w.pieces, p)
		plan.RowRanges++
	}
	plan.Files = len(works)
	// Metadata of every file, concurrently (cache hits when warm).
	var wg sync.WaitGroup
	for _, w := range works {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.fm, w.o, w.err = ri.dataMeta(ctx, m, w.fe)
		}()
	}
	wg.Wait()
	for _, w := range works {
		if w.err != nil {
			return nil, w.err
		}
	}
	// Page ranges.
	var fetches []*fetch
	for _, w := range works {
		if err := ri.planFile(w, man, columns); err != nil {
			return nil, err
		}
		for _, r := range coalesce(w.ranges, ri.gapFor(w.o.st)) {
			f := &fetch{obj: w.o, r: r}
			w.fetch = append(w.fetch, f)
			fetches = append(fetches, f)
		}
	}
	plan.ByteRanges = len(fetches)
	if err := fetchAll(ctx, m, fetches); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			for _, w := range works {
				for _, f := range w.fetch {
					if f.data == nil {
						return nil, &FileChangedError{URI: w.fe.URI, Reason: "truncated", Err: err}
					}
				}
			}
		}
		return nil, err
	}
	// Decode, files in parallel (decoding is CPU-bound: one goroutine per
	// core).
	var bytesReturned atomic.Int64
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, w := range works {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			for _, f := range w.fetch {
				w.sp.add(span{f.r.off, f.data})
			}
			for _, dk := range w.dicts {
				if b, ok := ri.cache.get(dk); ok {
					w.sp.add(span{w.fm.dictRange(dk.rg, dk.col).off, b.([]byte)})
				}
			}
			if w.err = ri.decodeFile(ctx, m, w, &bytesReturned); w.err == nil {
				ri.cacheDicts(w)
			}
		}()
	}
	wg.Wait()
	plan.BytesReturned += bytesReturned.Load()
	for _, w := range works {
		if w.err != nil {
			return nil, w.err
		}
	}
	// Stable order: (key, file id, row group, row), as the pieces.
	var rows []Row
	for _, p := range pieces {
		rows = append(rows, p.out...)
	}
	return rows, nil
}

// planFile computes the leaf columns and the byte ranges of a file's pieces.
func (ri *RowIndex) planFile(w *fileWork, man *Manifest, columns []string) error {
	f := w.fm.f
	w.keyLeaf = -1
	if c := f.Root().Column(man.Key); c != nil && c.Leaf() {
		w.keyLeaf = c.Index()
	}
	if columns == nil {
		for i := range w.fm.ncol() {
			w.leaves = append(w.leaves, i)
		}
	} else {
		for _, name := range columns {
			c := f.Root().Column(name)
			if c == nil {
				return badQuery("column %q is not in %s", name, w.fe.URI)
			}
			w.leaves = append(w.leaves, leavesOf(c)...)
		}
		slices.Sort(w.leaves)
		w.leaves = slices.Compact(w.leaves)
	}
	seenDict := map[dictKey]bool{}
	ncol := w.fm.ncol()
	for _, p := range w.pieces {
		rg := int(p.rg)
		if rg >= len(f.RowGroups()) {
			return &FileChangedError{URI: w.fe.URI, Reason: "row group missing"}
		}
		for _, c := range w.leaves {
			locs := w.fm.offsetIndex(rg, c)
			if len(locs) == 0 {
				continue
			}
			i0 := sort.Search(len(locs), func(i int) bool { return locs[i].FirstRowIndex > p.row }) - 1
			i1 := sort.Search(len(locs), func(i int) bool { return locs[i].FirstRowIndex >= p.row+p.n }) - 1
			i0 = max(i0, 0)
			i1 = max(i1, i0)
			w.ranges = append(w.ranges, brange{locs[i0].Offset, locs[i1].Offset + int64(locs[i1].CompressedPageSize)})
			if !w.fm.aligned[rg*ncol+c] {
				// Rows are found by decoding from the chunk's first page.
				w.ranges[len(w.ranges)-1].off = locs[0].Offset
			}
			if dr := w.fm.dictRange(rg, c); dr.end > dr.off {
				dk := dictKey{w.fe.ID, rg, c}
				if seenDict[dk] {
					continue
				}
				seenDict[dk] = true
				w.dicts = append(w.dicts, dk)
				if _, ok := ri.cache.get(dk); !ok {
					w.ranges = append(w.ranges, dr)
				}
			}
		}
	}
	return nil
}

// leavesOf returns the leaf column indexes under c.
func leavesOf(c *parquet.Column) []int {
	if c.Leaf() {
		return []int{c.Index()}
	}
	var out []int
	for _, k := range c.Columns() {
		out = append(out, leavesOf(k)...)
	}
	return out
}

// decodeFile decodes the pieces of one file from its fetched spans.
func (ri *RowIndex) decodeFile(ctx context.Context, m *meter, w *fileWork, bytesReturned *atomic.Int64) error {
	f := w.fm.f
	ncol := w.fm.ncol()
	for _, p := range w.pieces {
		g := f.RowGroups()[p.rg]
		cols := make([][][]parquet.Value, len(w.leaves))
		keyAt := -1
		for i, c := range w.leaves {
			if c == w.keyLeaf {
				keyAt = i
			}
			aligned := w.fm.aligned[int(p.rg)*ncol+c]
			pr := &pageReader{ctx: ctx, m: m, obj: w.o, sp: w.sp}
			vals, err := readColumn(g.ColumnChunks()[c], pr, p.row, p.n, aligned)
			if err != nil && isOutside(err, pr) {
				pr = &pageReader{ctx: ctx, m: m, obj: w.o, sp: w.sp, fallThrough: true}
				vals, err = readColumn(g.ColumnChunks()[c], pr, p.row, p.n, aligned)
			}
			if err != nil {
				return &FileChangedError{URI: w.fe.URI, Reason: "undecodable pages", Err: err}
			}
			cols[i] = vals
		}
		kv, _ := DecodeKey(p.key)
		for i, r := range assembleRows(cols, int(p.n)) {
			if keyAt >= 0 {
				v := cols[keyAt][i][0]
				if v.IsNull() || !bytes.Equal(appendKeyValue(nil, v), p.key) {
					return &FileChangedError{URI: w.fe.URI, Reason: fmt.Sprintf("row %d no longer holds key %s", rowInFile(w.fe, p.rg, p.row+int64(i)), keyString(p.key))}
				}
			}
			var n int64
			for _, v := range r {
				if v.Kind() == parquet.ByteArray || v.Kind() == parquet.FixedLenByteArray {
					n += int64(len(v.ByteArray()))
				} else if !v.IsNull() {
					n += 8
				}
			}
			bytesReturned.Add(n)
			p.out = append(p.out, Row{Key: kv, File: w.fe.URI, RowGroup: int(p.rg), Row: rowInFile(w.fe, p.rg, p.row+int64(i)), Values: r, file: f})
		}
	}
	return nil
}

// cacheDicts keeps the dictionary pages a lookup fetched.
func (ri *RowIndex) cacheDicts(w *fileWork) {
	for _, dk := range w.dicts {
		if _, ok := ri.cache.get(dk); ok {
			continue
		}
		dr := w.fm.dictRange(dk.rg, dk.col)
		b := make([]byte, dr.end-dr.off)
		if w.sp.serve(b, dr.off) == len(b) {
			ri.cache.put(dk, b, int64(len(b))+64)
		}
	}
}
