package rowindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/internal/pqrow"
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

func newFuzzFixture(tb testing.TB, options ...parquet.WriterOption) *fuzzFixture {
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
	w := parquet.NewGenericWriter[row](&buf, append([]parquet.WriterOption{parquet.MaxRowsPerRowGroup(200), parquet.PageBufferSize(512)}, options...)...)
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
// the covered column, warm-up) on fresh handles, with the key column from
// the index and read (VerifyKeys); errors are fine.
func (fx *fuzzFixture) lookupAll(ctx context.Context) {
	for _, verify := range []bool{false, true} {
		ri, err := Open(ctx, fx.idx, "u", Options{Resolver: StoreResolver{fx.data}, VerifyKeys: verify})
		if err != nil {
			return
		}
		for _, k := range []int64{0, 5, 36, 99} {
			_, _ = ri.Lookup(ctx, Query{Key: k})
			_, _ = ri.Lookup(ctx, Query{Key: k, Columns: []string{"track"}})
		}
		_, _ = ri.Warm(ctx)
	}
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

// FuzzDataPagesLZ4Raw is FuzzDataPages over an LZ4_RAW data file: its
// pages go through the bounded LZ4_RAW decoder of the row index's own page
// path and the page guard before parquet-go's codec (which a corrupt page
// made allocate until the process died). Seeds: the real file and
// testdata/fuzz/FuzzDataPagesLZ4Raw (the file with a data page's body made
// a block no buffer decodes, kept by TestDataPagesLZ4RawSeed).
func FuzzDataPagesLZ4Raw(f *testing.F) {
	fx := newFuzzFixture(f, parquet.Compression(&parquet.Lz4Raw))
	f.Add(fx.dataBytes)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := store.WriteAll(ctx, fx.data, fx.dataKey, sameLength(b, len(fx.dataBytes)), nil); err != nil {
			t.Fatal(err)
		}
		fx.lookupAll(ctx)
	})
}

// corruptLZ4RawData returns the fixture's LZ4_RAW data file with the body
// of the first data page of each user_id chunk replaced by a block that
// no buffer size decodes (a match reaching 65,535 bytes before the start
// of the output: parquet-go v0.32.0's codec doubles its buffer for it
// until the process dies).
func corruptLZ4RawData(t testing.TB, b []byte) []byte {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := bytes.Clone(b)
	n := 0
	for _, rg := range pf.Metadata().RowGroups {
		m := rg.Columns[0].MetaData
		if m.Codec != format.Lz4Raw || m.PathInSchema[0] != "user_id" {
			t.Fatalf("column 0 is %v %v", m.PathInSchema, m.Codec)
		}
		for pos, end := m.DataPageOffset, m.DataPageOffset+m.TotalCompressedSize; pos < end; {
			h, hlen, err := pqrow.ParsePageHeader(b[pos:end])
			if err != nil {
				t.Fatal(err)
			}
			start := pos + int64(hlen)
			levels := int64(0)
			if h.Type == format.DataPageV2 {
				levels = int64(h.DataPageHeaderV2.V.DefinitionLevelsByteLength + h.DataPageHeaderV2.V.RepetitionLevelsByteLength)
			}
			if (h.Type == format.DataPage || h.Type == format.DataPageV2) && int64(h.CompressedPageSize)-levels >= 8 {
				copy(out[start+levels:], []byte{0x1f, 'a', 0xff, 0xff, 0x00})
				n++
				break
			}
			pos = start + int64(h.CompressedPageSize)
		}
	}
	if n == 0 {
		t.Fatal("no LZ4_RAW data page to corrupt")
	}
	return out
}

// TestDataPagesLZ4RawSeed keeps FuzzDataPagesLZ4Raw's corrupt seed byte
// for byte the file corruptLZ4RawData makes of the fixture
// (ARIADNE_UPDATE_SEEDS=1 rewrites it), and checks that lookups over it
// report the file instead of reading it or dying.
func TestDataPagesLZ4RawSeed(t *testing.T) {
	fx := newFuzzFixture(t, parquet.Compression(&parquet.Lz4Raw))
	bad := corruptLZ4RawData(t, fx.dataBytes)
	want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", bad)
	path := filepath.Join("testdata", "fuzz", "FuzzDataPagesLZ4Raw", "corrupt-lz4-raw-page")
	if os.Getenv("ARIADNE_UPDATE_SEEDS") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != want {
		t.Fatalf("%s is not the corrupt LZ4_RAW data file (%v): rerun with ARIADNE_UPDATE_SEEDS=1", path, err)
	}
	ctx := context.Background()
	if err := store.WriteAll(ctx, fx.data, fx.dataKey, bad, nil); err != nil {
		t.Fatal(err)
	}
	ri, err := Open(ctx, fx.idx, "u", Options{Resolver: StoreResolver{fx.data}, VerifyKeys: true}) // the corrupt page is the key column's
	if err != nil {
		t.Fatal(err)
	}
	_, err = ri.Lookup(ctx, Query{Key: 5})
	if !errors.Is(err, pqrow.ErrCorrupt) || !strings.Contains(err.Error(), "a.parquet") {
		t.Fatalf("lookup over a corrupt LZ4_RAW page: %v, want ErrCorrupt naming the file", err)
	}
}
