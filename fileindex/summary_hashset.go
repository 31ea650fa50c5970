package fileindex

import "github.com/ariadne-go/ariadne/bloom"

// hashSet is a bloom column's distinct string values of one file, kept as
// their 128-bit filter hashes (bloom.HashString): a filter is sized by the
// file's distinct count, so the values must be counted before any bit is
// set, but the bits need only the hashes. Sixteen bytes per value in one
// flat table replace a Go string and a map entry per value (the bloom
// column of the benchmark lake holds ~100,000 distinct URIs a file), and
// the finished filter is bit for bit the one built from the strings.
// Two distinct strings with equal 128-bit hashes would be counted once:
// the filter would be sized one value smaller (as likely as a collision of
// two random 128-bit numbers, ~n²/2¹²⁹).
type hashSet struct {
	slots []hashPair // open addressing, linear probing; len a power of two
	n     int
	zero  bool // the pair (0, 0), which marks an empty slot, was added
}

type hashPair struct{ h1, h2 uint64 }

// hashEntryBytes is the memory one entry takes at the table's worst load
// (16-byte slots, doubled at 3/4 full: 16 / 0.375 ≈ 43).
const hashEntryBytes = 44

func newHashSet(hint int) *hashSet {
	n := 64
	for n*3/4 < hint {
		n *= 2
	}
	return &hashSet{slots: make([]hashPair, n)}
}

// add records the pair and reports whether it was new.
func (s *hashSet) add(h1, h2 uint64) bool {
	if h1 == 0 && h2 == 0 {
		if s.zero {
			return false
		}
		s.zero = true
		s.n++
		return true
	}
	mask := uint64(len(s.slots) - 1)
	for i := h1 & mask; ; i = (i + 1) & mask {
		p := &s.slots[i]
		if p.h1 == h1 && p.h2 == h2 {
			return false
		}
		if p.h1 == 0 && p.h2 == 0 {
			p.h1, p.h2 = h1, h2
			s.n++
			if s.n*4 > len(s.slots)*3 {
				s.grow()
			}
			return true
		}
	}
}

func (s *hashSet) grow() {
	old := s.slots
	s.slots = make([]hashPair, 2*len(old))
	mask := uint64(len(s.slots) - 1)
	for _, p := range old {
		if p.h1 == 0 && p.h2 == 0 {
			continue
		}
		i := p.h1 & mask
		for s.slots[i].h1 != 0 || s.slots[i].h2 != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = p
	}
}

// addTo sets the bits of every recorded value in f.
func (s *hashSet) addTo(f *bloom.Filter) {
	if s.zero {
		f.AddHash(0, 0)
	}
	for _, p := range s.slots {
		if p.h1 != 0 || p.h2 != 0 {
			f.AddHash(p.h1, p.h2)
		}
	}
}
