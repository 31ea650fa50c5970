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
// loop runs ~800 (10 per seed, 300 for LZ4_RAW), so every `go test` tries
// them.
func TestReadParquetMutations(t *testing.T) {
	if testing.Short() {
		t.Skip("mutations: not in -short")
	}
	paths, _ := filepath.Glob("../../testdata/parquet-testing/data/*.parquet")
	rng := rand.New(rand.NewPCG(15, 7))
	lz4rng := rand.New(rand.NewPCG(15, 4))
	ctx := context.Background()
	n := 0
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || fi.Size() > 8<<10 {
			continue
		}
		seed, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// LZ4_RAW seeds get more, from their own generator (the others'
		// mutations stay the same): their pages reach parquet-go's codec,
		// which a corrupt page made allocate until the process died
		// (pageguard.go).
		tries, r := 10, rng
		if strings.Contains(strings.ToLower(filepath.Base(p)), "lz4_raw") {
			tries, r = 300, lz4rng
		}
		for range tries {
			fuzzRead(ctx, mutate(r, seed))
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
