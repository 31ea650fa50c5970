package lakegen

import "math/bits"

// sparkHashSeed is the seed of Spark's hash() and of its bucket ids
// (HashPartitioning uses Murmur3Hash with seed 42).
const sparkHashSeed = 42

// BucketOf returns the bucket of a user id among n buckets as Spark computes
// it for bucketBy(n, user_id): pmod(murmur3_x86_32(user_id, seed 42), n),
// the 64-bit id hashed as its low then its high 32-bit word. A Spark reader
// given the table's bucket spec therefore agrees with the generated layout.
func BucketOf(userID int64, n int) int {
	h := int64(sparkHashLong(userID, sparkHashSeed))
	return int(((h % int64(n)) + int64(n)) % int64(n))
}

// sparkHashLong is Spark's Murmur3_x86_32.hashLong.
func sparkHashLong(v int64, seed uint32) int32 {
	h := mixH1(seed, mixK1(uint32(v)))
	h = mixH1(h, mixK1(uint32(uint64(v)>>32)))
	return int32(fmix(h, 8))
}

// sparkHashInt is Spark's Murmur3_x86_32.hashInt (used by the tests to check
// the mixing functions against Spark's published values).
func sparkHashInt(v int32, seed uint32) int32 {
	return int32(fmix(mixH1(seed, mixK1(uint32(v))), 4))
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
