package prepared

import (
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/internal/pqrow"
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

// BlobBlockEncoding2 is BlobBlockEncoding with per-file transforms that
// make a small block smaller, each recorded in the marker's field
// (BlobField Base, Scale, Delta, Prefix) and chosen by FrameFile from the
// file's values: an INT32 or INT64 value v is stored as u = (v − Base) /
// Scale (Base the field's least value in the file, Scale the greatest
// common divisor of its differences), the block's first non-null u as an
// unsigned LEB128 varint and each next one as the zigzag varint of u − the
// previous u when Delta, else as an unsigned varint; a BYTE_ARRAY value as
// its bytes after Prefix, which every value of the field in the file
// starts with. Each block's ZSTD frame is stored without what every frame
// of the file repeats: the 4-byte magic number and the dictionary ID
// (stripFrame). Files of BlobBlockEncoding still read.
const BlobBlockEncoding2 = "ariadne-block-2"

// BlobBlockEncoding3 is BlobBlockEncoding2 with a smaller frame around
// each block (compactFrame): a frame of one block, compressed or raw, is
// stored as a tag byte and the block's content; the rest of its frame —
// the frame header (window, content size) and the 3-byte block header —
// is put back by the reader (expandFrame), the block's size being the
// value's. Any other frame is stored as in BlobBlockEncoding2 after a tag
// byte. Files of BlobBlockEncoding and BlobBlockEncoding2 still read.
const BlobBlockEncoding3 = "ariadne-block-3"

// blockMaxBytes ends a block once its rows hold this many value bytes: a
// heavy key is several blocks (stored rows), each one ZSTD frame, so no
// value grows without bound and a limited read of a heavy key decompresses
// a block, not the key.
const blockMaxBytes = 64 << 10

// dictHistoryBytes is the size of a file's dictionary content, and
// dictSampleBytes the blocks its entropy tables are built from. The
// dictionary is stored in the footer (as base64 JSON, ×4/3) and read with
// it by every cold lookup. Measured on the frame benchmark's files
// (BlobBlockEncoding2 blocks): 8, 16 and 32 KiB of content gave blocks the
// same size within 0.03 % (64 KiB: 0.6 % smaller), while each 8 KiB costs
// ≈11 KB of footer per file, 0.7 % of a 1.5 MB file.
const (
	dictHistoryBytes = 8 << 10
	dictSampleBytes  = 2 << 20
)

// dictMaxDecoded bounds the memory of decoding one block (a corrupt frame
// must not allocate without bound); DecodeBlock also refuses a frame whose
// header claims more than its bytes can hold, before the decoder
// allocates it.
const dictMaxDecoded = 256 << 20

// blockStream groups the rows of a sorted stream into co-grouped blocks:
// one output row (key, block bytes uncompressed) per run of a key's rows,
// at most ≈blockMaxBytes each. The blocks are compressed later, by
// FrameFile, once the dictionary is trained over them.
type blockStream struct {
	keyRuns
	p      *blobPlan
	keyOut int // the key's output leaf
	cols   [][]parquet.Value
	buf    []byte
}

// keyRuns cuts a sorted row stream into runs of one key's rows, each ended
// once its rows hold ≈blockMaxBytes of values: the blocks of co-grouped
// blobs (blockStream) and the stored rows of nested co-grouping
// (nestStream).
type keyRuns struct {
	rowStream
	keyLeaf int // the key's source leaf
	keyType parquet.Type
	pending parquet.Row // the first row of the next run, read ahead
	done    bool
	rows    int64 // source rows read
}

// nextRun hands the rows of the next run to add, with each row's place in
// the run; add returns the value bytes the row holds. It returns the run's
// key and its number of rows, io.EOF after the last run.
func (s *keyRuns) nextRun(add func(r parquet.Row, i int) int) (parquet.Value, int, error) {
	if s.done {
		return parquet.Value{}, 0, io.EOF
	}
	if s.pending == nil {
		r, err := s.rowStream.next()
		if err != nil {
			return parquet.Value{}, 0, err
		}
		s.pending = slices.Clone(r)
	}
	key := valueOf(s.pending, s.keyLeaf).Clone()
	bytes := add(s.pending, 0)
	n := 1
	s.pending = nil
	for bytes < blockMaxBytes {
		r, err := s.rowStream.next()
		if err == io.EOF {
			s.done = true
			break
		}
		if err != nil {
			return parquet.Value{}, 0, err
		}
		if !sameKey(s.keyType, key, valueOf(r, s.keyLeaf)) {
			s.pending = slices.Clone(r)
			break
		}
		bytes += add(r, n)
		n++
	}
	s.rows += int64(n)
	return key, n, nil
}

// sourceRows is the number of source rows the runs so far held.
func (s *keyRuns) sourceRows() int64 { return s.rows }

// runBytes is what a value counts toward a run's blockMaxBytes.
func runBytes(v parquet.Value) int {
	if k := v.Kind(); k == parquet.ByteArray || k == parquet.FixedLenByteArray {
		return 8 + len(v.ByteArray())
	}
	return 8
}

func (s *blockStream) next() (parquet.Row, error) {
	if s.cols == nil {
		s.cols = make([][]parquet.Value, len(s.p.kinds))
	}
	for i := range s.cols {
		s.cols[i] = s.cols[i][:0]
	}
	key, n, err := s.nextRun(func(r parquet.Row, _ int) int {
		bytes := 0
		for _, v := range r {
			if fi := s.p.field[v.Column()]; fi >= 0 {
				s.cols[fi] = append(s.cols[fi], v.Clone())
				bytes += runBytes(v)
			}
		}
		return bytes
	})
	if err != nil {
		return nil, err
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
// entropy tables are built from all of them. Samples that the content
// holds whole leave no literals or sequences to build tables from (a small
// file: BuildDict fails); then a filler sample, random bytes and their
// repeat, gives the tables both.
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
	o := zstd.BuildDictOptions{ID: 1, Contents: samples, History: hist, Offsets: [3]int{1, 4, 8}, Level: level}
	d, err := zstd.BuildDict(o)
	if err == nil {
		return d, nil
	}
	filler := make([]byte, 512)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range filler {
		filler[i] = byte(rng.Uint32())
	}
	o.Contents = append(slices.Clip(samples), append(filler, filler...))
	return zstd.BuildDict(o)
}

// newBlockDecoder returns a decoder of one file's frames, holding the
// file's dictionary (DecodeAll is safe for concurrent use), with
// concurrency block decoders (0: GOMAXPROCS, at most 4).
func newBlockDecoder(dict []byte, concurrency int) (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderDicts(dict), zstd.WithDecoderConcurrency(concurrency), zstd.WithDecoderMaxMemory(dictMaxDecoded))
}

// blockDecoders are a co-grouped blob file's block decoders (DecodeBlock):
// one to start, and another only when every one made is busy with a
// concurrent lookup of the file, up to max. Idle ones are reused last in,
// first out.
//
// A single decoder per file serialised concurrent lookups of a hot file (a
// server's requests for one user's history all read the same file); one
// per P, as klauspost's decoder keeps them, costs each a 128 KiB output
// buffer on its first frame (the frames' 256 KiB window, compactWindow:
// klauspost sizes it by the window, and DecodeAll never writes it) and its
// own literal and sequence buffers, and the decoder takes them in turn, so
// a process's first lookups of each file paid that many allocations and
// every lookup touched another decoder's memory than the last (measured on
// the 256 MB co-grouped lake, BenchmarkLightKeyDir, first 50 lookups of a
// process: 1.39 / 1.32 → 0.78 / 0.79 ms a lookup, 832 → 484 KB allocated,
// with one). Here sequential lookups use one decoder and its warm memory,
// and concurrent ones get their own.
type blockDecoders struct {
	dict  []byte
	slots chan struct{} // one per decoder in use; capacity max
	mu    sync.Mutex
	idle  []*zstd.Decoder
}

// maxBlockDecoders bounds a file's block decoders: at most one per P, and
// no more than 8 (each holds ≈200 KiB once used).
func maxBlockDecoders() int { return min(runtime.GOMAXPROCS(0), 8) }

// newBlockDecoders makes a file's first decoder (so that a dictionary
// that does not load is refused when the file is opened).
func newBlockDecoders(dict []byte, max int) (*blockDecoders, error) {
	d, err := newBlockDecoder(dict, 1)
	if err != nil {
		return nil, err
	}
	return &blockDecoders{dict: dict, slots: make(chan struct{}, max), idle: []*zstd.Decoder{d}}, nil
}

// made returns how many decoders the file holds: those in use and the
// idle ones.
func (ds *blockDecoders) made() int {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return len(ds.slots) + len(ds.idle)
}

// get returns an idle decoder, or a new one when every one made is in use
// and fewer than max are; it waits when max are in use.
func (ds *blockDecoders) get() (*zstd.Decoder, error) {
	ds.slots <- struct{}{}
	ds.mu.Lock()
	if n := len(ds.idle); n > 0 {
		d := ds.idle[n-1]
		ds.idle = ds.idle[:n-1]
		ds.mu.Unlock()
		return d, nil
	}
	ds.mu.Unlock()
	d, err := newBlockDecoder(ds.dict, 1)
	if err != nil {
		<-ds.slots
		return nil, err
	}
	return d, nil
}

// idleBlockDecoders is how many idle decoders a file keeps: a burst of
// concurrent lookups of it leaves at most this many (≈200 KiB each once
// used, memory the row index's cache does not charge), enough for the
// lookups of a 2-core machine to keep theirs.
const idleBlockDecoders = 2

// put returns a decoder get gave; past idleBlockDecoders idle ones it is
// dropped.
func (ds *blockDecoders) put(d *zstd.Decoder) {
	ds.mu.Lock()
	if len(ds.idle) < idleBlockDecoders {
		ds.idle = append(ds.idle, d)
	} else {
		d.Close()
	}
	ds.mu.Unlock()
	<-ds.slots
}

// decodeAll is zstd's DecodeAll with one of the file's decoders.
func (ds *blockDecoders) decodeAll(z, dst []byte) ([]byte, error) {
	d, err := ds.get()
	if err != nil {
		return dst, err
	}
	defer ds.put(d)
	return d.DecodeAll(z, dst)
}

// DecodeBlock appends to dst the rows of one co-grouped blob value v (a
// ZSTD frame of a BlobBlockEncoding or BlobBlockEncoding2 block,
// BlobMarker.Codec BlobCodecZstdDict): per row, one value per field
// leveled as in Decode. The rows share one backing array; byte arrays
// point into a buffer of their own. A frame or block that does not decode
// is a *BlobError.
func (b *Blob) DecodeBlock(dst []parquet.Row, v []byte) ([]parquet.Row, error) {
	if b.decs == nil {
		return dst, badBlob("value of a %s blob decoded as a block", b.Marker.Encoding)
	}
	// The frame and the decompressed block are scratch, reused by the
	// next block: the rows own copies of their byte arrays (one
	// allocation per field), so a light lookup's block costs its values
	// and their bytes, not a frame, a decoder output grown in steps and a
	// prefixed value each.
	sc, _ := b.scratch.Get().(*blockScratch)
	if sc == nil {
		sc = &blockScratch{}
	}
	defer sc.put(&b.scratch)
	z := v
	var ok bool
	switch b.Marker.Encoding {
	case BlobBlockEncoding3:
		if len(v) > 0 && v[0] == frameTagRaw && len(v)-1 <= blockMaxSize {
			// A raw block is the block itself: ZSTD would copy it. The
			// rows copy their bytes out of v (decodeRows with own).
			return b.decodeRows(dst, v[1:], true)
		}
		sc.frame, ok = expandFrame(sc.frame[:0], v, b.dictID)
		z = sc.frame
	case BlobBlockEncoding2:
		sc.frame, ok = restoreFrame(sc.frame[:0], v, b.dictID)
		z = sc.frame
	default:
		ok = true
	}
	if !ok {
		return dst, badBlob("block frame header of %d bytes", len(v))
	}
	// The decoder allocates the content size a frame's header gives
	// (up to dictMaxDecoded): a damaged value must not make it.
	if why := pqrow.ZstdFrameImplausible(z); why != "" {
		return dst, badBlob("block: %s", why)
	}
	raw, err := b.decs.decodeAll(z, sc.raw[:0])
	sc.raw = raw
	if err != nil {
		return dst, badBlob("block frame of %d bytes: %v", len(v), err)
	}
	return b.decodeRows(dst, raw, true)
}

// blockScratch is DecodeBlock's reused memory.
type blockScratch struct{ frame, raw []byte }

// maxScratch bounds the scratch kept for the next block (a heavy key's
// blocks are ≤ 128 KiB; a damaged frame may have grown it further).
const maxScratch = 1 << 18

func (sc *blockScratch) put(p *sync.Pool) {
	if cap(sc.frame) > maxScratch {
		sc.frame = nil
	}
	if cap(sc.raw) > maxScratch {
		sc.raw = nil
	}
	p.Put(sc)
}

// decodeRaw appends the rows of one uncompressed block in the marker's
// encoding; byte array values point into raw.
func (b *Blob) decodeRaw(dst []parquet.Row, raw []byte) ([]parquet.Row, error) {
	return b.decodeRows(dst, raw, false)
}

// decodeRows is decodeRaw; with own, byte array values are copied out of
// raw (which the caller reuses), one allocation per field.
func (b *Blob) decodeRows(dst []parquet.Row, raw []byte, own bool) ([]parquet.Row, error) {
	v2 := b.Marker.Encoding != BlobBlockEncoding // block-2 and block-3 blocks
	n64, w := binary.Uvarint(raw)
	// Each row costs every field but the key at least a bit (an optional
	// field's null) or a byte (a required field's value), and a block of
	// the key alone holds at most ≈blockMaxBytes/8 rows: a count past that
	// is damage, not a reason to allocate rows × fields values.
	minBits := 0
	for fi := 1; fi < len(b.kinds); fi++ {
		if b.optional[fi] >= 0 {
			minBits++
		} else {
			minBits += 8
		}
	}
	limit := uint64(blockMaxBytes)
	if minBits > 0 {
		limit = 8 * uint64(len(raw)) / uint64(minBits)
	}
	if w <= 0 || n64 == 0 || n64 > limit {
		return dst, badBlob("block row count %d past the %d its %d bytes can hold", n64, limit, len(raw))
	}
	raw = raw[w:]
	n := int(n64)
	nf := len(b.kinds)
	var arena []byte // the copied byte arrays (copyOut)
	vals := make([]parquet.Value, n*nf)
	for fi, k := range b.kinds {
		m := n
		if fi == 0 {
			m = 1
		}
		fd := &b.Marker.Fields[fi]
		name := fd.Name
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
		// A byte array field's lengths come first: lens is that part of
		// the block, read again value by value below; the values' bytes
		// (with the field's prefix) go to arena when copied out.
		var lens []byte
		values := 0 // a byte array field's non-null values
		if k == parquet.ByteArray {
			at := raw
			for i := range m {
				if isNull(i) {
					continue
				}
				values++
				l, w := binary.Uvarint(raw)
				if w <= 0 || l > uint64(len(raw)) {
					return dst, badBlob("field %s: bad length", name)
				}
				raw = raw[w:]
			}
			lens = at[:len(at)-len(raw)]
		}
		copyOut := own && (k == parquet.ByteArray || k == parquet.FixedLenByteArray) || k == parquet.ByteArray && len(fd.Prefix) > 0
		if copyOut && arena == nil {
			// One arena for the block's copied bytes: they come from raw,
			// each byte once, plus this field's prefixes. A later field's
			// prefixes may grow it (the values before keep the first
			// array); a count from a damaged block cannot inflate it
			// past the values present.
			arena = make([]byte, 0, len(raw)+values*len(fd.Prefix))
		}
		intv := v2 && (k == parquet.Int32 || k == parquet.Int64)
		var prev uint64
		first := true
		for i := range m {
			var x parquet.Value
			switch {
			case isNull(i):
				x = parquet.NullValue().Level(0, 0, leaf)
			case intv:
				var u uint64
				var w int
				if first || !fd.Delta {
					u, w = binary.Uvarint(raw)
				} else {
					var d int64
					d, w = binary.Varint(raw)
					u = prev + uint64(d)
				}
				if w <= 0 {
					return dst, badBlob("field %s: bad varint", name)
				}
				// The writer stores no u past the field's range (Base +
				// u·Scale ≤ MaxInt64); a larger one is damage that the
				// product below would wrap into a plausible value (the
				// frames carry no checksum).
				if u > (uint64(math.MaxInt64)-uint64(fd.Base))/uint64(fd.Scale) {
					return dst, badBlob("field %s: value %d past the field's range", name, u)
				}
				raw = raw[w:]
				prev, first = u, false
				iv := fd.Base + int64(u)*fd.Scale
				if k == parquet.Int32 {
					if iv != int64(int32(iv)) {
						return dst, badBlob("field %s: %d out of INT32", name, iv)
					}
					x = parquet.Int32Value(int32(iv))
				} else {
					x = parquet.Int64Value(iv)
				}
				x = x.Level(0, def, leaf)
			default:
				need := valueWidth(k, b.lengths[fi])
				if k == parquet.ByteArray {
					l, w := binary.Uvarint(lens)
					lens = lens[w:]
					need = int(l)
				}
				if len(raw) < need {
					return dst, badBlob("field %s: %d bytes left, %d needed", name, len(raw), need)
				}
				p := raw[:need:need]
				raw = raw[need:]
				if copyOut {
					at := len(arena)
					if k == parquet.ByteArray {
						arena = append(arena, fd.Prefix...)
					}
					arena = append(arena, p...)
					p = arena[at:len(arena):len(arena)]
				}
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

// encodeBlock2 appends the rows of one block (as decodeRaw returns them)
// in BlobBlockEncoding2 (and 3: the same block) with the marker's
// transforms.
func (b *Blob) encodeBlock2(dst []byte, rows []parquet.Row) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(rows)))
	for fi, k := range b.kinds {
		fd := &b.Marker.Fields[fi]
		at := b.pos[fi]
		m := rows
		if fi == 0 {
			m = rows[:1] // the key, once
		}
		if b.optional[fi] >= 0 {
			nb := len(dst)
			dst = append(dst, make([]byte, (len(m)+7)/8)...)
			for i, r := range m {
				if r[at].IsNull() {
					dst[nb+i/8] |= 1 << (i % 8)
				}
			}
		}
		switch k {
		case parquet.Int32, parquet.Int64:
			var prev uint64
			first := true
			for _, r := range m {
				if r[at].IsNull() {
					continue
				}
				u := uint64(intOf(k, r[at])-fd.Base) / uint64(fd.Scale)
				if first || !fd.Delta {
					dst = binary.AppendUvarint(dst, u)
				} else {
					dst = binary.AppendVarint(dst, int64(u-prev))
				}
				prev, first = u, false
			}
		case parquet.ByteArray:
			for _, r := range m {
				if !r[at].IsNull() {
					dst = binary.AppendUvarint(dst, uint64(len(r[at].ByteArray())-len(fd.Prefix)))
				}
			}
			for _, r := range m {
				if !r[at].IsNull() {
					dst = append(dst, r[at].ByteArray()[len(fd.Prefix):]...)
				}
			}
		default:
			for _, r := range m {
				if !r[at].IsNull() {
					dst = appendBlobValue(dst, k, r[at])
				}
			}
		}
	}
	return dst
}

// intOf is an INT32 or INT64 value as an int64.
func intOf(k parquet.Kind, v parquet.Value) int64 {
	if k == parquet.Int32 {
		return int64(v.Int32())
	}
	return v.Int64()
}

// stripFrame removes from a ZSTD frame (RFC 8878 §3.1.1) what every block
// frame of a file repeats: the 4-byte magic number and a 1-byte
// dictionary ID (its flag cleared). ok is false for a frame it cannot
// strip (another dictionary ID size).
func stripFrame(z []byte) ([]byte, bool) {
	if len(z) < 7 || binary.LittleEndian.Uint32(z) != zstdMagic {
		return nil, false
	}
	fhd := z[4]
	if fhd&3 != 1 {
		return nil, false
	}
	at := 5 // the dictionary ID's byte, after the window descriptor if any
	if fhd&(1<<5) == 0 {
		at++
	}
	out := make([]byte, 0, len(z)-5)
	out = append(out, fhd&^3)
	out = append(out, z[5:at]...)
	return append(out, z[at+1:]...), true
}

// restoreFrame appends to dst the ZSTD frame of a stripped one s, with
// dictionary ID id.
func restoreFrame(dst, s []byte, id byte) ([]byte, bool) {
	if len(s) < 2 || s[0]&3 != 0 {
		return dst, false
	}
	at := 1
	if s[0]&(1<<5) == 0 {
		at++
	}
	if len(s) < at {
		return dst, false
	}
	dst = binary.LittleEndian.AppendUint32(dst, zstdMagic)
	dst = append(dst, s[0]|1)
	dst = append(dst, s[1:at]...)
	dst = append(dst, id)
	return append(dst, s[at:]...), true
}

// zstdMagic starts every ZSTD frame (RFC 8878 §3.1.1).
const zstdMagic = 0xFD2FB528

// The tags of a BlobBlockEncoding3 value (compactFrame).
const (
	frameTagStripped   = 0 // a stripped frame follows (stripFrame)
	frameTagCompressed = 1 // the content of a one-block frame, a compressed block
	frameTagRaw        = 2 // the content of a one-block frame, a raw block
)

// compactWindow is the window descriptor expandFrame puts back (RFC 8878
// §3.1.1.1.2: 2^(10+8) = 256 KiB): at least a block's largest content
// (128 KiB) plus the dictionary's, so that every offset of a block into
// its dictionary stays within the window for any decoder.
const compactWindow = (18 - 10) << 3

// compactFrameGrowth is what expandFrame adds to a value at most.
const compactFrameGrowth = 4 + 1 + 1 + 1 + 3

// blockMaxSize is the largest block a ZSTD frame holds (RFC 8878
// §3.1.1.2.4, Block_Maximum_Size at most 128 KiB).
const blockMaxSize = 128 << 10

// compactFrame returns a ZSTD frame z with a 1-byte dictionary ID and no
// checksum as a BlobBlockEncoding3 value: a frame of one compressed or raw
// block as its tag and the block's content (the frame and block headers
// are put back by expandFrame), any other as frameTagStripped and the
// stripped frame. ok is false for a frame it cannot store.
func compactFrame(z []byte) ([]byte, bool) {
	if len(z) < 7 || binary.LittleEndian.Uint32(z) != zstdMagic {
		return nil, false
	}
	fhd := z[4]
	if fhd&3 != 1 || fhd&(1<<2) != 0 {
		return nil, false
	}
	at := 5
	if fhd&(1<<5) == 0 {
		at++ // the window descriptor
	}
	at++ // the dictionary ID
	switch fcs := fhd >> 6; {
	case fcs == 0 && fhd&(1<<5) != 0:
		at++
	case fcs > 0:
		at += 1 << fcs
	}
	if at+3 <= len(z) {
		bh := uint32(z[at]) | uint32(z[at+1])<<8 | uint32(z[at+2])<<16
		last, typ, size := bh&1 == 1, (bh>>1)&3, int(bh>>3)
		content := z[at+3:]
		if last && (typ == 0 || typ == 2) && size == len(content) && size <= blockMaxSize {
			tag := byte(frameTagCompressed)
			if typ == 0 {
				tag = frameTagRaw
			}
			return append([]byte{tag}, content...), true
		}
	}
	s, ok := stripFrame(z)
	if !ok {
		return nil, false
	}
	return append([]byte{frameTagStripped}, s...), true
}

// expandFrame appends to dst the ZSTD frame of a BlobBlockEncoding3 value
// v (compactFrame), with dictionary ID id.
func expandFrame(dst, v []byte, id byte) ([]byte, bool) {
	if len(v) < 1 {
		return dst, false
	}
	switch v[0] {
	case frameTagStripped:
		return restoreFrame(dst, v[1:], id)
	case frameTagCompressed, frameTagRaw:
		content := v[1:]
		if len(content) > blockMaxSize || v[0] == frameTagCompressed && len(content) == 0 {
			return dst, false
		}
		typ := uint32(2)
		if v[0] == frameTagRaw {
			typ = 0
		}
		dst = binary.LittleEndian.AppendUint32(dst, zstdMagic)
		// Frame header: a 1-byte dictionary ID, no single segment, no
		// content size, no checksum; then the window and the ID.
		dst = append(dst, 1, compactWindow, id)
		bh := 1 | typ<<1 | uint32(len(content))<<3
		dst = append(dst, byte(bh), byte(bh>>8), byte(bh>>16))
		return append(dst, content...), true
	}
	return dst, false
}
