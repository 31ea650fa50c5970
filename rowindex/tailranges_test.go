package rowindex

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/store"
)

// TestColdLookupSkipsBloomFilters: prepared files carry a bloom filter on
// the key between their offset indexes and footer (and, framed, before the
// frame table). The build records the tail ranges a lookup needs, so a cold
// lookup reads those and the key's pages, counted by the store, and not the
// bloom filters; a manifest written before TailRanges existed still answers
// the same rows through the one whole-tail read.
func TestColdLookupSkipsBloomFilters(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	raw, err := store.Open(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// 40,000 rows over 20,000 users: the key's bloom filter (10 bits per
	// value) is ≈50 KB per file, well past tailGapBytes.
	var uris []string
	for fi := range 2 {
		rng := rand.New(rand.NewPCG(uint64(fi), 5))
		rows := make([]frameRow, 40000)
		for i := range rows {
			s := fmt.Sprintf("name-%d", rng.IntN(1000))
			rows[i] = frameRow{User: int64(rng.IntN(20000)), TS: rng.Int64N(1e9), Name: &s, Score: float64(i), Flag: i%3 == 0}
		}
		buf := parquet.NewGenericBuffer[frameRow]()
		if _, err := buf.Write(rows); err != nil {
			t.Fatal(err)
		}
		uri := fmt.Sprintf("p%d.parquet", fi)
		opts := prepared.Options{Key: "user", Sort: []string{"ts"}, PageBytes: 2048}
		if fi == 0 {
			_, err = prepared.Write(ctx, raw, uri, buf.Schema(), buf.Rows(), opts)
		} else {
			_, _, err = prepared.WriteFramed(ctx, raw, uri, buf.Schema(), buf.Rows(), opts, prepared.FrameOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, uri)
	}
	idxDir := t.TempDir()
	idx, err := store.Open(ctx, "file://"+idxDir)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	data := store.NewCounting(raw)
	res := StoreResolver{Store: data}
	man, _, err := Create(ctx, idx, Definition{Name: "u", Key: "user"}, res, uris)
	if err != nil {
		t.Fatal(err)
	}
	// parquet-go's writer puts the bloom filter after the row group's
	// pages (p0: nothing to skip in the tail); the frame writer moves it
	// between the offset indexes and the frame table (p1).
	var needed, whole, tailReads int64
	for i, fe := range man.Files {
		var n int64
		for _, r := range fe.TailRanges {
			n += r.Length
		}
		switch {
		case i == 0 && fe.TailRanges != nil:
			t.Fatalf("%s: tail ranges %v, want none (tail is contiguous)", fe.URI, fe.TailRanges)
		case i == 0:
			n = fe.TailBytes
			tailReads++
		case len(fe.TailRanges) < 2:
			t.Fatalf("%s: tail ranges %v, want the bloom filter skipped", fe.URI, fe.TailRanges)
		case fe.TailBytes-n < tailGapBytes:
			t.Fatalf("%s: tail %d bytes, %d needed: gap %d", fe.URI, fe.TailBytes, n, fe.TailBytes-n)
		default:
			tailReads += int64(len(fe.TailRanges))
		}
		needed += n
		whole += fe.TailBytes
	}
	scan := fullScan(t, root, uris, "user", []byte{}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	byKey := map[string][]scanRow{}
	for _, r := range scan {
		byKey[string(r.key)] = append(byKey[string(r.key)], r)
	}
	// A key with a row in both files, so both files' metadata is read.
	var key int64 = -1
	for k := int64(0); k < 20000 && key < 0; k++ {
		files := map[string]bool{}
		for _, r := range byKey[string(appendKeyValue(nil, parquet.Int64Value(k)))] {
			files[r.file] = true
		}
		if len(files) == len(uris) {
			key = k
		}
	}
	if key < 0 {
		t.Fatal("no key in every file")
	}
	want := byKey[string(appendKeyValue(nil, parquet.Int64Value(key)))]

	// pageBytes is what the key's pages cost with every file's metadata
	// already cached.
	warm, err := Open(ctx, idx, "u", Options{Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := warm.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	before := data.Snapshot()
	if _, err := warm.Lookup(ctx, Query{Key: key}); err != nil {
		t.Fatal(err)
	}
	pageBytes := data.Snapshot().Sub(before).Read.Bytes

	cold := func(label string) (store.OpStats, Plan) {
		t.Helper()
		ri, err := Open(ctx, idx, "u", Options{Resolver: res})
		if err != nil {
			t.Fatal(err)
		}
		before := data.Snapshot()
		r, err := ri.Lookup(ctx, Query{Key: key})
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, label, r.Rows, want)
		got := data.Snapshot().Sub(before).Read
		if got.Bytes != r.Plan.Data.BytesRead || got.Requests != r.Plan.Data.Requests {
			t.Errorf("%s: store counted %d reads, %d bytes; plan %d, %d", label, got.Requests, got.Bytes, r.Plan.Data.Requests, r.Plan.Data.BytesRead)
		}
		return got, r.Plan
	}
	got, plan := cold("cold")
	if got.Bytes > needed+pageBytes+4<<10 {
		t.Errorf("cold lookup read %d bytes: tail ranges %d + pages %d (+4 KiB)", got.Bytes, needed, pageBytes)
	}
	if wantReq := tailReads + int64(plan.ByteRanges); got.Requests != wantReq {
		t.Errorf("cold lookup: %d reads, want %d (%d tail ranges + %d page ranges)", got.Requests, wantReq, tailReads, plan.ByteRanges)
	}
	t.Logf("cold: %d reads, %d bytes (tail ranges %d, pages %d; whole tails %d)", got.Requests, got.Bytes, needed, pageBytes, whole)

	// The same index with its manifest as an older build wrote it.
	mpath := filepath.Join(idxDir, filepath.FromSlash(manifestKey("u", man.Version)))
	b, err := os.ReadFile(mpath)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, f := range doc["files"].([]any) {
		delete(f.(map[string]any), "tailRanges")
	}
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mpath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// An older build wrote no copy of the newest manifest either.
	if err := os.Remove(filepath.Join(idxDir, filepath.FromSlash(latestCopyKey("u")))); err != nil {
		t.Fatal(err)
	}
	old, oldPlan := cold("old manifest")
	if old.Bytes < whole || old.Requests != int64(len(uris)+oldPlan.ByteRanges) {
		t.Errorf("old manifest: %d reads, %d bytes; want one whole-tail read per file (%d bytes) + %d page ranges", old.Requests, old.Bytes, whole, oldPlan.ByteRanges)
	}
}
