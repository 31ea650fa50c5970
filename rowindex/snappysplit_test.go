package rowindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
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
// decode alone to that block of the output; their marks are at least every
// 4 KiB of output, and a read of any bytes decodes its run alone to the
// stream's output; streams that reach across a block, or spread a tag over
// two, or lie, do not split.
func TestSnappySplits(t *testing.T) {
	// klauspost's encoder reaches back across blocks: such a stream (of
	// repeats from earlier blocks) is one block, read in runs from its
	// start or a mark nothing after reaches past.
	across := snappyInput(8*snappyBlock, 1)
	if x, ok := snappySplits(snappy.Encode(nil, across)); !ok || x.block != len(across) || len(x.blocks) != 2 || len(x.marks) < 100 {
		t.Errorf("a stream with copies across blocks: ok %v, block %d, %d blocks, %d marks", ok, x.block, len(x.blocks)-1, len(x.marks))
	} else {
		checkSnappyReads(t, "klauspost", across, snappy.Encode(nil, across), x)
	}
	noise := make([]byte, 3*snappyBlock+1000) // incompressible: a literal a block
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	inputs := map[string][]byte{"noise": noise, "noise then text": append(slices.Clone(noise), snappyInput(3*snappyBlock, 9)...)}
	for _, n := range []int{1, 100, snappyBlock - 1, snappyBlock, snappyBlock + 1, 5*snappyBlock + 77, 16 * snappyBlock} {
		inputs[fmt.Sprint(n, " bytes")] = snappyInput(n, uint64(n))
	}
	for what, src := range inputs {
		n := len(src)
		stream := blockSnappy(nil, src)
		x, ok := snappySplits(stream)
		if !ok || x.n != n {
			t.Fatalf("%s: splits %v (%d bytes, ok %v)", what, x.blocks, x.n, ok)
		}
		splits := x.blocks
		blocks := (n + snappyBlock - 1) / snappyBlock
		if len(splits) != blocks+1 || int(splits[blocks]) != len(stream) {
			t.Fatalf("%s: %d splits, want %d ending at %d: %v", what, len(splits), blocks+1, len(stream), splits)
		}
		for lo := 0; lo < blocks; lo++ {
			for hi := lo + 1; hi <= blocks && hi <= lo+3; hi++ {
				want := src[lo*snappyBlock : min(hi*snappyBlock, n)]
				r := snappyRun{in: int(splits[lo]), end: int(splits[hi]), out: lo * snappyBlock, outEnd: min(hi*snappyBlock, n), cut: -1}
				out, _, err := decodeSnappyRun(nil, nil, stream[r.in:r.end], r)
				if err != nil || !bytes.Equal(out, want) {
					t.Fatalf("%s, blocks [%d, %d): %v (equal %v)", what, lo, hi, err, bytes.Equal(out, want))
				}
			}
		}
		// Marks: inside blocks, in order, one in every 4 KiB of output
		// that a block reaches past by a tag's start.
		prev := 0
		for i, m := range x.marks {
			o := int(m.out)
			if o <= prev || o%snappyBlock == 0 || o >= n || o/snappyMarkEvery == prev/snappyMarkEvery && prev%snappyBlock != 0 {
				t.Fatalf("%s: mark %d at output %d after %d", what, i, o, prev)
			}
			prev = o
		}
		if want := n/snappyMarkEvery - blocks; len(x.marks) < want/2 {
			t.Fatalf("%s: %d marks, want about %d", what, len(x.marks), want)
		}
		without := checkSnappyReads(t, what, src, stream, x)
		// Patched: the same bytes, no more decoded.
		xp := x
		xp.marks = slices.Clone(x.marks)
		xp.addPatches(stream, src, 0)
		if with := checkSnappyReads(t, what+", patched", src, stream, xp); with > without {
			t.Fatalf("%s: %d bytes decoded a read patched, %d not", what, with, without)
		}
	}
	// A read inside incompressible bytes decodes from the mark before it,
	// not from its block's start, and up to the mark after it.
	x, _ := snappySplits(blockSnappy(nil, noise))
	if r := x.run(2*snappyBlock+5*snappyMarkEvery+100, 2*snappyBlock+5*snappyMarkEvery+200); r.out != 2*snappyBlock+5*snappyMarkEvery || r.outEnd != 2*snappyBlock+6*snappyMarkEvery || r.lead != snappyMarkEvery {
		t.Errorf("noise: a read of 100 bytes decodes %+v", r)
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
	// Streams that do not split into 64 KiB blocks are one block.
	for name, s := range map[string][]byte{
		"copy across a block":        append(append(hdr(snappyBlock+8), fill(snappyBlock)...), copy2(8, 16)...),
		"literal over a block's end": append(append(hdr(snappyBlock+4), fill(snappyBlock-4)...), lit([]byte("12345678"))...),
		"copy over a block's end":    append(append(hdr(snappyBlock+4), fill(snappyBlock-4)...), copy2(8, 8)...),
	} {
		out, err := snappy.Decode(nil, s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if x, ok := snappySplits(s); !ok || len(x.blocks) != 2 || x.block != len(out) {
			t.Errorf("%s: ok %v, blocks %v of %d bytes", name, ok, x.blocks, x.block)
		} else {
			checkSnappyReads(t, name, out, s, x)
		}
	}
	// A run starts where nothing it decodes reaches before: here a copy two
	// marks after the read's first byte reads byte 200, so bytes 4100–8300
	// decode from the block's start, not from the mark at 4096.
	far := append(append(append(hdr(8200+64+4200), fill(8200)...), copy2(64, 8000)...), fill(4200)...)
	if x, ok := snappySplits(far); !ok || len(x.marks) != 3 {
		t.Errorf("a copy reaching back two marks: ok %v, marks %+v", ok, x.marks)
	} else if r := x.run(4100, 8300); r.out != 0 || r.outEnd != 3*snappyMarkEvery {
		t.Errorf("a copy reaching back two marks: bytes [4100, 8300) decoded as %+v", r)
	} else {
		out, _ := snappy.Decode(nil, far)
		checkSnappyReads(t, "a copy reaching back two marks", out, far, x)
	}
	bad := map[string][]byte{
		"empty output":               hdr(0),
		"copy before the start":      append(append(hdr(12), lit([]byte("abcd"))...), copy2(8, 5)...),
		"copy with offset 0":         append(append(hdr(12), lit([]byte("abcd"))...), copy2(8, 0)...),
		"output short of its length": append(hdr(10), lit([]byte("abcd"))...),
		"output past its length":     append(hdr(2), lit([]byte("abcd"))...),
		"truncated literal":          append(hdr(10), 9<<2, 'a'),
		"truncated copy":             append(append(hdr(12), lit([]byte("abcd"))...), 2),
		"no length":                  {0x80},
	}
	for name, s := range bad {
		if x, ok := snappySplits(s); ok {
			t.Errorf("%s: split at %v", name, x.blocks)
		}
	}
	// A stream that claims more output than its bytes can hold fails
	// without allocating for the claim (5 MB of marks for 1 GiB).
	liar := append(hdr(1<<30), lit([]byte("abcd"))...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, ok := snappySplits(liar)
	runtime.ReadMemStats(&after)
	if ok || after.TotalAlloc-before.TotalAlloc > 64<<10 {
		t.Errorf("a 6-byte stream claiming 1 GiB: ok %v, %d bytes allocated", ok, after.TotalAlloc-before.TotalAlloc)
	}
	// Random bytes never panic, and a stream that splits decodes whole.
	rng = rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		s := make([]byte, rng.IntN(64))
		for i := range s {
			s[i] = byte(rng.Uint32())
		}
		if x, ok := snappySplits(s); ok {
			if out, err := snappy.Decode(nil, s); err != nil || len(out) != x.n {
				t.Fatalf("%x splits (%d bytes) but does not decode: %v", s, x.n, err)
			}
		}
	}
}

// checkSnappyReads decodes random byte ranges of a split stream as a
// sub-page read does (snappyIndex.run) and compares them with the stream's
// output src.
func checkSnappyReads(t *testing.T, what string, src, stream []byte, x snappyIndex) int {
	t.Helper()
	if len(src) == 0 {
		return 0
	}
	rng := rand.New(rand.NewPCG(uint64(len(src)), 5))
	var decoded int
	for range 500 {
		ba := rng.IntN(len(src))
		be := min(ba+1+rng.IntN(2*snappyMarkEvery), len(src))
		if rng.IntN(4) == 0 {
			be = min(ba+1+rng.IntN(3*snappyBlock), len(src))
		}
		if rng.IntN(2) == 0 {
			be = min(ba+1+rng.IntN(16), len(src)) // a value
		}
		r := x.run(ba, be)
		if r.out > ba || r.outEnd < be || r.out < ba-ba%x.block || r.outEnd-be > snappyMarkEvery+x.block {
			t.Fatalf("%s: bytes [%d, %d) decoded as %+v", what, ba, be, r)
		}
		b := slices.Clone(stream[r.in:r.end]) // decodeSnappyRun must not write it
		out, _, err := decodeSnappyRun(nil, nil, b, r)
		if err != nil || !bytes.Equal(out, src[r.out:r.outEnd]) || !bytes.Equal(b, stream[r.in:r.end]) {
			t.Fatalf("%s: bytes [%d, %d) decoded from %+v: %v (equal %v)", what, ba, be, r, err, err == nil && bytes.Equal(out, src[r.out:r.outEnd]))
		}
		decoded += r.outEnd - r.out
	}
	t.Logf("%s: %d bytes decoded a read", what, decoded/500)
	return decoded / 500
}

// TestSnappyPatches: a column of timestamps (PLAIN int64, each a little
// after the one before) as the C++ library compresses it: each value's
// high bytes copy the value before's, a chain back to the block's start,
// so a value's read decoded from there; patched, its segment decodes from
// its mark, to the same bytes, for 50–250 bytes of patches a segment. A
// patch the stream does not match fails the read.
func TestSnappyPatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 33))
	src := make([]byte, 0, 8*60_000)
	ts := int64(1_717_200_000_000)
	for range 60_000 {
		ts += rng.Int64N(5_000)
		src = binary.LittleEndian.AppendUint64(src, uint64(ts))
	}
	stream := blockSnappy(nil, src)
	x, ok := snappySplits(stream)
	if !ok {
		t.Fatal("does not split")
	}
	without := checkSnappyReads(t, "timestamps", src, stream, x)
	xp := x
	xp.marks = slices.Clone(x.marks)
	xp.addPatches(stream, src, 0)
	patched := 0
	for _, m := range xp.marks {
		if m.pl > 0 {
			patched++
		}
	}
	if with := checkSnappyReads(t, "timestamps, patched", src, stream, xp); with > without {
		t.Fatalf("%d bytes decoded a read patched, %d not", with, without)
	}
	// A value's read: its run's output, patched and not.
	var runs [2]int
	for range 1000 {
		ba := rng.IntN(len(src)/8) * 8
		for i, ix := range []*snappyIndex{&x, &xp} {
			r := ix.run(ba, ba+8)
			runs[i] += r.outEnd - r.out
		}
	}
	t.Logf("a value decodes %d bytes, %d patched; %d of %d segments patched, %d bytes of patches",
		runs[0]/1000, runs[1]/1000, patched, len(xp.marks), len(xp.pbytes))
	if runs[1]*3 > runs[0] || runs[1]/1000 > 2*snappyMarkEvery || patched < len(xp.marks)/2 || len(xp.pbytes) > len(src)/20 {
		t.Fatalf("a value decodes %d bytes patched, %d not; %d of %d segments patched, %d bytes of patches",
			runs[1]/1000, runs[0]/1000, patched, len(xp.marks), len(xp.pbytes))
	}
	if cap(xp.pbytes) != len(xp.pbytes) || cap(xp.ppos) != len(xp.ppos) || cap(xp.pend) != len(xp.pend) {
		t.Fatal("patches kept with spare capacity charge does not count")
	}
	// Only the output given: from 100,000 on, no segment before is patched.
	xo := x
	xo.marks = slices.Clone(x.marks)
	xo.addPatches(stream, src[100_000:], 100_000)
	for _, m := range xo.marks {
		if m.pl > 0 && m.out < 100_000 {
			t.Fatalf("segment at %d patched from output it was not given", m.out)
		}
	}
	checkSnappyReads(t, "timestamps, patched from 100,000", src, stream, xo)
	// A patch whose tag is not a copy fails the read.
	for i := range xp.marks {
		if m := &xp.marks[i]; m.pl > 1+m.pf {
			r := snappyRun{in: int(m.in), end: int(xp.marks[i+1].in), out: int(m.out), outEnd: int(xp.marks[i+1].out), lead: int(m.lit), cut: -1, patched: &xp, pm: i}
			// The stream it makes fits the scratch sized for it.
			if _, scratch, err := decodeSnappyRun(nil, nil, stream[r.in:r.end], r); err != nil || len(scratch) > r.end-r.in+r.patchBytes()+2*binary.MaxVarintLen64 {
				t.Fatalf("patched run: %v, a stream of %d bytes for %d and %d of patches", err, len(scratch), r.end-r.in, r.patchBytes())
			}
			bad := slices.Clone(xp.ppos)
			xp.ppos[m.pf]++
			_, _, err := decodeSnappyRun(nil, nil, stream[r.in:r.end], r)
			xp.ppos = bad
			if err == nil {
				t.Fatal("a misplaced patch decoded")
			}
			break
		}
	}
}
