package fileindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/ariadne-go/ariadne/internal/duck"
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
