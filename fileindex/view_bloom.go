package fileindex

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ariadne-go/ariadne/bloom"
)

// bloomBits is a parsed bloom filter kept in a view, tested with probes
// whose hashes are computed once per query value rather than once per
// (value, file) pair: a lookup of n values against F files costs n hashes
// and n·F·k bit tests instead of n·F hashes. The layout and the bit
// derivation are Guava's MURMUR128_MITZ_64, exactly as package bloom
// implements them (view_bloom_test.go checks both agree on random filters).
type bloomBits struct {
	k     uint64
	m     uint64 // bits = 64 × len(words)
	words []uint64
}

// bloomHeader is the serialized header: strategy byte, k byte, int32 word
// count.
const bloomHeader = 6

// parseBloom parses Guava's serialized form (see package bloom).
func parseBloom(b []byte) (*bloomBits, error) {
	if len(b) < bloomHeader || b[0] != 1 {
		return nil, fmt.Errorf("%w: bad header", bloom.ErrCorrupt)
	}
	k := uint64(b[1])
	w := int64(binary.BigEndian.Uint32(b[2:]))
	if k == 0 || w == 0 || int64(len(b)) != bloomHeader+8*w {
		return nil, fmt.Errorf("%w: k=%d, %d words, %d bytes", bloom.ErrCorrupt, k, w, len(b))
	}
	f := &bloomBits{k: k, m: uint64(w) * 64, words: make([]uint64, w)}
	for i := range f.words {
		f.words[i] = binary.BigEndian.Uint64(b[bloomHeader+8*i:])
	}
	return f, nil
}

// probe is the hash pair of one stringified query value.
type probe struct{ h1, h2 uint64 }

func newProbe(s string) probe {
	h1, h2 := bloom.Murmur3x64_128([]byte(s), 0)
	return probe{h1, h2}
}

// mightContain reports whether the value of p may be in the filter.
func (f *bloomBits) mightContain(p probe) bool {
	c := p.h1
	for range f.k {
		i := (c & math.MaxInt64) % f.m
		if f.words[i>>6]&(1<<(i&63)) == 0 {
			return false
		}
		c += p.h2
	}
	return true
}

// mightContainAny reports whether any probe may be in the filter.
func (f *bloomBits) mightContainAny(ps []probe) bool {
	for _, p := range ps {
		if f.mightContain(p) {
			return true
		}
	}
	return false
}
