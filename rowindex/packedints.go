package rowindex

import "math/bits"

// packedInts is a column of integers held in width bits each, as
// differences from base (the least): a resident group's file ids, row
// groups, rows and run lengths span a few bits each (a lake's hundred files
// in 7, a row group's rows in 14–19), not the 32 or 64 of their type.
// Differences are taken modulo 2⁶⁴, so any int64 values pack, extremes
// included (width 64 at worst).
type packedInts struct {
	words []uint64
	base  int64
	width uint8
}

// packInts packs at(0), …, at(n-1).
func packInts(n int, at func(i int) int64) packedInts {
	if n == 0 {
		return packedInts{}
	}
	lo, hi := at(0), at(0)
	for i := 1; i < n; i++ {
		v := at(i)
		lo, hi = min(lo, v), max(hi, v)
	}
	p := packedInts{base: lo, width: uint8(bits.Len64(uint64(hi) - uint64(lo)))}
	if p.width == 0 {
		return p // every value is base
	}
	w := uint(p.width)
	p.words = make([]uint64, (uint(n)*w+63)/64)
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

// get returns value i.
func (p *packedInts) get(i int) int64 {
	w := uint(p.width)
	if w == 0 {
		return p.base
	}
	off := uint(i) * w
	word, shift := off/64, off%64
	d := p.words[word] >> shift
	if shift+w > 64 {
		d |= p.words[word+1] << (64 - shift)
	}
	if w < 64 {
		d &= 1<<w - 1
	}
	return int64(uint64(p.base) + d)
}

// charge is the column's memory: its words and header.
func (p *packedInts) charge() int64 { return 8*int64(len(p.words)) + 40 }
