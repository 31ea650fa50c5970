package prepared

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/pqrow"
)

// Interleaved column groups (FrameOptions.Interleave; lever 3b of the
// random-access spec): in standard Parquet every column chunk is
// contiguous, so a key's frames in k columns are k byte ranges. An
// interleaved file keeps every column as it is (other readers read them)
// and, in the key column's pages, follows each key's frame with a ZSTD
// *skippable frame* holding a copy of the group's values for the frame's
// rows. Every ZSTD decoder skips it, as it skips alignment padding, so the
// page still decodes to the key column's values; the row index reads the
// key's frame and its copy as one byte range per file and decodes the
// group's columns from the copy.
//
// A copy is one skippable frame (magic copyMagic, 4-byte payload length)
// whose payload is the xxhash64 of the content (8 bytes, little endian)
// and one ZSTD frame of the content, compressed with the file's dictionary
// (InterleaveMarker.Dict, trained over a sample of the file's copies: a
// key's values alone lose the entropy they share with their neighbours,
// which the dictionary gives back; only our reader reads copies, so a
// dictionary costs other readers nothing): per group column, in the group's
// order, a bitmap of the rows whose value is defined ((rows+7)/8 bytes,
// bit i of byte i/8; optional columns only), the length of the values as
// a uvarint, and the defined values PLAIN (a BOOLEAN value one byte). One
// frame of all the group's values rather than copies of each column's own
// frames: the columns' pages and frames are cut independently (each
// column is paged on its own, frames grouped by MinFrameBytes), so their
// frames do not cover the key's rows alone, and one frame decompresses
// once and shares its entropy across the columns. The hash is of the
// content, so a copy that does not hold what the writer wrote (a flipped
// byte anywhere in it) is ErrBadFrames, never other rows.

// copyMagic starts a copy: a skippable frame of magic 0x184D2A5A (padding
// uses 0x184D2A50), so a copy is told from padding by its first bytes.
var copyMagic = []byte{0x5a, 0x2a, 0x4d, 0x18}

// CopyColumn is one group column's part of a decoded copy.
type CopyColumn struct {
	// Defined is the bitmap of rows holding a value (bit i of byte i/8),
	// nil for a required column (every row holds one).
	Defined []byte
	// Values are the defined values, PLAIN (a BOOLEAN value one byte).
	Values []byte
}

// IsDefined reports whether row i of the copy holds a value.
func (c CopyColumn) IsDefined(i int) bool {
	return c.Defined == nil || c.Defined[i/8]>>(i%8)&1 == 1
}

// ParseCopy checks a copy (the skippable frame after a frame of an
// interleaved file, Frame.Copy bytes) and splits its content into the
// group's columns, for rows rows; optional[i] says whether group column i
// is optional (carries a bitmap). decode decompresses the ZSTD frame. A
// copy that is not one, whose content's hash differs from the stored one,
// or that does not split exactly is a *FrameTableError (ErrBadFrames).
func ParseCopy(b []byte, rows int, optional []bool, decode func(z []byte) ([]byte, error)) ([]CopyColumn, error) {
	if len(b) < 16 || string(b[:4]) != string(copyMagic) || int(binary.LittleEndian.Uint32(b[4:])) != len(b)-8 {
		return nil, badFrames("no interleaved copy of %d bytes here", len(b))
	}
	sum := binary.LittleEndian.Uint64(b[8:])
	// A decoder allocates the content size the frame's header gives.
	if why := pqrow.ZstdFrameImplausible(b[16:]); why != "" {
		return nil, badFrames("interleaved copy: %s", why)
	}
	content, err := decode(b[16:])
	if err != nil {
		return nil, badFrames("interleaved copy: %v", err)
	}
	if xxhash.Sum64(content) != sum {
		return nil, badFrames("interleaved copy: checksum mismatch (%d bytes of content)", len(content))
	}
	out := make([]CopyColumn, len(optional))
	at := 0
	for i, opt := range optional {
		if opt {
			n := (rows + 7) / 8
			if at+n > len(content) {
				return nil, badFrames("interleaved copy: column %d's bitmap past the content", i)
			}
			out[i].Defined = content[at : at+n : at+n]
			at += n
		}
		l, n := binary.Uvarint(content[at:])
		if n <= 0 || l > uint64(len(content)-at-n) {
			return nil, badFrames("interleaved copy: column %d's values past the content", i)
		}
		at += n
		out[i].Values = content[at : at+int(l) : at+int(l)]
		at += int(l)
	}
	if at != len(content) {
		return nil, badFrames("interleaved copy: %d bytes after the last column", len(content)-at)
	}
	return out, nil
}

// interleaveLeaves resolves the columns of an interleaved group (names) to
// leaf indexes of s: top-level, non-repeated primitive columns other than
// the key, each once. Anything else is aerr.ErrInvalidArgument.
func interleaveLeaves(s *parquet.Schema, key string, names []string) ([]int, error) {
	seen := map[string]bool{}
	out := make([]int, 0, len(names))
	for _, name := range names {
		if name == key {
			return nil, aerr.Invalid("prepared: interleave: %q is the key, whose frames host the group; list only the other columns", name)
		}
		if seen[name] {
			return nil, aerr.Invalid("prepared: interleave: column %q listed twice", name)
		}
		seen[name] = true
		var field parquet.Field
		for _, f := range s.Fields() {
			if f.Name() == name {
				field = f
			}
		}
		if field == nil {
			return nil, aerr.Invalid("prepared: interleave: column %q is not in the schema (columns: %s)", name, strings.Join(topLevel(s), ", "))
		}
		if !field.Leaf() || field.Repeated() {
			return nil, aerr.Invalid("prepared: interleave: column %q must be a top-level, non-repeated primitive column", name)
		}
		leaf, _ := s.Lookup(name)
		out = append(out, leaf.ColumnIndex)
	}
	return out, nil
}

// Decoder returns a decoder of the copies' ZSTD frames (with the file's
// dictionary); DecodeAll is safe for concurrent use.
func (m *InterleaveMarker) Decoder() (*zstd.Decoder, error) {
	if len(m.Dict) == 0 {
		return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(dictMaxDecoded))
	}
	d, err := newBlockDecoder(m.Dict, 0)
	if err != nil {
		return nil, badFrames("interleave dictionary: %v", err)
	}
	return d, nil
}

// copyDict trains the dictionary of a file's copies over a sample of them:
// one in every k key runs, ≈dictSampleBytes of the group's values in all
// (starts are each row group's key runs).
func copyDict(r io.ReaderAt, f *parquet.File, group, maxDef []int, starts [][]int64, level zstd.EncoderLevel) ([]byte, error) {
	var total int64
	for _, g := range f.Metadata().RowGroups {
		for _, c := range group {
			total += g.Columns[c].MetaData.TotalUncompressedSize
		}
	}
	every := max(total/dictSampleBytes, 1)
	var samples [][]byte
	var i int64
	for rg, g := range f.RowGroups() {
		cp := newCopier(r, f, rg, group, maxDef, nil)
		for k, s := range starts[rg] {
			end := g.NumRows()
			if k+1 < len(starts[rg]) {
				end = starts[rg][k+1]
			}
			b, err := cp.next(int(end - s))
			if err != nil {
				return nil, err
			}
			if i%every == 0 {
				samples = append(samples, bytes.Clone(b))
			}
			i++
		}
	}
	if len(samples) == 0 {
		samples = [][]byte{{0}}
	}
	return trainDict(samples, level)
}

// copier writes the copies of one row group: a cursor over each group
// column's PLAIN pages, advanced by the host's frames in row order.
type copier struct {
	enc     *zstd.Encoder
	cols    []*plainCursor
	content []byte
}

func newCopier(r io.ReaderAt, f *parquet.File, rg int, leaves []int, maxDef []int, enc *zstd.Encoder) *copier {
	cp := &copier{enc: enc}
	ncol := len(f.Schema().Columns())
	for _, c := range leaves {
		cm := f.Metadata().RowGroups[rg].Columns[c].MetaData
		width := plainWidth(cm.Type, f.Schema(), f.Schema().Columns()[c])
		if cm.Type == format.Boolean {
			width = -1
		}
		cp.cols = append(cp.cols, &plainCursor{r: r, codec: cm.Codec, locs: f.OffsetIndexes()[rg*ncol+c].PageLocations, maxDef: maxDef[c], width: width})
	}
	return cp
}

// next returns the content of the copy of the next rows rows (valid until
// the next call).
func (cp *copier) next(rows int) ([]byte, error) {
	b := cp.content[:0]
	for i, pc := range cp.cols {
		var err error
		if b, err = pc.take(b, rows); err != nil {
			return nil, fmt.Errorf("interleave: group column %d: %w", i, err)
		}
	}
	cp.content = b
	return b, nil
}

// copy returns the copy of the group's values of the next rows rows.
func (cp *copier) copy(rows int) ([]byte, error) {
	b, err := cp.next(rows)
	if err != nil {
		return nil, err
	}
	z := cp.enc.EncodeAll(b, nil)
	out := make([]byte, 0, 16+len(z))
	out = append(out, copyMagic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(8+len(z)))
	out = binary.LittleEndian.AppendUint64(out, xxhash.Sum64(b))
	return append(out, z...), nil
}

// done checks that every group column's rows were copied.
func (cp *copier) done() error {
	for i, pc := range cp.cols {
		if pc.row != pc.rows || pc.next != len(pc.locs) {
			return fmt.Errorf("interleave: group column %d holds rows the key column does not", i)
		}
	}
	return nil
}

// plainCursor reads a column chunk's PLAIN pages v2 in row order.
type plainCursor struct {
	r      io.ReaderAt
	codec  format.CompressionCodec
	locs   []format.PageLocation
	maxDef int
	width  int // fixed width; 0 byte arrays; -1 BOOLEAN (bits)
	next   int // the page to load next

	defined    []bool // nil: every row of the page holds a value
	vals       []byte
	row, rows  int
	off, value int // the next value: its offset, and its index (BOOLEAN)
	tmp        []byte
}

func (pc *plainCursor) load() error {
	if pc.next >= len(pc.locs) {
		return errors.New("values end before the key column's rows")
	}
	h, body, err := readPage(pc.r, pc.locs[pc.next], pc.next)
	if err != nil {
		return err
	}
	levels, vals, err := plainValues(h, body, pc.codec, pc.next)
	if err != nil {
		return err
	}
	dh := &h.DataPageHeaderV2.V
	if pc.defined, err = definedRows(levels[dh.RepetitionLevelsByteLength:], pc.maxDef, int(dh.NumRows)); err != nil {
		return fmt.Errorf("page %d levels: %w", pc.next, err)
	}
	pc.vals, pc.rows, pc.row, pc.off, pc.value = vals, int(dh.NumRows), 0, 0, 0
	pc.next++
	return nil
}

// take appends the next n rows' part of a copy to out: the bitmap of the
// defined rows (optional columns), the values' length and the values.
func (pc *plainCursor) take(out []byte, n int) ([]byte, error) {
	bm := len(out)
	if pc.maxDef > 0 {
		out = append(out, make([]byte, (n+7)/8)...)
	}
	v := pc.tmp[:0]
	for i := 0; i < n; i++ {
		for pc.row == pc.rows {
			if err := pc.load(); err != nil {
				return nil, err
			}
		}
		def := pc.defined == nil || pc.defined[pc.row]
		pc.row++
		if !def {
			continue
		}
		if pc.maxDef > 0 {
			out[bm+i/8] |= 1 << (i % 8)
		}
		switch {
		case pc.width < 0:
			if pc.value/8 >= len(pc.vals) {
				return nil, errors.New("booleans end early")
			}
			v = append(v, pc.vals[pc.value/8]>>(pc.value%8)&1)
			pc.value++
			continue
		case pc.width > 0:
			if pc.off+pc.width > len(pc.vals) {
				return nil, errors.New("values end early")
			}
			v = append(v, pc.vals[pc.off:pc.off+pc.width]...)
			pc.off += pc.width
		default:
			if pc.off+4 > len(pc.vals) {
				return nil, errors.New("byte array values end early")
			}
			e := pc.off + 4 + int(binary.LittleEndian.Uint32(pc.vals[pc.off:]))
			if e > len(pc.vals) || e < pc.off {
				return nil, errors.New("byte array values end early")
			}
			v = append(v, pc.vals[pc.off:e]...)
			pc.off = e
		}
	}
	pc.tmp = v
	out = binary.AppendUvarint(out, uint64(len(v)))
	return append(out, v...), nil
}
