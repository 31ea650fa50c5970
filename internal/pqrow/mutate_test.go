package pqrow

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
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
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || fi.Size() > 8<<10 || soundButHuge[filepath.Base(p)] {
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
	runtime.ReadMemStats(&ms)
	alloc := ms.TotalAlloc - before
	t.Logf("%d mutated inputs read, %d MB allocated", n, alloc>>20)
	// Sizes that lie (a page header's, a footer's length) are refused
	// before parquet-go allocates them (pagesize.go, checkFooter): without
	// those checks these inputs allocated 1.6 GB.
	if alloc > 512<<20 {
		t.Errorf("the mutated inputs allocated %d MB: a lying size reached an allocation", alloc>>20)
	}
}

// soundButHuge lists small seeds whose sound pages are huge: most of
// their mutations are as sound and read as much, which measures memory,
// not parsing (large_string_map.brotli: 4 KB holding a 1 GiB page; 1–3 GB
// allocated per read). TestParquetTestingData and
// TestPageSizeChecksPassValidFiles still read it whole.
var soundButHuge = map[string]bool{"large_string_map.brotli.parquet": true}

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
