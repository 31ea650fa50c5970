package rowindex

import "math/bits"

// packedInts is a column of integers held in width bits each, as
// differences from base (the least): a resident group's file ids, row
// groups, rows and run lengths span a few bits each (a lake's hundred files
// in 7, a row group's rows in 14–19), not the 32 or 64 of their type.
// Differences are taken modulo 2⁶⁴, so any int64 values pack, extremes
// included (width 64 at worst). words has a word past the values, so a
// value is read from two words without a branch (get).
type packedInts struct {
	words []uint64
	base  int64
	mask  uint64 // width ones
	width uint8
}

// packInts packs at(0), …, at(n-1).
func packInts(n int, at func(i int) int64) packedInts {
	var lo, hi int64
	for i := range n {
		v := at(i)
		if i == 0 {
			lo, hi = v, v
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	p := packedInts{base: lo, width: uint8(bits.Len64(uint64(hi) - uint64(lo)))}
	w := uint(p.width)
	p.mask = 1<<w - 1 // all ones at width 64 (the shift yields 0)
	p.words = make([]uint64, max((uint(n)*w+63)/64+1, 2))
	if w == 0 {
		return p // every value is base
	}
	for i := range n {
		d := uint64(at(i)) - uint64(lo)
		off := uint(i) * w
		word, shift := off/64, off%64
		p.words[word] |= d << shift
		if shift+w > 64 {
			p.words[word+1] |= d >> (64 - shift)
		}
	}
	return p
}

// get returns value i: the low word's bits from the shift on, the next
// word's below them (shifted by 64 when shift is 0, which yields 0).
func (p *packedInts) get(i int) int64 {
	off := uint(i) * uint(p.width)
	word, shift := off/64, off%64
	d := p.words[word]>>shift | p.words[word+1]<<(64-shift)
	return int64(uint64(p.base) + d&p.mask)
}

// charge is the column's memory: its words and header.
func (p *packedInts) charge() int64 { return 8*int64(len(p.words)) + 48 }
