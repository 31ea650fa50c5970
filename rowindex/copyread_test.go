package rowindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/store"
)

// allButKey is every column of frameRow but the key: the whole row
// interleaved.
var allButKey = []string{"ts", "name", "rare", "score", "blob", "flag"}

// writeInterleavedFiles writes three interleaved files: the whole row with
// a frame per key, the whole row aligned with frames ≥ 200 B in the other
// columns, and a group of two columns.
func writeInterleavedFiles(t *testing.T) (root string, uris []string, data store.Store, sources [][]frameRow) {
	t.Helper()
	return writeFramedFilesWith(t, []prepared.FrameOptions{
		{Interleave: allButKey},
		{MinFrameBytes: 200, Align: 512, Interleave: allButKey},
		{MinFrameBytes: 200, Interleave: []string{"score", "name"}},
	})
}

// copyBytes is what a lookup of key in one interleaved file must read:
// the key's frames in the key column and their copies, found from the
// frame table and the key column as parquet-go reads it; and how many
// contiguous ranges they make.
func copyBytes(t *testing.T, root, uri string, key int64) (n int64, ranges int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, uri))
	if err != nil {
		t.Fatal(err)
	}
	f, mk, tab := frameTableOf(t, b)
	if mk.Interleave == nil || mk.Interleave.Host != "user" {
		t.Fatalf("%s: frames marker %+v", uri, mk)
	}
	end := int64(-1)
	for rg, g := range f.RowGroups() {
		keys := rowGroupKeys(g)
		locs := f.OffsetIndexes()[rg*len(f.Schema().Columns())].PageLocations
		for p, loc := range locs {
			pf, err := tab.Page(rg, 0, p)
			if err != nil {
				t.Fatal(err)
			}
			if !pf.Copies {
				t.Fatalf("%s: key page %d without copies", uri, p)
			}
			for _, fr := range pf.Frames {
				first := loc.FirstRowIndex + int64(fr.FirstRow)
				for _, v := range keys[first : first+int64(fr.Rows)] {
					if v.Int64() != keys[first].Int64() {
						t.Fatalf("%s: a frame of the key column holds keys %d and %d", uri, keys[first].Int64(), v.Int64())
					}
				}
				if keys[first].Int64() != key {
					continue
				}
				off := loc.Offset + int64(fr.Offset)
				if off != end {
					ranges++
				}
				n += int64(fr.Size + fr.Copy)
				end = off + int64(fr.Size+fr.Copy)
			}
		}
	}
	return n, ranges
}

// sourceRows is what a scan of the unprepared sources returns for key: per
// file, the key's rows ordered by ts.
func sourceRows(sources [][]frameRow, key int64) []parquet.Row {
	schema := parquet.SchemaOf(frameRow{})
	var out []parquet.Row
	for _, src := range sources {
		var rows []frameRow
		for _, r := range src {
			if r.User == key {
				rows = append(rows, r)
			}
		}
		slices.SortStableFunc(rows, func(a, b frameRow) int { return int(a.TS - b.TS) })
		for _, r := range rows {
			out = append(out, schema.Deconstruct(nil, &r))
		}
	}
	return out
}

// TestInterleavedLookups: over interleaved files every key's lookup equals
// a full scan of the files (parquet-go, which skips the copies) and the
// rows the files were written from; where the group is the whole row a
// light key's lookup reads one range per file holding it, exactly its
// key frame and copy; a projection on a partial group reads one range per
// file; no chunk falls back to parquet-go.
func TestInterleavedLookups(t *testing.T) {
	ctx := context.Background()
	root, uris, data, sources := writeInterleavedFiles(t)
	idx, err := store.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	ri := warmIndex(t, idx, data, "u", uris)
	// The two whole-row files alone: one range per file holding a key.
	wi := warmIndex(t, idx, data, "w", uris[:2])
	byKey := scanByKey(t, root, uris)
	nulls := 0
	for k := int64(0); k < 300; k++ {
		want := byKey[string(appendKeyValue(nil, parquet.Int64Value(k)))]
		r, err := ri.Lookup(ctx, Query{Key: k})
		if err != nil {
			t.Fatalf("key %d: %v", k, err)
		}
		checkRows(t, fmt.Sprint("key ", k), r.Rows, want)
		src := sourceRows(sources, k)
		if len(src) != len(r.Rows) {
			t.Fatalf("key %d: %d rows, the sources hold %d", k, len(r.Rows), len(src))
		}
		for i := range src {
			if !rowsEqual(r.Rows[i].Values, src[i]) {
				t.Fatalf("key %d row %d: %v, the source has %v", k, i, r.Rows[i].Values, src[i])
			}
			if r.Rows[i].Values[2].IsNull() {
				nulls++
			}
		}
		wr, err := wi.Lookup(ctx, Query{Key: k})
		if err != nil {
			t.Fatalf("key %d: %v", k, err)
		}
		var wantBytes int64
		var wantRanges, files int
		for _, uri := range uris[:2] {
			n, rs := copyBytes(t, root, uri, k)
			wantBytes += n
			wantRanges += rs
			if n > 0 {
				files++
			}
		}
		if wr.Plan.Data.BytesRead != wantBytes || wr.Plan.ByteRanges != wantRanges {
			t.Fatalf("key %d: read %d bytes in %d ranges, its key frames and copies are %d bytes in %d", k, wr.Plan.Data.BytesRead, wr.Plan.ByteRanges, wantBytes, wantRanges)
		}
		if k != 7 && wantRanges != files {
			t.Fatalf("key %d: %d ranges in %d files", k, wantRanges, files)
		}
		// A projection on the partial group (score, name) of the third
		// file: one range for the key there, its copies.
		pr, err := ri.Lookup(ctx, Query{Key: k, Columns: []string{"name", "score"}})
		if err != nil {
			t.Fatal(err)
		}
		if k != 7 && pr.Plan.ByteRanges != files+1 {
			t.Fatalf("key %d: projection on the group read %d ranges in %d files", k, pr.Plan.ByteRanges, files+1)
		}
		for i, row := range pr.Rows {
			if w := (parquet.Row{want[i].vals[2], want[i].vals[4]}); !rowsEqual(row.Values, w) {
				t.Fatalf("key %d projected row %d: %v, scan %v", k, i, row.Values, w)
			}
		}
	}
	if nulls == 0 {
		t.Fatal("no null names looked up")
	}
	// The heavy key in pages of 97 rows through the cursor: the pages
	// together are the scan's rows.
	want7 := byKey[string(appendKeyValue(nil, parquet.Int64Value(7)))]
	var paged []Row
	for q := (Query{Key: int64(7), Limit: 97}); ; {
		r, err := ri.Lookup(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, r.Rows...)
		if r.Cursor == "" {
			break
		}
		q.Cursor = r.Cursor
	}
	checkRows(t, "key 7 paged", paged, want7)
	if n := ri.slowChunks.Load() + wi.slowChunks.Load(); n != 0 {
		t.Errorf("%d chunks decoded by parquet-go", n)
	}
}

// TestInterleavedCopyCorrupt: a copy that no longer holds what the key's
// frame was written with (one byte flipped in it) fails the lookup of the
// key with prepared.ErrBadFrames and ErrDataFileChanged, while parquet-go,
// which skips the copies, still reads every row.
func TestInterleavedCopyCorrupt(t *testing.T) {
	ctx := context.Background()
	root, uris, data, _ := writeInterleavedFiles(t)
	path := filepath.Join(root, uris[0])
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, _, tab := frameTableOf(t, b)
	pf, err := tab.Page(0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The first key of the file, and its copy; every byte of a copy but
	// its header is checked: the hash (byte 9), the ZSTD frame's header
	// and its compressed content.
	kv := rowGroupKeys(f.RowGroups()[0])
	loc := f.OffsetIndexes()[0].PageLocations[0]
	fr := pf.Frames[0]
	at := loc.Offset + int64(fr.Offset+fr.Size)
	idx, err := store.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	res := StoreResolver{Store: data}
	if _, _, err := Create(ctx, idx, Definition{Name: "u", Key: "user"}, res, uris[:1]); err != nil {
		t.Fatal(err)
	}
	for _, flip := range []int64{9, 17, int64(fr.Copy) - 1} {
		c := bytes.Clone(b)
		c[at+flip] ^= 0x55
		if err := os.WriteFile(path, c, 0o644); err != nil {
			t.Fatal(err)
		}
		ri, err := Open(ctx, idx, "u", Options{Resolver: res})
		if err != nil {
			t.Fatal(err)
		}
		_, err = ri.Lookup(ctx, Query{Key: kv[0].Int64()})
		if !errors.Is(err, prepared.ErrBadFrames) || !errors.Is(err, ErrDataFileChanged) {
			t.Fatalf("byte %d of the copy flipped: lookup %v", flip, err)
		}
		// Other columns alone are read from their own frames.
		if _, err := ri.Lookup(ctx, Query{Key: kv[0].Int64(), Columns: []string{"user"}}); err != nil {
			t.Fatalf("byte %d of the copy flipped: key column alone: %v", flip, err)
		}
		pf, err := parquet.OpenFile(bytes.NewReader(c), int64(len(c)))
		if err != nil {
			t.Fatal(err)
		}
		rows := parquet.NewGenericReader[frameRow](pf)
		got := make([]frameRow, pf.NumRows()+1)
		n, err := rows.Read(got)
		if n != int(pf.NumRows()) || err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("parquet-go read %d of %d rows of the flipped file: %v", n, pf.NumRows(), err)
		}
		rows.Close()
	}
}

// TestInterleavedScanPath: a lookup selecting much of a file may read
// whole chunks instead of ranges (choosePath's scan); a group column asked
// for without the key, by an index on another column, is decoded from the
// copies in the key's chunk, which the scan must then read (it read the
// group columns' own chunks: "copy not prefetched", the file reported
// changed). Rows equal those of the same data framed without interleaving.
func TestInterleavedScanPath(t *testing.T) {
	ctx := context.Background()
	_, iu, idata, _ := writeFramedFilesWith(t, []prepared.FrameOptions{{Interleave: allButKey}, {MinFrameBytes: 200, Interleave: []string{"score", "name"}}})
	_, pu, pdata, _ := writeFramedFilesWith(t, []prepared.FrameOptions{{}, {MinFrameBytes: 200}})
	open := func(data store.Store, uris []string, def Definition) *RowIndex {
		idx, err := store.Open(ctx, "file://"+t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { idx.Close() })
		res := StoreResolver{Store: data}
		if _, _, err := Create(ctx, idx, def, res, uris); err != nil {
			t.Fatal(err)
		}
		ri, err := Open(ctx, idx, def.Name, Options{Resolver: res})
		if err != nil {
			t.Fatal(err)
		}
		return ri
	}
	for _, def := range []Definition{{Name: "ts", Key: "ts", Kind: KindSorted}, {Name: "user", Key: "user", Kind: KindSorted}} {
		a, b := open(idata, iu, def), open(pdata, pu, def)
		for _, q := range []Query{
			{Low: int64(0), High: int64(1e9), Range: true, Columns: []string{"score", "name"}},
			{Low: int64(0), High: int64(1e9), Range: true},
		} {
			if def.Key == "user" {
				q.Low, q.High = int64(0), int64(200)
			}
			ra, err := a.Lookup(ctx, q)
			if err != nil {
				t.Fatalf("index on %s, columns %v: %v", def.Key, q.Columns, err)
			}
			rb, err := b.Lookup(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(ra.Rows) != len(rb.Rows) || len(ra.Rows) == 0 {
				t.Fatalf("index on %s, columns %v: %d rows, framed %d", def.Key, q.Columns, len(ra.Rows), len(rb.Rows))
			}
			for i := range ra.Rows {
				if !rowsEqual(ra.Rows[i].Values, rb.Rows[i].Values) {
					t.Fatalf("index on %s, columns %v, row %d: %v, framed %v", def.Key, q.Columns, i, ra.Rows[i].Values, rb.Rows[i].Values)
				}
			}
		}
	}
}
