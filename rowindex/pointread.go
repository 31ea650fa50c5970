package rowindex

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// Point lookups decode a fragment row group only as far as one key needs.
// A group holds tens of thousands of entries (fragmentRowGroupBytes of
// compressed bytes); a light key has a few of them. Decoding the whole group
// into entries (≈100 bytes each in Go memory, and for a sorted index a sort
// back to key order) cost more CPU than the data reads of a light key, and
// filled the decoded cache with groups no later lookup wanted. Here the key
// column is compared in place, the integer columns are decoded (their runs
// imply row numbers across entries), and entries are built for the
// matching rows only. The result is cached per (group, key), so a key asked
// again costs nothing.

// pointGroupKey is a point lookup's entries of one fragment row group in
// the decoded cache.
type pointGroupKey struct {
	path  string
	group int
	key   string
}

// groupKey returns the entries of one fragment row group whose key equals
// key, in lookup order. ok is false when the fragment's format has no point
// path (the caller decodes the whole group).
func (ri *RowIndex) groupKey(ctx context.Context, m *meter, fr *FragmentEntry, gi int, key []byte) (es []entry, ok bool, err error) {
	man, _ := ri.snapshot()
	if es, ok := ri.residentKey(man, fr, gi, key); ok {
		m.hits.Add(1)
		return es, true, nil
	}
	if _, hit := ri.decoded.get(fragDecodedKey{fr.Path, gi}); hit {
		return nil, false, nil // the whole group is decoded already
	}
	pk := pointGroupKey{fr.Path, gi, string(key)}
	if v, hit := ri.decoded.get(pk); hit {
		m.hits.Add(1)
		return v.([]entry), true, nil
	}
	fm, err := ri.fragmentMeta(ctx, m, fr)
	if err != nil {
		return nil, false, err
	}
	if len(fm.f.RowGroups()[gi].ColumnChunks()) != fragmentColumns {
		return nil, false, nil
	}
	b, err := ri.groupBytes(ctx, m, fr, gi)
	if err != nil {
		return nil, false, err
	}
	o := object{st: ri.st, key: folderOf(ri.name) + fr.Path, uri: fr.Path}
	pr := &pageReader{ctx: ctx, m: m, obj: o, sp: spans{{fr.Groups[gi].Offset, b}}, fallThrough: true, chunks: fm.chunks}
	if es, err = ri.decodeGroupKey(fm, gi, pr, man.Kind, man.BucketHash, key); err != nil {
		return nil, false, ri.fragmentErr(fr, err)
	}
	var charge int64 = 64 + int64(len(key))
	for i := range es {
		charge += es[i].size() + 64
	}
	ri.decoded.put(pk, es, charge)
	return es, true, nil
}

// decodeGroupKey decodes the entries of key in row group rg of a (format 2)
// fragment whose bytes are in r: their order in the group (stored order)
// is their lookup order, as they share the key.
func (ri *RowIndex) decodeGroupKey(fm *fileMeta, rg int, r *pageReader, kind Kind, hash BucketHash, key []byte) ([]entry, error) {
	g := fm.f.RowGroups()[rg]
	n := int(g.NumRows())
	ccs := g.ColumnChunks()
	col := func(name string) (parquet.ColumnChunk, error) {
		c := fm.f.Root().Column(name)
		if c == nil {
			return nil, corrupt("fragment has no column %q", name)
		}
		return ccs[c.Index()], nil
	}
	kc, err := col("key")
	if err != nil {
		return nil, err
	}
	match, err := matchFragmentKeys(kc, r, n, key)
	if err != nil {
		return nil, corrupt("fragment column key: %v", err)
	}
	if len(match) == 0 {
		return nil, nil
	}
	ints := map[string][]int64{}
	// The four integer columns live only until the entries are built:
	// pooled storage (they were ≈⅓ of a light lookup's allocation).
	buf := ri.getInts(4 * n)
	defer ri.putInts(buf)
	for i, name := range []string{"file", "rg", "row_gap", "n"} {
		cc, err := col(name)
		if err != nil {
			return nil, err
		}
		fc, err := readFragmentColumn(cc, r, n, buf[i*n:i*n:(i+1)*n])
		if err != nil {
			return nil, corrupt("fragment column %s: %v", name, err)
		}
		if fc.ints == nil {
			return nil, corrupt("fragment columns have unexpected types")
		}
		ints[name] = fc.ints
	}
	covers, err := ri.matchedCovers(fm, rg, r, n, match)
	if err != nil {
		return nil, err
	}
	files, rgs, gaps, ns := ints["file"], ints["rg"], ints["row_gap"], ints["n"]
	out := make([]entry, 0, len(match))
	var bucket int32
	if kind != KindSorted {
		bucket = hash.bucket(key)
	}
	// Row numbers are implied by the previous entry of the same file and
	// row group, whatever its key: walk every entry's integers.
	var prev, cur entry
	havePrev := false
	k := 0
	for i := range n {
		cur = entry{File: int32(files[i]), RG: int32(rgs[i]), N: ns[i]}
		p := &prev
		if !havePrev {
			p = nil
		}
		cur.Row = impliedRow(p, &cur) + gaps[i]
		if kind == KindSorted && p != nil && compareFileOrder(p, &cur) > 0 {
			return nil, corrupt("fragment row group %d is not in the order of a %s row index", rg, kind)
		}
		if k < len(match) && match[k] == i {
			e := cur
			e.Key, e.Cover, e.Bucket = key, covers[k], bucket
			out = append(out, e)
			k++
		}
		prev, havePrev = cur, true
	}
	return out, nil
}

// compareFileOrder compares the data-file positions (file, rg, row) of two
// entries.
func compareFileOrder(a, b *entry) int {
	switch {
	case a.File != b.File:
		return int(a.File) - int(b.File)
	case a.RG != b.RG:
		return int(a.RG) - int(b.RG)
	case a.Row < b.Row:
		return -1
	case a.Row > b.Row:
		return 1
	}
	return 0
}

// matchFragmentKeys returns the positions, in increasing order, of the
// values of a fragment's key column (n values) equal to key, compared in
// the pages' buffers without copying a key.
func matchFragmentKeys(cc parquet.ColumnChunk, r io.ReaderAt, n int, key []byte) ([]int, error) {
	var match []int
	err := forEachFragmentPage(cc, r, n, func(page parquet.Page, first int) error {
		if page.Type().Kind() != parquet.ByteArray {
			return fmt.Errorf("unexpected type %v", page.Type())
		}
		data := page.Data()
		if d := page.Dictionary(); d != nil {
			dv := d.Page().Data()
			dict, offs := dv.ByteArray()
			want := int32(-1)
			for i := 0; i+1 < len(offs); i++ {
				if bytes.Equal(dict[offs[i]:offs[i+1]], key) {
					want = int32(i)
					break
				}
			}
			for i, ix := range data.Int32() {
				if ix == want {
					match = append(match, first+i)
				}
			}
			return nil
		}
		b, offs := data.ByteArray()
		for i := 0; i+1 < len(offs); i++ {
			if int(offs[i+1]-offs[i]) == len(key) && bytes.Equal(b[offs[i]:offs[i+1]], key) {
				match = append(match, first+i)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return match, nil
}
