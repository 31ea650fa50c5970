package rowindex

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

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

// blobRead is how one file of a lookup is read and expanded.
type blobRead struct {
	b        *prepared.Blob
	blobLeaf int         // the blob column's leaf in the data file, -1 if not read
	move     map[int]int // data file leaf → source leaf, for columns read as they are
	want     []bool      // per source leaf: returned
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
		fm.blob = b
		fm.charge += int64(len(b.Marker.Schema)) + 512
	}
}

// blobColumns maps the requested top-level columns (nil: all of the
// source's) to the data file's columns to read: the blob for the columns it
// holds (the key among them), the others as they are.
func blobColumns(b *prepared.Blob, f *parquet.File, uri string, columns []string) ([]string, *blobRead, error) {
	src := b.Schema.Root()
	if columns == nil {
		for _, c := range src.Columns() {
			columns = append(columns, c.Name())
		}
	}
	br := &blobRead{b: b, blobLeaf: -1, move: map[int]int{}, want: make([]bool, len(b.Schema.Schema().Columns()))}
	var read []string
	for _, name := range columns {
		sc := src.Column(name)
		if sc == nil && name == b.Marker.Column {
			return nil, nil, badQuery("column %q is the blob column of %s: a lookup returns the columns it holds (%s)", name, uri, blobFieldNames(b))
		}
		if sc == nil {
			return nil, nil, badQuery("column %q is not in %s", name, uri)
		}
		for _, l := range leavesOf(sc) {
			br.want[l] = true
		}
		if b.Has(name) {
			if br.blobLeaf < 0 {
				bc := f.Root().Column(b.Marker.Column)
				if bc == nil || !bc.Leaf() {
					return nil, nil, badQuery("blob column %q is not in %s", b.Marker.Column, uri)
				}
				br.blobLeaf = bc.Index()
				read = append(read, b.Marker.Column)
			}
			continue
		}
		dc := f.Root().Column(name)
		if dc == nil {
			return nil, nil, badQuery("column %q is not in %s", name, uri)
		}
		dl, sl := leavesOf(dc), leavesOf(sc)
		if len(dl) != len(sl) {
			return nil, nil, fileChanged(uri, corruptReason+"blob schema", fmt.Errorf("column %s has %d leaves, %d in the source schema", name, len(dl), len(sl)))
		}
		for i := range dl {
			br.move[dl[i]] = sl[i]
		}
		read = append(read, name)
	}
	return read, br, nil
}

// expand turns the rows of w (assembled in the data file's columns) into
// rows of the source's columns, checking that each row's blob holds the
// key the index says it holds, and corrects the bytes returned.
func (br *blobRead) expand(w *fileWork, rows []Row, plan *Plan) error {
	var kbuf []byte
	var dec parquet.Row
	for _, p := range w.pieces {
		for i := range int(p.n) {
			r := &rows[p.at+i]
			out := make(parquet.Row, 0, len(r.Values)+len(br.b.Leaves))
			for _, v := range r.Values {
				c := v.Column()
				if c == br.blobLeaf {
					var err error
					if dec, err = br.b.Decode(dec[:0], v.ByteArray()); err != nil {
						return fileChanged(w.fe.URI, corruptReason+"blob value", err)
					}
					// The key is the blob's first field (prepared.BlobOptions).
					if k := dec[0]; k.IsNull() || !bytes.Equal(appendKeyValue(kbuf[:0], k), p.key) {
						return &FileChangedError{URI: w.fe.URI, Reason: fmt.Sprintf("row %d no longer holds key %s", r.Row, keyString(p.key))}
					}
					for _, d := range dec {
						if br.want[d.Column()] {
							out = append(out, d)
						}
					}
					continue
				}
				if s, ok := br.move[c]; ok {
					out = append(out, v.Level(v.RepetitionLevel(), v.DefinitionLevel(), s))
				}
			}
			slices.SortStableFunc(out, func(a, b parquet.Value) int { return a.Column() - b.Column() })
			plan.BytesReturned += returnedBytes(out) - returnedBytes(r.Values)
			r.Values, r.file = out, br.b.Schema
		}
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
