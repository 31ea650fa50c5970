package rowindex

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/prepared"
)

// Reading prepared files with a blob column (prepared.Options.Blob): the
// served fields of a row are one BYTE_ARRAY value, so a lookup reads that
// one column chunk — one range per file holding the key — and decodes it
// back into the source's columns. A lookup of such a file returns rows in
// the source's schema (prepared.Blob.Schema): the same leaf values, types
// and column order as the file before it was prepared. Columns that are not
// in the blob are read as they are and moved to their source leaf.

// blobRead is how one file is read and its rows expanded, for one set of
// requested columns. It is planned once per file and columns (blobReadFor,
// cached with the file's metadata) and read-only after: concurrent
// lookups share it.
type blobRead struct {
	b        *prepared.Blob
	read     []string // the data file's columns to read
	blobLeaf int      // the blob column's leaf in the data file, -1 if not read
	move     []int    // per data file leaf: its source leaf, -1 if not returned as it is
	want     []bool   // per source leaf: returned
	all      bool     // every field of the blob is returned
	// blocks holds block's decoded rows between stored rows (*[]parquet.Row):
	// the rows' values are copied into the returned Rows.
	blocks sync.Pool
}

// loadBlob decodes a blob file's marker once, when the file's metadata
// loads (as loadFrames parses a frame table), so a lookup only looks at
// fm.blob. A file without a blob column leaves both nil. A marker that
// does not decode is kept as fm.blobErr: the file's metadata still serves
// (a row index build reads only the key), its lookups fail.
func loadBlob(o object, fm *fileMeta) {
	b, ok, err := prepared.BlobOf(fm.f)
	switch {
	case !ok:
	case err != nil:
		fm.blobErr = fileChanged(o.uri, corruptReason+"blob marker", err)
	default:
		fm.blob, fm.blobReads = b, &blobReads{}
		fm.charge += int64(len(b.Marker.Schema)+len(b.Marker.Dict)) + 512
	}
}

// blobReads caches a file's blobReads by requested columns.
type blobReads struct {
	mu sync.Mutex
	m  map[string]*blobRead
}

// maxBlobReads bounds the column sets cached per file (a lookup names its
// columns; a server sees few distinct sets).
const maxBlobReads = 32

// blobReadFor returns the blobRead of a file with a blob for the requested
// columns (nil: all of the source's), planned once.
func blobReadFor(fm *fileMeta, uri string, columns []string) (*blobRead, error) {
	k := "\x00all"
	if columns != nil {
		k = strings.Join(columns, "\x00")
	}
	fm.blobReads.mu.Lock()
	br, ok := fm.blobReads.m[k]
	fm.blobReads.mu.Unlock()
	if ok {
		return br, nil
	}
	br, err := blobColumns(fm.blob, fm.f, uri, columns)
	if err != nil {
		return nil, err
	}
	fm.blobReads.mu.Lock()
	if fm.blobReads.m == nil || len(fm.blobReads.m) >= maxBlobReads {
		fm.blobReads.m = map[string]*blobRead{}
	}
	fm.blobReads.m[k] = br
	fm.blobReads.mu.Unlock()
	return br, nil
}

// blobColumns maps the requested top-level columns (nil: all of the
// source's) to the data file's columns to read: the blob for the columns it
// holds (the key among them), the others as they are.
func blobColumns(b *prepared.Blob, f *parquet.File, uri string, columns []string) (*blobRead, error) {
	src := b.Schema.Root()
	if columns == nil {
		for _, c := range src.Columns() {
			columns = append(columns, c.Name())
		}
	}
	br := &blobRead{b: b, blobLeaf: -1, move: make([]int, len(f.Schema().Columns())), want: make([]bool, len(b.Schema.Schema().Columns()))}
	for i := range br.move {
		br.move[i] = -1
	}
	for _, name := range columns {
		sc := src.Column(name)
		if sc == nil && name == b.Marker.Column {
			return nil, badQuery("column %q is the blob column of %s: a lookup returns the columns it holds (%s)", name, uri, blobFieldNames(b))
		}
		if sc == nil {
			return nil, badQuery("column %q is not in %s", name, uri)
		}
		for _, l := range leavesOf(sc) {
			br.want[l] = true
		}
		if b.Has(name) {
			if br.blobLeaf < 0 {
				bc := f.Root().Column(b.Marker.Column)
				if bc == nil || !bc.Leaf() {
					return nil, badQuery("blob column %q is not in %s", b.Marker.Column, uri)
				}
				br.blobLeaf = bc.Index()
				br.read = append(br.read, b.Marker.Column)
			}
			continue
		}
		dc := f.Root().Column(name)
		if dc == nil {
			return nil, badQuery("column %q is not in %s", name, uri)
		}
		dl, sl := leavesOf(dc), leavesOf(sc)
		if len(dl) != len(sl) {
			return nil, fileChanged(uri, corruptReason+"blob schema", fmt.Errorf("column %s has %d leaves, %d in the source schema", name, len(dl), len(sl)))
		}
		for i := range dl {
			br.move[dl[i]] = sl[i]
		}
		br.read = append(br.read, name)
	}
	// The moved columns keep their order (the blob's columns are taken
	// out of the source's, the rest stay in order), which lets a row be
	// merged from them and the decoded fields without sorting.
	last := -1
	for _, s := range br.move {
		if s >= 0 {
			if s < last {
				return nil, fileChanged(uri, corruptReason+"blob schema", fmt.Errorf("columns outside the blob are not in the source's order"))
			}
			last = s
		}
	}
	br.all = true
	for _, l := range b.Leaves {
		br.all = br.all && br.want[l]
	}
	return br, nil
}

// row appends to dst the source row of one data file row r: its blob
// decoded (dec is scratch) and merged with the columns read as they are,
// in source leaf order. The blob must hold key.
func (br *blobRead) row(dst, dec, r parquet.Row, key []byte, uri string, rowNum int64) (parquet.Row, parquet.Row, error) {
	dec = dec[:0]
	if br.blobLeaf >= 0 {
		for _, v := range r {
			if v.Column() == br.blobLeaf {
				var err error
				if dec, err = br.b.Decode(dec, v.ByteArray()); err != nil {
					return dst, dec, fileChanged(uri, corruptReason+"blob value", err)
				}
				if err := br.checkKey(dec, key, uri, rowNum); err != nil {
					return dst, dec, err
				}
				break
			}
		}
	}
	i := 0
	for _, v := range r {
		s := br.move[v.Column()]
		if s < 0 {
			continue
		}
		for ; i < len(dec) && dec[i].Column() < s; i++ {
			if br.want[dec[i].Column()] {
				dst = append(dst, dec[i])
			}
		}
		dst = append(dst, v.Level(v.RepetitionLevel(), v.DefinitionLevel(), s))
	}
	for ; i < len(dec); i++ {
		if br.want[dec[i].Column()] {
			dst = append(dst, dec[i])
		}
	}
	return dst, dec, nil
}

// block appends to dst the rows of one stored row r of a co-grouped blob
// (prepared.BlobCodecZstdDict): its block decoded, each row like tmpl.
func (br *blobRead) block(dst []Row, r parquet.Row, key []byte, tmpl Row) ([]Row, error) {
	i := slices.IndexFunc(r, func(v parquet.Value) bool { return v.Column() == br.blobLeaf })
	if i < 0 {
		return dst, nil
	}
	sp, _ := br.blocks.Get().(*[]parquet.Row)
	if sp == nil {
		sp = new([]parquet.Row)
	}
	rows, err := br.b.DecodeBlock((*sp)[:0], r[i].ByteArray())
	if err == nil {
		err = br.checkKey(rows[0], key, tmpl.File, tmpl.Row)
	} else {
		err = fileChanged(tmpl.File, corruptReason+"blob value", err)
	}
	if err == nil {
		dst = slices.Grow(dst, len(rows))
		for j, vals := range rows {
			if !br.all {
				kept := vals[:0]
				for _, x := range vals {
					if br.want[x.Column()] {
						kept = append(kept, x)
					}
				}
				vals = kept
			}
			t := tmpl
			t.Values, t.bi = vals, int64(j)
			dst = append(dst, t)
		}
	}
	// The pool keeps the slice, not the rows it held.
	clear(rows)
	if *sp = rows[:0]; cap(rows) <= maxPooledBlockRows {
		br.blocks.Put(sp)
	}
	return dst, err
}

// maxPooledBlockRows bounds the block rows slice blobRead keeps for the
// next block.
const maxPooledBlockRows = 1 << 14

// checkKey checks that a decoded row holds the key the index says it does.
func (br *blobRead) checkKey(dec parquet.Row, key []byte, uri string, rowNum int64) error {
	var kbuf [64]byte
	if k := dec[br.b.KeyAt()]; k.IsNull() || !bytes.Equal(appendKeyValue(kbuf[:0], k), key) {
		return &FileChangedError{URI: uri, Reason: fmt.Sprintf("row %d no longer holds key %s", rowNum, keyString(key))}
	}
	return nil
}

func blobFieldNames(b *prepared.Blob) string {
	var names []string
	for _, f := range b.Marker.Fields {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// returnedBytes counts a row's values as assemble does for Plan.BytesReturned.
func returnedBytes(r parquet.Row) (n int64) {
	for _, v := range r {
		if v.Kind() == parquet.ByteArray || v.Kind() == parquet.FixedLenByteArray {
			n += int64(len(v.ByteArray()))
		} else if !v.IsNull() {
			n += 8
		}
	}
	return n
}

// dataColumns is the top-level columns a lookup of all columns returns
// from a data file: the source's for a file with a blob.
func dataColumns(fm *fileMeta) []string {
	f := fm.f
	if fm.blob != nil {
		f = fm.blob.Schema
	}
	var out []string
	for _, c := range f.Root().Columns() {
		out = append(out, c.Name())
	}
	return out
}
