package rowindex

import (
	"context"
	"fmt"
	"testing"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/store"
)

// TestInlineReads: a lookup of local files whose reads are small is read
// and decoded on the caller's goroutine (inlineRead), larger ones and other
// stores' are spread over goroutines; both give the rows of a full scan,
// for light and heavy keys alike.
func TestInlineReads(t *testing.T) {
	sizes := map[bool]bool{} // the keys cover both sides of inlineMaxBytes
	for _, prepared := range []bool{false, true} {
		t.Run(fmt.Sprintf("prepared=%v", prepared), func(t *testing.T) { testInlineReads(t, prepared, sizes) })
	}
	if !sizes[true] || !sizes[false] {
		t.Fatalf("the keys' reads are all on one side of %d bytes: %v", inlineMaxBytes, sizes)
	}
}

func testInlineReads(t *testing.T, prepared bool, sizes map[bool]bool) {
	ctx := context.Background()
	dir, data, idx, uris := indexLake(t, lakegen.Config{
		Seed: 9, TargetBytes: 4 << 20, Days: 2, FilesPerDay: 3, Users: 3_000, ZipfS: 1.1, ZipfV: 10, Tracks: 500,
		PageBytes: 8 << 10, Prepared: prepared, Prefix: "lake/",
	})
	mem, _ := store.Open(ctx, "mem://")
	open := func(spread bool) *RowIndex {
		ri, err := Open(ctx, idx, "u", Options{Resolver: StoreResolver{data}, PageCacheBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		ri.spreadReads = spread
		return ri
	}
	inline, spread := open(false), open(true)
	for _, u := range []uint64{0, 1, 7, 150, 2_000, 2_999} {
		key := lakegen.UserID(u)
		kb, _ := EncodeKey(key)
		want := fullScan(t, dir, uris, "user_id", kb, kb)
		for name, ri := range map[string]*RowIndex{"inline": inline, "spread": spread} {
			res, err := ri.Lookup(ctx, Query{Key: key})
			if err != nil {
				t.Fatal(err)
			}
			before := ri.inlineBatches.Load()
			res, err = ri.Lookup(ctx, Query{Key: key}) // warm: no tail reads
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, fmt.Sprintf("user %d (%s)", u, name), res.Rows, want)
			inlined := ri.inlineBatches.Load() > before
			switch small := res.Plan.Data.BytesRead <= inlineMaxBytes; {
			case name == "spread" && inlined:
				t.Errorf("user %d: a lookup of the spreading handle was read inline", u)
			case name == "inline" && inlined != small:
				t.Errorf("user %d: %d bytes read, inline %v", u, res.Plan.Data.BytesRead, inlined)
			case name == "inline":
				sizes[small] = true
			}
		}
	}
	small := []*fetch{{obj: object{st: data, key: "a"}, r: brange{0, 4 << 10}}, {obj: object{st: data, key: "b"}, r: brange{0, 4 << 10}}}
	if !inlineRead(small) {
		t.Error("two 4 KiB local reads are not inline")
	}
	if inlineRead(append(small, &fetch{obj: object{st: data, key: "c"}, r: brange{0, inlineMaxBytes}})) {
		t.Errorf("reads of more than %d bytes are inline", inlineMaxBytes)
	}
	if inlineRead(append(small, &fetch{obj: object{st: mem, key: "c"}, r: brange{0, 1}})) {
		t.Error("a read of a store that does not batch ranges is inline")
	}
}
