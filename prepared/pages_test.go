package prepared

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestPagesAreKeyAligned reads the offset index of prepared files back and
// checks the page policy against the key column: with PageBytes 0 every page
// of every column holds exactly one key and every key one page per column;
// with a target, a page holding several keys stays within the target, and a
// key spans several pages only if it alone exceeds the target, then on
// pages of its own.
func TestPagesAreKeyAligned(t *testing.T) {
	ctx := context.Background()
	evs := genEvents(2, 20_000)
	for _, target := range []int{PageBytesPerKey, 512, 4096} {
		t.Run(fmt.Sprint("page=", target), func(t *testing.T) {
			st := fileStore(t)
			schema, rows := eventRows(t, evs)
			fs, err := Write(ctx, st, "p.parquet", schema, rows, Options{Key: "user", Sort: []string{"ts"}, PageBytes: target, RowGroupRows: 7000})
			if err != nil {
				t.Fatal(err)
			}
			f, _ := openFile(t, st, "p.parquet")
			ncols := len(f.Schema().Columns())
			pages := make([]int64, ncols)
			packed, split := 0, 0
			for rgi, rg := range f.RowGroups() {
				// The key and the estimated bytes of every row in every column.
				var keys []string
				sizes := make([][]int64, ncols)
				rr := parquet.NewRowGroupReader(rg)
				buf := make([]parquet.Row, 256)
				for {
					n, err := rr.ReadRows(buf)
					for _, r := range buf[:n] {
						keys = append(keys, r[0].String())
						r.Range(func(c int, vs []parquet.Value) bool {
							var s int64
							for _, v := range vs {
								s += valueSize(v)
							}
							sizes[c] = append(sizes[c], s)
							return true
						})
					}
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				if rgi > 0 && keys[0] == lastKeyOf(t, f, rgi-1) {
					t.Errorf("row group %d starts inside key %s", rgi, keys[0])
				}
				for c, cc := range rg.ColumnChunks() {
					oi, err := cc.OffsetIndex()
					if err != nil {
						t.Fatal(err)
					}
					pages[c] += int64(oi.NumPages())
					keyPages := map[string]int{}
					keyBytes := map[string]int64{}
					for i := range keys {
						keyBytes[keys[i]] += sizes[c][i]
					}
					type page struct {
						keys  map[string]bool
						bytes int64
					}
					var ps []page
					for p := range oi.NumPages() {
						lo, hi := oi.FirstRowIndex(p), rg.NumRows()
						if p+1 < oi.NumPages() {
							hi = oi.FirstRowIndex(p + 1)
						}
						pg := page{keys: map[string]bool{}}
						for r := lo; r < hi; r++ {
							pg.keys[keys[r]] = true
							pg.bytes += sizes[c][r]
						}
						for k := range pg.keys {
							keyPages[k]++
						}
						ps = append(ps, pg)
					}
					for _, pg := range ps {
						switch {
						case target == PageBytesPerKey && len(pg.keys) != 1:
							t.Fatalf("rg %d column %d: a page holds %d keys, want one page per key", rgi, c, len(pg.keys))
						case len(pg.keys) > 1:
							packed++
							if pg.bytes > int64(target) {
								t.Fatalf("rg %d column %d: a page of %d keys holds %d bytes, over the %d target", rgi, c, len(pg.keys), pg.bytes, target)
							}
						}
						if len(pg.keys) == 1 {
							continue
						}
						for k := range pg.keys {
							if keyPages[k] > 1 {
								t.Fatalf("rg %d column %d: key %s spans %d pages but shares one", rgi, c, k, keyPages[k])
							}
						}
					}
					for k, n := range keyPages {
						if n > 1 {
							split++
							if target == PageBytesPerKey || keyBytes[k] <= int64(target) {
								t.Fatalf("rg %d column %d: key %s (%d bytes) spans %d pages, target %d", rgi, c, k, keyBytes[k], n, target)
							}
						}
					}
				}
			}
			for c := range pages {
				if pages[c] != fs.PagesPerColumn[c] {
					t.Errorf("column %d: %d pages in the file, stats say %d", c, pages[c], fs.PagesPerColumn[c])
				}
			}
			// The data must exercise the policy: packing and a split key.
			if target > 0 && (packed == 0 || split == 0 || fs.MaxPagesPerKey < 2) {
				t.Errorf("target %d: %d packed pages, %d split keys, max pages per key %d", target, packed, split, fs.MaxPagesPerKey)
			}
			if target == PageBytesPerKey && (fs.Pages != int64(ncols)*fs.Keys || fs.MaxPagesPerKey != 1) {
				t.Errorf("one page per key: %d pages for %d keys × %d columns, max %d per key", fs.Pages, fs.Keys, ncols, fs.MaxPagesPerKey)
			}
			t.Logf("target %d: %d bytes, %d pages (%v), page index %d bytes, %d keys", target, fs.Bytes, fs.Pages, fs.PagesPerColumn, fs.PageIndexBytes, fs.Keys)
		})
	}
}

// lastKeyOf returns the key of the last row of row group i.
func lastKeyOf(t *testing.T, f *parquet.File, i int) string {
	t.Helper()
	rg := f.RowGroups()[i]
	rr := parquet.NewRowGroupReader(rg)
	if err := rr.SeekToRow(rg.NumRows() - 1); err != nil {
		t.Fatal(err)
	}
	buf := make([]parquet.Row, 1)
	if _, err := rr.ReadRows(buf); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return buf[0][0].String()
}
