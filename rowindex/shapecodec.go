package rowindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/parquet-go/parquet-go/format"
)

// The encoding of a page's shape in a shape file (shapefile.go): every
// integer a zigzag varint, each list its length first, ascending offsets as
// differences. decodeShape checks what planning relies on (validate), so a
// shape decoded from a file the index does not control cannot send a
// lookup's planning out of bounds; the checksum of its record catches
// accidents, validate lies.

// Flags of an encoded shape.
const (
	shapeWhole = 1 << iota
	shapeLevels
	shapeSnappy
	shapeSamples
)

// shapeListMax bounds a decoded list's length (a page of pageSizeMax
// bytes holds fewer samples, marks or blocks).
const shapeListMax = 1 << 24

// errShapeCorrupt is a shape that does not decode, or does not fit its
// page.
var errShapeCorrupt = errors.New("rowindex: corrupt page shape")

// appendShape appends sh's encoding to b.
func appendShape(b []byte, sh *pageShape) []byte {
	var flags int64
	if sh.whole {
		return binary.AppendVarint(b, shapeWhole)
	}
	if sh.levels != nil {
		flags |= shapeLevels
	}
	if sh.snappy != nil {
		flags |= shapeSnappy
	}
	if sh.samples != nil {
		flags |= shapeSamples
	}
	b = binary.AppendVarint(b, flags)
	for _, v := range []int{sh.dataStart, sh.rows, int(sh.enc), sh.values, sh.every, sh.bw, sh.hlen, sh.bodyLen} {
		b = binary.AppendVarint(b, int64(v))
	}
	if sh.levels != nil {
		b = binary.AppendVarint(b, int64(len(sh.levels)))
		b = append(b, sh.levels...)
	}
	if sh.samples != nil {
		b = appendDeltas(b, sh.samples)
	}
	b = binary.AppendVarint(b, int64(len(sh.marks)))
	var pv, po int32
	for _, m := range sh.marks {
		b = binary.AppendVarint(b, int64(m.val-pv))
		b = binary.AppendVarint(b, int64(m.off-po))
		b = binary.AppendVarint(b, int64(m.n))
		b = binary.AppendVarint(b, int64(m.hdr))
		packed := int64(0)
		if m.packed {
			packed = 1
		}
		b = binary.AppendVarint(b, packed)
		pv, po = m.val, m.off
	}
	if x := sh.snappy; x != nil {
		b = binary.AppendVarint(b, int64(x.n))
		b = binary.AppendVarint(b, int64(x.block))
		b = appendDeltas(b, x.blocks)
		b = binary.AppendVarint(b, int64(len(x.marks)))
		var pin, pout int32
		for _, m := range x.marks {
			for _, v := range []int32{m.in - pin, m.out - pout, m.out - m.reach, m.lit, m.hdr, m.pf, m.pl} {
				b = binary.AppendVarint(b, int64(v))
			}
			pin, pout = m.in, m.out
		}
		b = appendDeltas(b, x.ppos)
		b = appendDeltas(b, x.pend)
		b = binary.AppendVarint(b, int64(len(x.pbytes)))
		b = append(b, x.pbytes...)
	}
	return b
}

// appendDeltas appends a list of int32s: its length, then each value's
// difference from the one before.
func appendDeltas(b []byte, vs []int32) []byte {
	b = binary.AppendVarint(b, int64(len(vs)))
	prev := int32(0)
	for _, v := range vs {
		b = binary.AppendVarint(b, int64(v-prev))
		prev = v
	}
	return b
}

// shapeReader decodes an encoded shape; the first error sticks.
type shapeReader struct {
	b   []byte
	err error
}

func (r *shapeReader) int() int64 {
	// Most deltas, counts and flags fit one or two bytes (a 1 MiB page's
	// marks are 4 KiB or 64 values apart): decoded here, the longer ones
	// by binary.Varint. (After an error it reads on: the caller discards
	// what it decodes.)
	b := r.b
	if len(b) > 0 && b[0] < 0x80 {
		r.b = b[1:]
		return int64(b[0]>>1) ^ -int64(b[0]&1)
	}
	if len(b) > 1 && b[1] < 0x80 {
		u := uint64(b[0]&0x7f) | uint64(b[1])<<7
		r.b = b[2:]
		return int64(u>>1) ^ -int64(u&1)
	}
	return r.intLong()
}

// intLong is int for a varint of more than one byte (or past the end).
func (r *shapeReader) intLong() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: truncated", errShapeCorrupt)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// int32 reads an integer that must fit an int32.
func (r *shapeReader) int32() int32 {
	v := r.int()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.fail("integer out of range")
		return 0
	}
	return int32(v)
}

// count reads a list's length.
func (r *shapeReader) count() int {
	v := r.int()
	if v < 0 || v > shapeListMax {
		r.fail("bad list length")
		return 0
	}
	return int(v)
}

func (r *shapeReader) bytes() []byte {
	n := r.count()
	if r.err != nil || n == 0 {
		return nil
	}
	if n > len(r.b) {
		r.fail("truncated bytes")
		return nil
	}
	b := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return b
}

func (r *shapeReader) deltas() []int32 {
	n := r.count()
	if r.err != nil || n > len(r.b) { // each value takes a byte at least
		r.fail("bad list length")
		return nil
	}
	if n == 0 {
		return nil
	}
	vs := make([]int32, n)
	prev := int64(0)
	for i := range vs {
		prev += r.int()
		if prev < math.MinInt32 || prev > math.MaxInt32 {
			r.fail("offset out of range")
			return nil
		}
		vs[i] = int32(prev)
	}
	return vs
}

func (r *shapeReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", errShapeCorrupt, what)
	}
}

// decodeShape decodes a shape appendShape encoded, checked against its
// page (validate).
func decodeShape(b []byte, pageSize int, ci colInfo) (*pageShape, error) {
	r := &shapeReader{b: b}
	flags := r.int()
	if flags == shapeWhole {
		if len(r.b) != 0 {
			return nil, fmt.Errorf("%w: trailing bytes", errShapeCorrupt)
		}
		return &pageShape{whole: true}, r.err
	}
	sh := &pageShape{}
	var ints [8]int64
	for i := range ints {
		ints[i] = r.int()
		if ints[i] < 0 || ints[i] > math.MaxInt32 {
			r.fail("negative or large field")
		}
	}
	sh.dataStart, sh.rows, sh.enc, sh.values = int(ints[0]), int(ints[1]), format.Encoding(ints[2]), int(ints[3])
	sh.every, sh.bw, sh.hlen, sh.bodyLen = int(ints[4]), int(ints[5]), int(ints[6]), int(ints[7])
	if flags&shapeLevels != 0 {
		sh.levels = r.bytes()
	}
	if flags&shapeSamples != 0 {
		sh.samples = r.deltas()
	}
	if n := r.count(); n > 0 && r.err == nil {
		if n > len(r.b) {
			r.fail("bad list length")
		} else {
			sh.marks = make([]runMark, n)
			var pv, po int64
			wide := false // a field past its type's range
			for i := range sh.marks {
				m := &sh.marks[i]
				val, off, cnt, hdr := pv+r.int(), po+r.int(), r.int(), r.int()
				m.packed = r.int() == 1
				wide = wide || val != int64(int32(val)) || off != int64(int32(off)) || cnt != int64(int32(cnt)) || hdr != int64(uint8(hdr))
				m.val, m.off, m.n, m.hdr = int32(val), int32(off), int32(cnt), uint8(hdr)
				pv, po = val, off
			}
			if wide {
				r.fail("run mark out of range")
			}
		}
	}
	if flags&shapeSnappy != 0 && r.err == nil {
		x := &snappyIndex{n: int(r.int32()), block: int(r.int32())}
		x.blocks = r.deltas()
		if n := r.count(); n > 0 && r.err == nil {
			if n > len(r.b) {
				r.fail("bad list length")
			} else {
				x.marks = make([]snappyMark, n)
				var pin, pout int64
				wide := false // a field past int32
				for i := range x.marks {
					m := &x.marks[i]
					in, out := pin+r.int(), pout+r.int()
					reach := out - r.int()
					lit, hdr, pf, pl := r.int(), r.int(), r.int(), r.int()
					wide = wide || in != int64(int32(in)) || out != int64(int32(out)) || reach != int64(int32(reach)) || lit != int64(int32(lit)) ||
						hdr != int64(int32(hdr)) || pf != int64(int32(pf)) || pl != int64(int32(pl))
					*m = snappyMark{in: int32(in), out: int32(out), reach: int32(reach), lit: int32(lit), hdr: int32(hdr), pf: int32(pf), pl: int32(pl)}
					pin, pout = in, out
				}
				if wide {
					r.fail("SNAPPY mark out of range")
				}
			}
		}
		x.ppos = r.deltas()
		x.pend = r.deltas()
		x.pbytes = r.bytes()
		sh.snappy = x
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: trailing bytes", errShapeCorrupt)
	}
	if err := sh.validate(pageSize, ci); err != nil {
		return nil, err
	}
	return sh, nil
}

// validate reports whether the shape fits a page of pageSize bytes of a
// column chunk ci (its codec, and its values' width: 0 when variable):
// what span, snappyBlocks, snappyOut and snappyIndex.run index, in bounds
// and in order, and what a decode allocates, bounded as measureShape makes
// it.
func (sh *pageShape) validate(pageSize int, ci colInfo) error {
	bad := func(what string) error { return fmt.Errorf("%w: %s", errShapeCorrupt, what) }
	if sh.whole {
		return nil
	}
	width := ci.width
	if (sh.snappy != nil) != (ci.codec == format.Snappy) || ci.codec != format.Snappy && ci.codec != format.Uncompressed {
		return bad("codec")
	}
	if sh.rows < 0 || sh.values < 0 || sh.values > sh.rows {
		return bad("row and value counts")
	}
	lc := newLevelCursor(sh.levels)
	if sh.levels == nil && sh.values != sh.rows || sh.levels != nil && (lc.defined(sh.rows) != sh.values || !levelsAreBits(sh.levels)) {
		return bad("definition levels")
	}
	// The values' end, as if the page were stored uncompressed.
	extent := pageSize
	if x := sh.snappy; x != nil {
		// SNAPPY expands a stream at most ≈21 times (a 3-byte copy tag
		// writes 64 bytes); split streams are of snappyBlock blocks, or one.
		streamLen := 0
		if len(x.blocks) > 0 {
			streamLen = int(x.blocks[len(x.blocks)-1])
		}
		if x.block <= 0 || x.n <= 0 || x.n > 1<<30 || x.n > 22*streamLen+64 || x.block != snappyBlock && x.block != x.n ||
			x.n != sh.bodyLen || sh.hlen < 0 || sh.dataStart < sh.hlen {
			return bad("SNAPPY body")
		}
		if len(x.blocks) != (x.n+x.block-1)/x.block+1 || x.blocks[0] < 0 || !nondecreasing(x.blocks) || sh.hlen+int(x.blocks[len(x.blocks)-1]) > pageSize {
			return bad("SNAPPY blocks")
		}
		stream := x.blocks[len(x.blocks)-1]
		for i, m := range x.marks {
			if m.out < 0 || m.out >= int32(x.n) || m.in < 0 || m.in > stream || m.reach < 0 || m.reach > m.out ||
				m.lit < 0 || m.hdr < 0 || m.hdr > m.in || m.pf < 0 || int(m.pf) > len(x.ppos) || m.pl < 0 || m.pl > 0 && (m.pl-1 < m.pf || int(m.pl)-1 > len(x.ppos)) ||
				i > 0 && (m.out <= x.marks[i-1].out || m.in < x.marks[i-1].in) {
				return bad("SNAPPY marks")
			}
		}
		if len(x.pend) != len(x.ppos) || !nondecreasing(x.ppos) || !nondecreasing(x.pend) ||
			len(x.pend) > 0 && (x.pend[0] < 0 || int(x.pend[len(x.pend)-1]) != len(x.pbytes) || x.ppos[0] < 0 || x.ppos[len(x.ppos)-1] > stream) ||
			len(x.pend) == 0 && len(x.pbytes) != 0 {
			return bad("SNAPPY patches")
		}
		extent = sh.hlen + sh.bodyLen
	}
	if sh.dataStart < 0 || sh.dataStart > extent {
		return bad("values' start")
	}
	room := int64(extent - sh.dataStart) // the values' bytes
	switch {
	case width > 0 && sh.enc == format.Plain:
		if int64(sh.values)*int64(width) > room || sh.samples != nil || sh.marks != nil {
			return bad("fixed-width values")
		}
	case sh.enc == format.Plain:
		if sh.every <= 0 || len(sh.samples) != (sh.values+sh.every-1)/sh.every+1 || sh.samples[0] < 0 ||
			!nondecreasing(sh.samples) || int64(sh.samples[len(sh.samples)-1]) > room || sh.marks != nil {
			return bad("value samples")
		}
	case isDictEnc(sh.enc):
		ms := sh.marks
		if sh.bw > 32 || len(ms) == 0 || sh.samples != nil || int(ms[len(ms)-1].val) < sh.values || int64(ms[len(ms)-1].off) > room {
			return bad("dictionary index runs")
		}
		for i, m := range ms {
			if m.val < 0 || m.off < 0 || m.n < 0 || i > 0 && (m.val < ms[i-1].val || m.off < ms[i-1].off) ||
				m.packed && int64(m.off)+int64(m.hdr)+(int64(m.n)*int64(sh.bw)+7)/8 > room {
				return bad("dictionary index runs")
			}
		}
	default:
		return bad("encoding")
	}
	return nil
}

// levelsAreBits reports whether definition levels of bit width 1 hold only
// 0s and 1s: an RLE run's value is a whole byte, and a larger one would
// count more defined values than there are.
func levelsAreBits(levels []byte) bool {
	h := hybrid{data: levels, bw: 1}
	for h.next() {
		if h.rle && h.val > 1 {
			return false
		}
	}
	return true
}

// nondecreasing reports whether vs never decreases.
func nondecreasing(vs []int32) bool {
	for i := 1; i < len(vs); i++ {
		if vs[i] < vs[i-1] {
			return false
		}
	}
	return true
}
