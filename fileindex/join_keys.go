package fileindex

import (
	"context"
	"errors"
	"io"
	"iter"
	"slices"
	"unicode/utf8"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
)

// Keys held in Go. A join loads its keys into DuckDB (table "q") to find
// their distinct values, locate, and plan the prefilter; for a join the
// row-index path may answer directly (join_direct.go) that is the only use
// of DuckDB, and with emptying the database for the next join it cost
// ≈11 ms of a ≈110 ms one-key join. When the join could be answered
// directly, its keys are therefore read into Go first (up to
// maxHeldKeys): distinct values, counts and locating are done in Go with
// the semantics DuckDB's queries have (integers of the column's width and
// valid UTF-8 strings compare by value; NULL is one distinct value for
// locating and never a key), and the database is taken from the pool and
// the keys loaded into it only when something else than the direct answer
// needs them (the row index does not answer, the answer exceeds its cap,
// the row index turns out stale).

// maxHeldKeys bounds the keys read into Go before DuckDB: ≈40 B each, so
// ≤ 2.6 MB. Beyond it DuckDB's key handling is a small part of the join.
const maxHeldKeys = 1 << 16

// heldKeys are a one-column key set read into Go.
type heldKeys struct {
	st   *schema.Struct
	vals []any // the column's values, as the KeySource gave them
}

// directCandidate reports whether a join may be answered directly by the
// row-index path without DuckDB, judging by what is known before the keys
// are read (planDirect decides once the prefilter is known).
func directCandidate(m *metadata.Metadata, src, keys *schema.Struct, on []string, how JoinType, opts JoinOptions) bool {
	if opts.Rows == nil || how != Inner || len(on) != 1 || opts.Output != "" ||
		opts.force != "" && opts.force != PathRowIndex {
		return false
	}
	if opts.Engine != nil {
		if _, ok := opts.Engine.(duckEngine); !ok {
			return false
		}
	}
	if m.ComputedIndexes.Len() > 0 || len(m.ExplodedFieldIndexes) > 0 ||
		slices.ContainsFunc(m.TemporalIndexes, func(t metadata.TemporalIndex) bool { return t.Column == on[0] }) {
		return false
	}
	if len(keys.Fields) != 1 || keys.Fields[0].Name != on[0] {
		return false
	}
	f, ok := src.Field(on[0])
	return ok && keyClass(f.Type) != "" && schema.Equal(f.Type, keys.Fields[0].Type)
}

// holdKeys reads keys into Go. It returns ok false, and a KeySource that
// yields every key row read so far and then the rest, when a value is not
// of the Go type the column's type has in the pqrow value model (DuckDB
// then decides what it means) or there are more than maxHeldKeys rows.
func holdKeys(ctx context.Context, keys KeySource) (*heldKeys, KeySource, bool, error) {
	st := keys.Schema()
	h := &heldKeys{st: st}
	want := st.Fields[0].Type
	for {
		batch, err := keys.Next(ctx)
		if errors.Is(err, io.EOF) {
			return h, nil, true, nil
		}
		if err != nil {
			return nil, nil, false, err
		}
		for i, r := range batch {
			if len(r) != 1 || !heldValue(want, r[0]) || len(h.vals) >= maxHeldKeys {
				// The rows so far, this batch's from i on, then the rest.
				return nil, &prefixSource{st: st, held: h.rows(), next: batch[i:], rest: keys}, false, nil
			}
			h.vals = append(h.vals, r[0])
		}
	}
}

// heldValue reports whether v is a value of t as the pqrow value model
// has it, one that Go compares as DuckDB does.
func heldValue(t schema.Type, v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case int64:
		return t == schema.Long
	case int32:
		return t == schema.Integer
	case int16:
		return t == schema.Short
	case int8:
		return t == schema.Byte
	case string:
		return t == schema.String && utf8.ValidString(v)
	}
	return false
}

// rows returns the held keys as rows, for DuckDB.
func (h *heldKeys) rows() [][]any {
	slab := make([]any, len(h.vals))
	copy(slab, h.vals)
	out := make([][]any, len(slab))
	for i := range slab {
		out[i] = slab[i : i+1 : i+1]
	}
	return out
}

// source returns the held keys as a KeySource.
func (h *heldKeys) source() KeySource { return RowsSource(h.st, h.rows()) }

// distinct returns the distinct values (nil included once when present),
// in first-seen order, as SELECT DISTINCT over "q" would, and the
// prefilter planPrefilter would build from them: the non-null keys,
// normalized, with the count of those listed more than once.
func (h *heldKeys) distinct(col string) ([]any, *prefilter) {
	pf := &prefilter{col: col, keys: map[any]struct{}{}, mult: map[any]int{}}
	var out []any
	seenNull := false
	for _, v := range h.vals {
		if v == nil {
			if !seenNull {
				seenNull = true
				out = append(out, nil)
			}
			continue
		}
		k := normalizeKey(v)
		if _, ok := pf.keys[k]; ok {
			pf.mult[k] = max(pf.mult[k], 1) + 1
			continue
		}
		pf.keys[k] = struct{}{}
		out = append(out, v)
	}
	return out, pf
}

// valueRows yields each value as a one-column row.
func valueRows(vals []any) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		for _, v := range vals {
			if !yield([]any{v}, nil) {
				return
			}
		}
	}
}

// prefixSource yields rows already read from a KeySource, then the rest.
type prefixSource struct {
	st   *schema.Struct
	held [][]any
	next [][]any
	rest KeySource
}

func (p *prefixSource) Schema() *schema.Struct { return p.st }

func (p *prefixSource) Next(ctx context.Context) ([][]any, error) {
	if p.held != nil {
		b := p.held
		p.held = nil
		if len(b) > 0 {
			return b, nil
		}
	}
	if p.next != nil {
		b := p.next
		p.next = nil
		if len(b) > 0 {
			return b, nil
		}
	}
	return p.rest.Next(ctx)
}

// lazyDB gives a join its database, taken from the pool and loaded with
// the keys (table "q") on first use.
type lazyDB struct {
	fi   *FileIndex
	res  *Result
	keys KeySource
	err  error
}

// get returns the join's database with "q" loaded.
func (l *lazyDB) get(ctx context.Context) (*duck.DB, error) {
	if l.res.db != nil || l.err != nil {
		if l.err != nil {
			return nil, l.err
		}
		return l.res.db.db, nil
	}
	jdb, err := l.fi.joinDBs.get(ctx)
	if err != nil {
		l.err = err
		return nil, err
	}
	l.res.db = jdb
	if _, err := jdb.db.Load(ctx, "q", duckKeys{l.keys}); err != nil {
		l.err = err
		return nil, err
	}
	return jdb.db, nil
}
