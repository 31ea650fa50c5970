package prepared

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/aerr"
)

// dictBlobs compresses the blocks of a co-grouped blob column
// (BlobCodecZstdDict) while FrameFile rewrites the file: the intermediate
// holds each block uncompressed as one PLAIN value (BlobBlockEncoding);
// the output holds it in BlobBlockEncoding3 as a compacted ZSTD frame with
// the file's dictionary, the column chunk UNCOMPRESSED (a reader sees the
// frames as the binary values), and one raw frame-table entry per key run,
// so a lookup reads exactly its key's values.
type dictBlobs struct {
	leaf   int
	enc    *zstd.Encoder
	marker string // the ariadne.blob entry with the dictionary
	in     *Blob  // the intermediate's blocks
	out    *Blob  // the output's: in, with the file's transforms
	rows   []parquet.Row
	buf    []byte
}

// newDictBlobs returns nil for a file without a BlobCodecZstdDict blob;
// otherwise it chooses the file's block transforms (BlobBlockEncoding2)
// from all its blocks and trains the dictionary over a sample of them
// (every k-th, ≈dictSampleBytes in all).
func newDictBlobs(f *parquet.File, level zstd.EncoderLevel) (*dictBlobs, error) {
	v, ok := f.Lookup(BlobKey)
	if !ok {
		return nil, nil
	}
	var m BlobMarker
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, badBlob("%s marker: %v", BlobKey, err)
	}
	if m.Codec != BlobCodecZstdDict {
		return nil, nil
	}
	if len(m.Dict) > 0 || m.Encoding != BlobBlockEncoding {
		return nil, aerr.Invalid("prepared: frame: the blob's blocks are compressed already")
	}
	in, err := parseBlob(m)
	if err != nil {
		return nil, err
	}
	leaf := -1
	for i, p := range f.Schema().Columns() {
		if len(p) == 1 && p[0] == m.Column {
			leaf = i
		}
	}
	if leaf < 0 {
		return nil, badBlob("blob column %q not in the file", m.Column)
	}
	var total int64
	for _, g := range f.Metadata().RowGroups {
		total += g.Columns[leaf].MetaData.TotalUncompressedSize
	}
	every := max(total/dictSampleBytes, 1)
	var samples [][]byte
	var i int64
	st := newBlockStats(in)
	var rows []parquet.Row
	buf := make([]parquet.Value, 256)
	for _, g := range f.RowGroups() {
		pages := g.ColumnChunks()[leaf].Pages()
		for {
			p, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				pages.Close()
				return nil, err
			}
			vr := p.Values()
			for {
				n, err := vr.ReadValues(buf)
				for _, v := range buf[:n] {
					var derr error
					if rows, derr = in.decodeRaw(rows[:0], v.ByteArray()); derr != nil {
						parquet.Release(p)
						pages.Close()
						return nil, derr
					}
					st.add(rows)
					if i%every == 0 {
						samples = append(samples, append([]byte(nil), v.ByteArray()...))
					}
					i++
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					parquet.Release(p)
					pages.Close()
					return nil, err
				}
			}
			parquet.Release(p)
		}
		pages.Close()
	}
	m.Encoding, m.Fields = BlobBlockEncoding3, st.fields(samples)
	out, err := parseBlob(m)
	if err != nil {
		return nil, err
	}
	db := &dictBlobs{leaf: leaf, in: in, out: out}
	for k, s := range samples {
		if rows, err = in.decodeRaw(rows[:0], s); err != nil {
			return nil, err
		}
		samples[k] = out.encodeBlock2(nil, rows)
	}
	if len(samples) == 0 {
		samples = [][]byte{{0}}
	}
	dict, err := trainDict(samples, level)
	if err != nil {
		return nil, fmt.Errorf("prepared: blob dictionary: %w", err)
	}
	db.enc, err = zstd.NewWriter(nil, zstd.WithEncoderDict(dict), zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
	if err != nil {
		return nil, fmt.Errorf("prepared: blob dictionary: %w", err)
	}
	m.Dict = dict
	mj, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	db.marker = string(mj)
	return db, nil
}

// compress returns the output value of one intermediate block: its rows
// in BlobBlockEncoding3, a ZSTD frame with the dictionary, compacted.
func (db *dictBlobs) compress(raw []byte) ([]byte, error) {
	var err error
	if db.rows, err = db.in.decodeRaw(db.rows[:0], raw); err != nil {
		return nil, err
	}
	db.buf = db.out.encodeBlock2(db.buf[:0], db.rows)
	z, ok := compactFrame(db.enc.EncodeAll(db.buf, nil))
	if !ok {
		return nil, fmt.Errorf("prepared: a block's frame header is not the expected one")
	}
	return z, nil
}

// blockStats gathers, over a file's blocks, what BlobBlockEncoding2's
// transforms need: per integer field its least value and the greatest
// common divisor of its differences, per byte-array field the prefix
// every value shares.
type blockStats struct {
	b      *Blob
	seen   []bool
	min    []int64
	ref    []int64
	gcd    []uint64
	prefix [][]byte
}

// maxBlockPrefix bounds a field's stripped prefix (it is in the marker,
// read with every footer).
const maxBlockPrefix = 256

func newBlockStats(b *Blob) *blockStats {
	n := len(b.kinds)
	return &blockStats{b: b, seen: make([]bool, n), min: make([]int64, n), ref: make([]int64, n), gcd: make([]uint64, n), prefix: make([][]byte, n)}
}

func (s *blockStats) add(rows []parquet.Row) {
	for fi, k := range s.b.kinds {
		if k != parquet.Int32 && k != parquet.Int64 && k != parquet.ByteArray {
			continue
		}
		at := s.b.pos[fi]
		for _, r := range rows {
			v := r[at]
			if v.IsNull() {
				continue
			}
			if k == parquet.ByteArray {
				p := v.ByteArray()
				if !s.seen[fi] {
					s.prefix[fi] = slices.Clone(p[:min(len(p), maxBlockPrefix)])
				} else {
					n := 0
					for n < len(p) && n < len(s.prefix[fi]) && p[n] == s.prefix[fi][n] {
						n++
					}
					s.prefix[fi] = s.prefix[fi][:n]
				}
				s.seen[fi] = true
				continue
			}
			x := intOf(k, v)
			if !s.seen[fi] {
				s.seen[fi], s.min[fi], s.ref[fi] = true, x, x
				continue
			}
			s.min[fi] = min(s.min[fi], x)
			d := uint64(x - s.ref[fi])
			if x < s.ref[fi] {
				d = uint64(s.ref[fi] - x)
			}
			s.gcd[fi] = gcd(s.gcd[fi], d)
		}
	}
}

// fields returns the marker's fields with the file's transforms: Delta
// where it makes the sampled blocks' integers smaller.
func (s *blockStats) fields(samples [][]byte) []BlobField {
	out := slices.Clone(s.b.Marker.Fields)
	for fi, k := range s.b.kinds {
		switch k {
		case parquet.ByteArray:
			out[fi].Prefix = s.prefix[fi]
		case parquet.Int32, parquet.Int64:
			out[fi].Base, out[fi].Scale = s.min[fi], int64(max(s.gcd[fi], 1))
			if out[fi].Scale < 0 { // a divisor past MaxInt64: the values are two
				out[fi].Scale = 1
			}
		}
	}
	var plain, delta []int
	plain, delta = make([]int, len(out)), make([]int, len(out))
	var rows []parquet.Row
	for _, sm := range samples {
		var err error
		if rows, err = s.b.decodeRaw(rows[:0], sm); err != nil {
			continue
		}
		for fi, k := range s.b.kinds {
			if fi == 0 || (k != parquet.Int32 && k != parquet.Int64) {
				continue
			}
			at := s.b.pos[fi]
			var prev uint64
			first := true
			for _, r := range rows {
				if r[at].IsNull() {
					continue
				}
				u := uint64(intOf(k, r[at])-out[fi].Base) / uint64(out[fi].Scale)
				plain[fi] += uvarintLen(u)
				if first {
					delta[fi] += uvarintLen(u)
				} else {
					delta[fi] += uvarintLen(uint64(int64(u-prev)<<1 ^ int64(u-prev)>>63))
				}
				prev, first = u, false
			}
		}
	}
	for fi := range out {
		out[fi].Delta = delta[fi] < plain[fi]
	}
	return out
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func uvarintLen(u uint64) int {
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// chunk rewrites the blob's column chunk: every value compressed with the
// dictionary, pages stored UNCOMPRESSED and DELTA_LENGTH_BYTE_ARRAY (the
// values' lengths packed at the page's start, then the values), one bare
// frame per value (FramesVersionValues): a lookup reads exactly its key's
// values, which lie side by side, without their lengths. The chunk's
// statistics and column index (bounds of uncompressed blocks) are dropped.
func (db *dictBlobs) chunk(fw *frameWriter, r io.ReaderAt, cc *format.ColumnChunk, oi format.OffsetIndex, tw *tableWriter) ([]format.PageLocation, error) {
	cm := &cc.MetaData
	locs := oi.PageLocations
	if cm.DictionaryPageOffset > 0 || len(locs) == 0 {
		return nil, aerr.Invalid("blob chunk with a dictionary page or no offset index")
	}
	if cm.Codec != format.Uncompressed {
		return nil, aerr.Invalid("blob chunk is %s, not UNCOMPRESSED", cm.Codec)
	}
	out := make([]format.PageLocation, len(locs))
	start := fw.n
	reencodeChunk(cc, start, format.DeltaLengthByteArray)
	cm.Statistics = format.Statistics{}
	cc.ColumnIndexOffset, cc.ColumnIndexLength = 0, 0
	tw.int(len(locs))
	var lens []int32
	var vals []byte
	for i, loc := range locs {
		h, levels, in, err := readPlainPage(r, loc, i, "blob")
		if err != nil {
			return nil, err
		}
		nl := len(levels)
		rows := int(h.DataPageHeaderV2.V.NumRows)
		lens, vals = lens[:0], vals[:0]
		for row := range rows {
			if len(in) < 4 {
				return nil, fmt.Errorf("page %d: values end at row %d of %d", i, row, rows)
			}
			n := int(binary.LittleEndian.Uint32(in))
			if n > len(in)-4 {
				return nil, fmt.Errorf("page %d: value of %d bytes past the page", i, n)
			}
			z, err := db.compress(in[4 : 4+n])
			if err != nil {
				return nil, fmt.Errorf("page %d: %w", i, err)
			}
			in = in[4+n:]
			lens = append(lens, int32(len(z)))
			vals = append(vals, z...)
		}
		if len(in) != 0 {
			return nil, fmt.Errorf("page %d: %d bytes after its values", i, len(in))
		}
		packed, err := new(delta.BinaryPackedEncoding).EncodeInt32(nil, lens)
		if err != nil {
			return nil, err
		}
		h2 := h
		h2.CRC = 0
		h2.CompressedPageSize = int32(nl + len(packed) + len(vals))
		h2.UncompressedPageSize = h2.CompressedPageSize
		h2.DataPageHeaderV2.V.IsCompressed = thrift.New(false)
		h2.DataPageHeaderV2.V.Encoding = format.DeltaLengthByteArray
		head, err := thrift.Marshal(new(thrift.CompactProtocol), &h2)
		if err != nil {
			return nil, err
		}
		out[i] = format.PageLocation{Offset: fw.n, CompressedPageSize: h2.CompressedPageSize + int32(len(head)), FirstRowIndex: loc.FirstRowIndex}
		tw.page(len(head)+nl, nl, pageBare, len(lens))
		tw.bareFrames(len(packed), lens) // the lengths, then the values
		fw.st.Frames += int64(len(lens))
		fw.st.RawBlocks += int64(len(lens))
		fw.page(cm, head, int64(h2.CompressedPageSize), levels, packed, vals)
	}
	cm.Codec = format.Uncompressed
	cm.TotalCompressedSize = fw.n - start
	return out, fw.err
}

// reencodeChunk points a column chunk's metadata at its rewritten pages,
// starting at start, whose PLAIN data pages become enc; its sizes are
// counted again as the pages are written.
func reencodeChunk(cc *format.ColumnChunk, start int64, enc format.Encoding) {
	cm := &cc.MetaData
	cc.FileOffset, cm.DataPageOffset, cm.DictionaryPageOffset, cm.IndexPageOffset = start, start, 0, 0
	cm.TotalUncompressedSize = 0
	cm.Encoding, cm.EncodingStats = slices.Clone(cm.Encoding), slices.Clone(cm.EncodingStats) // the input's otherwise
	for i, e := range cm.Encoding {
		if e == format.Plain {
			cm.Encoding[i] = enc
		}
	}
	for i, e := range cm.EncodingStats {
		if e.Encoding == format.Plain && e.PageType == format.DataPageV2 {
			cm.EncodingStats[i].Encoding = enc
		}
	}
}

// readPlainPage reads page i of an uncompressed chunk of the intermediate
// file (what names the column in errors): a PLAIN data page v2, as its
// header, levels and values.
func readPlainPage(r io.ReaderAt, loc format.PageLocation, i int, what string) (h format.PageHeader, levels, vals []byte, err error) {
	h, body, err := readPage(r, loc, i)
	if err != nil {
		return h, nil, nil, err
	}
	if h.Type != format.DataPageV2 || !h.DataPageHeaderV2.Valid || h.DataPageHeaderV2.V.Encoding != format.Plain {
		return h, nil, nil, aerr.Invalid("%s page %d is not a PLAIN data page v2", what, i)
	}
	dh := &h.DataPageHeaderV2.V
	nl := int(dh.RepetitionLevelsByteLength + dh.DefinitionLevelsByteLength)
	if nl > len(body) || int(h.CompressedPageSize) != len(body) {
		return h, nil, nil, fmt.Errorf("%s page %d: sizes do not match its location", what, i)
	}
	return h, body[:nl], body[nl:], nil
}
