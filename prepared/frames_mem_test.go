package prepared

import (
	"context"
	"testing"
)

// TestFrameKeyStartsHeld: FrameFile holds the key-run starts (8 B a run)
// of one row group at a time, the largest row group's at most, unless the
// file is interleaved, where the copies' dictionary samples every row
// group's runs before any is framed and all are held.
func TestFrameKeyStartsHeld(t *testing.T) {
	ctx := context.Background()
	evs := genEvents(5, 12_000)
	for _, v := range []struct {
		name string
		fo   FrameOptions
		all  bool
	}{
		{"packed", FrameOptions{}, false},
		{"grouped", FrameOptions{MinFrameBytes: 300}, false},
		{"interleaved", FrameOptions{Interleave: []string{"ts", "name"}}, true},
	} {
		t.Run(v.name, func(t *testing.T) {
			st := fileStore(t)
			schema, rows := eventRows(t, evs)
			opts := Options{Key: "user", Sort: []string{"ts"}, PageBytes: 4096, RowGroupRows: 1500}
			_, fst, err := WriteFramed(ctx, st, "f.parquet", schema, rows, opts, v.fo)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := openFile(t, st, "f.parquet")
			var sum, most int64
			for _, g := range f.RowGroups() {
				cc, _ := f.Schema().Lookup("user")
				s, err := keyStarts(g.ColumnChunks()[cc.ColumnIndex], g.NumRows())
				if err != nil {
					t.Fatal(err)
				}
				sum += 8 * int64(len(s))
				most = max(most, 8*int64(len(s)))
			}
			if len(f.RowGroups()) < 4 || most*2 > sum {
				t.Fatalf("%d row groups, %d B of starts in the largest of %d B: want several row groups", len(f.RowGroups()), most, sum)
			}
			want := most
			if v.all {
				want = sum
			}
			if fst.keyStartsHeld != want {
				t.Fatalf("held %d B of key-run starts at once; want %d (largest row group %d B, file %d B)", fst.keyStartsHeld, want, most, sum)
			}
			t.Logf("%d row groups: key-run starts held %d B (the whole file's: %d B)", len(f.RowGroups()), fst.keyStartsHeld, sum)
		})
	}
}
