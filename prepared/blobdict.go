package prepared

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/aerr"
)

// dictBlobs compresses the blocks of a co-grouped blob column
// (BlobCodecZstdDict) while FrameFile rewrites the file: the intermediate
// holds each block uncompressed as one PLAIN value; the output holds it as a
// ZSTD frame with the file's dictionary, the column chunk UNCOMPRESSED (a
// reader sees the frames as the binary values), and one raw frame-table
// entry per key run, so a lookup reads exactly its key's values.
type dictBlobs struct {
	leaf   int
	enc    *zstd.Encoder
	marker string // the ariadne.blob entry with the dictionary
}

// newDictBlobs returns nil for a file without a BlobCodecZstdDict blob;
// otherwise it trains the dictionary over a sample of the file's blocks
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
	if len(m.Dict) > 0 {
		return nil, aerr.Invalid("prepared: frame: the blob's blocks are compressed already")
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
	if len(samples) == 0 {
		samples = [][]byte{{0}}
	}
	dict, err := trainDict(samples, level)
	if err != nil {
		return nil, fmt.Errorf("prepared: blob dictionary: %w", err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderDict(dict), zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
	if err != nil {
		return nil, fmt.Errorf("prepared: blob dictionary: %w", err)
	}
	m.Dict = dict
	mj, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &dictBlobs{leaf: leaf, enc: enc, marker: string(mj)}, nil
}

// chunk rewrites the blob's column chunk: every value compressed with the
// dictionary, pages stored UNCOMPRESSED, one raw frame per key run of a
// page. The chunk's statistics and column index (bounds of uncompressed
// blocks) are dropped.
func (db *dictBlobs) chunk(fw *frameWriter, r io.ReaderAt, cc *format.ColumnChunk, oi format.OffsetIndex, starts []int64, tw *tableWriter) ([]format.PageLocation, error) {
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
	cc.FileOffset, cm.DataPageOffset, cm.DictionaryPageOffset, cm.IndexPageOffset = start, start, 0, 0
	cm.TotalUncompressedSize = 0
	cm.Statistics = format.Statistics{}
	cc.ColumnIndexOffset, cc.ColumnIndexLength = 0, 0
	tw.int(len(locs))
	for i, loc := range locs {
		h, body, err := readPage(r, loc, i)
		if err != nil {
			return nil, err
		}
		if h.Type != format.DataPageV2 || !h.DataPageHeaderV2.Valid || h.DataPageHeaderV2.V.Encoding != format.Plain {
			return nil, aerr.Invalid("blob page %d is not a PLAIN data page v2", i)
		}
		dh := &h.DataPageHeaderV2.V
		nl := int(dh.RepetitionLevelsByteLength + dh.DefinitionLevelsByteLength)
		if nl > len(body) || int(h.CompressedPageSize) != len(body) {
			return nil, fmt.Errorf("page %d: sizes do not match its location", i)
		}
		levels, vals := body[:nl], body[nl:]
		rows := int(dh.NumRows)
		// The page's key runs, as row offsets.
		first := loc.FirstRowIndex
		segs := []int{0}
		for _, s := range starts {
			if s > first && s < first+int64(rows) {
				segs = append(segs, int(s-first))
			}
		}
		segs = append(segs, rows)
		var nb []byte
		var sizes []int
		row := 0
		for k := 1; k < len(segs); k++ {
			at := len(nb)
			for ; row < segs[k]; row++ {
				if len(vals) < 4 {
					return nil, fmt.Errorf("page %d: values end at row %d of %d", i, row, rows)
				}
				n := int(binary.LittleEndian.Uint32(vals))
				if n > len(vals)-4 {
					return nil, fmt.Errorf("page %d: value of %d bytes past the page", i, n)
				}
				z := db.enc.EncodeAll(vals[4:4+n], nil)
				vals = vals[4+n:]
				nb = binary.LittleEndian.AppendUint32(nb, uint32(len(z)))
				nb = append(nb, z...)
			}
			sizes = append(sizes, len(nb)-at)
		}
		if len(vals) != 0 {
			return nil, fmt.Errorf("page %d: %d bytes after its values", i, len(vals))
		}
		h2 := h
		h2.CRC = 0
		h2.CompressedPageSize = int32(nl + len(nb))
		h2.UncompressedPageSize = h2.CompressedPageSize
		h2.DataPageHeaderV2.V.IsCompressed = thrift.New(false)
		head, err := thrift.Marshal(new(thrift.CompactProtocol), &h2)
		if err != nil {
			return nil, err
		}
		out[i] = format.PageLocation{Offset: fw.n, CompressedPageSize: int32(len(head) + nl + len(nb)), FirstRowIndex: loc.FirstRowIndex}
		tw.int(len(head) + nl)
		tw.int(nl)
		tw.int(len(sizes))
		for k, size := range sizes {
			n := segs[k+1] - segs[k]
			tw.int(n)
			tw.int(n)
			tw.int(0)
			tw.int(size<<1 | 1) // raw: the values as stored
			fw.st.Frames++
			fw.st.RawBlocks++
		}
		fw.write(head)
		fw.write(levels)
		fw.write(nb)
		fw.st.Pages++
		cm.TotalUncompressedSize += int64(len(head) + nl + len(nb))
	}
	cm.Codec = format.Uncompressed
	cm.TotalCompressedSize = fw.n - start
	return out, fw.err
}
