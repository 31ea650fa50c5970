package pqrow

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadParquetMutations runs FuzzReadParquet's body over deterministic
// mutations of its seeds (bytes overwritten, cut short), without the fuzz
// engine: on this machine the engine runs only a few parquet-go inputs a
// second (it copies parquet-go's large coverage map after each), while this
// loop runs ~500 (10 per seed), so every `go test` tries them.
func TestReadParquetMutations(t *testing.T) {
	if testing.Short() {
		t.Skip("mutations: not in -short")
	}
	paths, _ := filepath.Glob("../../testdata/parquet-testing/data/*.parquet")
	rng := rand.New(rand.NewPCG(15, 7))
	ctx := context.Background()
	n := 0
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || fi.Size() > 8<<10 || knownCodecBomb(p) {
			continue
		}
		seed, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			fuzzRead(ctx, mutate(rng, seed))
			n++
		}
	}
	t.Logf("%d mutated inputs read", n)
}

// mutate returns a copy of b with a few bytes overwritten, and sometimes
// cut short or with a run of bytes repeated.
func mutate(rng *rand.Rand, b []byte) []byte {
	out := append([]byte(nil), b...)
	for range 1 + rng.IntN(4) {
		if len(out) == 0 {
			break
		}
		out[rng.IntN(len(out))] = byte(rng.IntN(256))
	}
	switch rng.IntN(6) {
	case 0:
		out = out[:rng.IntN(len(out)+1)]
	case 1:
		if len(out) > 8 {
			i := rng.IntN(len(out) - 4)
			out = append(out[:i+4:i+4], out[i:]...)
		}
	}
	return out
}

// knownCodecBomb reports the seeds whose mutations parquet-go v0.32.0 cannot
// survive: its LZ4_RAW codec (compress/lz4 Codec.Decode) doubles its output
// buffer on every decode error without bound, so one corrupt LZ4_RAW page
// allocates until the process dies (fatal "out of memory", not a panic we
// could recover). Found by this test; not fixable from our side without
// replacing the codec (parquet-go has no codec registry). Until then such
// files are a known way to kill an update.
func knownCodecBomb(path string) bool {
	return strings.Contains(strings.ToLower(filepath.Base(path)), "lz4")
}
