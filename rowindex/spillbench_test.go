package rowindex

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// BenchmarkSortAndSpill sorts a run buffer of 2M int-key entries as an
// arrival-order scan adds them (Zipf keys, one-row runs, 12k-row groups)
// and writes it as a run file, as a build's spill does, for a sorted row
// index (bucket 0) and a hash one (bucket of the key).
func BenchmarkSortAndSpill(b *testing.B) {
	for _, kind := range []Kind{KindSorted, KindHash} {
		b.Run(string(kind), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			z := rand.NewZipf(rng, 1.2, 1, 1_000_000)
			const n = 2_000_000
			buf := newRunBuffer(1 << 30)
			for i := range n {
				k := appendIntKey(nil, int64(z.Uint64()*2654435761%4_294_967_291))
				var bucket int32
				if kind == KindHash {
					bucket = BucketFNV1aMix.bucket(k)
				}
				buf.add(bucket, k, int32(i/300_000), int32(i%300_000/12_000), int64(i%12_000), 1, nil)
			}
			orig := slices.Clone(buf.refs)
			path := filepath.Join(b.TempDir(), "run")
			b.ResetTimer()
			for b.Loop() {
				copy(buf.refs, orig)
				buf.sort()
				f, err := os.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := writeRun(f, buf); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
}
