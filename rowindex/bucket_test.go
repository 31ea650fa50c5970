package rowindex

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestBucketSpread: the bucket hash of new hash row indexes spreads a
// million keys over the 65,536 buckets as a random function would (mean
// ≈15.3 keys a bucket; a Poisson maximum ≈35): no bucket above 3× the mean,
// at most 0.1 % of the buckets empty, and the 128 partitions of a
// partitioned build (the hash's top 7 bits) within 5 % of their mean. The
// key sets are dense ints (user ids 0..1M, and around zero), ints at a
// stride (millisecond timestamps), and random byte strings. FNV-1a's top
// bits alone (BucketFNV1a, formats 1 and 2) fill 7,799 buckets with the
// ids 0..1M, up to 256 keys each: the test fails on that hash.
func TestBucketSpread(t *testing.T) {
	const n = 1_000_000
	rng := rand.New(rand.NewPCG(5, 6))
	sets := map[string]func(i int) []byte{
		"ints 0..1M":         func(i int) []byte { return appendIntKey(nil, int64(i)) },
		"ints -500k..500k":   func(i int) []byte { return appendIntKey(nil, int64(i-n/2)) },
		"ints at stride 1e3": func(i int) []byte { return appendIntKey(nil, 1_733_000_000_000+int64(i)*1000) },
		"random bytes": func(int) []byte {
			b := make([]byte, 8+rng.IntN(17)) // 8-24 random bytes: distinct
			for j := range b {
				b[j] = byte(rng.IntN(256))
			}
			return append([]byte{tagBytes}, b...)
		},
	}
	check := func(t *testing.T, h BucketHash, key func(i int) []byte) {
		counts := make([]int, numBuckets)
		var parts [128]int
		for i := range n {
			k := key(i)
			b := h.bucket(k)
			counts[b]++
			parts[b>>9]++
			if k[0] == tagInt {
				if ib := h.intBucket(binary.BigEndian.Uint64(k[1:])); ib != b {
					t.Fatalf("key %x: intBucket %d, bucket %d", k, ib, b)
				}
			}
		}
		mean := float64(n) / numBuckets
		most, empty := 0, 0
		for _, c := range counts {
			most = max(most, c)
			if c == 0 {
				empty++
			}
		}
		if float64(most) > 3*mean || empty > numBuckets/1000 {
			t.Errorf("%q: fullest bucket %d keys (mean %.1f), %d of %d buckets empty", h, most, mean, empty, numBuckets)
		}
		pmean := float64(n) / float64(len(parts))
		for p, c := range parts {
			if float64(c) < 0.95*pmean || float64(c) > 1.05*pmean {
				t.Errorf("%q: partition %d of %d holds %d keys, mean %.0f", h, p, len(parts), c, pmean)
				break
			}
		}
	}
	for name, key := range sets {
		t.Run(name, func(t *testing.T) { check(t, BucketFNV1aMix, key) })
	}
}

// TestOldBucketHashCrowds documents why the hash changed: under BucketFNV1a
// the dense ids 0..1M fall in few buckets. If this stops failing the
// spread check, the old hash's definition changed, and old indexes would
// no longer be read.
func TestOldBucketHashCrowds(t *testing.T) {
	seen := map[int32]int{}
	most := 0
	for i := range int64(1_000_000) {
		b := BucketFNV1a.bucket(appendIntKey(nil, i))
		seen[b]++
		most = max(most, seen[b])
	}
	if len(seen) != 7_799 || most != 256 {
		t.Fatalf("BucketFNV1a: ids 0..1M in %d buckets, fullest %d; formats 1-2 put them in 7,799, fullest 256", len(seen), most)
	}
}
