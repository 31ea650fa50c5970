package prepared

import (
	"encoding/binary"
	"io"
	"slices"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
)

// Co-grouped blobs with a dictionary (BlobOptions.Codec = BlobCodecZstdDict):
// one stored row per key (per block of a key's rows, for a key larger than
// blockMaxBytes), whose blob is all the key's rows laid out column by column
// (BlobBlockEncoding) and compressed as one ZSTD frame with a dictionary
// trained over the file's blocks. The dictionary is in the ariadne.blob
// marker, read with the footer, so a lookup costs one ranged read of its
// key's frame: the blob column is stored UNCOMPRESSED (its values are
// compressed already) and the frame table locates every key's values
// exactly (FrameFile, dictBlobs).

// BlobCodecZstdDict is the BlobOptions.Codec of co-grouped blocks, each a
// ZSTD frame compressed with the file's dictionary (BlobMarker.Dict).
const BlobCodecZstdDict = "zstd-dict"

// BlobBlockEncoding names the block encoding of a co-grouped blob before
// compression: an unsigned LEB128 varint n (the block's rows), then per field
// in order a column of n values — except the key, the first field, stored
// once for the block (as a column of one value): for an optional field a
// null bitmap of ⌈n/8⌉ bytes (least significant bit first; set: null), then
// the values that are not null, as ariadne-row-1 stores them (BOOLEAN 1
// byte, fixed widths little-endian) except BYTE_ARRAY: first every value's
// varint length, then all their bytes.
const BlobBlockEncoding = "ariadne-block-1"

// blockMaxBytes ends a block once its rows hold this many value bytes: a
// heavy key is several blocks (stored rows), each one ZSTD frame, so no
// value grows without bound and a limited read of a heavy key decompresses
// a block, not the key.
const blockMaxBytes = 64 << 10

// dictHistoryBytes is the size of a file's dictionary content, and
// dictSampleBytes the blocks its entropy tables are built from. The
// dictionary is stored in the footer (as base64 JSON, ×4/3) and read with
// it by every cold lookup.
const (
	dictHistoryBytes = 32 << 10
	dictSampleBytes  = 2 << 20
)

// dictMaxDecoded bounds the memory of decoding one block (a corrupt frame
// must not allocate without bound).
const dictMaxDecoded = 256 << 20

// blockStream groups the rows of a sorted stream into co-grouped blocks:
// one output row (key, block bytes uncompressed) per run of a key's rows,
// at most ≈blockMaxBytes each. The blocks are compressed later, by
// FrameFile, once the dictionary is trained over them.
type blockStream struct {
	rowStream
	p       *blobPlan
	keyLeaf int // the key's source leaf
	keyOut  int // the key's output leaf
	keyType parquet.Type
	pending parquet.Row // the first row of the next block, read ahead
	cols    [][]parquet.Value
	done    bool
	buf     []byte
	rows    int64 // source rows read
}

func (s *blockStream) next() (parquet.Row, error) {
	if s.done {
		return nil, io.EOF
	}
	if s.pending == nil {
		r, err := s.rowStream.next()
		if err != nil {
			return nil, err
		}
		s.pending = slices.Clone(r)
	}
	if s.cols == nil {
		s.cols = make([][]parquet.Value, len(s.p.kinds))
	}
	for i := range s.cols {
		s.cols[i] = s.cols[i][:0]
	}
	key := valueOf(s.pending, s.keyLeaf).Clone()
	bytes := 0
	n := 0
	add := func(r parquet.Row) {
		for _, v := range r {
			if fi := s.p.field[v.Column()]; fi >= 0 {
				s.cols[fi] = append(s.cols[fi], v.Clone())
				bytes += 8
				if k := v.Kind(); k == parquet.ByteArray || k == parquet.FixedLenByteArray {
					bytes += len(v.ByteArray())
				}
			}
		}
		n++
		s.rows++
	}
	add(s.pending)
	s.pending = nil
	for bytes < blockMaxBytes {
		r, err := s.rowStream.next()
		if err == io.EOF {
			s.done = true
			break
		}
		if err != nil {
			return nil, err
		}
		if !sameKey(s.keyType, key, valueOf(r, s.keyLeaf)) {
			s.pending = slices.Clone(r)
			break
		}
		add(r)
	}
	s.buf = s.p.encodeBlock(s.buf[:0], n, s.cols)
	kv := key.Level(0, key.DefinitionLevel(), s.keyOut)
	blob := parquet.ByteArrayValue(slices.Clone(s.buf)).Level(0, 0, s.p.blobLeaf)
	return parquet.Row{kv, blob}, nil
}

// encodeBlock appends the block of n rows whose values are cols (per
// field, one value per row) in BlobBlockEncoding.
func (p *blobPlan) encodeBlock(dst []byte, n int, cols [][]parquet.Value) []byte {
	dst = binary.AppendUvarint(dst, uint64(n))
	for fi, vals := range cols {
		if fi == 0 {
			vals = vals[:1] // the key, once
		}
		if p.optional[fi] >= 0 {
			at := len(dst)
			dst = append(dst, make([]byte, (len(vals)+7)/8)...)
			for i, v := range vals {
				if v.IsNull() {
					dst[at+i/8] |= 1 << (i % 8)
				}
			}
		}
		if p.kinds[fi] == parquet.ByteArray {
			for _, v := range vals {
				if !v.IsNull() {
					dst = binary.AppendUvarint(dst, uint64(len(v.ByteArray())))
				}
			}
			for _, v := range vals {
				if !v.IsNull() {
					dst = append(dst, v.ByteArray()...)
				}
			}
			continue
		}
		for _, v := range vals {
			if !v.IsNull() {
				dst = appendBlobValue(dst, p.kinds[fi], v)
			}
		}
	}
	return dst
}

// trainDict builds a ZSTD dictionary from sample blocks (uncompressed):
// the content is the samples' bytes, the last ones nearest the end (ZSTD
// reaches the end of a dictionary with the shortest offsets), and the
// entropy tables are built from all of them.
func trainDict(samples [][]byte, level zstd.EncoderLevel) ([]byte, error) {
	var hist []byte
	for i := len(samples) - 1; i >= 0 && len(hist) < dictHistoryBytes; i-- {
		s := samples[i]
		if room := dictHistoryBytes - len(hist); len(s) > room {
			s = s[:room]
		}
		hist = append(slices.Clone(s), hist...)
	}
	for len(hist) < 8 {
		hist = append(hist, 0)
	}
	return zstd.BuildDict(zstd.BuildDictOptions{ID: 1, Contents: samples, History: hist, Offsets: [3]int{1, 4, 8}, Level: level})
}

// blockDecoder decompresses blocks of one file: a decoder holding the
// file's dictionary (DecodeAll is safe for concurrent use).
func newBlockDecoder(dict []byte) (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderDicts(dict), zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(dictMaxDecoded))
}

// DecodeBlock appends to dst the rows of one co-grouped blob value v (a
// ZSTD frame of a BlobBlockEncoding block, BlobMarker.Codec
// BlobCodecZstdDict): per row, one value per field leveled as in Decode.
// The rows share one backing array; byte arrays point into a buffer of
// their own. A frame or block that does not decode is a *BlobError.
func (b *Blob) DecodeBlock(dst []parquet.Row, v []byte) ([]parquet.Row, error) {
	if b.dec == nil {
		return dst, badBlob("value of a %s blob decoded as a block", b.Marker.Encoding)
	}
	raw, err := b.dec.DecodeAll(v, nil)
	if err != nil {
		return dst, badBlob("block frame of %d bytes: %v", len(v), err)
	}
	n64, w := binary.Uvarint(raw)
	// Every row but the key's costs at least a bit (a null), and a block
	// of the key alone holds at most ≈blockMaxBytes/8 rows: a count past
	// both is damage, not a reason to allocate.
	if w <= 0 || n64 == 0 || n64 > 8*uint64(len(raw))+blockMaxBytes {
		return dst, badBlob("block row count")
	}
	raw = raw[w:]
	n := int(n64)
	nf := len(b.kinds)
	vals := make([]parquet.Value, n*nf)
	for fi, k := range b.kinds {
		m := n
		if fi == 0 {
			m = 1
		}
		name := b.Marker.Fields[fi].Name
		leaf := b.Leaves[fi]
		var nulls []byte
		def := 0
		if b.optional[fi] >= 0 {
			nb := (m + 7) / 8
			if len(raw) < nb {
				return dst, badBlob("field %s: short null bitmap", name)
			}
			nulls, raw = raw[:nb], raw[nb:]
			def = 1
		}
		isNull := func(i int) bool { return nulls != nil && nulls[i/8]&(1<<(i%8)) != 0 }
		var lens []int
		if k == parquet.ByteArray {
			for i := range m {
				if isNull(i) {
					continue
				}
				l, w := binary.Uvarint(raw)
				if w <= 0 || l > uint64(len(raw)) {
					return dst, badBlob("field %s: bad length", name)
				}
				raw = raw[w:]
				lens = append(lens, int(l))
			}
		}
		li := 0
		for i := range m {
			var x parquet.Value
			if isNull(i) {
				x = parquet.NullValue().Level(0, 0, leaf)
			} else {
				need := valueWidth(k, b.lengths[fi])
				if k == parquet.ByteArray {
					need = lens[li]
					li++
				}
				if len(raw) < need {
					return dst, badBlob("field %s: %d bytes left, %d needed", name, len(raw), need)
				}
				p := raw[:need:need]
				raw = raw[need:]
				var ok bool
				if x, ok = blobValue(k, p); !ok {
					return dst, badBlob("field %s: boolean byte %d", name, p[0])
				}
				x = x.Level(0, def, leaf)
			}
			if at := b.pos[fi]; fi == 0 {
				for r := range n {
					vals[r*nf+at] = x
				}
			} else {
				vals[i*nf+at] = x
			}
		}
	}
	if len(raw) != 0 {
		return dst, badBlob("%d bytes after the block's last field", len(raw))
	}
	for r := range n {
		dst = append(dst, parquet.Row(vals[r*nf:(r+1)*nf:(r+1)*nf]))
	}
	return dst, nil
}
