package ariadne

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
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
	// only row index).
	Column string
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

// Row is one returned row.
type Row struct {
	// Key is the row's key, in the value model of its column.
	Key any
	// File is the data file's URI, RowGroup its row group and Row its row
	// number in the file (0-based).
	File     string
	RowGroup int
	Row      int64
	// Covered reports that the row was served from the row index alone.
	Covered bool
	// Values maps each returned top-level column to its value (see the
	// package documentation for the value model).
	Values map[string]any
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
// the plan. Errors: aerr.ErrInvalidArgument for keys or filter values of
// the wrong type; rowindex.ErrBadQuery for a malformed request (no key, a
// range on a hash row index, a bad cursor); rowindex.ErrNotFound when no
// row index serves the column.
func (ix *Index) Lookup(ctx context.Context, req LookupRequest) (*LookupResult, error) {
	def, err := ix.rowIndexFor(ctx, req.Column)
	if err != nil {
		return nil, err
	}
	ri, err := ix.rowIndex(ctx, def.Name)
	if err != nil {
		return nil, err
	}
	man := ri.Manifest()
	keyType := ix.columnType(man.Key)
	q := rowindex.Query{KeyColumn: man.Key, Columns: req.Columns, NoRows: req.NoRows}
	if req.Limit < 0 {
		return nil, aerr.Invalid("limit %d: want 0 (no limit) or more", req.Limit)
	}
	for _, f := range req.Where {
		v, err := filterValue(f.Column, ix.columnType(f.Column), f.Value)
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
	res := &LookupResult{RowIndex: man.Name, Version: man.Version, Columns: req.Columns}
	r := &reader{ix: ix, ri: ri, man: man, res: res}
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
		cur, _, err := r.run(ctx, q)
		if err != nil {
			return nil, err
		}
		res.Cursor = cur
		return res, nil
	}
	return r.batch(ctx, q, req, keyType)
}

// reader runs the row index queries of one lookup on one row index
// version and gathers their rows.
type reader struct {
	ix  *Index
	ri  *rowindex.RowIndex
	man *rowindex.Manifest
	res *LookupResult
}

// batch looks the keys up one after the other until the limit is reached.
func (r *reader) batch(ctx context.Context, q rowindex.Query, req LookupRequest, keyType schema.Type) (*LookupResult, error) {
	type key struct {
		v    any
		text string
	}
	var keys []key
	seen := map[key]bool{}
	for _, k := range req.Keys {
		v, text, err := keyValue(r.man.Key, keyType, k)
		if err != nil {
			return nil, err
		}
		kk := key{v, text}
		if b, ok := v.([]byte); ok {
			kk.v = string(b)
		}
		if !seen[kk] {
			seen[kk] = true
			keys = append(keys, kk)
		}
	}
	start := batchCursor{}
	if req.Cursor != "" {
		var err error
		if start, err = decodeBatchCursor(req.Cursor, len(keys)); err != nil {
			return nil, err
		}
	}
	for i := start.I; i < len(keys); i++ {
		kq := q
		kq.Key, kq.KeyText = keys[i].v, keys[i].text
		if i == start.I {
			kq.Cursor = start.C
		}
		left := 0
		if req.Limit > 0 {
			left = req.Limit - len(r.res.Rows)
			kq.Limit = left
		}
		cur, n, err := r.run(ctx, kq)
		if err != nil {
			return nil, err
		}
		if cur != "" {
			r.res.Cursor = batchCursor{I: i, C: cur}.encode()
			return r.res, nil
		}
		if req.Limit > 0 && n == left && i+1 < len(keys) {
			// The page is full at the end of key i: a cursor only if a
			// later key has a row.
			for j := i + 1; j < len(keys); j++ {
				pq := q
				pq.Key, pq.KeyText, pq.Limit = keys[j].v, keys[j].text, 1
				if ok, err := r.any(ctx, pq); err != nil {
					return nil, err
				} else if ok {
					r.res.Cursor = batchCursor{I: j}.encode()
					break
				}
			}
			return r.res, nil
		}
	}
	return r.res, nil
}

// any reports whether q selects a row.
func (r *reader) any(ctx context.Context, q rowindex.Query) (bool, error) {
	it, err := r.ri.Iter(ctx, q)
	if err != nil {
		return false, err
	}
	defer it.Close()
	ok := it.Next()
	r.res.Plan = addPlan(r.res.Plan, it.Plan())
	return ok, it.Err()
}

// run streams one row index query into the result. It returns the row
// index's cursor and the rows added.
func (r *reader) run(ctx context.Context, q rowindex.Query) (string, int, error) {
	it, err := r.ri.Iter(ctx, q)
	if err != nil {
		return "", 0, err
	}
	defer it.Close()
	n := 0
	types := *r.ix.types.Load()
	keyType := types[r.man.Key]
	for it.Next() {
		row := it.Row()
		out := Row{Key: outValue(keyType, row.Key), File: row.File, RowGroup: row.RowGroup, Row: row.Row}
		if row.Values == nil {
			out.Covered = true
			cols := it.Columns()
			out.Values = make(map[string]any, len(cols))
			for j, c := range cols {
				if j < len(row.Covered) {
					out.Values[c] = outValue(types[c], row.Covered[j])
				}
			}
		} else {
			one := rowindex.Result{Rows: []rowindex.Row{row}}
			rec, err := one.Record(0)
			if err != nil {
				return "", n, err
			}
			for c, v := range rec {
				rec[c] = outValue(types[c], v)
			}
			out.Values = rec
		}
		r.res.Rows = append(r.res.Rows, out)
		n++
	}
	if err := it.Err(); err != nil {
		return "", n, err
	}
	if r.res.Columns == nil {
		r.res.Columns = it.Columns()
	}
	for _, a := range it.Aggregates() {
		a.Key = outValue(keyType, a.Key)
		r.res.Aggregates = append(r.res.Aggregates, a)
	}
	r.res.Plan = addPlan(r.res.Plan, it.Plan())
	return it.Cursor(), n, nil
}

func addCost(a, b rowindex.Cost) rowindex.Cost {
	return rowindex.Cost{Requests: a.Requests + b.Requests, BytesRead: a.BytesRead + b.BytesRead, CacheHits: a.CacheHits + b.CacheHits,
		Misses: a.Misses + b.Misses, MissBytes: a.MissBytes + b.MissBytes, Pages: a.Pages + b.Pages, PageHits: a.PageHits + b.PageHits}
}

func addPlan(a, b rowindex.Plan) rowindex.Plan {
	a.Kind = b.Kind
	a.Entries += b.Entries
	a.Files += b.Files
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
