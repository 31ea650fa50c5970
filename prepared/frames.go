package prepared

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/internal/proc"
	"github.com/ariadne-go/ariadne/store"
)

// FrameOptions are the settings of FrameFile.
type FrameOptions struct {
	// Level is the ZSTD level (zstd.EncoderLevel: 1 fastest … 4 best);
	// 0 is the default level (2).
	Level int
	// Align, if > 0, is the alignment boundary of frames in the file (a
	// power of two ≥ 64, e.g. 4096): a frame no larger than Align never
	// straddles a multiple of Align, a larger one starts on one. The gaps
	// are ZSTD skippable frames inside the page, so every ZSTD decoder
	// skips them and the page stays one ZSTD stream.
	Align int
	// MinFrameBytes, if > 0, groups whole keys into a frame until it holds
	// at least this many bytes of PLAIN values: a frame per light key costs
	// ≈10 bytes of frame header and its own entropy, for values of a few
	// bytes. A lookup then reads the frame holding its key, ≈ this many
	// bytes compressed, instead of exactly its key's. 0: a frame per key.
	MinFrameBytes int
	// RawBlocks makes the framing adaptive to compressibility: each frame
	// (a key run, or a group of them by MinFrameBytes) is stored as its own
	// ZSTD frame only where that is smaller than its values as a ZSTD *raw
	// block* (a 3-byte block header, then the values as they are); the
	// others are raw blocks, consecutive ones inside one ZSTD frame (a
	// 6-byte frame header per run of them). Raw blocks are standard ZSTD,
	// so every reader reads the pages as before, and a lookup reads a raw
	// block's values by byte range, without decompressing anything. A light
	// key's values of a few bytes, which ZSTD cannot compress alone, then
	// cost 3 bytes of header instead of ≈10. Not with Align.
	RawBlocks bool
	// Interleave, if not empty, names the columns of an interleaved group
	// (top-level, non-repeated primitive columns other than the key): the
	// key column gets a frame per key run, each followed in its page by a
	// ZSTD skippable frame holding a copy of these columns' values for the
	// frame's rows, so that a lookup reads one byte range per file for the
	// key and the group (see interleave.go). The columns stay as they are
	// for other readers, so their values are stored twice. Not with
	// RawBlocks or a blob.
	Interleave []string
}

// maxRawBlock is the largest raw block: ZSTD's Block_Maximum_Size, 128 KiB,
// with the frame's window (rawFrameHeader) of the same size.
const maxRawBlock = 128 << 10

// rawFrameHeader opens a ZSTD frame of raw blocks (RFC 8878 §3.1.1.1): the
// magic number, a frame header descriptor without content size, checksum or
// dictionary (single segment off), and a window descriptor of 2^17 bytes
// (exponent 7, mantissa 0), so blocks may hold up to 128 KiB.
var rawFrameHeader = []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38}

// rawBlockHeader is the 3-byte header of a raw block of n bytes (RFC 8878
// §3.1.1.2): Last_Block in bit 0, Block_Type 0 (raw) in bits 1–2, the size
// in bits 3–23.
func rawBlockHeader(n int, last bool) []byte {
	v := uint32(n) << 3
	if last {
		v |= 1
	}
	return []byte{byte(v), byte(v >> 8), byte(v >> 16)}
}

// DefaultFrameOptions are the frame options of `ariadne prepare --frames`:
// whole keys grouped into frames of ≥ DefaultMinFrameBytes.
func DefaultFrameOptions() FrameOptions { return FrameOptions{MinFrameBytes: DefaultMinFrameBytes} }

// choice is what the marker and Choices record of the options.
func (fo *FrameOptions) choice() *FrameChoice {
	return &FrameChoice{MinFrameBytes: fo.MinFrameBytes, Align: fo.Align, Level: fo.Level, RawBlocks: fo.RawBlocks, Interleave: slices.Clone(fo.Interleave)}
}

// FrameStats describes a file written by FrameFile.
type FrameStats struct {
	Bytes        int64 // file size
	Pages        int64 // data pages
	Frames       int64 // ZSTD frames and raw blocks holding values (all columns)
	RawBlocks    int64 // of Frames, raw blocks (FrameOptions.RawBlocks)
	PaddingBytes int64 // bytes of skippable frames (Align)
	TableBytes   int64 // the frame table
	CopyBytes    int64 // interleaved copies (Interleave), skippable frames too

	// keyStartsHeld is the most bytes of key-run starts FrameFile held at
	// once (tests).
	keyStartsHeld int64
}

// skippableMagic starts a ZSTD skippable frame (0x184D2A50, little endian),
// followed by its 4-byte payload length and the payload.
var skippableMagic = []byte{0x50, 0x2a, 0x4d, 0x18}

// FrameFile rewrites a prepared file (r, of size bytes) whose columns are
// PLAIN-encoded in data pages v2 into w with the same rows, pages, row
// groups, page index, bloom filters and key-value metadata, but every data
// page's values compressed as a concatenation of ZSTD frames, one per key
// run in the page (or per run of whole keys, FrameOptions.MinFrameBytes) (per page for a BOOLEAN column, whose PLAIN values are
// bits, and per page for a repeated column). The column chunks' codec is ZSTD: a standard decoder decodes the
// concatenated frames as one stream, so every Parquet reader reads the
// file. A frame table (FramesMarker, FrameTable) records each frame's rows,
// offset and size so a point read decompresses only its key's frame.
//
// Levels stay uncompressed (pages v2), so a frame holds values only. The
// input may be compressed with any codec; its pages must be v2, PLAIN, of
// without dictionary pages, and it
// must carry the prepared marker (its key column says where keys change).
// Anything else is aerr.ErrInvalidArgument.
func FrameFile(ctx context.Context, r io.ReaderAt, size int64, w io.Writer, fo FrameOptions) (FrameStats, error) {
	var st FrameStats
	if fo.MinFrameBytes < 0 {
		return st, aerr.Invalid("prepared: negative minimum frame bytes %d", fo.MinFrameBytes)
	}
	if fo.Align != 0 && (fo.Align < 64 || fo.Align&(fo.Align-1) != 0) {
		return st, aerr.Invalid("prepared: frame alignment %d is not a power of two ≥ 64", fo.Align)
	}
	if fo.RawBlocks && fo.Align != 0 {
		return st, aerr.Invalid("prepared: raw blocks cannot be aligned")
	}
	if fo.RawBlocks && len(fo.Interleave) > 0 {
		return st, aerr.Invalid("prepared: raw blocks cannot be interleaved")
	}
	f, err := pqrow.OpenParquet(r, size)
	if err != nil {
		return st, aerr.Wrap(aerr.ErrInvalidArgument, err, "prepared: frame: not a Parquet file")
	}
	mk, ok, err := MarkerOf(f)
	if err != nil {
		return st, err
	}
	if !ok {
		return st, aerr.Invalid("prepared: frame: the file has no %s marker", MarkerKey)
	}
	if _, ok := f.Lookup(FramesKey); ok {
		return st, aerr.Invalid("prepared: frame: the file is framed already")
	}
	leaves := f.Schema().Columns()
	maxDef := make([]int, len(leaves))
	keyLeaf := -1
	for i, p := range leaves {
		lc, _ := f.Schema().Lookup(p...)
		maxDef[i] = lc.MaxDefinitionLevel
		if lc.MaxRepetitionLevel > 0 {
			maxDef[i] = -1 // repeated: one frame per page
		}
		if len(p) == 1 && p[0] == mk.Key {
			keyLeaf = i
		}
	}
	if keyLeaf < 0 {
		return st, aerr.Invalid("prepared: frame: key column %q not in the file", mk.Key)
	}
	var group []int // the interleaved group's leaves
	if len(fo.Interleave) > 0 {
		if group, err = interleaveLeaves(f.Schema(), mk.Key, fo.Interleave); err != nil {
			return st, err
		}
	}
	// Each row group's key runs cut its frames. An interleaved file reads
	// every row group's here, once, for the copies' dictionary too; any
	// other file reads a row group's when it frames it, so it holds one
	// row group's at a time (8 B a key run) rather than the whole file's.
	var starts [][]int64
	if group != nil {
		starts = make([][]int64, len(f.RowGroups()))
		for rg, g := range f.RowGroups() {
			if starts[rg], err = keyStarts(g.ColumnChunks()[keyLeaf], g.NumRows()); err != nil {
				return st, err
			}
			st.keyStartsHeld += 8 * int64(len(starts[rg]))
		}
	}
	level := zstd.SpeedDefault
	if fo.Level > 0 {
		level = zstd.EncoderLevel(fo.Level)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
	if err != nil {
		return st, err
	}
	defer enc.Close()

	// A co-grouped blob with a dictionary (BlobCodecZstdDict): its blocks
	// are compressed here, with a dictionary trained over them.
	// Blocks are compressed one level better than frames by default: a
	// block of a light key is small, and measured on the frame benchmark
	// SpeedBetterCompression made the blobs 4.5 % smaller than the
	// default level.
	dlevel := zstd.SpeedBetterCompression
	if fo.Level > 0 {
		dlevel = level
	}
	db, err := newDictBlobs(f, dlevel)
	if err != nil {
		return st, err
	}
	if db != nil {
		defer db.enc.Close()
		if group != nil {
			return st, aerr.Invalid("prepared: a co-grouped blob cannot be interleaved")
		}
	}
	src := f.Metadata()
	md := *src
	md.RowGroups = make([]format.RowGroup, len(src.RowGroups))
	oix := make([]format.OffsetIndex, 0, len(src.RowGroups)*len(leaves))
	fw := &frameWriter{w: w, enc: enc, align: fo.Align, minFrame: fo.MinFrameBytes, rawBlocks: fo.RawBlocks, st: &st}
	fw.write([]byte("PAR1"))
	version := FramesVersion
	if fo.RawBlocks {
		version = FramesVersionRaw
	}
	if db != nil {
		version = FramesVersionValues
	}
	var interleave *InterleaveMarker
	var cenc *zstd.Encoder // the copies' encoder, with their dictionary
	if group != nil {
		version = FramesVersionCopies
		dict, err := copyDict(r, f, group, maxDef, starts, dlevel)
		if err != nil {
			return st, fmt.Errorf("prepared: interleave dictionary: %w", err)
		}
		if cenc, err = zstd.NewWriter(nil, zstd.WithEncoderDict(dict), zstd.WithEncoderLevel(dlevel), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false)); err != nil {
			return st, fmt.Errorf("prepared: interleave dictionary: %w", err)
		}
		defer cenc.Close()
		interleave = &InterleaveMarker{Host: mk.Key, Columns: slices.Clone(fo.Interleave), Dict: dict}
	}
	tw := newTableWriter(version)
	tw.int(len(src.RowGroups))
	for rg := range src.RowGroups {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		g := src.RowGroups[rg]
		g.Columns = append([]format.ColumnChunk(nil), g.Columns...)
		var rgStarts []int64
		if starts != nil {
			rgStarts = starts[rg]
		} else {
			pg := f.RowGroups()[rg]
			if rgStarts, err = keyStarts(pg.ColumnChunks()[keyLeaf], pg.NumRows()); err != nil {
				return st, err
			}
			st.keyStartsHeld = max(st.keyStartsHeld, 8*int64(len(rgStarts)))
		}
		tw.int(len(g.Columns))
		g.FileOffset, g.TotalCompressedSize = fw.n, 0
		for c := range g.Columns {
			cc := &g.Columns[c]
			ci := f.OffsetIndexes()[rg*len(leaves)+c]
			var locs []format.PageLocation
			switch {
			case db != nil && c == db.leaf:
				locs, err = db.chunk(fw, r, cc, ci, tw)
			case db != nil && c == keyLeaf:
				locs, err = fw.packedChunk(r, cc, ci, tw)
			case group != nil && c == keyLeaf:
				cp := newCopier(r, f, rg, group, maxDef, cenc)
				if locs, err = fw.chunk(r, cc, ci, leaves[c], f.Schema(), maxDef[c], rgStarts, tw, cp); err == nil {
					err = cp.done()
				}
			default:
				locs, err = fw.chunk(r, cc, ci, leaves[c], f.Schema(), maxDef[c], rgStarts, tw, nil)
			}
			if err != nil {
				return st, fmt.Errorf("prepared: frame: row group %d column %s: %w", rg, strings.Join(leaves[c], "."), err)
			}
			oix = append(oix, format.OffsetIndex{PageLocations: locs, UnencodedByteArrayDataBytes: ci.UnencodedByteArrayDataBytes})
			g.TotalCompressedSize += cc.MetaData.TotalCompressedSize
		}
		md.RowGroups[rg] = g
	}
	if fw.err != nil {
		return st, fw.err
	}
	// The page indexes and bloom filters, as parquet-go lays them out:
	// column indexes, offset indexes, then bloom filters; the frame table
	// last, just before the footer, so a reader that fetches the file's
	// tail for its offset indexes gets the table in the same request.
	for rg := range md.RowGroups {
		for c := range md.RowGroups[rg].Columns {
			cc := &md.RowGroups[rg].Columns[c]
			if cc.ColumnIndexLength > 0 {
				b, err := readAt(r, cc.ColumnIndexOffset, int64(cc.ColumnIndexLength))
				if err != nil {
					return st, err
				}
				cc.ColumnIndexOffset = fw.n
				fw.write(b)
			}
		}
	}
	for rg := range md.RowGroups {
		for c := range md.RowGroups[rg].Columns {
			cc := &md.RowGroups[rg].Columns[c]
			if cc.OffsetIndexLength == 0 && len(f.OffsetIndexes()) == 0 {
				continue
			}
			b, err := thrift.Marshal(new(thrift.CompactProtocol), &oix[rg*len(leaves)+c])
			if err != nil {
				return st, err
			}
			cc.OffsetIndexOffset, cc.OffsetIndexLength = fw.n, int32(len(b))
			fw.write(b)
		}
	}
	for rg := range md.RowGroups {
		for c := range md.RowGroups[rg].Columns {
			cm := &md.RowGroups[rg].Columns[c].MetaData
			if cm.BloomFilterOffset <= 0 {
				continue
			}
			n := int64(cm.BloomFilterLength)
			if n <= 0 {
				if n, err = bloomLength(r, cm.BloomFilterOffset); err != nil {
					return st, err
				}
			}
			b, err := readAt(r, cm.BloomFilterOffset, n)
			if err != nil {
				return st, err
			}
			cm.BloomFilterOffset = fw.n
			fw.write(b)
		}
	}
	fm := FramesMarker{Version: version, Offset: fw.n, Length: int64(len(tw.b)), Align: fo.Align, Frames: st.Frames, Interleave: interleave}
	fw.write(tw.b)
	st.TableBytes = int64(len(tw.b))
	mj, err := json.Marshal(fm)
	if err != nil {
		return st, err
	}
	// The prepared marker says what the file now is: ZSTD, framed (the
	// input's marker, from a PLAIN uncompressed file of WriteFramed, said
	// UNCOMPRESSED and had no framing).
	mk.Codec = parquet.Zstd.CompressionCodec().String()
	if mk.Frames == nil {
		mk.Frames = fo.choice()
	}
	mkj, err := json.Marshal(mk)
	if err != nil {
		return st, err
	}
	md.KeyValueMetadata = nil
	for _, kv := range src.KeyValueMetadata {
		if kv.Key == MarkerKey {
			kv.Value = string(mkj)
		}
		if kv.Key == BlobKey && db != nil {
			kv.Value = db.marker
		}
		md.KeyValueMetadata = append(md.KeyValueMetadata, kv)
	}
	md.KeyValueMetadata = append(md.KeyValueMetadata, format.KeyValue{Key: FramesKey, Value: string(mj)})
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		return st, err
	}
	fw.write(footer)
	fw.write(binary.LittleEndian.AppendUint32(nil, uint32(len(footer))))
	fw.write([]byte("PAR1"))
	st.Bytes = fw.n
	return st, fw.err
}

// page writes one data page, its header and then its parts, and counts
// it in its chunk's metadata (size: its size after the header,
// uncompressed).
func (fw *frameWriter) page(cm *format.ColumnMetaData, head []byte, size int64, parts ...[]byte) {
	fw.write(head)
	for _, p := range parts {
		fw.write(p)
	}
	fw.st.Pages++
	cm.TotalUncompressedSize += int64(len(head)) + size
}

// frameWriter writes the framed file, counting its bytes.
type frameWriter struct {
	w        io.Writer
	n        int64
	err      error
	enc      *zstd.Encoder
	align    int
	minFrame int
	// rawBlocks: FrameOptions.RawBlocks.
	rawBlocks bool
	st        *FrameStats
	buf       []byte
}

func (fw *frameWriter) write(b []byte) {
	if fw.err != nil {
		return
	}
	n, err := fw.w.Write(b)
	fw.n += int64(n)
	fw.err = err
}

func readAt(r io.ReaderAt, off, n int64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := r.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// readPage reads page i of a column chunk, at loc, and decodes its header:
// the header and the bytes after it.
func readPage(r io.ReaderAt, loc format.PageLocation, i int) (format.PageHeader, []byte, error) {
	var h format.PageHeader
	b, err := readAt(r, loc.Offset, int64(loc.CompressedPageSize))
	if err != nil {
		return h, nil, err
	}
	rd := new(thrift.CompactProtocol).NewReaderFromBytes(b)
	if err := thrift.NewDecoder(rd).Decode(&h); err != nil {
		return h, nil, fmt.Errorf("page %d header: %w", i, err)
	}
	return h, b[rd.BytesRead():], nil
}

// bloomLength is the length of a bloom filter whose metadata does not say
// it: its header plus the bitset the header announces.
func bloomLength(r io.ReaderAt, off int64) (int64, error) {
	b := make([]byte, 256)
	n, err := r.ReadAt(b, off)
	if n == 0 {
		return 0, err
	}
	var h format.BloomFilterHeader
	rd := new(thrift.CompactProtocol).NewReaderFromBytes(b[:n])
	if err := thrift.NewDecoder(rd).Decode(&h); err != nil {
		return 0, err
	}
	return int64(rd.BytesRead()) + int64(h.NumBytes), nil
}

// keyStarts returns the rows of a row group where a key run starts (0
// first), from its key column chunk.
func keyStarts(cc parquet.ColumnChunk, rows int64) ([]int64, error) {
	pages := cc.Pages()
	defer pages.Close()
	starts := []int64{}
	var prev parquet.Value
	var row int64
	buf := make([]parquet.Value, 1024)
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		vr := p.Values()
		for {
			n, err := vr.ReadValues(buf)
			for _, v := range buf[:n] {
				if row == 0 || v.IsNull() != prev.IsNull() || !v.IsNull() && !bytes.Equal(v.Bytes(), prev.Bytes()) {
					starts = append(starts, row)
				}
				prev = v.Clone()
				row++
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				parquet.Release(p)
				return nil, err
			}
		}
		parquet.Release(p)
	}
	if row != rows {
		return nil, fmt.Errorf("prepared: frame: key column holds %d rows of %d", row, rows)
	}
	return starts, nil
}

// packedChunk rewrites the key column chunk of a co-grouped file
// (BlobCodecZstdDict): a lookup there reads the blob alone (the block holds
// its key), so the key is stored as small as a standard reader reads it,
// not framed: an INT32 or INT64 key DELTA_BINARY_PACKED (keys ascend in
// the file: a few bits a stored row), any other PLAIN, each page's values
// one ZSTD frame. Its entry in the table has no pages: the row index reads
// it as pages of any file.
func (fw *frameWriter) packedChunk(r io.ReaderAt, cc *format.ColumnChunk, oi format.OffsetIndex, tw *tableWriter) ([]format.PageLocation, error) {
	cm := &cc.MetaData
	locs := oi.PageLocations
	if cm.DictionaryPageOffset > 0 || len(locs) == 0 {
		return nil, aerr.Invalid("key chunk with a dictionary page or no offset index")
	}
	if cm.Codec != format.Uncompressed {
		return nil, aerr.Invalid("key chunk is %s, not UNCOMPRESSED", cm.Codec)
	}
	enc := format.Plain
	if cm.Type == format.Int32 || cm.Type == format.Int64 {
		enc = format.DeltaBinaryPacked
	}
	out := make([]format.PageLocation, len(locs))
	start := fw.n
	reencodeChunk(cc, start, enc)
	cm.Codec = format.Zstd
	tw.int(0) // no frames: read as pages
	var ints []int64
	var packed []byte
	for i, loc := range locs {
		h, levels, vals, err := readPlainPage(r, loc, i, "key")
		if err != nil {
			return nil, err
		}
		if enc == format.DeltaBinaryPacked {
			w := 8
			if cm.Type == format.Int32 {
				w = 4
			}
			if len(vals)%w != 0 {
				return nil, fmt.Errorf("key page %d: %d value bytes", i, len(vals))
			}
			ints = ints[:0]
			for at := 0; at < len(vals); at += w {
				if w == 4 {
					ints = append(ints, int64(int32(binary.LittleEndian.Uint32(vals[at:]))))
				} else {
					ints = append(ints, int64(binary.LittleEndian.Uint64(vals[at:])))
				}
			}
			if w == 4 {
				i32 := make([]int32, len(ints))
				for k, x := range ints {
					i32[k] = int32(x)
				}
				packed, err = new(delta.BinaryPackedEncoding).EncodeInt32(packed[:0], i32)
			} else {
				packed, err = new(delta.BinaryPackedEncoding).EncodeInt64(packed[:0], ints)
			}
			if err != nil {
				return nil, err
			}
			vals = packed
		}
		z := fw.enc.EncodeAll(vals, nil)
		h2 := h
		h2.CRC = 0
		h2.CompressedPageSize = int32(len(levels) + len(z))
		h2.UncompressedPageSize = int32(len(levels) + len(vals))
		h2.DataPageHeaderV2.V.IsCompressed = thrift.New(true)
		h2.DataPageHeaderV2.V.Encoding = enc
		head, err := thrift.Marshal(new(thrift.CompactProtocol), &h2)
		if err != nil {
			return nil, err
		}
		out[i] = format.PageLocation{Offset: fw.n, CompressedPageSize: int32(len(head)) + h2.CompressedPageSize, FirstRowIndex: loc.FirstRowIndex}
		fw.page(cm, head, int64(h2.UncompressedPageSize), levels, z)
	}
	cm.TotalCompressedSize = fw.n - start
	return out, fw.err
}

// chunk rewrites one column chunk, page by page, updating its metadata in
// cc and adding its pages to the table; it returns the new page locations.
//
// With cp (the key column of an interleaved file) every key run is a frame
// of its own, followed by the copy of the group's values for its rows.
func (fw *frameWriter) chunk(r io.ReaderAt, cc *format.ColumnChunk, oi format.OffsetIndex, path []string, schema *parquet.Schema, maxDef int, starts []int64, tw *tableWriter, cp *copier) ([]format.PageLocation, error) {
	cm := &cc.MetaData
	if cm.DictionaryPageOffset > 0 {
		return nil, aerr.Invalid("dictionary page (framing needs PLAIN)")
	}
	locs := oi.PageLocations
	if len(locs) == 0 {
		return nil, aerr.Invalid("no offset index")
	}
	width := plainWidth(cm.Type, schema, path)
	srcCodec := cm.Codec
	out := make([]format.PageLocation, len(locs))
	start := fw.n
	cc.FileOffset, cm.DataPageOffset, cm.DictionaryPageOffset, cm.IndexPageOffset = start, start, 0, 0
	cm.Codec = format.Zstd
	cm.TotalUncompressedSize = 0
	tw.int(len(locs))
	for i, loc := range locs {
		h, body, err := readPage(r, loc, i)
		if err != nil {
			return nil, err
		}
		levels, vals, err := plainValues(h, body, srcCodec, i)
		if err != nil {
			return nil, err
		}
		dh := &h.DataPageHeaderV2.V
		nl := len(levels)
		rows := int(dh.NumRows)
		var defined []bool
		if maxDef >= 0 {
			if defined, err = definedRows(levels[dh.RepetitionLevelsByteLength:], maxDef, rows); err != nil {
				return nil, fmt.Errorf("page %d levels: %w", i, err)
			}
		}
		// The key runs in this page: [first row, rows) cut at starts.
		first := loc.FirstRowIndex
		segs := []int{0}
		if cm.Type != format.Boolean && maxDef >= 0 {
			for _, s := range starts {
				if s > first && s < first+int64(rows) {
					segs = append(segs, int(s-first))
				}
			}
		}
		segs = append(segs, rows)
		minFrame, flags := fw.minFrame, 0
		if cp != nil {
			minFrame, flags = 0, pageCopies
		}
		frames, err := fw.splitValues(vals, width, defined, segs, minFrame)
		if err != nil {
			return nil, fmt.Errorf("page %d: %w", i, err)
		}
		if maxDef < 0 {
			frames[0].values = int(dh.NumValues - dh.NumNulls)
		}
		for k := range frames {
			if cp != nil {
				if frames[k].copy, err = cp.copy(frames[k].rows); err != nil {
					return nil, fmt.Errorf("page %d: %w", i, err)
				}
			}
		}
		// The header's length depends on the page's compressed size, and
		// the padding on the header's length: iterate until both agree.
		hlen := 0
		var head []byte
		var body2 []byte
		var pads []int
		for range 4 {
			body2, pads = fw.frameValues(fw.n+int64(hlen)+int64(nl), frames)
			if n := int64(nl) + int64(len(body2)) + 1<<10; n > math.MaxInt32 {
				// Interleaved copies widen the key column's pages: a page
				// past Parquet's int32 sizes would be written wrong.
				return nil, fmt.Errorf("prepared: page %d: %d framed bytes do not fit a Parquet page (2 GiB): use smaller pages", i, n)
			}
			h2 := h
			h2.CRC = 0
			h2.CompressedPageSize = int32(nl + len(body2))
			h2.DataPageHeaderV2.V.IsCompressed = thrift.New(len(body2) > 0)
			if head, err = thrift.Marshal(new(thrift.CompactProtocol), &h2); err != nil {
				return nil, err
			}
			if len(head) == hlen {
				break
			}
			hlen = len(head)
		}
		if len(head) != hlen {
			return nil, errors.New("page header length did not settle")
		}
		out[i] = format.PageLocation{Offset: fw.n, CompressedPageSize: int32(len(head) + nl + len(body2)), FirstRowIndex: loc.FirstRowIndex}
		tw.page(len(head)+nl, nl, flags, len(frames))
		for k, fr := range frames {
			tw.frame(fr.rows, fr.values, pads[k], len(fr.z), fr.plain)
			if cp != nil {
				tw.int(len(fr.copy))
				fw.st.CopyBytes += int64(len(fr.copy))
			}
			if len(fr.z) > 0 {
				fw.st.Frames++
				if fr.plain {
					fw.st.RawBlocks++
				}
			}
		}
		fw.page(cm, head, int64(h.UncompressedPageSize), levels, body2)
	}
	cm.TotalCompressedSize = fw.n - start
	return out, fw.err
}

// plainValues checks that page i (its header h and the bytes after it)
// is a PLAIN data page v2 and returns its levels and its values,
// decompressed from the chunk's codec.
func plainValues(h format.PageHeader, body []byte, codec format.CompressionCodec, i int) (levels, vals []byte, err error) {
	if h.Type != format.DataPageV2 || !h.DataPageHeaderV2.Valid {
		return nil, nil, aerr.Invalid("page %d is %s, not a data page v2", i, h.Type)
	}
	dh := &h.DataPageHeaderV2.V
	if dh.Encoding != format.Plain {
		return nil, nil, aerr.Invalid("page %d is %s-encoded, not PLAIN", i, dh.Encoding)
	}
	nl := int(dh.RepetitionLevelsByteLength) + int(dh.DefinitionLevelsByteLength)
	// Each length on its own too: callers slice the levels at the first.
	if nl > len(body) || int(h.CompressedPageSize) != len(body) || dh.RepetitionLevelsByteLength < 0 || dh.DefinitionLevelsByteLength < 0 {
		return nil, nil, fmt.Errorf("page %d: sizes do not match its location", i)
	}
	levels, vals = body[:nl], body[nl:]
	rawSize := int(h.UncompressedPageSize) - nl
	if (!dh.IsCompressed.Valid || dh.IsCompressed.V) && codec != format.Uncompressed && len(vals) > 0 && parquet.LookupCompressionCodec(codec) != nil {
		// pqrow.DecompressPage: LZ4_RAW with a bounded decoder
		// (parquet-go's allocates without end on a corrupt page);
		// a size no body of its length can have is refused first
		// (the SNAPPY and ZSTD decoders allocate what it claims).
		if err = pqrow.CheckPageBody(codec, vals, max(rawSize, 0)); err != nil {
			return nil, nil, fmt.Errorf("page %d: %w", i, err)
		}
		if vals, err = pqrow.DecompressPage(codec, nil, vals, max(rawSize, 0)); err != nil {
			return nil, nil, fmt.Errorf("page %d: %w", i, err)
		}
	}
	if len(vals) != rawSize {
		return nil, nil, fmt.Errorf("page %d: %d value bytes, its header says %d", i, len(vals), rawSize)
	}
	return levels, vals, nil
}

// rawFrame is one frame before it is placed: its rows, values and
// compressed bytes.
type rawFrame struct {
	rows, values int
	off, raw     int // the frame's PLAIN values in the page's
	// z is the compressed frame, or with plain the values themselves, to
	// be written as a raw block.
	z     []byte
	plain bool
	// copy follows the frame in an interleaved file's key column: the
	// group's values of its rows (copier.copy).
	copy []byte
}

// plainWidth is the width of a PLAIN value of a column of type t (at path
// in schema); 0 for byte arrays and BOOLEAN (bits).
func plainWidth(t format.Type, schema *parquet.Schema, path []string) int {
	switch t {
	case format.Int32, format.Float:
		return 4
	case format.Int64, format.Double:
		return 8
	case format.Int96:
		return 12
	case format.FixedLenByteArray:
		lc, _ := schema.Lookup(path...)
		return lc.Node.Type().Length()
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// definedRows returns, per row of a flat column's page, whether its value
// is defined (nil when every row is: a required column, maxDef 0).
func definedRows(def []byte, maxDef, rows int) ([]bool, error) {
	if maxDef == 0 {
		return nil, nil
	}
	bw := bits.Len(uint(maxDef))
	out := make([]bool, 0, rows)
	for len(out) < rows {
		h, n := binary.Uvarint(def)
		if n <= 0 {
			return nil, errors.New("truncated definition levels")
		}
		def = def[n:]
		if h&1 == 0 { // RLE run
			cnt := int(h >> 1)
			nb := (bw + 7) / 8
			if len(def) < nb {
				return nil, errors.New("truncated RLE run")
			}
			var v uint64
			for k := range nb {
				v |= uint64(def[k]) << (8 * k)
			}
			def = def[nb:]
			for range min(cnt, rows-len(out)) {
				out = append(out, int(v) == maxDef)
			}
			continue
		}
		groups := int(h >> 1)
		nb := groups * bw
		if len(def) < nb {
			return nil, errors.New("truncated bit-packed run")
		}
		for k := 0; k < groups*8 && len(out) < rows; k++ {
			var v int
			for b := range bw {
				bit := k*bw + b
				v |= int(def[bit/8]>>(bit%8)&1) << b
			}
			out = append(out, v == maxDef)
		}
		def = def[nb:]
	}
	return out, nil
}

// splitValues cuts a page's PLAIN values at the row segments segs (row
// offsets, first 0, last the page's rows) and compresses each part, whole
// segments grouped into a frame of at least minFrame bytes.
func (fw *frameWriter) splitValues(vals []byte, width int, defined []bool, segs []int, minFrame int) ([]rawFrame, error) {
	var out []rawFrame
	off := 0
	for k := 0; k+1 < len(segs); k++ {
		lo, hi := segs[k], segs[k+1]
		nv := hi - lo
		if defined != nil {
			nv = 0
			for _, d := range defined[lo:hi] {
				if d {
					nv++
				}
			}
		}
		end := off
		switch {
		case len(segs) == 2:
			end = len(vals) // one segment: the page (BOOLEAN: bits)
		case width > 0:
			end = off + nv*width
		default:
			for range nv {
				if end+4 > len(vals) {
					return nil, errors.New("byte array values end early")
				}
				end += 4 + int(binary.LittleEndian.Uint32(vals[end:]))
			}
		}
		if end > len(vals) {
			return nil, errors.New("values end early")
		}
		// Whole keys join the open frame while it holds fewer than
		// minFrame raw bytes (MinFrameBytes; 0: a frame per key).
		if n := len(out); n > 0 && out[n-1].raw < minFrame {
			out[n-1].rows += hi - lo
			out[n-1].values += nv
			out[n-1].raw += end - off
		} else {
			out = append(out, rawFrame{rows: hi - lo, values: nv, raw: end - off, off: off})
		}
		off = end
	}
	for k := range out {
		if fr := &out[k]; fr.raw > 0 {
			fr.z = fw.enc.EncodeAll(vals[fr.off:fr.off+fr.raw], nil)
			// Adaptive: a raw block (3 bytes of header) where the frame
			// does not pay.
			if fw.rawBlocks && fr.raw <= maxRawBlock && fr.raw+3 <= len(fr.z) {
				fr.z, fr.plain = vals[fr.off:fr.off+fr.raw], true
			}
		}
	}
	if off != len(vals) {
		return nil, fmt.Errorf("%d value bytes after the last row", len(vals)-off)
	}
	return out, nil
}

// frameValues lays out a page's frames from file offset at (where the
// values start), padding with skippable frames for the alignment; it
// returns the page's values and the padding before each frame.
func (fw *frameWriter) frameValues(at int64, frames []rawFrame) ([]byte, []int) {
	out := fw.buf[:0]
	pads := make([]int, len(frames))
	open := false // a frame of raw blocks is open
	for k, fr := range frames {
		if fr.plain {
			// A raw block: a frame header first unless the previous frame
			// was a raw block too; the last of a run of them ends the frame.
			// Both headers count as padding before the values.
			if !open {
				out = append(out, rawFrameHeader...)
				pads[k] += len(rawFrameHeader)
			}
			last := true
			for _, nx := range frames[k+1:] {
				if len(nx.z) > 0 {
					last = !nx.plain
					break
				}
			}
			out = append(out, rawBlockHeader(len(fr.z), last)...)
			pads[k] += 3
			out = append(out, fr.z...)
			open = !last
			continue
		}
		s := int64(len(fr.z))
		if a := int64(fw.align); a > 0 && s > 0 {
			o := at + int64(len(out))
			pad := int64(0)
			if s <= a && o/a != (o+s-1)/a || s > a && o%a != 0 {
				pad = (a - o%a) % a
				for pad < 8 {
					pad += a
				}
			}
			if pad > 0 {
				out = append(out, skippableMagic...)
				out = binary.LittleEndian.AppendUint32(out, uint32(pad-8))
				out = append(out, make([]byte, pad-8)...)
				pads[k] = int(pad)
			}
		}
		out = append(out, fr.z...)
		out = append(out, fr.copy...)
	}
	fw.buf = out
	return bytes.Clone(out), pads
}

// WriteFramed is Write followed by FrameFile: the rows are written as a
// prepared file with every column PLAIN and uncompressed (opts'
// Compression and Encodings are overridden), then framed into key in st.
// The intermediate file is written to a folder of its own under
// opts.TempDir (the system's if ""), removed when done.
func WriteFramed(ctx context.Context, st store.Store, key string, schema *parquet.Schema, rows parquet.RowReader, opts Options, fo FrameOptions) (FileStats, FrameStats, error) {
	o := opts
	o.Compression = &parquet.Uncompressed
	o.Encodings = map[string]encoding.Encoding{}
	for _, p := range schema.Columns() {
		o.Encodings[strings.Join(p, ".")] = &parquet.Plain
	}
	// The PLAIN, uncompressed intermediate (≈ 3–5× the framed file) goes to
	// a spill folder of its own under TempDir (swept like the sort's runs if
	// the process dies), removed at the end.
	dir, err := os.MkdirTemp(opts.TempDir, proc.SpillPattern("prepare"))
	if err != nil {
		return FileStats{}, FrameStats{}, err
	}
	defer os.RemoveAll(dir)
	tmp, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		return FileStats{}, FrameStats{}, err
	}
	defer tmp.Close()
	o.framing = true
	fs, err := Write(ctx, tmp, "plain.parquet", schema, rows, o)
	if err != nil {
		return fs, FrameStats{}, err
	}
	ra := store.NewReaderAt(ctx, tmp, "plain.parquet", fs.Bytes)
	var wopts *store.WriteOptions
	if !opts.Overwrite {
		wopts = &store.WriteOptions{IfNotExist: true}
	}
	sw, err := st.NewWriter(ctx, key, wopts)
	if err != nil {
		return fs, FrameStats{}, err
	}
	fst, err := FrameFile(ctx, ra, fs.Bytes, sw, fo)
	if err != nil {
		sw.Abort()
		return fs, fst, err
	}
	if err := sw.Close(); err != nil {
		return fs, fst, err
	}
	fs.Bytes = fst.Bytes
	return fs, fst, nil
}

// writeSortedFramed is writeSorted of a framed file (Options.Frames): the
// sorted rows are written PLAIN and uncompressed (o as PrepareFiles set it)
// to a spill folder of its own under o.TempDir, then framed into key in dst
// by FrameFile reading that file from disk, so only one bucket's
// intermediate file exists per writer and nothing is held in memory. The
// folder is removed at the end, also on errors.
func writeSortedFramed(ctx context.Context, dst store.Store, key string, cols *columns, rows rowStream, o Options, bucket int) (FileStats, error) {
	dir, err := os.MkdirTemp(o.TempDir, proc.SpillPattern("prepare"))
	if err != nil {
		return FileStats{Key: key, Bucket: bucket}, err
	}
	defer os.RemoveAll(dir)
	tmp, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		return FileStats{Key: key, Bucket: bucket}, err
	}
	defer tmp.Close()
	plain := o
	plain.Overwrite, plain.framing = true, true
	fs, err := writeSorted(ctx, tmp, "plain.parquet", cols, rows, plain, bucket)
	fs.Key = key
	if err != nil {
		return fs, err
	}
	f, err := os.Open(filepath.Join(dir, "plain.parquet"))
	if err != nil {
		return fs, err
	}
	defer f.Close()
	var wopts *store.WriteOptions
	if !o.Overwrite {
		wopts = &store.WriteOptions{IfNotExist: true}
	}
	sw, err := dst.NewWriter(ctx, key, wopts)
	if err != nil {
		return fs, err
	}
	bw := bufio.NewWriterSize(sw, 1<<20)
	fst, err := FrameFile(ctx, f, fs.Bytes, bw, *o.Frames)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		sw.Abort()
		return fs, err
	}
	if err := sw.Close(); err != nil {
		return fs, err
	}
	fs.Bytes, fs.Frames, fs.FramePaddingBytes, fs.CopyBytes = fst.Bytes, fst.Frames, fst.PaddingBytes, fst.CopyBytes
	return fs, nil
}
