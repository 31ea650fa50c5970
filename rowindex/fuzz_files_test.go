package rowindex

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/store"
)

// fuzzFixture is a tiny row index in memory: one data file of a few row
// groups and pages (PLAIN and dictionary columns), a hash row index on
// user_id covering track, and the bytes of its data file and fragment.
type fuzzFixture struct {
	data, idx     store.Store
	dataKey, frag string
	dataBytes     []byte
	fragBytes     []byte
}

func newFuzzFixture(tb testing.TB) *fuzzFixture {
	tb.Helper()
	ctx := context.Background()
	type row struct {
		UserID int64  `parquet:"user_id"`
		Track  string `parquet:"track,dict"`
		Ms     int64  `parquet:"ms"`
	}
	var rows []row
	for i := range 600 {
		rows = append(rows, row{UserID: int64(i % 37), Track: fmt.Sprintf("t%02d", i%11), Ms: int64(i)})
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.MaxRowsPerRowGroup(200), parquet.PageBufferSize(512))
	if _, err := w.Write(rows); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	fx := &fuzzFixture{dataKey: "lake/a.parquet", dataBytes: buf.Bytes()}
	fx.data, _ = store.Open(ctx, "mem://")
	fx.idx, _ = store.Open(ctx, "mem://")
	if err := store.WriteAll(ctx, fx.data, fx.dataKey, fx.dataBytes, nil); err != nil {
		tb.Fatal(err)
	}
	def := Definition{Name: "u", Key: "user_id", Kind: KindHash, Cover: []string{"track"}}
	man, _, err := Create(ctx, fx.idx, def, StoreResolver{fx.data}, []string{fx.dataKey})
	if err != nil {
		tb.Fatal(err)
	}
	fx.frag = folderOf(def.Name) + man.Fragments[0].Path
	if fx.fragBytes, err = store.ReadAll(ctx, fx.idx, fx.frag); err != nil {
		tb.Fatal(err)
	}
	return fx
}

// sameLength pads or cuts b to n bytes: the manifest records each file's
// size, so inputs of another length would all stop at the size check.
func sameLength(b []byte, n int) []byte {
	if len(b) >= n {
		return b[:n]
	}
	return append(b, make([]byte, n-len(b))...)
}

// lookupAll runs the lookups a reader runs (a hit, a miss, all columns and
// the covered column, warm-up) on a fresh handle; errors are fine.
func (fx *fuzzFixture) lookupAll(ctx context.Context) {
	ri, err := Open(ctx, fx.idx, "u", Options{Resolver: StoreResolver{fx.data}})
	if err != nil {
		return
	}
	for _, k := range []int64{0, 5, 36, 99} {
		_, _ = ri.Lookup(ctx, Query{Key: k})
		_, _ = ri.Lookup(ctx, Query{Key: k, Columns: []string{"track"}})
	}
	_, _ = ri.Warm(ctx)
}

// FuzzFragment: a fragment of any content (at its recorded length) never
// panics a lookup or a warm-up: it is read or reported (a *FragmentError).
// Seeds: a real fragment and testdata/fuzz/FuzzFragment.
func FuzzFragment(f *testing.F) {
	fx := newFuzzFixture(f)
	f.Add(fx.fragBytes)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := store.WriteAll(ctx, fx.idx, fx.frag, sameLength(b, len(fx.fragBytes)), nil); err != nil {
			t.Fatal(err)
		}
		fx.lookupAll(ctx)
	})
}

// FuzzDataPages: a data file whose bytes changed under the row index (at
// its recorded length, so the footer check does not stop every input)
// never panics the lookup's page paths (direct PLAIN and dictionary
// slicing, parquet-go's decoding): rows are read or the file is reported.
// Seeds: the real data file and testdata/fuzz/FuzzDataPages.
func FuzzDataPages(f *testing.F) {
	fx := newFuzzFixture(f)
	f.Add(fx.dataBytes)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := store.WriteAll(ctx, fx.data, fx.dataKey, sameLength(b, len(fx.dataBytes)), nil); err != nil {
			t.Fatal(err)
		}
		fx.lookupAll(ctx)
	})
}
