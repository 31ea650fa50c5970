package prepared

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/ariadne-go/ariadne/aerr"
)

// Blob columns (lever 3 of the design, "issue fewer reads"): the fields a
// lookup serves are stored together as one BYTE_ARRAY column, one value per
// row, so that a row index lookup reads one column chunk — one contiguous
// range per file holding the key — instead of one range per column. Every
// Parquet reader reads the file as a table with a binary column; the row
// index decodes the blob back into the original columns with their types
// (rowindex/blobread.go). See docs/prepared.md, "Blob columns".

// BlobKey is the key of the key-value metadata entry that describes a blob
// column; its value is a BlobMarker as JSON.
const BlobKey = "ariadne.blob"

// BlobEncoding names the row encoding of blob values (BlobMarker.Encoding):
// for the fields in order, first a null bitmap with one bit per optional
// field (least significant bit first, ⌈optional fields / 8⌉ bytes; a set
// bit: null), then the value of every field that is not null, as in a
// PLAIN page except byte arrays: BOOLEAN 1 byte (0 or 1), INT32 and FLOAT 4
// bytes, INT64 and DOUBLE 8 bytes, INT96 12 bytes (all little-endian),
// FIXED_LEN_BYTE_ARRAY its length in bytes, BYTE_ARRAY an unsigned LEB128
// varint length then the bytes. Nothing else: no tags, no field count.
const BlobEncoding = "ariadne-row-1"

// ErrBadBlob is the class of a blob value or blob marker that does not
// decode (see *BlobError).
var ErrBadBlob = errors.New("prepared: bad blob")

// BlobError reports a blob value or marker that does not decode; it is also
// an aerr.ErrCorruptDataFile.
type BlobError struct{ Reason string }

func (e *BlobError) Error() string { return "prepared: bad blob: " + e.Reason }

// Is makes errors.Is(err, ErrBadBlob) and errors.Is(err,
// aerr.ErrCorruptDataFile) true.
func (e *BlobError) Is(target error) bool {
	return target == ErrBadBlob || target == aerr.ErrCorruptDataFile
}

func badBlob(format string, args ...any) error {
	return &BlobError{Reason: fmt.Sprintf(format, args...)}
}

// BlobOptions make PrepareFiles and Write store some columns as one blob
// column (Options.Blob).
type BlobOptions struct {
	// Column is the name of the blob column (a BYTE_ARRAY column, written
	// last in the schema). It must not name a column that stays.
	Column string
	// Fields are the top-level, non-repeated primitive columns stored in
	// the blob, in this order. The key column is always stored first (it
	// also stays a column of its own: the row index, the bloom filter and
	// the sort order need it), so a lookup of every column reads the blob
	// alone.
	Fields []string
	// Keep keeps the fields as columns as well (they are then stored
	// twice). By default the blob replaces them: other readers see the
	// key, the columns not in the blob, and the blob.
	Keep bool
	// Codec is how the blob is laid out and compressed: "" (a blob per
	// row, BlobEncoding, compressed with the column's codec) or
	// BlobCodecZstdDict (a blob per key, co-grouped: the key's rows column
	// by column, BlobBlockEncoding, each a ZSTD frame with the file's
	// dictionary; the blob column is stored UNCOMPRESSED). With
	// BlobCodecZstdDict the blob holds every column but the key (Fields
	// must list them all), Keep is refused, and the files are framed
	// (Options.Frames, set to DefaultFrameOptions when nil).
	Codec string
}

// BlobChoice records the blob column of a prepared file in its marker.
type BlobChoice struct {
	Column string   `json:"column"`
	Fields []string `json:"fields"`
	Keep   bool     `json:"keep"`
	Codec  string   `json:"codec,omitempty"`
}

// BlobMarker is the JSON under BlobKey: everything a reader needs to decode
// the blob column back into typed columns.
type BlobMarker struct {
	Version  int    `json:"version"` // 1
	Column   string `json:"column"`
	Encoding string `json:"encoding"` // BlobEncoding
	// Fields are the blob's fields in encoding order, described for
	// people; Schema is exact.
	Fields []BlobField `json:"fields"`
	// Kept is BlobOptions.Keep.
	Kept bool `json:"kept"`
	// Schema is an empty Parquet file (no row groups) whose schema is the
	// source's, every column in its original order, as base64 (encoding/
	// json's []byte): any Parquet reader opens it, and a field's type
	// there (physical, logical, optional) is the type its values decode to.
	Schema []byte `json:"schema"`
	// Codec is BlobOptions.Codec: "" for BlobEncoding values, or
	// BlobCodecZstdDict for BlobBlockEncoding blocks (one stored row per
	// block of a key's rows), each a ZSTD frame compressed with Dict, a
	// ZSTD dictionary (RFC 8878 §5, as base64), the same for every block
	// of the file.
	Codec string `json:"codec,omitempty"`
	Dict  []byte `json:"dict,omitempty"`
}

// BlobField describes one field of a blob.
type BlobField struct {
	Name     string `json:"name"`
	Type     string `json:"type"` // physical type: BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY
	Length   int    `json:"length,omitempty"`
	Optional bool   `json:"optional"`
	Logical  string `json:"logical,omitempty"`
	// Base, Scale, Delta and Prefix are the field's transforms in a file
	// of BlobBlockEncoding2 blocks, chosen from the file's values (zero
	// for other encodings): see BlobBlockEncoding2.
	Base   int64  `json:"base,omitempty"`
	Scale  int64  `json:"scale,omitempty"`
	Delta  bool   `json:"delta,omitempty"`
	Prefix []byte `json:"prefix,omitempty"`
}

func (b *BlobOptions) choice() *BlobChoice {
	if b == nil {
		return nil
	}
	return &BlobChoice{Column: b.Column, Fields: slices.Clone(b.Fields), Keep: b.Keep, Codec: b.Codec}
}

// blobField is a field of a rebuilt group: a node with a name.
type blobField struct {
	parquet.Node
	name string
}

func (f *blobField) Name() string                      { return f.name }
func (f *blobField) Value(reflect.Value) reflect.Value { return reflect.Value{} }

// blobPlan is how a writer turns source rows into rows with a blob.
type blobPlan struct {
	out    *columns // the output schema's columns (key, kept sort columns)
	marker BlobMarker
	// Per source leaf: its output leaf (-1: dropped) and its blob field
	// (-1: none).
	outLeaf, field []int
	kinds          []parquet.Kind // per field
	optional       []int          // per field: its bit in the null bitmap, -1 if required
	nopt           int
	blobLeaf       int
	keyLeaf        int // the key's source leaf (co-grouped blocks)
}

// planBlob checks b against the source columns and builds the output
// schema: the source's columns in order, less the blob's fields (unless
// Keep; the key always stays), then the blob column, PLAIN and compressed
// with codec like every column.
//
// b has passed Options.withDefaults (a name and at least one field).
func planBlob(cols *columns, b *BlobOptions, o Options) (*blobPlan, error) {
	src := cols.schema
	fields := append([]string{o.Key}, b.Fields...)
	seen := map[string]bool{}
	var uniq []string
	for _, name := range fields {
		if seen[name] {
			if name != o.Key {
				return nil, aerr.Invalid("prepared: blob field %q listed twice", name)
			}
			continue
		}
		seen[name] = true
		uniq = append(uniq, name)
	}
	fields = uniq
	top := map[string]parquet.Field{}
	for _, f := range src.Fields() {
		top[f.Name()] = f
	}
	for _, name := range fields {
		f, ok := top[name]
		if !ok {
			return nil, aerr.New(aerr.ErrColumnNotFound, "prepared: blob field %s is not a column (columns: %s)", name, strings.Join(topLevel(src), ", "))
		}
		if !f.Leaf() || f.Repeated() {
			return nil, aerr.Invalid("prepared: blob field %q must be a top-level, non-repeated primitive column", name)
		}
	}
	if b.Codec == BlobCodecZstdDict {
		// Co-grouped: one stored row per block of a key's rows, so no
		// column can stay beside the blob but the key.
		if b.Keep {
			return nil, aerr.Invalid("prepared: a %s blob cannot keep its columns (one stored row per key)", b.Codec)
		}
		var left []string
		for _, f := range src.Fields() {
			if !seen[f.Name()] {
				left = append(left, f.Name())
			}
		}
		if len(left) > 0 {
			return nil, aerr.Invalid("prepared: a %s blob holds every column but the key (one stored row per key); add %s to its fields", b.Codec, strings.Join(left, ", "))
		}
	}
	p := &blobPlan{}
	var outFields []parquet.Field
	for _, f := range src.Fields() {
		if f.Name() == b.Column {
			if b.Keep || !seen[f.Name()] || f.Name() == o.Key {
				return nil, aerr.Invalid("prepared: blob column %q would clash with a column of that name", b.Column)
			}
		}
		if !b.Keep && seen[f.Name()] && f.Name() != o.Key {
			continue
		}
		outFields = append(outFields, f)
	}
	node := parquet.Compressed(parquet.Encoded(parquet.Required(parquet.Leaf(parquet.ByteArrayType)), &parquet.Plain), o.Compression)
	outFields = append(outFields, &blobField{Node: node, name: b.Column})
	out := parquet.NewSchema(src.Name(), &layoutNode{Node: src, fields: outFields})
	p.out = &columns{schema: out, leaves: len(out.Columns())}
	for _, c := range cols.order {
		if l, ok := out.Lookup(c.name); ok {
			p.out.order = append(p.out.order, column{name: c.name, index: l.ColumnIndex, typ: c.typ})
		}
	}
	bl, _ := out.Lookup(b.Column)
	p.blobLeaf = bl.ColumnIndex
	// Leaf maps, by path.
	fieldAt := map[string]int{}
	for i, name := range fields {
		fieldAt[name] = i
	}
	p.kinds = make([]parquet.Kind, len(fields))
	p.optional = make([]int, len(fields))
	for i := range p.optional {
		p.optional[i] = -1
	}
	for _, path := range src.Columns() {
		l, _ := src.Lookup(path...)
		o := -1
		if ol, ok := out.Lookup(path...); ok {
			o = ol.ColumnIndex
		}
		p.outLeaf = append(p.outLeaf, o)
		fi := -1
		if len(path) == 1 {
			if i, ok := fieldAt[path[0]]; ok {
				fi = i
				p.kinds[i] = l.Node.Type().Kind()
			}
		}
		p.field = append(p.field, fi)
	}
	// The marker: the fields described, and the source schema exactly.
	var empty bytes.Buffer
	pw := parquet.NewWriter(&empty, src)
	if err := pw.Close(); err != nil {
		return nil, err
	}
	p.marker = BlobMarker{Version: 1, Column: b.Column, Encoding: BlobEncoding, Kept: b.Keep, Schema: empty.Bytes()}
	if b.Codec == BlobCodecZstdDict {
		p.marker.Encoding, p.marker.Codec = BlobBlockEncoding, b.Codec
	}
	if kl, ok := src.Lookup(o.Key); ok {
		p.keyLeaf = kl.ColumnIndex
	}
	for i, name := range fields {
		f := top[name]
		bf := BlobField{Name: name, Type: f.Type().Kind().String(), Optional: f.Optional()}
		if bf.Type == parquet.FixedLenByteArray.String() {
			bf.Length = f.Type().Length()
		}
		if lt := f.Type().LogicalType(); lt != nil {
			bf.Logical = lt.String()
		}
		if f.Optional() {
			p.optional[i] = p.nopt
			p.nopt++
		}
		p.marker.Fields = append(p.marker.Fields, bf)
	}
	return p, nil
}

// convert returns the output row of source row r: the kept leaves moved to
// their output columns, and the blob value.
func (p *blobPlan) convert(r parquet.Row, buf []byte) (parquet.Row, []byte) {
	out := make(parquet.Row, 0, len(r)+1)
	vals := make([]parquet.Value, len(p.kinds))
	for _, v := range r {
		c := v.Column()
		if fi := p.field[c]; fi >= 0 {
			vals[fi] = v
		}
		if o := p.outLeaf[c]; o >= 0 {
			out = append(out, v.Level(v.RepetitionLevel(), v.DefinitionLevel(), o))
		}
	}
	buf = p.encode(buf[:0], vals)
	blob := parquet.ByteArrayValue(slices.Clone(buf)).Level(0, 0, p.blobLeaf)
	// The blob column is the last leaf; kept leaves keep their order.
	out = append(out, blob)
	return out, buf
}

// encode appends the blob value of one row's field values (BlobEncoding).
func (p *blobPlan) encode(dst []byte, vals []parquet.Value) []byte {
	at := len(dst)
	for range (p.nopt + 7) / 8 {
		dst = append(dst, 0)
	}
	for i, v := range vals {
		if v.IsNull() {
			if b := p.optional[i]; b >= 0 {
				dst[at+b/8] |= 1 << (b % 8)
			}
			continue
		}
		dst = appendBlobValue(dst, p.kinds[i], v)
	}
	return dst
}

func appendBlobValue(dst []byte, k parquet.Kind, v parquet.Value) []byte {
	switch k {
	case parquet.Boolean:
		if v.Boolean() {
			return append(dst, 1)
		}
		return append(dst, 0)
	case parquet.Int32:
		return binary.LittleEndian.AppendUint32(dst, uint32(v.Int32()))
	case parquet.Int64:
		return binary.LittleEndian.AppendUint64(dst, uint64(v.Int64()))
	case parquet.Int96:
		x := v.Int96()
		for _, w := range x {
			dst = binary.LittleEndian.AppendUint32(dst, w)
		}
		return dst
	case parquet.Float:
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(v.Float()))
	case parquet.Double:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Double()))
	case parquet.FixedLenByteArray:
		return append(dst, v.ByteArray()...)
	default: // ByteArray
		b := v.ByteArray()
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		return append(dst, b...)
	}
}

// blobStream converts the rows of a sorted stream to the blob layout.
type blobStream struct {
	rowStream
	p   *blobPlan
	buf []byte
}

func (s *blobStream) next() (parquet.Row, error) {
	r, err := s.rowStream.next()
	if err != nil {
		return r, err
	}
	var out parquet.Row
	out, s.buf = s.p.convert(r, s.buf)
	return out, nil
}

// Blob decodes the blob column of a prepared file (BlobOf).
type Blob struct {
	Marker BlobMarker
	// Schema is the source's schema (an empty file): the columns a blob
	// file's rows are decoded back into, in their original order.
	Schema *parquet.File
	// Leaves is, per field, its leaf column index in Schema.
	Leaves   []int
	kinds    []parquet.Kind
	lengths  []int
	optional []int
	nopt     int
	// pos is, per field, its place in a decoded row (fields in leaf
	// order); decs decompress BlobCodecZstdDict blocks.
	pos    []int
	decs   *blockDecoders
	dictID byte // BlobBlockEncoding2 and 3: the ID restoreFrame puts back
	// scratch holds DecodeBlock's *blockScratch between blocks.
	scratch sync.Pool
}

// BlobOf returns the blob description of a prepared file, false for a file
// with none; a marker that does not describe a decodable blob is a
// *BlobError.
func BlobOf(f *parquet.File) (*Blob, bool, error) {
	v, ok := f.Lookup(BlobKey)
	if !ok {
		return nil, false, nil
	}
	var m BlobMarker
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, true, badBlob("%s marker: %v", BlobKey, err)
	}
	b, err := NewBlob(m)
	return b, true, err
}

// NewBlob checks a blob marker and prepares its decoding.
func NewBlob(m BlobMarker) (*Blob, error) {
	switch {
	case m.Version != 1:
		return nil, badBlob("version %d (this build reads version 1)", m.Version)
	case m.Encoding == BlobEncoding && m.Codec == "" && len(m.Dict) == 0:
	case (m.Encoding == BlobBlockEncoding || m.Encoding == BlobBlockEncoding2 || m.Encoding == BlobBlockEncoding3) && m.Codec == BlobCodecZstdDict:
		if len(m.Dict) == 0 {
			return nil, badBlob("codec %s without a dictionary", m.Codec)
		}
	default:
		return nil, badBlob("encoding %q, codec %q (this build reads %s, and %s, %s or %s with codec %s)", m.Encoding, m.Codec, BlobEncoding, BlobBlockEncoding, BlobBlockEncoding2, BlobBlockEncoding3, BlobCodecZstdDict)
	}
	b, err := parseBlob(m)
	if err != nil {
		return nil, err
	}
	if m.Codec == BlobCodecZstdDict {
		if b.decs, err = newBlockDecoders(m.Dict, maxBlockDecoders()); err != nil {
			return nil, badBlob("dictionary: %v", err)
		}
		if m.Encoding != BlobBlockEncoding {
			// Its frames are stored without the dictionary's ID
			// (stripFrame, compactFrame), which must fit the byte
			// restoreFrame and expandFrame put back.
			if id := binary.LittleEndian.Uint32(m.Dict[4:8]); id == 0 || id > 255 {
				return nil, badBlob("dictionary ID %d for %s (1 to 255)", id, m.Encoding)
			} else {
				b.dictID = byte(id)
			}
		}
	}
	return b, nil
}

// parseBlob describes the fields of a checked marker: NewBlob without the
// codec (FrameFile reads the uncompressed blocks of its intermediate file
// with it).
func parseBlob(m BlobMarker) (*Blob, error) {
	sf, err := parquet.OpenFile(bytes.NewReader(m.Schema), int64(len(m.Schema)))
	if err != nil {
		return nil, badBlob("schema: %v", err)
	}
	b := &Blob{Marker: m, Schema: sf}
	for _, fd := range m.Fields {
		c := sf.Root().Column(fd.Name)
		if c == nil || !c.Leaf() || c.Repeated() {
			return nil, badBlob("field %q is not a top-level primitive column of the schema", fd.Name)
		}
		k := c.Type().Kind()
		if k.String() != fd.Type || c.Optional() != fd.Optional {
			return nil, badBlob("field %q is %s (optional %t) in the schema, %s (optional %t) in the marker", fd.Name, k, c.Optional(), fd.Type, fd.Optional)
		}
		b.Leaves = append(b.Leaves, c.Index())
		b.kinds = append(b.kinds, k)
		b.lengths = append(b.lengths, c.Type().Length())
		opt := -1
		if fd.Optional {
			opt = b.nopt
			b.nopt++
		}
		b.optional = append(b.optional, opt)
	}
	if len(b.Leaves) == 0 {
		return nil, badBlob("no fields")
	}
	order := make([]int, len(b.Leaves))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return b.Leaves[x] - b.Leaves[y] })
	b.pos = make([]int, len(order))
	for at, fi := range order {
		if at > 0 && b.Leaves[order[at-1]] == b.Leaves[fi] {
			return nil, badBlob("field %q listed twice", m.Fields[fi].Name)
		}
		b.pos[fi] = at
	}
	if m.Encoding == BlobBlockEncoding2 || m.Encoding == BlobBlockEncoding3 {
		for fi, fd := range m.Fields {
			if fd.Scale < 0 || (fd.Scale == 0) != (b.kinds[fi] != parquet.Int32 && b.kinds[fi] != parquet.Int64) {
				return nil, badBlob("field %q: scale %d for %s", fd.Name, fd.Scale, fd.Type)
			}
		}
	}
	return b, nil
}

// KeyAt is where the key (the blob's first field) is in a row of Decode
// or DecodeBlock.
func (b *Blob) KeyAt() int { return b.pos[0] }

// Blocks reports whether the blob holds blocks of rows (DecodeBlock), one
// stored row per block of a key's rows.
func (b *Blob) Blocks() bool { return b.decs != nil }

// Has reports whether the blob holds the top-level column name.
func (b *Blob) Has(name string) bool {
	return slices.ContainsFunc(b.Marker.Fields, func(f BlobField) bool { return f.Name == name })
}

// Decode appends to dst one value per field of the blob value v, in leaf
// order (the order of Schema's columns, not the blob's), each leveled as a
// top-level column of Schema (definition level 1 for a present optional
// value) at its leaf index there. Byte arrays point into v. A value that
// does not decode exactly (short, or bytes left over) is a *BlobError. A
// BlobCodecZstdDict blob holds blocks of rows: see DecodeBlock.
func (b *Blob) Decode(dst parquet.Row, v []byte) (parquet.Row, error) {
	if b.decs != nil {
		return dst, badBlob("value of a %s blob decoded as one row", b.Marker.Codec)
	}
	at := len(dst)
	dst = append(dst, make(parquet.Row, len(b.kinds))...)
	nb := (b.nopt + 7) / 8
	if len(v) < nb {
		return dst, badBlob("value of %d bytes is shorter than its null bitmap", len(v))
	}
	bits, v := v[:nb], v[nb:]
	for i, k := range b.kinds {
		leaf := b.Leaves[i]
		if o := b.optional[i]; o >= 0 && bits[o/8]&(1<<(o%8)) != 0 {
			dst[at+b.pos[i]] = parquet.NullValue().Level(0, 0, leaf)
			continue
		}
		def := 0
		if b.optional[i] >= 0 {
			def = 1
		}
		need := valueWidth(k, b.lengths[i])
		if k == parquet.ByteArray {
			n, w := binary.Uvarint(v)
			if w <= 0 || n > uint64(len(v)-w) {
				return dst, badBlob("field %s: bad length", b.Marker.Fields[i].Name)
			}
			v = v[w:]
			need = int(n)
		}
		if len(v) < need {
			return dst, badBlob("field %s: %d bytes left, %d needed", b.Marker.Fields[i].Name, len(v), need)
		}
		p := v[:need:need]
		v = v[need:]
		x, ok := blobValue(k, p)
		if !ok {
			return dst, badBlob("field %s: boolean byte %d", b.Marker.Fields[i].Name, p[0])
		}
		dst[at+b.pos[i]] = x.Level(0, def, leaf)
	}
	if len(v) != 0 {
		return dst, badBlob("%d bytes after the last field", len(v))
	}
	return dst, nil
}

// valueWidth is the bytes a non-null value of kind k takes in a blob
// (flba: a fixed-length byte array's length); 0 for a byte array, whose
// length is stored before it.
func valueWidth(k parquet.Kind, flba int) int {
	switch k {
	case parquet.Boolean:
		return 1
	case parquet.Int32, parquet.Float:
		return 4
	case parquet.Int64, parquet.Double:
		return 8
	case parquet.Int96:
		return 12
	case parquet.FixedLenByteArray:
		return flba
	}
	return 0
}

// blobValue decodes one stored value of kind k from p (its valueWidth
// bytes, or a byte array's); byte arrays point into p. ok is false for a
// boolean byte other than 0 or 1.
func blobValue(k parquet.Kind, p []byte) (x parquet.Value, ok bool) {
	switch k {
	case parquet.Boolean:
		if p[0] > 1 {
			return x, false
		}
		x = parquet.BooleanValue(p[0] == 1)
	case parquet.Int32:
		x = parquet.Int32Value(int32(binary.LittleEndian.Uint32(p)))
	case parquet.Int64:
		x = parquet.Int64Value(int64(binary.LittleEndian.Uint64(p)))
	case parquet.Int96:
		x = parquet.Int96Value(deprecated.Int96{binary.LittleEndian.Uint32(p), binary.LittleEndian.Uint32(p[4:]), binary.LittleEndian.Uint32(p[8:])})
	case parquet.Float:
		x = parquet.FloatValue(math.Float32frombits(binary.LittleEndian.Uint32(p)))
	case parquet.Double:
		x = parquet.DoubleValue(math.Float64frombits(binary.LittleEndian.Uint64(p)))
	case parquet.FixedLenByteArray:
		x = parquet.FixedLenByteArrayValue(p)
	default:
		x = parquet.ByteArrayValue(p)
	}
	return x, true
}
