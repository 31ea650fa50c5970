package rowindex

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/klauspost/compress/snappy"
)

// Sub-page reads of SNAPPY pages. The SNAPPY encoders of the C++ library
// (behind pyarrow, and parquet-mr's snappy-java) and golang/snappy
// compress their input in independent blocks of 64 KiB: a tag
// never spans two blocks and a copy never reaches back into an earlier
// block (klauspost's, behind parquet-go, reaches across). A page whose
// stream has that shape (snappySplits checks it tag by tag) can be decoded
// a block at a time: a light key's value in a 1 MiB page (pyarrow's and
// Spark's default page size) costs at most one 64 KiB block read and
// decompressed, not the page. The format does not promise it, so a stream
// without that shape is read whole, as before.
//
// Within a block a copy may reach back anywhere before it, but a read need
// not decode all of its block: the walk also marks every snappyMarkEvery
// bytes of output (the first tag boundary at or after it, or the boundary
// itself inside a literal), and keeps for each mark how far back the
// copies after it reach. A read decodes a run (snappyIndex.run): from the
// latest mark before its bytes from which nothing it decodes reaches
// further back (else its block's start) to the first mark after them.

// snappyBlock is the block size of SNAPPY encoders (kBlockSize in the C++
// library, maxBlockSize in golang/snappy).
const snappyBlock = 64 << 10

// snappyMarkEvery is the spacing, in output bytes, of the marks within a
// block: a read decodes at most this much past the bytes it needs, and the
// marks cost 20 bytes per 4 KiB of a page's output (0.5 %).
const snappyMarkEvery = 4 << 10

// snappyMark is a place inside a block of a split SNAPPY stream where
// decoding may resume: output offset out, whose tags (or literal bytes)
// start at stream offset in. At a tag boundary lit is 0; inside a
// literal's data (a mark falls on every snappyMarkEvery boundary a literal
// covers: incompressible values are one literal a block) lit is the
// literal's bytes from in to its end and hdr the stream offset of its
// tag. reach is the lowest output offset that a copy between this mark and
// the next (or the block's end) reads (out if none reaches before it):
// where nothing decoded reaches before a mark, decoding may start there.
//
// pl, when above 0, says the segment from this mark to the next is
// patched (addPatches): patches [pf, pl-1) of the index hold, for each of
// its copies that reads before the mark, the bytes it writes, so a run of
// this segment alone decodes from the mark whatever the copies reach.
type snappyMark struct{ in, out, reach, lit, hdr, pf, pl int32 }

// snappyIndex is what a read in parts needs of a SNAPPY stream
// (snappySplits): where each block of block bytes of output starts in the
// stream, then the stream's end, and the marks inside the blocks, in
// order; n is the output's length.
//
// Patches (addPatches): patch k replaces the copy whose tag is at stream
// offset ppos[k] by the bytes it writes, pbytes[pend[k-1]:pend[k]].
type snappyIndex struct {
	blocks []int32
	marks  []snappyMark
	ppos   []int32
	pend   []int32
	pbytes []byte
	n      int
	block  int
}

// charge is the index's cost in memory.
func (x *snappyIndex) charge() int64 {
	return int64(4*len(x.blocks) + 28*len(x.marks) + 8*len(x.ppos) + len(x.pbytes))
}

// snappyPatchMax bounds the bytes of a segment's patches: a segment whose
// copies write more from before its mark keeps none. Timestamps (PLAIN
// int64, each a little after the one before: each value's high bytes a
// copy of the value before, a chain back to the block's start) take
// 50–250 bytes a 4 KiB segment.
const snappyPatchMax = 384

// segmentEnd returns where the segment from mark i ends, in the stream and
// in the output: at the next mark in its block, else at the block's end;
// onTag is false when it ends inside a literal.
func (x *snappyIndex) segmentEnd(i int) (end, endOut int, onTag bool) {
	m := &x.marks[i]
	endOut = min(int(m.out)-int(m.out)%x.block+x.block, x.n)
	end = int(x.blocks[min(int(m.out)/x.block+1, len(x.blocks)-1)])
	if i+1 < len(x.marks) && int(x.marks[i+1].out) < endOut {
		return int(x.marks[i+1].in), int(x.marks[i+1].out), x.marks[i+1].lit == 0
	}
	return end, endOut, true
}

// addPatches patches every segment that ends on a tag boundary (at the
// next mark, or its block's end) whose copies reading before its mark write
// at most snappyPatchMax bytes in all, given the stream and its output
// (out: the output from offset from on; a copy writing outside it leaves
// its segment unpatched).
func (x *snappyIndex) addPatches(stream, out []byte, from int) {
	for i := range x.marks {
		m := &x.marks[i]
		end, endOut, onTag := x.segmentEnd(i)
		if !onTag {
			continue // ends inside a literal
		}
		at, o := int(m.in)+int(m.lit), int(m.out)+int(m.lit) // past a lead literal's bytes
		np, nb, ok := len(x.ppos), len(x.pbytes), true
		for ok && at < end {
			t := stream[at]
			var length, offset, h int
			switch t & 3 {
			case 0:
				l, hl, good := literalTag(stream[at:])
				if !good {
					ok = false
					break
				}
				at, o = at+hl+l, o+l
				continue
			case 1:
				length, offset, h = 4+int(t>>2)&7, int(t&0xe0)<<3|int(stream[at+1]), 2
			case 2:
				length, offset, h = 1+int(t>>2), int(binary.LittleEndian.Uint16(stream[at+1:])), 3
			default:
				length, offset, h = 1+int(t>>2), int(binary.LittleEndian.Uint32(stream[at+1:])), 5
			}
			if o-offset < int(m.out) {
				if o-from < 0 || o+length-from > len(out) || len(x.pbytes)-nb+length > snappyPatchMax {
					ok = false
					break
				}
				x.ppos = append(x.ppos, int32(at))
				x.pbytes = append(x.pbytes, out[o-from:o+length-from]...)
				x.pend = append(x.pend, int32(len(x.pbytes)))
			}
			at, o = at+h, o+length
		}
		if !ok || o != endOut || at != end {
			x.ppos, x.pend, x.pbytes = x.ppos[:np], x.pend[:np], x.pbytes[:nb]
			continue
		}
		m.pf, m.pl = int32(np), int32(len(x.ppos)+1)
	}
	// Kept for long, counted by length: copied to their length, without
	// the room append grew.
	x.ppos, x.pend, x.pbytes = exactCopy(x.ppos), exactCopy(x.pend), exactCopy(x.pbytes)
}

// snappySplits returns the index of a raw SNAPPY stream (a page body): the
// offset in the stream where the tags of each 64 KiB block of its output
// start, then the stream's length (block i is stream[blocks[i]:blocks[i+1]]
// and decodes to output [i×64 KiB, min((i+1)×64 KiB, n)), whatever the
// blocks before it); and its marks: at or after every snappyMarkEvery
// bytes of output inside the blocks (not at their starts), the first tag
// boundary, or the boundary itself inside a literal. A stream whose tags
// reach across 64 KiB blocks (klauspost's encoder, behind parquet-go and
// arrow-go) is indexed as one block: its reads start at its start or at a
// mark nothing after reaches past, and stop at the mark after their bytes.
// ok is false when the stream is not valid SNAPPY.
func snappySplits(stream []byte) (x snappyIndex, ok bool) {
	if x, ok, across := indexSnappy(stream, snappyBlock); ok || !across {
		return x, ok
	}
	x, ok, _ = indexSnappy(stream, 0)
	return x, ok
}

// indexSnappy is snappySplits with blocks of block bytes of output (0: one
// block, the whole output); across reports a failure only because a tag
// spans two blocks or a copy reaches back across a block's start.
func indexSnappy(stream []byte, block int) (x snappyIndex, ok, across bool) {
	n64, at := binary.Uvarint(stream)
	if at <= 0 || n64 > 1<<30 || len(stream) > 1<<31-1 {
		return snappyIndex{}, false, false
	}
	n := int(n64)
	if n == 0 {
		return snappyIndex{}, false, false // nothing to read in parts
	}
	if block <= 0 {
		block = max(n, 1)
	}
	// A tag of 3 bytes writes at most 64: size the index by what the
	// stream can hold, not by the length it claims (a lie of a few bytes
	// must not allocate megabytes before failing).
	can := min(n, 22*(len(stream)-at))
	blocks := make([]int32, 0, can/block+2)
	marks := make([]snappyMark, 0, can/snappyMarkEvery)
	out := 0      // output bytes before the tag at stream[at]
	nextMark := 0 // output offset of the next mark
	for at < len(stream) {
		switch {
		case out%block == 0 && len(blocks) == out/block:
			blocks = append(blocks, int32(at))
			nextMark = out + snappyMarkEvery
		case out >= nextMark:
			marks = append(marks, snappyMark{in: int32(at), out: int32(out), reach: int32(out)})
			nextMark = out - out%snappyMarkEvery + snappyMarkEvery
		}
		tag, t := at, stream[at]
		var length, offset int
		switch t & 3 {
		case 0: // literal
			l, h, ok := literalTag(stream[at:])
			if !ok || l > len(stream)-at-h {
				return snappyIndex{}, false, false
			}
			length, at = l, at+h
			// Marks inside the literal's data (within its block: a
			// literal past the block's end fails below).
			for nextMark < out+length && nextMark%block != 0 {
				marks = append(marks, snappyMark{in: int32(at + nextMark - out), out: int32(nextMark), reach: int32(nextMark),
					lit: int32(out + length - nextMark), hdr: int32(tag)})
				nextMark += snappyMarkEvery
			}
			at += length
		case 1: // copy, 1-byte offset
			if at+2 > len(stream) {
				return snappyIndex{}, false, false
			}
			length, offset = 4+int(t>>2)&7, int(t&0xe0)<<3|int(stream[at+1])
			at += 2
		case 2: // copy, 2-byte offset
			if at+3 > len(stream) {
				return snappyIndex{}, false, false
			}
			length, offset = 1+int(t>>2), int(binary.LittleEndian.Uint16(stream[at+1:]))
			at += 3
		default: // copy, 4-byte offset
			if at+5 > len(stream) {
				return snappyIndex{}, false, false
			}
			length, offset = 1+int(t>>2), int(binary.LittleEndian.Uint32(stream[at+1:]))
			at += 5
		}
		start := out - out%block // the block this tag writes into
		if t&3 != 0 && (offset <= 0 || out-offset < 0) {
			return snappyIndex{}, false, false // invalid
		}
		if t&3 != 0 && out-offset < start {
			return snappyIndex{}, false, true // reaches before its block
		}
		if m := len(marks) - 1; t&3 != 0 && m >= 0 && int(marks[m].out) >= start && int32(out-offset) < marks[m].reach {
			marks[m].reach = int32(out - offset)
		}
		if out += length; out > n {
			return snappyIndex{}, false, false // past the output
		}
		if out-start > block {
			return snappyIndex{}, false, true // across a block's end
		}
	}
	if out != n {
		return snappyIndex{}, false, false
	}
	return snappyIndex{blocks: append(blocks, int32(len(stream))), marks: marks, n: n, block: block}, true, false
}

// snappyRun is a run of a split stream that decodes on its own to output
// [out, outEnd): the stream's bytes [in, end), after a literal tag for
// their first lead bytes when in lies inside a literal's data (lead > 0),
// with the literal whose tag is at stream offset cut (≥ 0; -1: none) cut
// short at end when end lies inside its data.
//
// patched, when not nil, is the index whose patches of mark pm's segment
// replace its copies that read before the mark.
type snappyRun struct {
	in, end, out, outEnd int
	lead, cut            int
	patched              *snappyIndex
	pm                   int
}

// run returns the run that decodes output bytes [ba, be) (0 ≤ ba < be ≤ n):
// from the latest mark at or before ba in ba's block from which nothing
// decoded up to be reaches back before it (else the block's start), to the
// first mark at or after be in be's block (else the next block's start).
func (x *snappyIndex) run(ba, be int) snappyRun {
	ms := x.marks
	// Start.
	lo := min(max(ba/x.block, 0), len(x.blocks)-2)
	r := snappyRun{in: int(x.blocks[lo]), out: lo * x.block, cut: -1}
	var first *snappyMark
	if j := sort.Search(len(ms), func(i int) bool { return int(ms[i].out) > ba }) - 1; j >= 0 && int(ms[j].out) >= r.out {
		// The lowest reach of the segments decoded in ba's block: the
		// marks' from j up to be (or the block's end).
		reach, stop := int(ms[j].reach), min(be, r.out+x.block)
		for k := j + 1; k < len(ms) && int(ms[k].out) < stop; k++ {
			reach = min(reach, int(ms[k].reach))
		}
		for j >= 0 && int(ms[j].out) >= r.out && reach < int(ms[j].out) {
			if j--; j >= 0 {
				reach = min(reach, int(ms[j].reach))
			}
		}
		if j >= 0 && int(ms[j].out) >= r.out {
			first = &ms[j]
			r.in, r.out, r.lead = int(first.in), int(first.out), int(first.lit)
		}
	}
	// A patched segment holding [ba, be) decodes alone, from its mark.
	if j := sort.Search(len(ms), func(i int) bool { return int(ms[i].out) > ba }) - 1; j >= 0 && ms[j].pl > 0 && int(ms[j].out) > r.out {
		m := &ms[j]
		if int(m.out)-int(m.out)%x.block == ba-ba%x.block {
			end, endOut, _ := x.segmentEnd(j) // patched: on a tag boundary
			if be <= endOut {
				return snappyRun{in: int(m.in), end: end, out: int(m.out), outEnd: endOut, lead: int(m.lit), cut: -1, patched: x, pm: j}
			}
		}
	}
	// End.
	hi := min(max((be+x.block-1)/x.block, 0), len(x.blocks)-1)
	r.end, r.outEnd = int(x.blocks[hi]), min(hi*x.block, x.n)
	if i := sort.Search(len(ms), func(i int) bool { return int(ms[i].out) >= be }); i < len(ms) && int(ms[i].out) < r.outEnd {
		m := &ms[i]
		r.end, r.outEnd = int(m.in), int(m.out)
		switch {
		case m.lit == 0:
		case first != nil && first.lit > 0 && first.hdr == m.hdr:
			r.lead = r.outEnd - r.out // inside the literal the run starts in
		default:
			r.cut = int(m.hdr) // cut the literal short at the mark
		}
	}
	return r
}

// appendLiteralTag appends the tag of a literal of n (≥ 1) bytes.
func appendLiteralTag(b []byte, n int) []byte {
	switch l := uint32(n - 1); {
	case l < 60:
		return append(b, byte(l)<<2)
	case l < 1<<8:
		return append(b, 60<<2, byte(l))
	case l < 1<<16:
		return append(b, 61<<2, byte(l), byte(l>>8))
	case l < 1<<24:
		return append(b, 62<<2, byte(l), byte(l>>8), byte(l>>16))
	default:
		return append(b, 63<<2, byte(l), byte(l>>8), byte(l>>16), byte(l>>24))
	}
}

// literalTag parses the literal tag at the start of b: the literal's
// length and the tag's own bytes (1–5).
func literalTag(b []byte) (length, hlen int, ok bool) {
	if len(b) == 0 || b[0]&3 != 0 {
		return 0, 0, false
	}
	l := int(b[0] >> 2)
	if l < 60 {
		return l + 1, 1, true
	}
	nb := l - 59 // 1–4 bytes of length − 1
	if len(b) < 1+nb {
		return 0, 0, false
	}
	var v uint32
	for i := range nb {
		v |= uint32(b[1+i]) << (8 * i)
	}
	if v >= 1<<30 {
		return 0, 0, false
	}
	return int(v) + 1, 1 + nb, true
}

// shortenLiteral rewrites the literal tag at the start of b to say n bytes
// (no more than it said), in as many bytes as before.
func shortenLiteral(b []byte, n int) bool {
	old, h, ok := literalTag(b)
	if !ok || n < 1 || n > old {
		return false
	}
	if h == 1 {
		b[0] = byte(n-1) << 2
		return true
	}
	for i := range h - 1 {
		b[1+i] = byte(uint32(n-1) >> (8 * i))
	}
	return true
}

// exactCopy returns a copy of s whose capacity is its length (nil if empty).
func exactCopy[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	out := make([]T, len(s))
	copy(out, s)
	return out
}

// patchBytes is what a patched run adds to its stream: its patches'
// bytes and a literal tag of at most 2 bytes each.
func (r *snappyRun) patchBytes() int {
	x := r.patched
	if x == nil {
		return 0
	}
	m := &x.marks[r.pm]
	if m.pl-1 <= m.pf {
		return 0
	}
	from := 0
	if m.pf > 0 {
		from = int(x.pend[m.pf-1])
	}
	return int(x.pend[m.pl-2]) - from + 2*int(m.pl-1-m.pf)
}

// decodeSnappyRun decodes a run (snappyIndex.run) from its bytes (the
// stream's [r.in, r.end)) into dst (reused if large enough): a SNAPPY
// stream of its own is made in scratch by prefixing the run's output
// length (and its lead literal's tag) and cutting its last literal short.
func decodeSnappyRun(dst, scratch, b []byte, r snappyRun) (out, scratchOut []byte, err error) {
	outLen := r.outEnd - r.out
	scratch = binary.AppendUvarint(scratch[:0], uint64(outLen))
	if r.lead > 0 {
		scratch = appendLiteralTag(scratch, r.lead)
	}
	at := len(scratch)
	if x := r.patched; x != nil {
		// The segment's tags, each copy reading before the mark replaced
		// by a literal of the bytes it writes.
		m := &x.marks[r.pm]
		cur := 0
		for k := int(m.pf); k < int(m.pl)-1; k++ {
			p := int(x.ppos[k]) - r.in
			if p < cur || p >= len(b) || b[p]&3 == 0 {
				return nil, scratch, fmt.Errorf("SNAPPY run: no copy to patch at %d", x.ppos[k])
			}
			scratch = append(scratch, b[cur:p]...)
			from := 0
			if k > 0 {
				from = int(x.pend[k-1])
			}
			scratch = appendLiteralTag(scratch, int(x.pend[k])-from)
			scratch = append(scratch, x.pbytes[from:x.pend[k]]...)
			cur = p + [4]int{0, 2, 3, 5}[b[p]&3]
		}
		scratch = append(scratch, b[min(cur, len(b)):]...)
	} else {
		scratch = append(scratch, b...)
	}
	if r.cut >= 0 {
		if r.cut < r.in || at+r.cut-r.in >= len(scratch) {
			return nil, scratch, fmt.Errorf("SNAPPY run: literal to cut at %d outside the run [%d, %d)", r.cut, r.in, r.end)
		}
		// The literal's data starts after its tag's 1–5 bytes.
		h := scratch[at+r.cut-r.in:]
		if _, hl, ok := literalTag(h); !ok || !shortenLiteral(h, r.end-r.cut-hl) {
			return nil, scratch, fmt.Errorf("SNAPPY run: no literal to cut at %d", r.cut)
		}
	}
	if cap(dst) < outLen {
		dst = make([]byte, outLen)
	}
	out, err = snappy.Decode(dst[:cap(dst)], scratch)
	if err == nil && len(out) != outLen {
		err = fmt.Errorf("%d bytes, want %d", len(out), outLen)
	}
	if err != nil {
		return nil, scratch, fmt.Errorf("SNAPPY run: %w", err)
	}
	return out, scratch, nil
}
