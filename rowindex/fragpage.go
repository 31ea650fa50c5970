package rowindex

import (
	"errors"
	"fmt"
	"sort"

	"github.com/parquet-go/parquet-go/format"
)

// The page path of a point lookup's cover column. A fragment's cover
// column is most of a row group's bytes (every row's hoisted values), cut
// into pages of ≈64 KiB uncompressed, and a point lookup needs the covers
// of a handful of entries. Every fragment carries a Parquet offset index
// (page offsets and first rows: the writer keeps it while dropping page
// statistics), so the pages holding the matching entries are found there,
// and only they are decompressed and cut (the direct page path, rawpage.go); the other
// pages of the column are never touched. The key column, compared in
// place, and the integer columns, whose row numbers chain from the group's
// first entry, are still decoded whole: together they are ≈10 % of a
// group.
//
// No format change: a fragment without an offset index for the column (or
// whose pages the direct path does not read) falls back to decoding the
// whole column, as before.

// errNoPageIndex reports that a fragment column chunk has no usable offset
// index: the caller decodes the whole column.
var errNoPageIndex = errors.New("rowindex: fragment column has no page index")

// coverPages returns the cover values of the fragment rows at positions
// match (increasing) of row group rg, copied into one backing array, reading
// only the pages that hold them. group holds the row group's bytes, which
// start at file offset groupOff. It returns errNoPageIndex when the chunk
// cannot be read page by page.
func (ri *RowIndex) coverPages(fm *fileMeta, rg, col int, group []byte, groupOff int64, n int, match []int) ([][]byte, error) {
	ncol := fm.ncol()
	if len(fm.ois) != len(fm.f.Metadata().RowGroups)*ncol || rg*ncol+col >= len(fm.aligned) || !fm.aligned[rg*ncol+col] {
		return nil, errNoPageIndex
	}
	ci, ok := directInfo(fm, rg, col)
	if !ok || ci.typ != format.ByteArray || ci.maxDef != 0 {
		return nil, errNoPageIndex
	}
	locs := fm.offsetIndex(rg, col)
	if len(locs) == 0 || locs[0].FirstRowIndex != 0 {
		return nil, errNoPageIndex
	}
	out := make([][]byte, len(match))
	var spans [][2]int
	var arena []byte
	for k := 0; k < len(match); {
		row := int64(match[k])
		if row < 0 || row >= int64(n) {
			return nil, fmt.Errorf("row %d of %d", row, n)
		}
		// The page holding row: the last whose first row is ≤ row.
		pi := sort.Search(len(locs), func(i int) bool { return locs[i].FirstRowIndex > row }) - 1
		loc := locs[pi]
		end := int64(n)
		if pi+1 < len(locs) {
			end = locs[pi+1].FirstRowIndex
		}
		at := loc.Offset - groupOff
		if at < 0 || loc.CompressedPageSize < 0 || at+int64(loc.CompressedPageSize) > int64(len(group)) {
			return nil, errNoPageIndex // page outside the group's bytes
		}
		p, _, err := parseRawPage(group[at:at+int64(loc.CompressedPageSize)], ci)
		if errors.Is(err, errNotDirect) {
			return nil, errNoPageIndex
		}
		if err != nil {
			return nil, err
		}
		if p.enc != format.Plain || p.levels != nil || int64(p.rows) != end-loc.FirstRowIndex {
			ri.releasePage(p)
			return nil, errNoPageIndex
		}
		pr := plainReader{data: p.values, ci: ci}
		for ; k < len(match) && int64(match[k]) < end; k++ {
			v, err := pr.value(match[k] - int(loc.FirstRowIndex))
			if err != nil {
				ri.releasePage(p)
				return nil, err
			}
			b := v.ByteArray()
			s := len(arena)
			arena = append(arena, b...)
			spans = append(spans, [2]int{s, len(arena)})
		}
		ri.releasePage(p)
	}
	for i, sp := range spans {
		out[i] = arena[sp[0]:sp[1]:sp[1]]
	}
	return out, nil
}

// matchedCovers returns the cover values of the rows at positions match of
// fragment row group rg (n rows, bytes in r): only the pages holding them
// when the chunk has a page index (coverPages), otherwise from the whole
// column.
func (ri *RowIndex) matchedCovers(fm *fileMeta, rg int, r *pageReader, n int, match []int) ([][]byte, error) {
	c := fm.f.Root().Column("cover")
	if c == nil {
		return nil, corrupt("fragment has no column %q", "cover")
	}
	if len(r.sp) == 1 {
		out, err := ri.coverPages(fm, rg, c.Index(), r.sp[0].data, r.sp[0].off, n, match)
		if err == nil {
			return out, nil
		}
		if !errors.Is(err, errNoPageIndex) {
			return nil, corrupt("fragment column cover: %v", err)
		}
	}
	cover, err := readFragmentColumn(fm.f.RowGroups()[rg].ColumnChunks()[c.Index()], r, n, nil)
	if err != nil {
		return nil, corrupt("fragment column cover: %v", err)
	}
	if cover.bytes == nil && n > 0 {
		return nil, corrupt("fragment columns have unexpected types")
	}
	out := make([][]byte, len(match))
	for k, i := range match {
		out[k] = cover.bytes[i]
	}
	return out, nil
}
