package fileindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go"
)

// oracleLocator is a RowLocator that finds each key's rows by reading the
// located files' key column with DuckDB (file_row_number) and their row
// groups with parquet-go: the answer a correct row index gives. With shift,
// it points one row further in each row group (wrapping): the answer of a
// row index whose files were rewritten after it was built.
type oracleLocator struct {
	shift bool
	calls int
}

func (o *oracleLocator) LocateRows(ctx context.Context, col string, keys []any, files []string) (map[string][]RowGroupRows, string, error) {
	o.calls++
	set := map[any]bool{}
	for _, k := range keys {
		set[k] = true
	}
	db, err := duck.Open(ctx, duck.Options{})
	if err != nil {
		return nil, "", err
	}
	defer db.Close()
	out := map[string][]RowGroupRows{}
	for _, uri := range files {
		path, ok := localPath(uri)
		if !ok {
			return nil, "", fmt.Errorf("not local: %s", uri)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, "", err
		}
		info, _ := f.Stat()
		pf, err := parquet.OpenFile(f, info.Size())
		if err != nil {
			f.Close()
			return nil, "", err
		}
		var starts, sizes []int64
		var n int64
		for _, rg := range pf.RowGroups() {
			starts, sizes = append(starts, n), append(sizes, rg.NumRows())
			n += rg.NumRows()
		}
		f.Close()
		rows, err := db.Query(ctx, fmt.Sprintf("SELECT file_row_number, %s FROM read_parquet('%s', file_row_number=true)", duck.Ident(col), path))
		if err != nil {
			return nil, "", err
		}
		for {
			b, err := rows.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rows.Close()
				return nil, "", err
			}
			for _, r := range b {
				if !set[normalizeKey(r[1])] {
					continue
				}
				row := r[0].(int64)
				g := len(starts) - 1
				for starts[g] > row {
					g--
				}
				in := row - starts[g]
				if o.shift {
					in = (in + 1) % sizes[g]
				}
				pos := out[uri]
				if len(pos) > 0 && pos[len(pos)-1].RowGroup == g {
					pos[len(pos)-1].Rows = append(pos[len(pos)-1].Rows, in)
				} else {
					pos = append(pos, RowGroupRows{RowGroup: g, Rows: []int64{in}})
				}
				out[uri] = pos
			}
		}
		rows.Close()
	}
	for _, pos := range out {
		for _, p := range pos {
			slices.Sort(p.Rows)
		}
	}
	return out, "oracle", nil
}

// TestJoinDirectCap checks that the direct answer is refused when the rows
// it would hold (the positions, each repeated by its key's count in the key
// set) exceed its cap, and that DuckDB then answers with the same rows; at
// the cap it is taken.
func TestJoinDirectCap(t *testing.T) {
	ctx := context.Background()
	uris, _ := pqJoinLake(t, t.TempDir(), 2)
	ti := newTestIndex(t, "pqcap", pqJoinSchema, "parquet", nil, func(ix *index.Index) error {
		return ix.AddIndex(ctx, "id")
	})
	if _, err := ti.ix.AddFiles(ctx, uris...); err != nil {
		t.Fatal(err)
	}
	if _, err := ti.fi.Update(ctx, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	long := []schema.Type{schema.Long}
	for _, tc := range []struct {
		name string
		keys func() KeySource
		// per: result rows per position (the key's count in the key set)
		per int64
	}{
		{"one key", func() KeySource { return keys("id", long, []any{int64(7)}, []any{int64(8)}) }, 1},
		{"a key twice", func() KeySource { return keys("id", long, []any{int64(7)}, []any{int64(7)}) }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(force JoinPath, capRows int64, loc RowLocator) ([]string, []string, JoinStats) {
				r, err := ti.fi.Join(ctx, tc.keys(), []string{"id"}, Inner, JoinOptions{force: force, directCap: capRows, Rows: loc})
				if err != nil {
					t.Fatal(err)
				}
				st := r.Stats()
				cols, rows := drain(t, r)
				return cols, rows, st
			}
			fcols, full, _ := run(PathFull, 0, nil)
			if len(full) < 2 {
				t.Fatalf("%d rows: the lake needs more rows of the keys", len(full))
			}
			positions := int64(len(full)) / tc.per
			for _, c := range []struct {
				capRows int64
				direct  bool
			}{{int64(len(full)) - 1, false}, {int64(len(full)), true}, {0, true}} {
				cols, got, st := run(PathRowIndex, c.capRows, &oracleLocator{})
				if st.Path != PathRowIndex || st.Direct != c.direct || st.RowsLoaded != map[bool]int64{true: 0, false: positions}[c.direct] {
					t.Fatalf("cap %d: %+v, want direct %v", c.capRows, st, c.direct)
				}
				if !slices.Equal(cols, fcols) || !slices.Equal(got, full) {
					t.Fatalf("cap %d: %v %v, want %v %v", c.capRows, cols, got, fcols, full)
				}
			}
		})
	}
}
