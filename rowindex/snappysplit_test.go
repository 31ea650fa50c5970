package rowindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/snappy"
)

// snappyInput is n bytes that compress (repeats within and across 64 KiB
// blocks) with a little noise.
func snappyInput(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b []byte
	for len(b) < n {
		switch rng.IntN(3) {
		case 0:
			b = fmt.Appendf(b, `{"user":%d,"track":"spotify:track:%d"}`, rng.IntN(1000), rng.IntN(50))
		case 1:
			b = binary.LittleEndian.AppendUint64(b, rng.Uint64N(1<<20))
		default:
			if len(b) > 100 {
				at := rng.IntN(len(b) - 50)
				b = append(b, b[at:at+50]...) // a repeat, often from an earlier block
			}
		}
	}
	return b[:n]
}

// blockSnappy encodes src as the C++ SNAPPY library (pyarrow, parquet-mr's
// snappy-java) and golang/snappy do: 64 KiB blocks compressed one by one,
// their tags concatenated after the length of the whole. (klauspost's
// snappy.Encode, behind parquet-go and arrow-go, compresses across blocks.)
func blockSnappy(dst, src []byte) []byte {
	dst = binary.AppendUvarint(dst[:0], uint64(len(src)))
	for len(src) > 0 {
		b := src[:min(len(src), snappyBlock)]
		src = src[len(b):]
		enc := snappy.Encode(nil, b)
		_, at := binary.Uvarint(enc)
		dst = append(dst, enc[at:]...)
	}
	return dst
}

// TestSnappySplits: streams of 64 KiB blocks compressed one by one (the C++
// library's, golang/snappy's) split at every block, and each block's tags
// decode alone to that block of the output; streams that reach across a
// block, or spread a tag over two, or lie, do not split.
func TestSnappySplits(t *testing.T) {
	// klauspost's encoder reaches back across blocks: such a stream (of
	// repeats from earlier blocks) does not split, and is read whole.
	if _, _, _, ok := snappySplits(snappy.Encode(nil, snappyInput(8*snappyBlock, 1))); ok {
		t.Error("a stream with copies across blocks splits")
	}
	for _, n := range []int{0, 1, 100, snappyBlock - 1, snappyBlock, snappyBlock + 1, 5*snappyBlock + 77, 16 * snappyBlock} {
		src := snappyInput(n, uint64(n))
		stream := blockSnappy(nil, src)
		splits, marks, got, ok := snappySplits(stream)
		if !ok || got != n {
			t.Fatalf("%d bytes: splits %v (%d bytes, ok %v)", n, splits, got, ok)
		}
		blocks := (n + snappyBlock - 1) / snappyBlock
		if len(splits) != blocks+1 || int(splits[blocks]) != len(stream) {
			t.Fatalf("%d bytes: %d splits, want %d ending at %d: %v", n, len(splits), blocks+1, len(stream), splits)
		}
		for lo := 0; lo < blocks; lo++ {
			for hi := lo + 1; hi <= blocks && hi <= lo+3; hi++ {
				want := src[lo*snappyBlock : min(hi*snappyBlock, n)]
				out, _, err := decodeSnappyBlocks(nil, nil, stream[splits[lo]:splits[hi]], len(want))
				if err != nil || !bytes.Equal(out, want) {
					t.Fatalf("%d bytes, blocks [%d, %d): %v (equal %v)", n, lo, hi, err, bytes.Equal(out, want))
				}
			}
		}
		// Marks: inside blocks, in order, at most snappyMarkEvery apart
		// (a tag's length past it at most), and the tags from any block's
		// start up to a later mark decode to that part of the output.
		prev := 0
		for i, m := range marks {
			o := int(m.out)
			if o <= prev || o%snappyBlock == 0 || o >= n || o/snappyMarkEvery == prev/snappyMarkEvery && prev%snappyBlock != 0 {
				t.Fatalf("%d bytes: mark %d at output %d after %d", n, i, o, prev)
			}
			prev = o
			for lo := max(o/snappyBlock-2, 0); lo <= o/snappyBlock; lo++ {
				want := src[lo*snappyBlock : o]
				out, _, err := decodeSnappyBlocks(nil, nil, stream[splits[lo]:m.in], len(want))
				if err != nil || !bytes.Equal(out, want) {
					t.Fatalf("%d bytes, block %d to mark %d (output %d): %v (equal %v)", n, lo, i, o, err, bytes.Equal(out, want))
				}
			}
		}
		if min := n/snappyMarkEvery - n/snappyBlock - 1; len(marks) < min/2 {
			t.Fatalf("%d bytes: %d marks, want about %d", n, len(marks), min)
		}
	}
	lit := func(b []byte) []byte { // one literal tag of b (1 ≤ len(b) ≤ 60 or ≤ 256)
		if len(b) <= 60 {
			return append([]byte{byte(len(b)-1) << 2}, b...)
		}
		return append([]byte{60 << 2, byte(len(b) - 1)}, b...)
	}
	hdr := func(n int) []byte { return binary.AppendUvarint(nil, uint64(n)) }
	fill := func(n int) []byte { // literals of n bytes
		var s []byte
		for n > 0 {
			k := min(n, 256)
			s = append(s, lit(bytes.Repeat([]byte{'a'}, k))...)
			n -= k
		}
		return s
	}
	copy2 := func(length, offset int) []byte {
		return []byte{byte(length-1)<<2 | 2, byte(offset), byte(offset >> 8)}
	}
	bad := map[string][]byte{
		"copy across a block":        append(append(hdr(snappyBlock+8), fill(snappyBlock)...), copy2(8, 16)...),
		"literal over a block's end": append(append(hdr(snappyBlock+8), fill(snappyBlock-4)...), lit([]byte("12345678"))...),
		"copy over a block's end":    append(append(hdr(snappyBlock+4), fill(snappyBlock-4)...), copy2(8, 8)...),
		"copy before the start":      append(append(hdr(12), lit([]byte("abcd"))...), copy2(8, 5)...),
		"copy with offset 0":         append(append(hdr(12), lit([]byte("abcd"))...), copy2(8, 0)...),
		"output short of its length": append(hdr(10), lit([]byte("abcd"))...),
		"output past its length":     append(hdr(2), lit([]byte("abcd"))...),
		"truncated literal":          append(hdr(10), 9<<2, 'a'),
		"truncated copy":             append(append(hdr(12), lit([]byte("abcd"))...), 2),
		"no length":                  {0x80},
	}
	for name, s := range bad {
		if splits, _, _, ok := snappySplits(s); ok {
			t.Errorf("%s: split at %v", name, splits)
		}
	}
	// Random bytes never panic, and a stream that splits decodes whole.
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		s := make([]byte, rng.IntN(64))
		for i := range s {
			s[i] = byte(rng.Uint32())
		}
		if _, _, n, ok := snappySplits(s); ok {
			if out, err := snappy.Decode(nil, s); err != nil || len(out) != n {
				t.Fatalf("%x splits (%d bytes) but does not decode: %v", s, n, err)
			}
		}
	}
}
