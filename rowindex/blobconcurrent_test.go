package rowindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/store"
)

// TestCoGroupedConcurrentLookups: lookups of co-grouped zstd-dict blobs
// running at once on one RowIndex (sharing its decoders' pooled scratch and
// the files' cached handles) each return what a lone lookup returns, and
// the rows a lookup returned stay as they were while later lookups reuse
// that scratch.
func TestCoGroupedConcurrentLookups(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Byte-array fields of random bytes (no common prefix, no
	// dictionary): their values can only point into the decoded block.
	type playRow struct {
		User int64  `parquet:"user"`
		TS   int64  `parquet:"ts"`
		Name string `parquet:"name"`
		Body []byte `parquet:"body"`
	}
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	for fi := range 2 {
		rng := rand.New(rand.NewPCG(uint64(fi), 9))
		rows := make([]playRow, 4000)
		for i := range rows {
			name := make([]byte, 4+rng.IntN(20))
			body := make([]byte, rng.IntN(60))
			for j := range name {
				name[j] = byte('a' + rng.IntN(26))
			}
			for j := range body {
				body[j] = byte(rng.IntN(4))
			}
			r := playRow{User: int64(rng.IntN(200)), TS: rng.Int64N(1e9), Name: string(name), Body: body}
			if r.User%2 == 0 {
				// An even user's block compresses (a ZSTD frame); an
				// odd one's does not (a raw block, decoded in place).
				for j := range body {
					body[j] &= 3
				}
			}
			rows[i] = r
		}
		if err := parquet.WriteFile(filepath.Join(dir, "src", fmt.Sprintf("p%d.parquet", fi)), rows); err != nil {
			t.Fatal(err)
		}
	}
	data, err := store.Open(ctx, "file://"+filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	res := store.NewResolver(store.ResolverOptions{})
	defer res.Close()
	srcs, err := prepared.Sources(ctx, res, []string{"file://" + filepath.Join(dir, "src")})
	if err != nil {
		t.Fatal(err)
	}
	st, err := prepared.PrepareFiles(ctx, res, srcs, data, prepared.Options{
		Key: "user", Sort: []string{"ts"}, Buckets: 1, Frames: &prepared.FrameOptions{},
		Blob: &prepared.BlobOptions{Column: "served", Fields: []string{"ts", "name", "body"}, Codec: prepared.BlobCodecZstdDict},
	})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, f := range st.Files {
		uris = append(uris, f.Key)
	}
	idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if _, _, err := Create(ctx, idx, Definition{Name: "u", Key: "user"}, StoreResolver{data}, uris); err != nil {
		t.Fatal(err)
	}
	ri, err := Open(ctx, idx, "u", Options{Resolver: StoreResolver{data}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Warm(ctx); err != nil {
		t.Fatal(err)
	}

	var keys []any
	for u := range int64(60) {
		keys = append(keys, u)
	}
	lookup := func(k any) []parquet.Row {
		r, err := ri.Lookup(ctx, Query{Key: k})
		if err != nil {
			t.Error(err)
			return nil
		}
		rows := make([]parquet.Row, len(r.Rows))
		for i, row := range r.Rows {
			rows[i] = row.Values
		}
		return rows
	}
	clone := func(rows []parquet.Row) []parquet.Row {
		out := make([]parquet.Row, len(rows))
		for i, r := range rows {
			out[i] = r.Clone()
		}
		return out
	}
	want := make([][]parquet.Row, len(keys))
	kept := make([][]parquet.Row, len(keys)) // returned rows, not copied
	total := 0
	for i, k := range keys {
		kept[i] = lookup(k)
		want[i] = clone(kept[i])
		total += len(want[i])
	}
	if total == 0 {
		t.Fatal("no rows for any key")
	}
	same := func(what string, got, want []parquet.Row) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %d rows, want %d", what, len(got), len(want))
			return
		}
		for j := range got {
			if !rowsEqual(got[j], want[j]) {
				t.Errorf("%s: row %d is %v, want %v", what, j, got[j], want[j])
				return
			}
		}
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pass := range 3 {
				for i := range keys {
					i := (i + g*11) % len(keys)
					same(fmt.Sprintf("goroutine %d pass %d key %v", g, pass, keys[i]), lookup(keys[i]), want[i])
				}
			}
		}()
	}
	wg.Wait()
	for i := range keys {
		same(fmt.Sprintf("rows returned first for key %v", keys[i]), kept[i], want[i])
	}
}
