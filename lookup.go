package ariadne

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/schema"
)

// Filter keeps the rows whose cover column compares with Value by Op (=,
// !=, <, <=, >, >=). Value is typed like a key: text is parsed by the
// column's type. Null never matches.
type Filter struct {
	Column string `json:"column"`
	Op     string `json:"op"`
	Value  any    `json:"value"`
}

// LookupRequest is one lookup. Exactly one of Key, Keys, or a range (Low,
// High, Range) selects the rows.
type LookupRequest struct {
	// Column names the key column, or the row index (default: the index's
	// only row index). Of several row indexes on the column, the lookup
	// takes one that can answer it: a sorted one for a range, else one
	// covering Columns, else the first by name.
	Column string
	// RowIndex names the row index to use, when several are on the key
	// column (Column may then be empty, or must be its key column).
	RowIndex string
	// Key selects the rows of one key.
	Key any
	// Keys selects the rows of several keys (a batch), returned key after
	// key in the order given; repeated keys are looked up once.
	Keys []any
	// Low and High bound a key range, inclusive (nil: open); sorted row
	// indexes only. Range marks a range query when both bounds are open.
	Low, High any
	Range     bool
	// Columns are the top-level columns returned (nil: every column). When
	// each is the key or a cover column, no data file is read.
	Columns []string
	// Where keeps the rows whose cover columns pass every filter, before
	// any data file is read.
	Where []Filter
	// NoRows returns the keys' aggregates only.
	NoRows bool
	// Limit caps the rows returned (0: no limit); Cursor continues after
	// the last row of a previous page (LookupResult.Cursor of the same
	// request).
	Limit  int
	Cursor string
}

// Row is one returned row. Its JSON (the command line's `lookup --json`
// and the server's lookup rows) is {"key", "file", "row_group", "row",
// "values"}: the source of the row beside its values, which stay keyed by
// column name apart from it, so no column name can clash with the source's.
type Row struct {
	// Key is the row's key, in the value model of its column.
	Key any `json:"key"`
	// File is the data file's URI, RowGroup its row group and Row its row
	// number in the file (0-based).
	File     string `json:"file"`
	RowGroup int    `json:"row_group"`
	Row      int64  `json:"row"`
	// Covered reports that the row was served from the row index alone
	// (the plan's covered says it for the whole lookup).
	Covered bool `json:"-"`
	// Values maps each returned top-level column to its value (see the
	// package documentation for the value model).
	Values map[string]any `json:"values"`
}

// KeyAggregates are the aggregates of one key (see rowindex.KeyAggregates).
type KeyAggregates = rowindex.KeyAggregates

// LookupResult is a lookup's answer.
type LookupResult struct {
	// RowIndex is the row index that served the lookup and Version the
	// manifest version it read.
	RowIndex string
	Version  int64
	// Columns are the returned columns, in order.
	Columns    []string
	Rows       []Row
	Aggregates []KeyAggregates
	// Cursor continues after the last row ("" when no row is left).
	Cursor string
	// Plan is what the lookup found and what it cost (for a batch, the sum
	// over its keys).
	Plan rowindex.Plan
}

// batchCursorPrefix marks a batch cursor; '.' is outside the base64url
// alphabet of the row index's own cursors, so the two never collide.
const batchCursorPrefix = "b1."

type batchCursor struct {
	I int    `json:"i"` // index of the key in the request's Keys
	C string `json:"c"` // the row index's cursor within that key ("": its start)
}

func (c batchCursor) encode() string {
	b, _ := json.Marshal(c)
	return batchCursorPrefix + base64.RawURLEncoding.EncodeToString(b)
}

func badCursor() error { return fmt.Errorf("%w: bad cursor", rowindex.ErrBadQuery) }

func decodeBatchCursor(s string, n int) (batchCursor, error) {
	rest, ok := strings.CutPrefix(s, batchCursorPrefix)
	if !ok {
		return batchCursor{}, badCursor()
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return batchCursor{}, badCursor()
	}
	var c batchCursor
	if err := json.Unmarshal(b, &c); err != nil || c.I < 0 || c.I >= n {
		return batchCursor{}, badCursor()
	}
	return c, nil
}

// Lookup answers a lookup from the row index serving req.Column: the rows
// of the key(s) in (key, file, row group, row) order, read as a stream (a
// key with millions of rows passes through memory a batch at a time and
// reading stops once Limit rows are found), with the keys' aggregates and
// the plan. It collects the rows of LookupRows; use LookupRows to pass
// them on as they come. Errors: aerr.ErrInvalidArgument for keys or filter
// values of the wrong type; rowindex.ErrBadQuery for a malformed request
// (no key, a range on a hash row index, a bad cursor);
// rowindex.ErrNotFound when no row index serves the column.
func (ix *Index) Lookup(ctx context.Context, req LookupRequest) (*LookupResult, error) {
	it, err := ix.LookupRows(ctx, req)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	res := &LookupResult{RowIndex: it.man.Name, Version: it.man.Version}
	for it.Next() {
		res.Rows = append(res.Rows, it.Row())
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	res.Columns, res.Aggregates, res.Cursor, res.Plan = it.Columns(), it.Aggregates(), it.Cursor(), it.Plan()
	return res, nil
}

// LookupRows is a lookup's streaming answer: its rows arrive a batch at a
// time from the row index (see rowindex.RowIter), so a page of any size
// passes through bounded memory. Columns, Aggregates, Cursor and Plan are
// final once Next has returned false. It is not safe for concurrent use;
// Close releases it.
type LookupRows struct {
	ctx   context.Context
	ix    *Index
	ri    *rowindex.RowIndex
	man   *rowindex.Manifest
	types map[string]schema.Type
	q     rowindex.Query // the query of every key (its key unset for a batch)
	limit int
	// keys are a batch's distinct keys (nil: one key or one range, q as
	// is); start is where the request's cursor resumes.
	keys  []batchKey
	start batchCursor
	i     int // the key being read
	it    *rowindex.RowIter
	n     int // rows returned
	row   Row
	// vals are the current row's values, one per rowCols: a covered row's
	// in the iterator's column order, a read row's for the columns it has
	// values for in its file's schema order (rec converts them). The row's
	// map is built from them when Row asks (see rowMap); inColumns says
	// rowCols are Columns, so that Values can hand vals over as they are.
	vals      []any
	rowCols   []string
	rowMap    bool
	inColumns bool
	colPos    []int // with !inColumns: each of columns' place in rowCols
	rec       rowindex.Recorder
	// colTypes are the types of rowCols.
	colTypes []schema.Type
	// slab is where rows' value slices are cut from.
	slab []any
	err  error
	done bool

	columns []string
	aggs    []KeyAggregates
	plan    rowindex.Plan
	cursor  string
}

type batchKey struct {
	v    any
	text string
}

// LookupRows starts a lookup (see Lookup) and returns its rows as a
// stream. Errors in the request are returned here; errors while reading,
// by Err.
func (ix *Index) LookupRows(ctx context.Context, req LookupRequest) (*LookupRows, error) {
	def, err := ix.rowIndexFor(ctx, req)
	if err != nil {
		return nil, err
	}
	ri, err := ix.rowIndex(ctx, def.Name)
	if err != nil {
		return nil, err
	}
	man := ri.Manifest()
	types := *ix.types.Load()
	keyType := types[man.Key]
	q := rowindex.Query{KeyColumn: man.Key, Columns: req.Columns, NoRows: req.NoRows}
	if req.Limit < 0 {
		return nil, aerr.Invalid("limit %d: want 0 (no limit) or more", req.Limit)
	}
	for _, f := range req.Where {
		v, err := filterValue(f.Column, types[f.Column], f.Value)
		if err != nil {
			return nil, err
		}
		q.Where = append(q.Where, rowindex.Filter{Column: f.Column, Op: f.Op, Value: v})
	}
	modes := 0
	if req.Key != nil {
		modes++
	}
	if req.Keys != nil {
		modes++
	}
	if req.Low != nil || req.High != nil || req.Range {
		modes++
	}
	if modes != 1 {
		return nil, fmt.Errorf("%w: give exactly one of a key, a batch of keys, or a range", rowindex.ErrBadQuery)
	}
	lr := &LookupRows{ctx: ctx, ix: ix, ri: ri, man: man, types: types, limit: req.Limit, columns: req.Columns}
	if req.Keys == nil {
		// One key or one range: the row index's own cursor.
		switch {
		case req.Key != nil:
			if q.Key, q.KeyText, err = keyValue(man.Key, keyType, req.Key); err != nil {
				return nil, err
			}
		default:
			q.Range = true
			if req.Low != nil {
				if q.Low, q.LowText, err = keyValue(man.Key, keyType, req.Low); err != nil {
					return nil, err
				}
			}
			if req.High != nil {
				if q.High, q.HighText, err = keyValue(man.Key, keyType, req.High); err != nil {
					return nil, err
				}
			}
		}
		q.Limit, q.Cursor = req.Limit, req.Cursor
		lr.q = q
		return lr, nil
	}
	seen := map[batchKey]bool{}
	for _, k := range req.Keys {
		v, text, err := keyValue(man.Key, keyType, k)
		if err != nil {
			return nil, err
		}
		kk := batchKey{v, text}
		if b, ok := v.([]byte); ok {
			kk.v = string(b)
		}
		if !seen[kk] {
			seen[kk] = true
			lr.keys = append(lr.keys, kk)
		}
	}
	if req.Cursor != "" {
		if lr.start, err = decodeBatchCursor(req.Cursor, len(lr.keys)); err != nil {
			return nil, err
		}
	}
	lr.q, lr.i = q, lr.start.I
	if len(lr.keys) == 0 {
		lr.done = true
	}
	return lr, nil
}

// Next advances to the next row; false at the end of the page or on an
// error (see Err).
func (lr *LookupRows) Next() bool {
	for !lr.done && lr.err == nil {
		if lr.it == nil {
			q := lr.q
			if lr.keys != nil {
				q.Key, q.KeyText = lr.keys[lr.i].v, lr.keys[lr.i].text
				if lr.i == lr.start.I {
					q.Cursor = lr.start.C
				}
				if lr.limit > 0 {
					q.Limit = lr.limit - lr.n
				}
			}
			it, err := lr.ri.Iter(lr.ctx, q)
			if err != nil {
				lr.err = err
				return false
			}
			lr.it = it
		}
		if lr.it.Next() {
			if err := lr.convert(lr.it.Row()); err != nil {
				lr.err = err
				return false
			}
			lr.n++
			return true
		}
		lr.endKey()
	}
	return false
}

// endKey gathers the finished iterator's columns, aggregates, plan and
// cursor, and moves to the next key of a batch.
func (lr *LookupRows) endKey() {
	it := lr.it
	lr.it = nil
	defer it.Close()
	if err := it.Err(); err != nil {
		lr.err = err
		return
	}
	if lr.columns == nil {
		lr.columns = it.Columns()
		lr.setColumns()
	}
	keyType := lr.types[lr.man.Key]
	for _, a := range it.Aggregates() {
		a.Key = outValue(keyType, a.Key)
		lr.aggs = append(lr.aggs, a)
	}
	lr.plan = addPlan(lr.plan, it.Plan())
	cur := it.Cursor()
	if lr.keys == nil {
		lr.cursor, lr.done = cur, true
		return
	}
	if cur != "" {
		lr.cursor, lr.done = batchCursor{I: lr.i, C: cur}.encode(), true
		return
	}
	if lr.limit > 0 && lr.n == lr.limit {
		// The page is full at the end of key i: a cursor only if a later
		// key has a row.
		lr.done = true
		for j := lr.i + 1; j < len(lr.keys); j++ {
			pq := lr.q
			pq.Key, pq.KeyText, pq.Limit = lr.keys[j].v, lr.keys[j].text, 1
			ok, err := lr.any(pq)
			if err != nil {
				lr.err = err
				return
			}
			if ok {
				lr.cursor = batchCursor{I: j}.encode()
				return
			}
		}
		return
	}
	lr.i++
	if lr.i >= len(lr.keys) {
		lr.done = true
	}
}

// any reports whether q selects a row.
func (lr *LookupRows) any(q rowindex.Query) (bool, error) {
	it, err := lr.ri.Iter(lr.ctx, q)
	if err != nil {
		return false, err
	}
	defer it.Close()
	ok := it.Next()
	lr.plan = addPlan(lr.plan, it.Plan())
	return ok, it.Err()
}

// convert brings a row index row to the face's value model. A covered
// row's values are kept as a slice in column order (no map per row: Row
// builds the map when asked, Values hands the slice over).
func (lr *LookupRows) convert(row rowindex.Row) error {
	keyType := lr.types[lr.man.Key]
	out := Row{Key: outValue(keyType, row.Key), File: row.File, RowGroup: row.RowGroup, Row: row.Row}
	if lr.columns == nil && lr.it.Columns() != nil {
		lr.columns = lr.it.Columns()
		lr.setColumns()
	}
	if row.Values == nil {
		out.Covered = true
		cols := lr.it.Columns()
		lr.rowColumns(cols)
		// Rows' value slices are cut from a shared slab (one allocation
		// per convertSlabRows rows); each slice still belongs to its row.
		w := len(cols)
		if len(lr.slab) < w {
			lr.slab = make([]any, w*convertSlabRows)
		}
		vals := lr.slab[:w:w]
		lr.slab = lr.slab[w:]
		for j := range cols {
			if j < len(row.Covered) {
				vals[j] = outValue(lr.colTypes[j], row.Covered[j])
			}
		}
		lr.row, lr.vals, lr.rowMap = out, vals, false
		return nil
	}
	// A row read from a data file: its columns that have values, in the
	// file's schema order (the rows of one file and projection share them).
	w := max(len(lr.rowCols), 8)
	if len(lr.slab) < w {
		lr.slab = make([]any, w*convertSlabRows)
	}
	names, vals, err := lr.rec.Fields(&row, lr.slab[:0:len(lr.slab)])
	if err != nil {
		return err
	}
	if len(vals) <= len(lr.slab) {
		lr.slab = lr.slab[len(vals):] // cut from the slab, as covered rows are
	}
	vals = vals[:len(vals):len(vals)]
	lr.rowColumns(names)
	for j, v := range vals {
		vals[j] = outValue(lr.colTypes[j], v)
	}
	lr.row, lr.vals, lr.rowMap = out, vals, false
	return nil
}

// rowColumns makes cols the current row's columns: when they change, a
// copy of them, their types, and their places among Columns.
func (lr *LookupRows) rowColumns(cols []string) {
	if lr.rowCols != nil && slices.Equal(cols, lr.rowCols) {
		return
	}
	lr.rowCols = slices.Clone(cols)
	lr.colTypes = make([]schema.Type, len(cols))
	for j, c := range cols {
		lr.colTypes[j] = lr.types[c]
	}
	lr.setColumns()
}

// setColumns works out, for new rowCols, whether they are Columns, and
// else where each of Columns is among them (-1: absent).
func (lr *LookupRows) setColumns() {
	lr.inColumns = slices.Equal(lr.rowCols, lr.columns)
	lr.colPos = lr.colPos[:0]
	if !lr.inColumns {
		for _, c := range lr.columns {
			lr.colPos = append(lr.colPos, slices.Index(lr.rowCols, c))
		}
	}
}

// convertSlabRows is about how many rows' values share one allocation.
const convertSlabRows = 256

// Row returns the current row.
func (lr *LookupRows) Row() Row {
	if !lr.rowMap {
		m := make(map[string]any, len(lr.vals))
		for j, c := range lr.rowCols {
			if j < len(lr.vals) {
				m[c] = lr.vals[j]
			}
		}
		lr.row.Values, lr.rowMap = m, true
	}
	return lr.row
}

// Fields returns the current row's columns that have values and their
// values: the pairs of Row's Values map without building it, in the data
// file's schema order (a covered row's: Columns and their values). Rows
// with the same columns share names; vals belongs to the row. Read them,
// do not change them.
func (lr *LookupRows) Fields() (names []string, vals []any) { return lr.rowCols, lr.vals }

// Source returns the current row's key and place (file, row group, row)
// without building its Values map (nil unless Row built it): with Values,
// the cheaper way to pass a row on.
func (lr *LookupRows) Source() Row { return lr.row }

// Values returns the current row's values in the order of Columns (nil
// for a column the row lacks), in the same value model as Row's map: the
// cheaper way to pass rows on, as a server writing JSON does. The slice
// stays valid after Next (it is the row's, not reused) but may be the one
// Row and Fields read: do not change it.
func (lr *LookupRows) Values() []any {
	if lr.inColumns {
		return lr.vals
	}
	// A row whose file has other columns or another order than Columns
	// (a projection not in schema order): its values by position.
	out := make([]any, len(lr.columns))
	for j, k := range lr.colPos {
		if k >= 0 && k < len(lr.vals) {
			out[j] = lr.vals[k]
		}
	}
	return out
}

// Err returns the error that ended the rows, if any.
func (lr *LookupRows) Err() error { return lr.err }

// RowIndex returns the name of the row index serving the lookup, and
// Version its manifest version.
func (lr *LookupRows) RowIndex() string { return lr.man.Name }

// Version returns the manifest version that answers.
func (lr *LookupRows) Version() int64 { return lr.man.Version }

// Columns returns the returned columns, in order (known once a row was
// read when the request named none).
func (lr *LookupRows) Columns() []string { return lr.columns }

// Aggregates returns the keys' aggregates (complete at the end).
func (lr *LookupRows) Aggregates() []KeyAggregates { return lr.aggs }

// Cursor continues after the last row ("" when no row is left); final once
// Next has returned false.
func (lr *LookupRows) Cursor() string { return lr.cursor }

// Plan returns what the lookup found and cost so far (for a batch, the sum
// over its keys).
func (lr *LookupRows) Plan() rowindex.Plan { return lr.plan }

// Close releases the rows; safe to call more than once.
func (lr *LookupRows) Close() error {
	if lr.it != nil {
		lr.it.Close()
		lr.it = nil
	}
	lr.done = true
	return nil
}

func addCost(a, b rowindex.Cost) rowindex.Cost {
	return rowindex.Cost{Requests: a.Requests + b.Requests, BytesRead: a.BytesRead + b.BytesRead, CacheHits: a.CacheHits + b.CacheHits,
		Misses: a.Misses + b.Misses, MissBytes: a.MissBytes + b.MissBytes, Pages: a.Pages + b.Pages, PageHits: a.PageHits + b.PageHits,
		Frames: a.Frames + b.Frames}
}

func addPlan(a, b rowindex.Plan) rowindex.Plan {
	a.Kind = b.Kind
	a.Entries += b.Entries
	a.Files += b.Files
	a.IndexPathBytes += b.IndexPathBytes
	a.ScanBytes += b.ScanBytes
	a.IndexPathRanges += b.IndexPathRanges
	a.ScanRanges += b.ScanRanges
	a.ScanFiles += b.ScanFiles
	a.ShapeRecords += b.ShapeRecords
	a.ShapeFilesIgnored += b.ShapeFilesIgnored
	if a.ShapeFileIgnoredReason == "" {
		a.ShapeFileIgnoredReason = b.ShapeFileIgnoredReason
	}
	a.DictEntries += b.DictEntries
	a.UnshapedPages += b.UnshapedPages
	a.RowRanges += b.RowRanges
	a.ByteRanges += b.ByteRanges
	a.Rows += b.Rows
	a.Covered = b.Covered || a.Covered
	a.Index = addCost(a.Index, b.Index)
	a.Data = addCost(a.Data, b.Data)
	a.BytesReturned += b.BytesReturned
	a.Elapsed += b.Elapsed
	return a
}
