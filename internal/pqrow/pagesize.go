package pqrow

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/parquet-go/parquet-go/format"
)

// parquet-go v0.32.0 trusts a page header's sizes: it allocates the
// compressed size before reading the body and the uncompressed size before
// decoding it, and its SNAPPY and ZSTD codecs allocate what the body's own
// length prefix or frame header claims. A header mutated to claim ≈1 GiB
// made it allocate that much for a page of a few bytes. The guard refuses,
// before parquet-go sees a page, one whose sizes no sound page can have
// (pageImplausible); the checks read only the header and the first bytes
// of the body, never decode it.
//
// A page's uncompressed size is bounded twice: by its codec's worst-case
// expansion of its compressed size, and by its column chunk's
// total_uncompressed_size in the footer (chunkLimit): no page is larger
// than the chunk that holds it. A fixed cap would not do: Parquet allows
// pages of 2 GiB, and parquet-testing's sound large_string_map.brotli
// holds a 1 GiB page (a few KB of BROTLI).

// chunkLimit is the largest uncompressed page a chunk whose footer gives
// total (its total_uncompressed_size, headers included) can hold; a
// footer without it bounds nothing below Parquet's own i32 limit.
func chunkLimit(total int64) int64 {
	if total <= 0 {
		return math.MaxInt32
	}
	return total
}

// Per-codec bounds of how many bytes one compressed byte can decode to.
// Each is the format's worst case, so no sound page exceeds it:
//   - SNAPPY: a copy element of 3 bytes (2-byte offset) or 5 bytes (4-byte
//     offset) yields at most 64 bytes, so at most 64/3 per byte; SNAPPY's
//     length prefix is also checked exactly (snappyLength).
//   - GZIP (deflate): a length/distance pair of ≥ 1 bit copies at most 258
//     bytes; deflate's known bound is 1032:1.
//   - LZ4, LZ4_RAW: maxLZ4Ratio (255).
//   - ZSTD: a block of at least 4 bytes (3-byte header and an RLE byte)
//     yields at most 128 KiB, so 32768 per byte; the frame header's content
//     size, when the writer recorded it, is checked exactly (zstdContentSize).
//   - BROTLI, LZO: no useful bound (a brotli meta-block can repeat a copy of
//     16 MiB for a few bits); the chunk's size alone applies.
const (
	snappyMaxRatio = 22
	gzipMaxRatio   = 1032
	zstdMaxRatio   = 32 << 10
)

// pageImplausible returns why a page whose header h is followed by body
// (the first bytes of the page's body: at least bodyPeek of them when the
// body is that long, fewer otherwise) cannot be sound under codec, or ""
// when nothing in it is impossible. Only sizes are checked, against the
// codec's format: nothing is decoded.
func pageImplausible(codec format.CompressionCodec, h *format.PageHeader, body []byte, limit int64) string {
	c, u := int64(h.CompressedPageSize), int64(h.UncompressedPageSize)
	if c < 0 || u < 0 {
		return fmt.Sprintf("negative page size (%d compressed, %d uncompressed)", c, u)
	}
	compressed := codec != format.Uncompressed
	levels := int64(0)
	switch h.Type {
	case format.DataPage, format.DictionaryPage:
	case format.DataPageV2:
		v := &h.DataPageHeaderV2.V
		levels = int64(v.DefinitionLevelsByteLength) + int64(v.RepetitionLevelsByteLength)
		if v.DefinitionLevelsByteLength < 0 || v.RepetitionLevelsByteLength < 0 || levels > c || levels > u {
			return fmt.Sprintf("levels of %d bytes in a page of %d (%d uncompressed)", levels, c, u)
		}
		compressed = compressed && (!v.IsCompressed.Valid || v.IsCompressed.V)
	default:
		return "" // index pages and unknown types: parquet-go decodes none
	}
	if u > limit {
		return fmt.Sprintf("page of %d uncompressed bytes in a column chunk of %d uncompressed bytes", u, limit)
	}
	if !compressed {
		if u != c {
			return fmt.Sprintf("uncompressed page of %d bytes whose header gives %d uncompressed bytes", c, u)
		}
		return ""
	}
	if int64(len(body)) >= levels {
		body = body[levels:]
	} else {
		body = nil
	}
	return bodyImplausible(codec, body, c-levels, u-levels)
}

// bodyPeek is how many bytes of a page's body the checks look at: a
// SNAPPY length prefix (≤ 5 bytes) or a ZSTD frame header (≤ 18 bytes),
// after the levels of a v2 page, whose lengths the caller adds.
const bodyPeek = 18

// bodyImplausible is pageImplausible for a compressed body of c bytes
// starting with head (possibly fewer bytes, or none) that its header says
// decodes to u bytes.
func bodyImplausible(codec format.CompressionCodec, head []byte, c, u int64) string {
	ratio := int64(0)
	if codec == format.Uncompressed {
		if u != c {
			return fmt.Sprintf("uncompressed page of %d bytes whose header gives %d uncompressed bytes", c, u)
		}
		return ""
	}
	if c == 0 {
		if u != 0 {
			return fmt.Sprintf("empty %v body whose header gives %d uncompressed bytes", codec, u)
		}
		return ""
	}
	switch codec {
	case format.Snappy:
		if n, ok := snappyLength(head, c); ok && n != u {
			return fmt.Sprintf("SNAPPY body of %d bytes says it decodes to %d bytes, its header gives %d", c, n, u)
		}
		ratio = snappyMaxRatio
	case format.Gzip:
		ratio = gzipMaxRatio
	case format.Lz4, format.Lz4Raw:
		ratio = maxLZ4Ratio
	case format.Zstd:
		ratio = zstdMaxRatio
		if n, ok := zstdContentSize(head); ok {
			if n > u {
				return fmt.Sprintf("ZSTD frame says it decodes to %d bytes, its page header gives %d", n, u)
			}
			// Further frames (a page of several, which no writer we
			// know makes) hold what the first does not.
			if u-n > c*ratio+64 {
				return fmt.Sprintf("ZSTD frame says it decodes to %d bytes, its page header gives %d: the %d bytes of the body cannot hold the rest", n, u, c)
			}
			return ""
		}
	}
	if ratio > 0 && u > c*ratio+64 {
		return fmt.Sprintf("%v body of %d bytes cannot decode to the %d bytes its header claims", codec, c, u)
	}
	return ""
}

// snappyLength is the decoded length a SNAPPY block of c bytes starting
// with head says it has (its varint prefix), when head holds the prefix.
func snappyLength(head []byte, c int64) (int64, bool) {
	head = head[:min(int64(len(head)), c)]
	n, k := binary.Uvarint(head)
	if k <= 0 || n > 1<<40 {
		if k == 0 && len(head) < binary.MaxVarintLen32 && int64(len(head)) < c {
			return 0, false // cut short: unknown
		}
		return -1, true // no length a snappy block can have: refused
	}
	return int64(n), true
}

// ZstdContentSize is zstdContentSize, for readers that size a pooled
// output buffer from the frame's own header (a framed file's byte-array
// frames, whose table gives no byte count).
func ZstdContentSize(head []byte) (int64, bool) { return zstdContentSize(head) }

// ZstdFrameImplausible returns why the ZSTD frame z (whole) cannot decode
// to the content size its header gives (beyond zstdMaxRatio for its
// bytes), "" if it can or gives none: a decoder allocates that size
// before decoding, so a frame read from a file is checked first.
func ZstdFrameImplausible(z []byte) string {
	if n, ok := zstdContentSize(z); ok && n > int64(len(z))*zstdMaxRatio+64 {
		return fmt.Sprintf("ZSTD frame of %d bytes says it decodes to %d bytes", len(z), n)
	}
	return ""
}

// zstdContentSize is the content size of the ZSTD frame at the start of
// head, when its header records one (single-shot encoders do: Arrow's
// ZSTD_compress, parquet-go's EncodeAll; streaming ones, as parquet-mr's,
// may not). A page may hold several frames, so the first one's size is
// a lower bound of the page's.
func zstdContentSize(head []byte) (int64, bool) {
	if len(head) < 5 || binary.LittleEndian.Uint32(head) != 0xFD2FB528 {
		return 0, false
	}
	fhd := head[4]
	fcsFlag, single, dictFlag := fhd>>6, fhd>>5&1, fhd&3
	pos := 5
	if single == 0 {
		pos++ // window descriptor
	}
	pos += [4]int{0, 1, 2, 4}[dictFlag]
	size := [4]int{0, 2, 4, 8}[fcsFlag]
	if fcsFlag == 0 && single == 1 {
		size = 1
	}
	if size == 0 || len(head) < pos+size {
		return 0, false
	}
	b := head[pos : pos+size]
	switch size {
	case 1:
		return int64(b[0]), true
	case 2:
		return int64(binary.LittleEndian.Uint16(b)) + 256, true
	case 4:
		return int64(binary.LittleEndian.Uint32(b)), true
	default:
		v := binary.LittleEndian.Uint64(b)
		if v > 1<<40 {
			return 1 << 40, true
		}
		return int64(v), true
	}
}
