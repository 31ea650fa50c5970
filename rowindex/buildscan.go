package rowindex

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
)

// chunkValues is one column of one row group decoded for the build: per row
// an encoding, an encoded key (appendKeyValue) for the key column or a
// hoisted value (appendValue) for cover and aggregate columns, stored back
// to back in data; row i is data[ends[i-1]:ends[i]]. A null key has an
// empty encoding; a null hoisted value is valNull. The buffers are reused
// from row group to row group.
type chunkValues struct {
	data []byte
	ends []int32
}

func (c *chunkValues) reset() { c.data, c.ends = c.data[:0], c.ends[:0] }

func (c *chunkValues) row(i int) []byte {
	s := int32(0)
	if i > 0 {
		s = c.ends[i-1]
	}
	return c.data[s:c.ends[i]]
}

// chunkDecoder decodes whole column chunks into chunkValues straight from
// the pages' typed buffers (Page.Data: int32, int64, float, double and byte
// array values, plain or dictionary-encoded, with their definition levels),
// without a parquet.Value per row; a dictionary is encoded once per chunk.
// Other physical types (boolean, int96, fixed-length byte arrays) go
// through the page's value reader, a buffer at a time. Encodings are those
// of appendKeyValue and appendValue(valueOf(v)), so entries equal those of a
// build through parquet.Value.
type chunkDecoder struct {
	key     bool // encode as keys, else as hoisted values
	buf     []parquet.Value
	dict    parquet.Dictionary
	dictEnc chunkValues // the dictionary's values, encoded
	// dictInts is the dictionary's values as intKeys words (decodeInts).
	dictInts []uint64
}

// encodeInt appends an integer value.
func (d *chunkDecoder) encodeInt(dst []byte, v int64) []byte {
	if d.key {
		return appendIntKey(dst, v)
	}
	return binary.AppendVarint(append(dst, valInt), v)
}

func (d *chunkDecoder) encodeFloat(dst []byte, v float64) []byte {
	if d.key {
		return appendFloatKey(dst, v)
	}
	return binary.LittleEndian.AppendUint64(append(dst, valFloat), math.Float64bits(v))
}

func (d *chunkDecoder) encodeBytes(dst, v []byte) []byte {
	if d.key {
		return append(append(dst, tagBytes), v...)
	}
	return append(binary.AppendUvarint(append(dst, valString), uint64(len(v))), v...)
}

func (d *chunkDecoder) encodeValue(dst []byte, v parquet.Value) []byte {
	if d.key {
		if v.IsNull() {
			return dst
		}
		return appendKeyValue(dst, v)
	}
	return appendValue(dst, valueOf(v))
}

func (d *chunkDecoder) null(dst []byte) []byte {
	if d.key {
		return dst
	}
	return append(dst, valNull)
}

// typed reports whether pages of kind k decode from their typed buffers.
func typed(k parquet.Kind) bool {
	switch k {
	case parquet.Int32, parquet.Int64, parquet.Float, parquet.Double, parquet.ByteArray:
		return true
	}
	return false
}

// encodeTyped appends the encodings of all values of a typed buffer (a
// dictionary page's or a plain data page's) to out, one per value.
func (d *chunkDecoder) encodeTyped(k parquet.Kind, vals encoding.Values, out *chunkValues) {
	// encoding.Values' accessors have pointer receivers.
	switch k {
	case parquet.Int32:
		for _, v := range vals.Int32() {
			out.data = d.encodeInt(out.data, int64(v))
			out.ends = append(out.ends, int32(len(out.data)))
		}
	case parquet.Int64:
		for _, v := range vals.Int64() {
			out.data = d.encodeInt(out.data, v)
			out.ends = append(out.ends, int32(len(out.data)))
		}
	case parquet.Float:
		for _, v := range vals.Float() {
			out.data = d.encodeFloat(out.data, float64(v))
			out.ends = append(out.ends, int32(len(out.data)))
		}
	case parquet.Double:
		for _, v := range vals.Double() {
			out.data = d.encodeFloat(out.data, v)
			out.ends = append(out.ends, int32(len(out.data)))
		}
	case parquet.ByteArray:
		b, offs := vals.ByteArray()
		for i := 0; i+1 < len(offs); i++ {
			out.data = d.encodeBytes(out.data, b[offs[i]:offs[i+1]])
			out.ends = append(out.ends, int32(len(out.data)))
		}
	}
}

// eachCheckedPage passes the data pages of fcc, read through r and checked
// against the footer's promises (chk), to fn while more reports true; each
// page is released after fn.
func eachCheckedPage(fcc *parquet.FileColumnChunk, r io.ReaderAt, chk *pqrow.ChunkCheck, more func() bool, fn func(parquet.Page) error) error {
	pages := pqrow.GuardPages(fcc, r)
	defer pages.Close()
	for more() {
		page, err := pages.ReadPage()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := chk.Page(page); err != nil {
			parquet.Release(page)
			return err
		}
		err = fn(page)
		parquet.Release(page)
		if err != nil {
			return err
		}
	}
	return nil
}

// decode decodes the n rows of a top-level, non-repeated column chunk read
// through r into out (reset first); chk checks each page against what the
// footer promises (a *pqrow.IntegrityError on the first lie).
func (d *chunkDecoder) decode(cc parquet.ColumnChunk, r io.ReaderAt, n int64, out *chunkValues, chk *pqrow.ChunkCheck) error {
	fcc, ok := cc.(*parquet.FileColumnChunk)
	if !ok {
		return fmt.Errorf("rowindex: column chunk %T is not a file column chunk", cc)
	}
	out.reset()
	d.dict = nil
	kind := fcc.Type().Kind()
	maxDef := byte(0)
	if fcc.Node().Optional() {
		maxDef = 1
	}
	var plain chunkValues
	err := eachCheckedPage(fcc, r, chk, func() bool { return int64(len(out.ends)) < n }, func(page parquet.Page) error {
		return d.page(page, kind, maxDef, &plain, out)
	})
	if err != nil {
		return err
	}
	if err := chk.Done(); err != nil {
		return err
	}
	if int64(len(out.ends)) != n {
		return fmt.Errorf("rowindex: column %v: %d rows found, %d expected", fcc.Node(), len(out.ends), n)
	}
	if len(out.data) > math.MaxInt32 {
		return fmt.Errorf("rowindex: column %v: row group values too large", fcc.Node())
	}
	return nil
}

// page decodes one page's rows into out.
func (d *chunkDecoder) page(page parquet.Page, kind parquet.Kind, maxDef byte, plain, out *chunkValues) error {
	nv := int(page.NumValues())
	defs := page.DefinitionLevels()
	if len(defs) > 0 && len(defs) != nv {
		return fmt.Errorf("rowindex: page has %d definition levels for %d values", len(defs), nv)
	}
	if !typed(kind) {
		return d.pageValues(page, out)
	}
	// Present values, in order: the dictionary's encodings by index, or
	// the page's plain values encoded into plain.
	var idx []int32
	src := plain
	if dict := page.Dictionary(); dict != nil {
		if dict != d.dict {
			d.dict = dict
			d.dictEnc.reset()
			d.encodeTyped(kind, dict.Page().Data(), &d.dictEnc)
		}
		data := page.Data()
		idx = data.Int32()
		src = &d.dictEnc
	} else if len(defs) == 0 {
		// Plain, and no row null: the values are the rows, encoded
		// straight into out (not into plain and then copied row by row:
		// ≈10 % of a key-id build's scan).
		from := len(out.ends)
		d.encodeTyped(kind, page.Data(), out)
		if len(out.ends)-from < nv {
			return fmt.Errorf("rowindex: page has fewer values than its definition levels say")
		}
		if len(out.ends)-from > nv { // as below: values past the rows are ignored
			out.ends = out.ends[:from+nv]
			out.data = out.data[:0]
			if len(out.ends) > 0 {
				out.data = out.data[:out.ends[len(out.ends)-1]]
			}
		}
		return nil
	} else {
		plain.reset()
		d.encodeTyped(kind, page.Data(), plain)
	}
	present := len(plain.ends)
	if idx != nil {
		present = len(idx)
	}
	k := 0
	for j := range nv {
		if len(defs) > 0 && defs[j] != maxDef {
			out.data = d.null(out.data)
			out.ends = append(out.ends, int32(len(out.data)))
			continue
		}
		if k >= present {
			return fmt.Errorf("rowindex: page has fewer values than its definition levels say")
		}
		i := k
		if idx != nil {
			i = int(idx[k])
			if i < 0 || i >= len(src.ends) {
				return fmt.Errorf("rowindex: dictionary index %d out of range", i)
			}
		}
		k++
		out.data = append(out.data, src.row(i)...)
		out.ends = append(out.ends, int32(len(out.data)))
	}
	return nil
}

// pageValues decodes a page through its value reader.
func (d *chunkDecoder) pageValues(page parquet.Page, out *chunkValues) error {
	if d.buf == nil {
		d.buf = make([]parquet.Value, 1024)
	}
	vr := page.Values()
	for {
		k, err := vr.ReadValues(d.buf)
		for _, v := range d.buf[:k] {
			out.data = d.encodeValue(out.data, v)
			out.ends = append(out.ends, int32(len(out.data)))
		}
		if err == io.EOF || k == 0 && err == nil {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// intKeys is an int key column of one row group decoded for a key-id
// build (decodeInts): each row's key as the word keyIDs.vals holds (the
// int64 with its sign bit flipped: appendIntKey's 8 bytes), and, when a
// row of the group is null, a flag per row (nulls; empty when none is).
// The key-id paths take every row's key as that word: encoding it as a
// 9-byte key (chunkValues) to read it back took encodeTyped alone 0.8 s of
// the 10× lake's scan.
type intKeys struct {
	vals  []uint64
	nulls []bool
}

// null reports whether row r's key is null.
func (k *intKeys) null(r int) bool { return len(k.nulls) > 0 && k.nulls[r] }

// intWord is an int key's intKeys word.
func intWord(v int64) uint64 { return uint64(v) ^ 1<<63 }

// decodeInts is decode for an INT32 or INT64 key column on a key-id path:
// the n rows' keys as intKeys words (out reset first), straight from the
// pages' typed buffers (plain or a dictionary's, whose values are
// converted once per chunk). Another physical type is errKeyIDsFull.
func (d *chunkDecoder) decodeInts(cc parquet.ColumnChunk, r io.ReaderAt, n int64, out *intKeys, chk *pqrow.ChunkCheck) error {
	fcc, ok := cc.(*parquet.FileColumnChunk)
	if !ok {
		return fmt.Errorf("rowindex: column chunk %T is not a file column chunk", cc)
	}
	kind := fcc.Type().Kind()
	if kind != parquet.Int32 && kind != parquet.Int64 {
		return errKeyIDsFull
	}
	out.vals, out.nulls = out.vals[:0], out.nulls[:0]
	d.dict = nil
	maxDef := byte(0)
	if fcc.Node().Optional() {
		maxDef = 1
	}
	err := eachCheckedPage(fcc, r, chk, func() bool { return int64(len(out.vals)) < n }, func(page parquet.Page) error {
		return d.intPage(page, kind, maxDef, out)
	})
	if err != nil {
		return err
	}
	if err := chk.Done(); err != nil {
		return err
	}
	if int64(len(out.vals)) != n {
		return fmt.Errorf("rowindex: column %v: %d rows found, %d expected", fcc.Node(), len(out.vals), n)
	}
	if len(out.nulls) > 0 {
		out.nulls = append(out.nulls, make([]bool, len(out.vals)-len(out.nulls))...)
	}
	return nil
}

// appendIntWords appends the intKeys words of a typed buffer of kind.
func appendIntWords(dst []uint64, kind parquet.Kind, vals encoding.Values) []uint64 {
	if kind == parquet.Int64 {
		for _, v := range vals.Int64() {
			dst = append(dst, intWord(v))
		}
		return dst
	}
	for _, v := range vals.Int32() {
		dst = append(dst, intWord(int64(v)))
	}
	return dst
}

// intPage decodes one page's rows into out (decodeInts). out.nulls is
// empty until a null row, then a flag per row up to the last null one
// (decodeInts fills in the rest).
func (d *chunkDecoder) intPage(page parquet.Page, kind parquet.Kind, maxDef byte, out *intKeys) error {
	nv := int(page.NumValues())
	defs := page.DefinitionLevels()
	if len(defs) > 0 && len(defs) != nv {
		return fmt.Errorf("rowindex: page has %d definition levels for %d values", len(defs), nv)
	}
	data := page.Data()
	// The present values, in order: a dictionary's by index, or the
	// page's own.
	var idx, i32 []int32
	var i64 []int64
	present := 0
	if dict := page.Dictionary(); dict != nil {
		if dict != d.dict {
			d.dict = dict
			d.dictInts = appendIntWords(d.dictInts[:0], kind, dict.Page().Data())
		}
		idx = data.Int32()
		present = len(idx)
	} else if kind == parquet.Int64 {
		i64 = data.Int64()
		present = len(i64)
	} else {
		i32 = data.Int32()
		present = len(i32)
	}
	dv := d.dictInts
	word := func(k int) (uint64, error) {
		switch {
		case idx != nil:
			if ix := idx[k]; ix >= 0 && int(ix) < len(dv) {
				return dv[ix], nil
			}
			return 0, fmt.Errorf("rowindex: dictionary index %d out of range", idx[k])
		case i64 != nil:
			return intWord(i64[k]), nil
		}
		return intWord(int64(i32[k])), nil
	}
	if len(defs) == 0 {
		// No row null: the values are the rows (values past them are
		// ignored, as decode does).
		if present < nv {
			return fmt.Errorf("rowindex: page has fewer values than its definition levels say")
		}
		at := len(out.vals)
		out.vals = slices.Grow(out.vals, nv)[:at+nv]
		dst := out.vals[at:]
		switch {
		case idx != nil:
			for j, ix := range idx[:nv] {
				if ix < 0 || int(ix) >= len(dv) {
					return fmt.Errorf("rowindex: dictionary index %d out of range", ix)
				}
				dst[j] = dv[ix]
			}
		case i64 != nil:
			for j, v := range i64[:nv] {
				dst[j] = intWord(v)
			}
		default:
			for j, v := range i32[:nv] {
				dst[j] = intWord(int64(v))
			}
		}
		return nil
	}
	k := 0
	for j := range nv {
		if defs[j] != maxDef {
			if len(out.nulls) < len(out.vals) {
				out.nulls = append(out.nulls, make([]bool, len(out.vals)-len(out.nulls))...)
			}
			out.vals = append(out.vals, 0)
			out.nulls = append(out.nulls, true)
			continue
		}
		if k >= present {
			return fmt.Errorf("rowindex: page has fewer values than its definition levels say")
		}
		v, err := word(k)
		if err != nil {
			return err
		}
		k++
		out.vals = append(out.vals, v)
	}
	return nil
}
