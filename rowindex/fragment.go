package rowindex

import (
	"bytes"
	"cmp"
	"context"
	"slices"

	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/store"
)

// entry is one row of a fragment. Integer columns are DELTA_BINARY_PACKED:
// sorted by (bucket, key, file, rg, row), bucket and file change by small
// steps, which saves ≈10% of a fragment after ZSTD (measured on the test
// lakes); keys stay PLAIN (DELTA_BYTE_ARRAY was no smaller under ZSTD).
//
// entry is: a run of n rows holding key, starting at
// row (inside row group rg) of data file file; or, with file == aggFile, the
// key's aggregate partials (in cover).
type entry struct {
	Bucket int32  `parquet:"bucket,delta"`
	Key    []byte `parquet:"key"`
	File   int32  `parquet:"file,delta"`
	RG     int32  `parquet:"rg,delta"`
	Row    int64  `parquet:"row,delta"`
	N      int64  `parquet:"n,delta"`
	Cover  []byte `parquet:"cover"`
}

// aggFile marks an aggregate record.
const aggFile = -1

// fragmentColumns is the number of leaf columns of a fragment (the fields of
// entry).
const fragmentColumns = 7

// entrySize estimates an entry's uncompressed size in a fragment.
func (e *entry) size() int64 { return int64(len(e.Key)+len(e.Cover)) + 32 }

// compareEntries is the fragment order: (bucket, key, file, rg, row).
func compareEntries(a, b *entry) int {
	return cmp.Or(
		cmp.Compare(a.Bucket, b.Bucket),
		bytes.Compare(a.Key, b.Key),
		cmp.Compare(a.File, b.File),
		cmp.Compare(a.RG, b.RG),
		cmp.Compare(a.Row, b.Row),
	)
}

// fragmentRowGroupBytes is the uncompressed size at which a fragment row group
// is cut (at the next bucket or key boundary): ≈3,200 entries of ~41 bytes,
// ≈13–20 KiB after ZSTD. A lookup decodes one such group per fragment from
// the cache (≈0.2–0.5 ms), and a cold one reads it in one small request.
// Every group costs ≈1 KiB whatever its size (7 column chunks × (page
// header + chunk metadata + offset index)): at 64 KiB that was 10–15% of the
// index of the 1 GB lake (3,869 groups for 6.4M entries), at 128 KiB it is
// ≈5% (1,969 groups), at 256 KiB ≈2.5% but each lookup decodes twice the
// entries. The key directory costs ≈100 bytes of manifest per group.
const fragmentRowGroupBytes = 128 << 10

// fragmentFileBytes is the uncompressed size at which a fragment file is cut
// (at a bucket boundary), so that a large build is spread over files of
// ≈ 20 MiB that can be fetched, cached and compacted independently, and a
// bucket range can be served by one machine.
const fragmentFileBytes = 64 << 20

// writeFragments writes sorted entries as one or more fragment files under
// the row index folder and returns their manifest entries.
func writeFragments(ctx context.Context, st store.Store, name string, kind Kind, es []entry) ([]FragmentEntry, int64, error) {
	var out []FragmentEntry
	var written int64
	for len(es) > 0 {
		// Cut the file at a boundary once it passes fragmentFileBytes.
		var sz int64
		cut := len(es)
		for i := range es {
			sz += es[i].size()
			if sz >= fragmentFileBytes && i+1 < len(es) && boundary(kind, &es[i], &es[i+1]) {
				cut = i + 1
				break
			}
		}
		fe, err := writeFragment(ctx, st, name, kind, es[:cut])
		if err != nil {
			return nil, written, err
		}
		written += fe.Size
		out = append(out, fe)
		es = es[cut:]
	}
	return out, written, nil
}

// boundary reports whether a row group may end between a and b: between
// buckets (hash) or between keys (sorted).
func boundary(kind Kind, a, b *entry) bool {
	if kind == KindSorted {
		return !bytes.Equal(a.Key, b.Key)
	}
	return a.Bucket != b.Bucket
}

func writeFragment(ctx context.Context, st store.Store, name string, kind Kind, es []entry) (FragmentEntry, error) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[entry](&buf,
		parquet.Compression(&parquet.Zstd),
		parquet.PageBufferSize(64<<10),
		parquet.KeyValueMetadata("ariadne.rowindex", name),
		// No page statistics and no column-index bounds: lookups find
		// groups through the manifest's key directory and decode whole
		// groups, so min/max values per page (two keys each) are dead
		// weight (≈3% of a fragment). The offset index, which lookups use,
		// is still written.
		parquet.DataPageStatistics(false),
		parquet.SkipPageBounds("bucket"), parquet.SkipPageBounds("key"), parquet.SkipPageBounds("file"),
		parquet.SkipPageBounds("rg"), parquet.SkipPageBounds("row"), parquet.SkipPageBounds("n"),
		parquet.SkipPageBounds("cover"),
	)
	var groups []Group
	start := 0
	var sz int64
	flush := func(end int) error {
		if end == start {
			return nil
		}
		if _, err := w.Write(es[start:end]); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		g := Group{BucketLo: es[start].Bucket, BucketHi: es[end-1].Bucket, Rows: int64(end - start)}
		if kind == KindSorted {
			g.KeyLo, g.KeyHi = es[start].Key, es[end-1].Key
		}
		groups = append(groups, g)
		start, sz = end, 0
		return nil
	}
	for i := range es {
		sz += es[i].size()
		if sz >= fragmentRowGroupBytes && i+1 < len(es) && boundary(kind, &es[i], &es[i+1]) {
			if err := flush(i + 1); err != nil {
				return FragmentEntry{}, err
			}
		}
	}
	if err := flush(len(es)); err != nil {
		return FragmentEntry{}, err
	}
	if err := w.Close(); err != nil {
		return FragmentEntry{}, err
	}
	data := buf.Bytes()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return FragmentEntry{}, err
	}
	rgs := f.Metadata().RowGroups
	if len(rgs) != len(groups) {
		return FragmentEntry{}, corrupt("fragment writer produced %d row groups for %d groups", len(rgs), len(groups))
	}
	for i := range rgs {
		lo, hi := int64(-1), int64(0)
		for _, c := range rgs[i].Columns {
			s := c.MetaData.DataPageOffset
			if d := c.MetaData.DictionaryPageOffset; d > 0 && d < s {
				s = d
			}
			if lo < 0 || s < lo {
				lo = s
			}
			hi = max(hi, s+c.MetaData.TotalCompressedSize)
		}
		groups[i].Offset, groups[i].Length = lo, hi-lo
	}
	rel := "fragments/" + uuid.NewString() + ".parquet"
	if err := store.WriteAll(ctx, st, folderOf(name)+rel, data, &store.WriteOptions{IfNotExist: true}); err != nil {
		return FragmentEntry{}, err
	}
	return FragmentEntry{Path: rel, Size: int64(len(data)), Entries: int64(len(es)), Groups: groups}, nil
}

// decodeGroup decodes every entry of row group rg of a fragment whose bytes
// are in sp.
func decodeGroup(fm *fileMeta, rg int, r *pageReader) ([]entry, error) {
	g := fm.f.RowGroups()[rg]
	n := g.NumRows()
	ccs := g.ColumnChunks()
	if len(ccs) != fragmentColumns {
		return nil, corrupt("fragment has %d columns, want %d", len(ccs), fragmentColumns)
	}
	cols := make([][][]parquet.Value, len(ccs))
	for i, name := range []string{"bucket", "key", "file", "rg", "row", "n", "cover"} {
		c := fm.f.Root().Column(name)
		if c == nil {
			return nil, corrupt("fragment has no column %q", name)
		}
		var err error
		if cols[i], err = readColumn(ccs[c.Index()], r, 0, n, true); err != nil {
			return nil, corrupt("fragment column %s: %v", name, err)
		}
	}
	es := make([]entry, n)
	for i := range es {
		e := &es[i]
		e.Bucket = cols[0][i][0].Int32()
		e.Key = cols[1][i][0].ByteArray()
		e.File = cols[2][i][0].Int32()
		e.RG = cols[3][i][0].Int32()
		e.Row = cols[4][i][0].Int64()
		e.N = cols[5][i][0].Int64()
		e.Cover = cols[6][i][0].ByteArray()
	}
	if !slices.IsSortedFunc(es, func(a, b entry) int { return compareEntries(&a, &b) }) {
		return nil, corrupt("fragment row group %d is not sorted", rg)
	}
	return es, nil
}
