// Package sparkhash owns Spark's Murmur3 hashing: the x86_32 variant that
// Spark's hash() function and its bucketing (bucketBy, HashPartitioning) use,
// with Spark's seed and its byte-array quirk, so that files bucketed here
// agree with a Spark reader given the table's bucket spec.
package sparkhash

import (
	"math"
	"math/bits"
)

// Seed is the seed of Spark's hash() and of its bucket ids (HashPartitioning
// uses Murmur3Hash with seed 42).
const Seed = 42

// Int is Spark's Murmur3_x86_32.hashInt: the hash of an int, a date (days),
// a boolean (1 or 0), a byte or a short.
func Int(v int32, seed uint32) int32 {
	return int32(fmix(mixH1(seed, mixK1(uint32(v))), 4))
}

// Long is Spark's Murmur3_x86_32.hashLong: the hash of a long or a
// timestamp (microseconds), the low then the high 32-bit word.
func Long(v int64, seed uint32) int32 {
	h := mixH1(seed, mixK1(uint32(v)))
	h = mixH1(h, mixK1(uint32(uint64(v)>>32)))
	return int32(fmix(h, 8))
}

// Float is Spark's hash of a float: Int of its bits, with -0.0 hashed as
// 0.0 (Spark normalises it) and NaN as the canonical NaN.
func Float(v float32, seed uint32) int32 {
	if v == 0 {
		v = 0
	}
	if v != v {
		return Int(0x7fc00000, seed)
	}
	return Int(int32(math.Float32bits(v)), seed)
}

// Double is Spark's hash of a double: Long of its bits, with -0.0 hashed as
// 0.0 and NaN as the canonical NaN (Java's doubleToLongBits).
func Double(v float64, seed uint32) int32 {
	if v == 0 {
		v = 0
	}
	if v != v {
		return Long(0x7ff8000000000000, seed)
	}
	return Long(int64(math.Float64bits(v)), seed)
}

// Bytes is Spark's Murmur3_x86_32.hashUnsafeBytes, the hash of a string's
// UTF-8 bytes or of a binary value: whole 4-byte little-endian words as in
// Murmur3, then — Spark's quirk, kept for compatibility — every trailing byte
// mixed on its own as a sign-extended int, where Murmur3 would pack the tail
// into one word.
func Bytes(b []byte, seed uint32) int32 {
	h := seed
	n := len(b) - len(b)%4
	for i := 0; i < n; i += 4 {
		w := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24
		h = mixH1(h, mixK1(w))
	}
	for _, c := range b[n:] {
		h = mixH1(h, mixK1(uint32(int32(int8(c)))))
	}
	return int32(fmix(h, uint32(len(b))))
}

// Bucket returns Spark's bucket id of a hash among n buckets: pmod(h, n),
// always in [0, n).
func Bucket(h int32, n int) int {
	return int(((int64(h) % int64(n)) + int64(n)) % int64(n))
}

func mixK1(k uint32) uint32 {
	k *= 0xcc9e2d51
	k = bits.RotateLeft32(k, 15)
	return k * 0x1b873593
}

func mixH1(h, k uint32) uint32 {
	h ^= k
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

func fmix(h, length uint32) uint32 {
	h ^= length
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
