package fileindex

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
)

// maxPrefilterKeys bounds the key set held in memory to pre-filter the
// index side: 1 M distinct keys cost about 50–100 MB of Go maps (a map entry
// of an int64 or a short string is ~50–90 B), the most a join should hold
// outside DuckDB. Larger key sets skip the pre-filter (DuckDB still joins
// correctly, it only reads more).
const maxPrefilterKeys = 1 << 20

// prefilter selects the rows of located files worth loading into DuckDB:
// only rows whose join-column value is one of the keys. Pruning by file
// leaves every row of every located file; most do not match (a user's
// plays are a sliver of a day's file), and loading them through the
// appender dominated join time (docs/fileindex.md, Benchmark). Filtering
// is exact — it drops only rows that cannot match — and is used only where
// that cannot change the result:
//   - the join type never returns unmatched index-side rows (keys on the
//     left: inner, left, semi, anti; index on the left: inner, right, semi);
//   - the column is a plain source column (not a computed or exploded one,
//     which are derived after reading);
//   - key and column compare alike in Go and DuckDB: both integers or both
//     strings;
//   - temporal deduplication ranks on no other join column (filtering rows
//     of other keys would change which row ranks first there).
type prefilter struct {
	col  string
	keys map[any]struct{}
	// mult holds the keys that occur more than once in the key set, with
	// their count (the row-index path's direct answer repeats their rows).
	mult map[any]int
}

// planPrefilter picks the first join column that qualifies and collects the
// distinct keys of that column from table "q"; nil when none qualifies.
func planPrefilter(ctx context.Context, db *duck.DB, m *metadata.Metadata, src, keys *schema.Struct, on []string, how JoinType, indexLeft bool) (*prefilter, error) {
	allowed := map[JoinType]bool{Inner: true, Left: !indexLeft, Semi: true, Anti: !indexLeft, Right: indexLeft}
	if !allowed[how] {
		return nil, nil
	}
	for _, c := range on {
		f, ok := src.Field(c)
		if !ok || m.ComputedIndexes.Has(c) || slices.ContainsFunc(m.ExplodedFieldIndexes, func(e metadata.ExplodedFieldIndex) bool { return e.AsColumn == c }) {
			continue
		}
		kf, _ := keys.Field(c)
		if keyClass(f.Type) == "" || keyClass(f.Type) != keyClass(kf.Type) {
			continue
		}
		if slices.ContainsFunc(m.TemporalIndexes, func(t metadata.TemporalIndex) bool {
			return t.Column != c && slices.Contains(on, t.Column)
		}) {
			continue
		}
		p := &prefilter{col: c, keys: map[any]struct{}{}, mult: map[any]int{}}
		rows, err := db.Query(ctx, "SELECT "+duck.Ident(c)+", count(*) FROM q WHERE "+duck.Ident(c)+" IS NOT NULL GROUP BY ALL")
		if err != nil {
			return nil, err
		}
		for {
			batch, err := rows.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rows.Close()
				return nil, err
			}
			for _, r := range batch {
				k := normalizeKey(r[0])
				p.keys[k] = struct{}{}
				if n, _ := pqrow.AsInt64(r[1]); n > 1 {
					p.mult[k] = int(n)
				}
			}
			if len(p.keys) > maxPrefilterKeys {
				rows.Close()
				return nil, nil
			}
		}
		return p, nil
	}
	return nil, nil
}

// keyClass groups the types whose values compare alike in Go after
// normalizeKey and in DuckDB.
func keyClass(t schema.Type) string {
	switch t {
	case schema.Byte, schema.Short, schema.Integer, schema.Long:
		return "int"
	case schema.String:
		return "string"
	}
	return ""
}

// normalizeKey maps integers of any width to int64 (strings stay strings).
func normalizeKey(v any) any {
	switch v := v.(type) {
	case int8:
		return int64(v)
	case int16:
		return int64(v)
	case int32:
		return int64(v)
	case int:
		return int64(v)
	}
	return v
}

// filteredSource passes on the rows of src whose column col holds a key.
type filteredSource struct {
	src  duck.Source
	col  int
	keys map[any]struct{}
}

func (p *prefilter) wrap(src duck.Source) duck.Source {
	i := slices.Index(src.Schema().Names(), p.col)
	if i < 0 {
		return src
	}
	return &filteredSource{src: src, col: i, keys: p.keys}
}

func (f *filteredSource) Schema() *schema.Struct { return f.src.Schema() }

func (f *filteredSource) Next(ctx context.Context) ([]pqrow.Row, error) {
	for {
		batch, err := f.src.Next(ctx)
		if err != nil {
			return nil, err
		}
		out := batch[:0]
		for _, r := range batch {
			if _, ok := f.keys[normalizeKey(r[f.col])]; ok {
				out = append(out, r)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
}
