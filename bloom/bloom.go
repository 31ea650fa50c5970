// Package bloom owns the bloom filters of the file index, bit for bit in the
// format of Guava's BloomFilter<CharSequence> with a UTF-8 string funnel and
// strategy MURMUR128_MITZ_64 (spec §3.5), so filters written by the Spark
// library test correctly here and ours test correctly there.
//
// Serialized form: byte 0 the strategy ordinal (1), byte 1 the number of hash
// functions k, bytes 2–5 the big-endian count W of 64-bit words, then W
// big-endian words. Bit i lives in word i>>6 at bit i&63.
//
// Values are hashed as the UTF-8 bytes of their canonical string (see
// Stringify); build and probe must use the same rendering or the
// no-false-negative guarantee breaks (§12 item 4).
package bloom

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"unsafe"
)

// strategyMurmur128Mitz64 is the ordinal of Guava's MURMUR128_MITZ_64.
const strategyMurmur128Mitz64 = 1

// headerSize is strategy (1) + k (1) + word count (4).
const headerSize = 6

// ErrCorrupt reports serialized bytes that are not a Guava bloom filter.
var ErrCorrupt = errors.New("bloom: corrupt filter")

// ErrZeroBits reports a filter that would have no bits: Guava refuses it
// ("Could not create BloomFilter of 0 bits"), which happens when the FPR is
// close to 1 for small n (§9 item 22).
var ErrZeroBits = errors.New("bloom: Could not create BloomFilter of 0 bits")

// Filter is a bloom filter. The zero value is not usable; use New or
// Unmarshal. A Filter is not safe for concurrent mutation; concurrent
// MightContain calls on a filter no one adds to are safe.
type Filter struct {
	k     int
	words []uint64
}

// OptimalNumBits is Guava's sizing: m = floor(−n·ln p / (ln 2)²), n ≥ 1.
func OptimalNumBits(n int64, p float64) int64 {
	if p == 0 {
		p = math.SmallestNonzeroFloat64
	}
	return int64(-float64(n) * math.Log(p) / (math.Ln2 * math.Ln2))
}

// OptimalNumHashes is Guava 33's k = max(1, round(−ln p / ln 2)).
func OptimalNumHashes(p float64) int {
	return max(1, int(math.Round(-math.Log(p)/math.Ln2)))
}

// New sizes a filter for n expected distinct values (n < 1 counts as 1) at
// false-positive probability p, exactly as Guava's BloomFilter.create does.
// At p = 0.01 that is about 9.59 bits and k = 7 per value.
func New(n int64, p float64) (*Filter, error) {
	if !(p > 0 && p < 1) {
		return nil, fmt.Errorf("bloom: false positive probability %v is not in (0, 1)", p)
	}
	n = max(n, 1)
	m := OptimalNumBits(n, p)
	if m <= 0 {
		return nil, ErrZeroBits
	}
	words := (m + 63) / 64
	if words > math.MaxInt32 {
		return nil, fmt.Errorf("bloom: %d bits is too large", m)
	}
	return &Filter{k: OptimalNumHashes(p), words: make([]uint64, words)}, nil
}

// NumHashes returns k.
func (f *Filter) NumHashes() int { return f.k }

// NumBits returns M = 64·W.
func (f *Filter) NumBits() int64 { return int64(len(f.words)) * 64 }

// AddString inserts s (hashed as UTF-8).
func (f *Filter) AddString(s string) { f.AddHash(HashString(s)) }

// Add inserts the bytes b.
func (f *Filter) Add(b []byte) {
	f.AddHash(Murmur3x64_128(b, 0))
}

// HashString is Murmur3x64_128 of s's UTF-8 bytes with seed 0: the hash
// Add and AddString derive a value's bits from. A caller that must count
// distinct values before it can size the filter (New takes the count)
// keeps these 16 bytes per value instead of the value, and adds them with
// AddHash once the filter exists.
func HashString(s string) (h1, h2 uint64) {
	return Murmur3x64_128(unsafe.Slice(unsafe.StringData(s), len(s)), 0)
}

// AddHash inserts the value whose Murmur3x64_128 hash (seed 0) is (h1, h2):
// the same bits as Add of the value's bytes.
func (f *Filter) AddHash(h1, h2 uint64) {
	m := uint64(f.NumBits())
	c := h1
	for range f.k {
		i := (c & math.MaxInt64) % m
		f.words[i>>6] |= 1 << (i & 63)
		c += h2
	}
}

// MightContainString tests s (hashed as UTF-8).
func (f *Filter) MightContainString(s string) bool { return f.MightContain([]byte(s)) }

// MightContain reports whether b may have been added: false means certainly
// not.
func (f *Filter) MightContain(b []byte) bool {
	h1, h2 := Murmur3x64_128(b, 0)
	m := uint64(f.NumBits())
	c := h1
	for range f.k {
		i := (c & math.MaxInt64) % m
		if f.words[i>>6]&(1<<(i&63)) == 0 {
			return false
		}
		c += h2
	}
	return true
}

// Marshal serializes the filter in Guava's writeTo format.
func (f *Filter) Marshal() []byte {
	out := make([]byte, headerSize+8*len(f.words))
	out[0] = strategyMurmur128Mitz64
	out[1] = byte(f.k)
	binary.BigEndian.PutUint32(out[2:], uint32(len(f.words)))
	for i, w := range f.words {
		binary.BigEndian.PutUint64(out[headerSize+8*i:], w)
	}
	return out
}

// Unmarshal parses Guava's serialized form. The stored k is used as is,
// never recomputed (older Guava versions derived k differently).
func Unmarshal(b []byte) (*Filter, error) {
	if len(b) < headerSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrCorrupt, len(b))
	}
	if b[0] != strategyMurmur128Mitz64 {
		return nil, fmt.Errorf("%w: strategy %d is not MURMUR128_MITZ_64", ErrCorrupt, int8(b[0]))
	}
	k := int(b[1])
	words := int64(binary.BigEndian.Uint32(b[2:]))
	if k == 0 || words == 0 || int64(len(b)) != headerSize+8*words {
		return nil, fmt.Errorf("%w: k=%d, %d words, %d bytes", ErrCorrupt, k, words, len(b))
	}
	f := &Filter{k: k, words: make([]uint64, words)}
	for i := range f.words {
		f.words[i] = binary.BigEndian.Uint64(b[headerSize+8*i:])
	}
	return f, nil
}

// Murmur3x64_128 is MurmurHash3's x64 128-bit variant, returning (h1, h2):
// the first and second 8 output bytes read little-endian, as Guava's
// HashCode.asLong and the MITZ_64 strategy use them.
func Murmur3x64_128(data []byte, seed uint32) (h1, h2 uint64) {
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	h1, h2 = uint64(seed), uint64(seed)
	n := len(data)
	for len(data) >= 16 {
		k1 := binary.LittleEndian.Uint64(data)
		k2 := binary.LittleEndian.Uint64(data[8:])
		data = data[16:]
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
		h1 = bits.RotateLeft64(h1, 27)
		h1 += h2
		h1 = h1*5 + 0x52dce729
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
		h2 = bits.RotateLeft64(h2, 31)
		h2 += h1
		h2 = h2*5 + 0x38495ab5
	}
	var k1, k2 uint64
	switch len(data) {
	case 15:
		k2 ^= uint64(data[14]) << 48
		fallthrough
	case 14:
		k2 ^= uint64(data[13]) << 40
		fallthrough
	case 13:
		k2 ^= uint64(data[12]) << 32
		fallthrough
	case 12:
		k2 ^= uint64(data[11]) << 24
		fallthrough
	case 11:
		k2 ^= uint64(data[10]) << 16
		fallthrough
	case 10:
		k2 ^= uint64(data[9]) << 8
		fallthrough
	case 9:
		k2 ^= uint64(data[8])
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
		fallthrough
	case 8:
		k1 ^= uint64(data[7]) << 56
		fallthrough
	case 7:
		k1 ^= uint64(data[6]) << 48
		fallthrough
	case 6:
		k1 ^= uint64(data[5]) << 40
		fallthrough
	case 5:
		k1 ^= uint64(data[4]) << 32
		fallthrough
	case 4:
		k1 ^= uint64(data[3]) << 24
		fallthrough
	case 3:
		k1 ^= uint64(data[2]) << 16
		fallthrough
	case 2:
		k1 ^= uint64(data[1]) << 8
		fallthrough
	case 1:
		k1 ^= uint64(data[0])
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	h1 += h2
	h2 += h1
	return h1, h2
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// MaxUsefulProbes is the largest number of probe values for which a filter
// built at false-positive rate fpr still rejects at least 1% of the files
// that do not hold any of them (§12 item 3): a non-matching file passes n
// independent probes with probability 1−(1−fpr)^n, so pruning stays above
// 1% while (1−fpr)^n ≥ 0.01, i.e. n ≤ ln(0.01)/ln(1−fpr). At fpr 0.01 that is
// 458 probes; at 0.001, 4602. Beyond it the bloom pre-filter is skipped
// (the file stays a candidate), never truncated.
func MaxUsefulProbes(fpr float64) int {
	if !(fpr > 0 && fpr < 1) {
		return 0
	}
	return int(math.Log(0.01) / math.Log1p(-fpr))
}
