package rowindex

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// readColumn decodes rows [first, first+n) of one column chunk through r
// with parquet-go's page reader (every codec, data page v1/v2, dictionary and
// plain encodings, optional and repeated columns), and returns each row's
// values (one per leaf value, with its levels). aligned says the chunk's page
// locations start at row boundaries, so reading stops at the end of the page
// holding the last row instead of looking at the next page.
func readColumn(cc parquet.ColumnChunk, r io.ReaderAt, first, n int64, aligned bool) ([][]parquet.Value, error) {
	fcc, ok := cc.(*parquet.FileColumnChunk)
	if !ok {
		return nil, fmt.Errorf("rowindex: column chunk %T is not a file column chunk", cc)
	}
	pages := fcc.PagesFrom(r)
	defer pages.Close()
	if err := pages.SeekToRow(first); err != nil {
		return nil, err
	}
	rows := make([][]parquet.Value, 0, n)
	buf := make([]parquet.Value, 512)
	for {
		if int64(len(rows)) >= n && aligned {
			return rows, nil
		}
		page, err := pages.ReadPage()
		if err == io.EOF {
			if int64(len(rows)) < n {
				return nil, fmt.Errorf("rowindex: column %v: %d rows found, %d expected", fcc.Node(), len(rows), n)
			}
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		done := false
		vr := page.Values()
		for !done {
			k, err := vr.ReadValues(buf)
			for _, v := range buf[:k] {
				if v.RepetitionLevel() == 0 {
					if int64(len(rows)) == n {
						done = true
						break
					}
					rows = append(rows, nil)
				}
				if len(rows) == 0 {
					continue // tail of a row that started before first
				}
				rows[len(rows)-1] = append(rows[len(rows)-1], v.Clone())
			}
			if err == io.EOF || k == 0 && err == nil {
				break
			}
			if err != nil {
				parquet.Release(page)
				return nil, err
			}
		}
		parquet.Release(page)
		if done {
			return rows, nil
		}
	}
}

// assembleRows zips per-column rows (all of the same length) into Parquet
// rows, leaf columns in increasing column index.
func assembleRows(cols [][][]parquet.Value, n int) []parquet.Row {
	out := make([]parquet.Row, n)
	for i := range n {
		var row parquet.Row
		for _, c := range cols {
			row = append(row, c[i]...)
		}
		out[i] = row
	}
	return out
}

// isOutside reports whether err came from a read outside the prefetched
// ranges (so a retry with fall-through can succeed).
func isOutside(err error, r *pageReader) bool {
	return errors.Is(err, errOutsideSpans) || r.outside.Load()
}
