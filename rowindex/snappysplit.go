package rowindex

import (
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/snappy"
)

// Sub-page reads of SNAPPY pages. Every common SNAPPY encoder (the C++
// library behind pyarrow and parquet-mr's snappy-java, golang/snappy behind
// arrow-go, klauspost's copy behind parquet-go) compresses its input in
// independent blocks of 64 KiB: a tag never spans two blocks and a copy
// never reaches back into an earlier block. A page whose stream has that
// shape (snappySplits checks it tag by tag) can be decoded a block at a
// time: a light key's value in a 1 MiB page (pyarrow's and Spark's default
// page size) costs one 64 KiB block read and decompressed, not the page.
// The format does not promise it, so a stream without that shape is read
// whole, as before.
//
// Within a block, a tag may reach back anywhere before it, so a value is
// decoded from its block's start; but not past it: the walk also marks a
// tag boundary every snappyMarkEvery bytes of output, and a read decodes
// its block only up to the first mark at or after the bytes it needs (on
// average about half a block, not all of it, and the compressed bytes
// fetched shrink alike).

// snappyBlock is the block size of SNAPPY encoders (kBlockSize in the C++
// library, maxBlockSize in golang/snappy).
const snappyBlock = 64 << 10

// snappyMarkEvery is the spacing, in output bytes, of the marks within a
// block: a read decodes at most this much past the bytes it needs, and the
// marks cost 8 bytes per 4 KiB of a page's output (0.2 %).
const snappyMarkEvery = 4 << 10

// snappyMark is a tag boundary inside a block of a split SNAPPY stream:
// the tags from the block's start up to stream offset in decode to the
// block's output up to output offset out (both from the stream's start).
type snappyMark struct{ in, out int32 }

// snappySplits returns, for a raw SNAPPY stream (a page body), the offset in
// the stream where the tags of each 64 KiB block of its output start, then
// the stream's length: block i is stream[splits[i]:splits[i+1]] and decodes
// to output [i×64 KiB, min((i+1)×64 KiB, n)), whatever the blocks before it.
// marks are the first tag boundaries at or after every snappyMarkEvery
// bytes of output inside the blocks (not at their starts), in order.
// ok is false when a tag spans two blocks, a copy reaches back across a
// block's start, or the stream is not valid SNAPPY.
func snappySplits(stream []byte) (splits []int32, marks []snappyMark, n int, ok bool) {
	n64, at := binary.Uvarint(stream)
	if at <= 0 || n64 > 1<<30 || len(stream) > 1<<31-1 {
		return nil, nil, 0, false
	}
	n = int(n64)
	splits = make([]int32, 0, n/snappyBlock+2)
	marks = make([]snappyMark, 0, n/snappyMarkEvery)
	out := 0      // output bytes before the tag at stream[at]
	nextMark := 0 // output offset of the next mark
	for at < len(stream) {
		switch {
		case out%snappyBlock == 0 && len(splits) == out/snappyBlock:
			splits = append(splits, int32(at))
			nextMark = out + snappyMarkEvery
		case out >= nextMark:
			marks = append(marks, snappyMark{int32(at), int32(out)})
			nextMark = out - out%snappyMarkEvery + snappyMarkEvery
		}
		t := stream[at]
		var length, offset int
		switch t & 3 {
		case 0: // literal
			length = int(t>>2) + 1
			at++
			if length > 60 {
				nb := length - 60 // 1–4 bytes of length − 1
				if at+nb > len(stream) {
					return nil, nil, 0, false
				}
				var l uint32
				for i := range nb {
					l |= uint32(stream[at+i]) << (8 * i)
				}
				at += nb
				if l >= 1<<30 {
					return nil, nil, 0, false
				}
				length = int(l) + 1
			}
			if length > len(stream)-at {
				return nil, nil, 0, false
			}
			at += length
		case 1: // copy, 1-byte offset
			if at+2 > len(stream) {
				return nil, nil, 0, false
			}
			length, offset = 4+int(t>>2)&7, int(t&0xe0)<<3|int(stream[at+1])
			at += 2
		case 2: // copy, 2-byte offset
			if at+3 > len(stream) {
				return nil, nil, 0, false
			}
			length, offset = 1+int(t>>2), int(binary.LittleEndian.Uint16(stream[at+1:]))
			at += 3
		default: // copy, 4-byte offset
			if at+5 > len(stream) {
				return nil, nil, 0, false
			}
			length, offset = 1+int(t>>2), int(binary.LittleEndian.Uint32(stream[at+1:]))
			at += 5
		}
		start := out - out%snappyBlock // the block this tag writes into
		if t&3 != 0 && (offset <= 0 || out-offset < start) {
			return nil, nil, 0, false // reaches before its block (or is invalid)
		}
		if out += length; out > n || out-start > snappyBlock {
			return nil, nil, 0, false // past the output, or across a block's end
		}
	}
	if out != n {
		return nil, nil, 0, false
	}
	return append(splits, int32(len(stream))), marks, n, true
}

// decodeSnappyBlocks decodes blocks [lo, hi) of a stream split by
// snappySplits from their tags alone (tags = stream[splits[lo]:splits[hi]])
// into dst (reused if large enough): a SNAPPY stream of their own is made
// by prefixing their output length.
func decodeSnappyBlocks(dst, scratch, tags []byte, outLen int) (out, scratchOut []byte, err error) {
	scratch = binary.AppendUvarint(scratch[:0], uint64(outLen))
	scratch = append(scratch, tags...)
	if cap(dst) < outLen {
		dst = make([]byte, outLen)
	}
	out, err = snappy.Decode(dst[:cap(dst)], scratch)
	if err == nil && len(out) != outLen {
		err = fmt.Errorf("%d bytes, want %d", len(out), outLen)
	}
	if err != nil {
		return nil, scratch, fmt.Errorf("SNAPPY blocks: %w", err)
	}
	return out, scratch, nil
}
