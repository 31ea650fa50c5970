package rowindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/store"
)

// frameRow is a flat record with a column of every kind the frame path
// decodes: fixed-width, byte arrays, a column mixing nulls and values, a
// column of nulls only for most keys, and booleans (one frame per page).
type frameRow struct {
	User  int64   `parquet:"user"`
	TS    int64   `parquet:"ts"`
	Name  *string `parquet:"name,optional"`
	Rare  *int32  `parquet:"rare,optional"`
	Score float64 `parquet:"score"`
	Blob  []byte  `parquet:"blob"`
	Flag  bool    `parquet:"flag"`
}

// writeFramedFiles writes four framed files (a frame per key, aligned,
// frames of several keys, adaptive raw blocks) of 6,000 rows each
// over 300 users, user 7 heavy enough to span pages, into a local folder.
func writeFramedFiles(t *testing.T) (root string, uris []string, data store.Store) {
	t.Helper()
	root, uris, data, _ = writeFramedFilesWith(t, []prepared.FrameOptions{{}, {Align: 512}, {MinFrameBytes: 200}, {RawBlocks: true}})
	return root, uris, data
}

// writeFramedFilesWith writes a framed file of such rows per options and
// returns the rows each was written from.
func writeFramedFilesWith(t *testing.T, fos []prepared.FrameOptions) (root string, uris []string, data store.Store, sources [][]frameRow) {
	t.Helper()
	ctx := context.Background()
	root = t.TempDir()
	data, err := store.Open(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { data.Close() })
	for fi, fo := range fos {
		rng := rand.New(rand.NewPCG(uint64(fi), 3))
		rows := make([]frameRow, 6000)
		for i := range rows {
			r := frameRow{User: int64(rng.IntN(300)), TS: rng.Int64N(1e9), Score: float64(rng.IntN(999)) / 8,
				Blob: bytes.Repeat([]byte{byte(i)}, rng.IntN(40)), Flag: rng.IntN(2) == 0}
			if rng.IntN(10) < 2 {
				r.User = 7
			}
			if rng.IntN(3) > 0 {
				s := fmt.Sprintf("name-%d", rng.IntN(1000))
				r.Name = &s
			}
			if r.User%50 == 0 {
				v := int32(i)
				r.Rare = &v
			}
			rows[i] = r
		}
		buf := parquet.NewGenericBuffer[frameRow]()
		if _, err := buf.Write(rows); err != nil {
			t.Fatal(err)
		}
		uri := fmt.Sprintf("f%d.parquet", fi)
		opts := prepared.Options{Key: "user", Sort: []string{"ts"}, PageBytes: 2048, RowGroupRows: 2500}
		if _, _, err := prepared.WriteFramed(ctx, data, uri, buf.Schema(), buf.Rows(), opts, fo); err != nil {
			t.Fatal(err)
		}
		uris = append(uris, uri)
		sources = append(sources, rows)
	}
	return root, uris, data, sources
}

// warmIndex creates a row index named name on key "user" over the files
// uris of data in idx, opened with ranges coalesced only where adjacent,
// and warmed.
func warmIndex(t *testing.T, idx, data store.Store, name string, uris []string) *RowIndex {
	t.Helper()
	ctx := context.Background()
	res := StoreResolver{Store: data}
	if _, _, err := Create(ctx, idx, Definition{Name: name, Key: "user"}, res, uris); err != nil {
		t.Fatal(err)
	}
	ri, err := Open(ctx, idx, name, Options{Resolver: res, CoalesceGap: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	return ri
}

// scanByKey is a full scan of the files on "user", by key.
func scanByKey(t *testing.T, root string, uris []string) map[string][]scanRow {
	t.Helper()
	byKey := map[string][]scanRow{}
	for _, r := range fullScan(t, root, uris, "user", []byte{}, bytes.Repeat([]byte{0xff}, 16)) {
		byKey[string(r.key)] = append(byKey[string(r.key)], r)
	}
	return byKey
}

// rowGroupKeys reads the key column (the first) of a row group.
func rowGroupKeys(g parquet.RowGroup) []parquet.Value {
	keys := make([]parquet.Value, g.NumRows())
	pages := g.ColumnChunks()[0].Pages()
	defer pages.Close()
	at := 0
	for {
		p, err := pages.ReadPage()
		if err != nil {
			return keys
		}
		k, _ := p.Values().ReadValues(keys[at:])
		at += k
	}
}

// frameTableOf opens a framed file's bytes and parses its frame table.
func frameTableOf(t *testing.T, b []byte) (*parquet.File, prepared.FramesMarker, *prepared.FrameTable) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	mk, _, _ := prepared.FramesMarkerOf(f)
	tab, err := prepared.ParseFrameTable(b[mk.Offset:mk.Offset+mk.Length], len(f.RowGroups()), len(f.Schema().Columns()))
	if err != nil {
		t.Fatal(err)
	}
	return f, mk, tab
}

// frameBytes is what a key's frames (and the levels its mixed frames need)
// take in a file: what a warm lookup must read, and no more.
func frameBytes(t *testing.T, root, uri string, key int64) (n int64, ranges int) { // of the columns but the key (column 0)
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, uri))
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	fm := &fileMeta{f: f, size: int64(len(b)), ois: f.OffsetIndexes()}
	fm.maxRep = maxRepetitionLevels(f.Metadata().Schema)
	fm.maxDef, fm.typeLen = leafDefinitions(f.Metadata().Schema)
	mk, _, _ := prepared.FramesMarkerOf(f)
	tab, err := prepared.ParseFrameTable(b[mk.Offset:mk.Offset+mk.Length], len(f.RowGroups()), fm.ncol())
	if err != nil {
		t.Fatal(err)
	}
	fm.setFrames(tab)
	seen := map[brange]bool{}
	for rg, g := range f.RowGroups() {
		keys := rowGroupKeys(g)
		var run *selRun
		for i, v := range keys {
			if v.Int64() == key {
				if run == nil {
					run = &selRun{row: int64(i)}
				}
				run.n++
			}
		}
		if run == nil {
			continue
		}
		for c := range fm.ncol() {
			if c == 0 {
				continue // the key column: its values are the index's (Options.VerifyKeys)
			}
			if !framedChunk(fm, rg, c) {
				t.Fatalf("rg %d column %d is not read by frames", rg, c)
			}
			w := &fileWork{fm: fm}
			if _, err := planFrames(w, rg, c, []selRun{*run}); err != nil {
				t.Fatal(err)
			}
			for _, r := range w.ranges {
				if !seen[r] {
					seen[r] = true
					n += r.end - r.off
					ranges++
				}
			}
		}
	}
	return n, ranges
}

// TestFrameLookups: over framed files, every key's lookup returns the rows
// of a full scan, and a warm lookup reads exactly its frames (and the
// levels of frames mixing nulls), far less than its pages.
func TestFrameLookups(t *testing.T) {
	ctx := context.Background()
	root, uris, data := writeFramedFiles(t)
	idx, err := store.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	res := StoreResolver{Store: data}
	ri := warmIndex(t, idx, data, "u", uris)
	byKey := scanByKey(t, root, uris)
	var light, lightRead, lightReturned int64
	for k := int64(0); k < 300; k++ {
		r, err := ri.Lookup(ctx, Query{Key: k})
		if err != nil {
			t.Fatalf("key %d: %v", k, err)
		}
		checkRows(t, fmt.Sprint("key ", k), r.Rows, byKey[string(appendKeyValue(nil, parquet.Int64Value(k)))])
		var want int64
		var ranges int
		for _, uri := range uris {
			n, rs := frameBytes(t, root, uri, k)
			want += n
			ranges += rs
		}
		if r.Plan.Data.BytesRead != want || r.Plan.ByteRanges > ranges { // adjacent ranges coalesce
			t.Fatalf("key %d: read %d bytes in %d ranges, its frames are %d bytes in %d", k, r.Plan.Data.BytesRead, r.Plan.ByteRanges, want, ranges)
		}
		if k != 7 {
			light++
			lightRead += r.Plan.Data.BytesRead
			lightReturned += r.Plan.BytesReturned
		}
	}
	// A projection without the key column: only those columns' frames.
	pr, err := ri.Lookup(ctx, Query{Key: int64(5), Columns: []string{"name", "flag"}})
	if err != nil {
		t.Fatal(err)
	}
	want5 := byKey[string(appendKeyValue(nil, parquet.Int64Value(5)))]
	if len(pr.Rows) != len(want5) || len(want5) == 0 {
		t.Fatalf("projected lookup: %d rows, scan %d", len(pr.Rows), len(want5))
	}
	for i, r := range pr.Rows {
		w := parquet.Row{want5[i].vals[2], want5[i].vals[6]}
		if !rowsEqual(r.Values, w) {
			t.Fatalf("projected row %d: %v, scan %v", i, r.Values, w)
		}
	}
	// Cold: the frame table comes with the tail read of each file (the
	// manifest's TailBytes covers it), then only frames are read.
	cold, err := Open(ctx, idx, "u", Options{Resolver: res, CoalesceGap: -1})
	if err != nil {
		t.Fatal(err)
	}
	r, err := cold.Lookup(ctx, Query{Key: int64(3)})
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, "cold key 3", r.Rows, byKey[string(appendKeyValue(nil, parquet.Int64Value(3)))])
	if r.Plan.Data.Requests != int64(len(uris)+r.Plan.ByteRanges) {
		t.Errorf("cold lookup: %d data requests for %d files and %d frame ranges", r.Plan.Data.Requests, len(uris), r.Plan.ByteRanges)
	}
	if ri.slowChunks.Load() != 0 {
		t.Errorf("%d chunks decoded by parquet-go", ri.slowChunks.Load())
	}
	t.Logf("light keys: %d bytes read, %d returned per lookup", lightRead/light, lightReturned/light)
}

// TestCorruptFrameOffsets: a frame table that does not describe its file
// makes the lookup fail with prepared.ErrBadFrames (and
// ErrDataFileChanged), not return wrong rows: frames whose sizes point past
// their pages, and a page whose frames hold one row more than it does
// (the last frame's, after the rows the lookup needs: only the check of
// the whole page entry sees it), with and without Warm.
func TestCorruptFrameOffsets(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  int64
		// edit changes frame i of n of a page, keeping its varints'
		// lengths (the table keeps its length, so the footer and its
		// checksum do not change).
		edit func(i, n int, fr *prepared.Frame) bool
	}{
		{"sizes past the page", 7, func(i, n int, fr *prepared.Frame) bool {
			// Every frame of 128–16,382 bytes 16,383 bytes long.
			if fr.Size >= 128 && fr.Size < 16383 {
				fr.Size = 16383
				return true
			}
			return false
		}},
		{"rows past the page", 0, func(i, n int, fr *prepared.Frame) bool {
			if i == n-1 && n > 1 && fr.Rows < 127 {
				fr.Rows++
				return true
			}
			return false
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { testCorruptFrames(t, tc.key, tc.edit) })
	}
}

func testCorruptFrames(t *testing.T, key int64, edit func(i, n int, fr *prepared.Frame) bool) {
	ctx := context.Background()
	root, uris, data := writeFramedFiles(t)
	path := filepath.Join(root, uris[0])
	b, f := readParquet(t, path)
	mk, _, _ := prepared.FramesMarkerOf(f)
	tab, err := prepared.ParseFrameTable(b[mk.Offset:mk.Offset+mk.Length], len(f.RowGroups()), 7)
	if err != nil {
		t.Fatal(err)
	}
	// Re-encode the table (as version 1) with the edited frames.
	out := []byte("ARFT")
	out = binary.AppendUvarint(out, prepared.FramesVersion)
	out = binary.AppendUvarint(out, uint64(len(f.RowGroups())))
	changed := 0
	for rg := range f.RowGroups() {
		out = binary.AppendUvarint(out, 7)
		for c := range 7 {
			out = binary.AppendUvarint(out, uint64(tab.Pages(rg, c)))
			for p := range tab.Pages(rg, c) {
				pf, err := tab.Page(rg, c, p)
				if err != nil {
					t.Fatal(err)
				}
				out = binary.AppendUvarint(out, uint64(pf.LevelsOffset+pf.LevelsLength))
				out = binary.AppendUvarint(out, uint64(pf.LevelsLength))
				out = binary.AppendUvarint(out, uint64(len(pf.Frames)))
				end := pf.LevelsOffset + pf.LevelsLength
				for i, fr := range pf.Frames {
					pad := fr.Offset - end
					end = fr.Offset + fr.Size
					if edit(i, len(pf.Frames), &fr) {
						changed++
					}
					out = binary.AppendUvarint(out, uint64(fr.Rows))
					out = binary.AppendUvarint(out, uint64(fr.Values))
					out = binary.AppendUvarint(out, uint64(pad))
					out = binary.AppendUvarint(out, uint64(fr.Size))
				}
			}
		}
	}
	if len(out) != int(mk.Length) || changed == 0 {
		t.Fatalf("re-encoded table of %d bytes (was %d), %d frames changed", len(out), mk.Length, changed)
	}
	copy(b[mk.Offset:], out)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	idx, err := store.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	res := StoreResolver{Store: data}
	if _, _, err := Create(ctx, idx, Definition{Name: "u", Key: "user"}, res, uris[:1]); err != nil {
		t.Fatal(err)
	}
	ri, err := Open(ctx, idx, "u", Options{Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	// A page's entry is checked whole the first time a lookup reaches it
	// (checkPageFrames), and a page that failed is not taken as checked:
	// the same lookup again fails the same way.
	for range 2 {
		_, err = ri.Lookup(ctx, Query{Key: key})
		if !errors.Is(err, prepared.ErrBadFrames) || !errors.Is(err, ErrDataFileChanged) {
			t.Fatalf("lookup over a corrupt frame table: %v", err)
		}
		if !strings.Contains(err.Error(), "frame") {
			t.Errorf("error does not say frame: %v", err)
		}
	}
	// Warm checks every page's entry ahead (checkAllFrames): it succeeds,
	// and the pages that do not fit still fail the lookups that reach them.
	warm, err := Open(ctx, idx, "u", Options{Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := warm.Warm(ctx); err != nil {
		t.Fatalf("warm over a corrupt frame table: %v", err)
	}
	if _, err := warm.Lookup(ctx, Query{Key: key}); !errors.Is(err, prepared.ErrBadFrames) {
		t.Fatalf("warm lookup over a corrupt frame table: %v", err)
	}
}
