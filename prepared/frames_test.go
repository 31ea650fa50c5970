package prepared

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/duck"
)

// frameVariants are the framed layouts the tests write: packed pages,
// pages of one key, and aligned frames.
var frameVariants = []struct {
	name string
	page int
	fo   FrameOptions
}{
	{"packed", 4096, FrameOptions{}},
	{"per-key", PageBytesPerKey, FrameOptions{}},
	{"aligned", 4096, FrameOptions{Align: 256}},
	{"grouped", 4096, FrameOptions{MinFrameBytes: 300}},
	{"raw-blocks", 4096, FrameOptions{RawBlocks: true}},
	{"raw-blocks-grouped", 4096, FrameOptions{MinFrameBytes: 300, RawBlocks: true}},
	{"interleaved", 4096, FrameOptions{Interleave: []string{"ts", "name", "score", "n", "blob"}}},
	{"interleaved-aligned-grouped", 4096, FrameOptions{MinFrameBytes: 300, Align: 256, Interleave: []string{"blob", "name"}}},
}

// TestFramedFilesReadBack: a framed file holds the same rows as the
// prepared file it came from, read by parquet-go and by DuckDB; its columns
// are ZSTD; its frame table describes every page: each frame, decompressed
// alone, is its rows' PLAIN values, frames of a flat column hold one key
// each, and aligned frames never straddle a boundary they fit in.
func TestFramedFilesReadBack(t *testing.T) {
	ctx := context.Background()
	evs := genEvents(3, 12_000)
	want := sortedEvents(evs)
	var wantDuck []string
	for _, e := range evs {
		wantDuck = append(wantDuck, e.duckText())
	}
	slices.Sort(wantDuck)
	db, err := duck.Open(ctx, duck.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, v := range frameVariants {
		t.Run(v.name, func(t *testing.T) {
			st := fileStore(t)
			schema, rows := eventRows(t, evs)
			opts := Options{Key: "user", Sort: []string{"ts"}, PageBytes: v.page, RowGroupRows: 5000}
			fs, fst, err := WriteFramed(ctx, st, "f.parquet", schema, rows, opts, v.fo)
			if err != nil {
				t.Fatal(err)
			}
			f, b := openFile(t, st, "f.parquet")
			if fs.Bytes != int64(len(b)) || fst.Bytes != int64(len(b)) || fst.Frames == 0 {
				t.Fatalf("stats %+v %+v for %d bytes", fs, fst, len(b))
			}
			got, err := parquet.Read[event](bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("read %d rows, wrote %d", len(got), len(want))
			}
			for i := range want {
				if got[i].String() != want[i].String() {
					t.Fatalf("row %d: got %v, want %v", i, got[i], want[i])
				}
			}
			path := filepath.Join(strings.TrimPrefix(st.URL(), "file://"), "f.parquet")
			q := `SELECT concat_ws('|', coalesce(CAST("user" AS VARCHAR), 'null'), CAST(epoch_us(ts) AS VARCHAR), coalesce(name, 'null'),
				CAST(CAST(score * 4 AS BIGINT) AS VARCHAR), CAST(n AS VARCHAR), lower(hex(blob)), coalesce(array_to_string(tags, ','), ''))
				FROM read_parquet(` + duck.String(path) + `)`
			_, res, err := db.QueryAll(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var gotDuck []string
			for _, r := range res {
				gotDuck = append(gotDuck, fmt.Sprint(r[0]))
			}
			slices.Sort(gotDuck)
			if !slices.Equal(gotDuck, wantDuck) {
				t.Fatalf("DuckDB reads %d rows that differ from the %d written", len(gotDuck), len(wantDuck))
			}
			checkFrames(t, f, b, v.fo.Align)
			// The marker says ZSTD and the framing (the PLAIN intermediate's
			// said UNCOMPRESSED).
			if mk, ok, err := MarkerOf(f); !ok || err != nil || mk.Codec != "ZSTD" || mk.Frames == nil || !reflect.DeepEqual(*mk.Frames, *v.fo.choice()) {
				t.Fatalf("marker %+v %v %v", mk, ok, err)
			}
		})
	}
}

// checkFrames checks a framed file's table against its pages.
func checkFrames(t *testing.T, f *parquet.File, b []byte, align int) {
	t.Helper()
	fm, ok, err := FramesMarkerOf(f)
	if err != nil || !ok {
		t.Fatalf("frames marker %v %v", ok, err)
	}
	tab, err := ParseFrameTable(b[fm.Offset:fm.Offset+fm.Length], len(f.RowGroups()), len(f.Schema().Columns()))
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	var cdec *zstd.Decoder // of the interleaved copies
	if fm.Interleave != nil {
		if cdec, err = fm.Interleave.Decoder(); err != nil {
			t.Fatal(err)
		}
		defer cdec.Close()
	}
	ncol := len(f.Schema().Columns())
	var frames, rawBlocks int64
	var reused PageFrames // PageInto over every page in turn gives what Page gives
	for rg, g := range f.RowGroups() {
		// The rows where a key starts.
		starts := map[int64]bool{}
		keys := readColumn(t, g.ColumnChunks()[0])
		for i := range keys {
			if i == 0 || keys[i].IsNull() != keys[i-1].IsNull() || !keys[i].IsNull() && keys[i].Int64() != keys[i-1].Int64() {
				starts[int64(i)] = true
			}
		}
		for c := range ncol {
			cm := f.Metadata().RowGroups[rg].Columns[c].MetaData
			if cm.Codec != format.Zstd {
				t.Fatalf("column %d codec %v", c, cm.Codec)
			}
			locs := f.OffsetIndexes()[rg*ncol+c].PageLocations
			if tab.Pages(rg, c) != len(locs) {
				t.Fatalf("rg %d col %d: %d pages in the table, %d in the offset index", rg, c, tab.Pages(rg, c), len(locs))
			}
			for p, loc := range locs {
				pf, err := tab.Page(rg, c, p)
				if err != nil {
					t.Fatal(err)
				}
				if err := tab.PageInto(&reused, rg, c, p); err != nil {
					t.Fatal(err)
				}
				if a, b := reused, pf; !slices.Equal(a.Frames, b.Frames) || func() bool { a.Frames, b.Frames = nil, nil; return !reflect.DeepEqual(a, b) }() {
					t.Fatalf("rg %d col %d page %d: PageInto gives %+v, Page %+v", rg, c, p, reused, pf)
				}
				rows := 0
				for _, fr := range pf.Frames {
					if fr.Offset+fr.Size > int(loc.CompressedPageSize) {
						t.Fatalf("frame past its page")
					}
					first := loc.FirstRowIndex + int64(fr.FirstRow)
					if c != 6 && fr.FirstRow > 0 && !starts[first] { // tags: one frame per page; a heavy key is cut at pages
						t.Fatalf("rg %d col %d page %d: a frame starts at row %d, inside a key", rg, c, p, first)
					}
					if fr.Size > 0 {
						frames++
						z := b[loc.Offset+int64(fr.Offset) : loc.Offset+int64(fr.Offset+fr.Size)]
						var raw []byte
						if fr.Raw {
							// The values as they are, after a raw block's
							// header announcing exactly them.
							h := b[loc.Offset+int64(fr.Offset)-3:]
							if v := int(h[0]) | int(h[1])<<8 | int(h[2])<<16; v>>3 != fr.Size || v&6 != 0 {
								t.Fatalf("raw block header %x for %d bytes", h[:3], fr.Size)
							}
							raw = z
							rawBlocks++
						} else if raw, err = dec.DecodeAll(z, nil); err != nil {
							t.Fatalf("frame alone: %v", err)
						}
						if w := map[int]int{1: 8, 3: 8, 4: 4, 0: 8}[c]; w > 0 && len(raw) != w*fr.Values {
							t.Fatalf("col %d frame of %d values has %d bytes", c, fr.Values, len(raw))
						}
						at := loc.Offset + int64(fr.Offset)
						if align > 0 && fr.Size <= align && at/int64(align) != (at+int64(fr.Size)-1)/int64(align) {
							t.Fatalf("frame [%d, +%d) straddles a %d boundary", at, fr.Size, align)
						}
					}
					if pf.Copies != (fm.Interleave != nil && c == 0) {
						t.Fatalf("rg %d col %d page %d: copies %t, interleave %+v", rg, c, p, pf.Copies, fm.Interleave)
					}
					if pf.Copies {
						checkCopy(t, f, rg, first, fr.Rows, fm.Interleave.Columns, b[loc.Offset+int64(fr.Offset+fr.Size):][:fr.Copy], starts, cdec)
					}
					rows += fr.Rows
				}
				end := g.NumRows()
				if p+1 < len(locs) {
					end = locs[p+1].FirstRowIndex
				}
				if int64(rows) != end-loc.FirstRowIndex {
					t.Fatalf("rg %d col %d page %d: frames hold %d rows of %d", rg, c, p, rows, end-loc.FirstRowIndex)
				}
			}
		}
	}
	if frames != fm.Frames {
		t.Fatalf("%d frames, marker says %d", frames, fm.Frames)
	}
	if (rawBlocks > 0) != (fm.Version == FramesVersionRaw) {
		t.Fatalf("%d raw blocks in a table of version %d", rawBlocks, fm.Version)
	}
}

func readColumn(t *testing.T, cc parquet.ColumnChunk) []parquet.Value {
	t.Helper()
	pages := cc.Pages()
	defer pages.Close()
	var out []parquet.Value
	for {
		p, err := pages.ReadPage()
		if err != nil {
			break
		}
		vals := make([]parquet.Value, p.NumValues())
		n, _ := p.Values().ReadValues(vals)
		for _, v := range vals[:n] {
			out = append(out, v.Clone())
		}
	}
	return out
}

// TestFrameErrors: files FrameFile cannot frame are refused with a typed
// error, and a table that does not match its file is ErrBadFrames.
func TestFrameErrors(t *testing.T) {
	ctx := context.Background()
	evs := genEvents(4, 2000)
	st := fileStore(t)
	schema, rows := eventRows(t, evs)
	// A normal prepared file: ZSTD but DELTA_LENGTH_BYTE_ARRAY strings.
	if _, err := Write(ctx, st, "p.parquet", schema, rows, Options{Key: "user", PageBytes: 4096}); err != nil {
		t.Fatal(err)
	}
	_, b := openFile(t, st, "p.parquet")
	var out bytes.Buffer
	if _, err := FrameFile(ctx, bytes.NewReader(b), int64(len(b)), &out, FrameOptions{}); !errors.Is(err, aerr.ErrInvalidArgument) {
		t.Fatalf("framing a DELTA file: %v", err)
	}
	if _, err := FrameFile(ctx, bytes.NewReader(b), int64(len(b)), &out, FrameOptions{Align: 100}); !errors.Is(err, aerr.ErrInvalidArgument) {
		t.Fatalf("align 100: %v", err)
	}
	schema, rows = eventRows(t, evs)
	if _, _, err := WriteFramed(ctx, st, "f.parquet", schema, rows, Options{Key: "user", PageBytes: 4096}, FrameOptions{}); err != nil {
		t.Fatal(err)
	}
	f, fb := openFile(t, st, "f.parquet")
	fm, _, _ := FramesMarkerOf(f)
	tab := fb[fm.Offset : fm.Offset+fm.Length]
	for name, bad := range map[string][]byte{
		"truncated":   tab[:len(tab)-3],
		"not a table": fb[4 : 4+len(tab)],
		"trailing":    append(slices.Clone(tab), 0),
	} {
		if _, err := ParseFrameTable(bad, len(f.RowGroups()), 7); !errors.Is(err, ErrBadFrames) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := ParseFrameTable(tab, len(f.RowGroups())+1, 7); !errors.Is(err, ErrBadFrames) {
		t.Errorf("row groups: %v", err)
	}
}

// TestFrameTableValues: a FramesVersionValues table carries per page
// whether its frames are bare values; a bare page's frames are the bytes
// of its packed lengths (the first frame's padding) and one size each; a
// page that is not bare and a table of version 3 keep their frame entries;
// flags other than bit 0 are ErrBadFrames.
func TestFrameTableValues(t *testing.T) {
	build := func(version, flags int) []byte {
		w := newTableWriter(version)
		w.int(1) // row groups
		w.int(2) // columns
		for range 2 {
			w.int(1) // pages
			w.int(10)
			w.int(0)
			if version >= FramesVersionValues {
				w.int(flags)
			}
			w.int(2)
			if flags&1 == 1 {
				w.int(5)
				w.int(20)
				w.int(30)
				continue
			}
			w.frame(1, 1, 5, 20, true)
			w.frame(1, 1, 0, 30, true)
		}
		return w.b
	}
	for _, c := range []struct {
		version, flags int
		bare           bool
	}{{FramesVersionValues, 1, true}, {FramesVersionValues, 0, false}, {FramesVersionCompact, 0, false}} {
		tb, err := ParseFrameTable(build(c.version, c.flags), 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		for col := range 2 {
			p, err := tb.Page(0, col, 0)
			if err != nil {
				t.Fatal(err)
			}
			f := p.Frames
			if p.Bare != c.bare || len(f) != 2 || f[0].Offset != 15 || f[1].Offset != 35 || f[1].Size != 30 || !f[0].Raw || !f[1].Raw || f[1].Rows != 1 || f[1].Values != 1 || f[1].FirstRow != 1 {
				t.Errorf("version %d flags %d column %d: %+v", c.version, c.flags, col, p)
			}
		}
	}
	// The writer's page entry is the one built by hand, and smaller.
	w := newTableWriter(FramesVersionValues)
	w.int(1)
	w.int(2)
	for range 2 {
		w.int(1)
		w.page(10, 0, pageBare, 2)
		w.bareFrames(5, []int32{20, 30})
	}
	if !bytes.Equal(w.b, build(FramesVersionValues, 1)) {
		t.Errorf("tableWriter.page wrote %x", w.b)
	}
	if n, m := len(build(FramesVersionValues, 1)), len(build(FramesVersionValues, 0)); n >= m {
		t.Errorf("bare pages take %d bytes, %d otherwise", n, m)
	}
	tb, err := ParseFrameTable(build(FramesVersionValues, 3), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Page(0, 0, 0); !errors.Is(err, ErrBadFrames) {
		t.Errorf("flags 3: %v", err)
	}
}

// TestPackedKeyChunk: the key column of a co-grouped file is stored
// unframed, as pages a standard reader reads: DELTA_BINARY_PACKED for
// INT32 and INT64 keys, PLAIN otherwise (nulls included), ZSTD, with no
// pages in the frame table; parquet-go reads every stored row's key, and
// each block's rows hold it.
func TestPackedKeyChunk(t *testing.T) {
	type i32 struct {
		K int32 `parquet:"k"`
		V int64 `parquet:"v"`
	}
	type i64 struct {
		K int64 `parquet:"k"`
		V int64 `parquet:"v"`
	}
	type str struct {
		K *string `parquet:"k,optional"`
		V int64   `parquet:"v"`
	}
	const n = 5000
	var a []i32
	var b []i64
	var c []str
	for i := range n {
		a = append(a, i32{K: int32(i*7919%701) - 350, V: int64(i)})
		b = append(b, i64{K: int64(i*7919%701) * 1_000_000_007, V: int64(i)})
		var k *string
		if i%11 != 0 {
			s := fmt.Sprintf("user-%05d", i*7919%701)
			k = &s
		}
		c = append(c, str{K: k, V: int64(i)})
	}
	for _, tc := range []struct {
		name string
		rows func() (*parquet.Schema, parquet.RowReader)
		enc  format.Encoding
	}{
		{"int32", func() (*parquet.Schema, parquet.RowReader) { return genericRows(t, a) }, format.DeltaBinaryPacked},
		{"int64", func() (*parquet.Schema, parquet.RowReader) { return genericRows(t, b) }, format.DeltaBinaryPacked},
		{"string", func() (*parquet.Schema, parquet.RowReader) { return genericRows(t, c) }, format.Plain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := fileStore(t)
			schema, rows := tc.rows()
			opts := Options{Key: "k", Sort: []string{"v"}, RowGroupRows: 300, Blob: &BlobOptions{Column: "served", Fields: []string{"v"}, Codec: BlobCodecZstdDict}}
			if _, _, err := WriteFramed(ctx, st, "cg", schema, rows, opts, DefaultFrameOptions()); err != nil {
				t.Fatal(err)
			}
			f, fb := openFile(t, st, "cg")
			blob, _, err := BlobOf(f)
			if err != nil {
				t.Fatal(err)
			}
			mk, _, err := FramesMarkerOf(f)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := readAt(bytes.NewReader(fb), mk.Offset, mk.Length)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := ParseFrameTable(raw, len(f.RowGroups()), 2)
			if err != nil {
				t.Fatal(err)
			}
			for rg, g := range f.Metadata().RowGroups {
				cm := g.Columns[0].MetaData
				if cm.Codec != format.Zstd || !slices.Contains(cm.Encoding, tc.enc) || tc.enc != format.Plain && slices.Contains(cm.Encoding, format.Plain) {
					t.Fatalf("row group %d: key chunk %s %v", rg, cm.Codec, cm.Encoding)
				}
				if tb.Pages(rg, 0) != 0 || tb.Pages(rg, 1) == 0 {
					t.Fatalf("row group %d: %d key pages, %d blob pages in the table", rg, tb.Pages(rg, 0), tb.Pages(rg, 1))
				}
			}
			total, stored := 0, 0
			rr := parquet.NewReader(f)
			buf := make([]parquet.Row, 64)
			for {
				m, err := rr.ReadRows(buf)
				for _, r := range buf[:m] {
					block, derr := blob.DecodeBlock(nil, r[1].ByteArray())
					if derr != nil {
						t.Fatal(derr)
					}
					for _, br := range block {
						if k := br[blob.KeyAt()]; !parquet.Equal(k, r[0]) || k.IsNull() != r[0].IsNull() {
							t.Fatalf("stored row %d: key %v, a block row's %v", stored, r[0], k)
						}
					}
					total += len(block)
					stored++
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if total != n || stored >= n {
				t.Fatalf("%d rows in %d stored rows, %d written", total, stored, n)
			}
		})
	}
}

func genericRows[T any](t *testing.T, recs []T) (*parquet.Schema, parquet.RowReader) {
	t.Helper()
	buf := parquet.NewGenericBuffer[T]()
	if _, err := buf.Write(recs); err != nil {
		t.Fatal(err)
	}
	return buf.Schema(), buf.Rows()
}

// checkCopy checks an interleaved copy (dec: the file's copy decoder): its
// frame holds one key, and the copy holds, per group column, exactly which of the frame's rows are
// defined and their PLAIN values.
func checkCopy(t *testing.T, f *parquet.File, rg int, first int64, rows int, group []string, b []byte, starts map[int64]bool, dec *zstd.Decoder) {
	t.Helper()
	for r := first + 1; r < first+int64(rows); r++ {
		if starts[r] {
			t.Fatalf("rg %d: a frame of the key column holds a key starting at row %d", rg, r)
		}
	}
	var optional []bool
	var leaves []int
	for _, name := range group {
		lc, ok := f.Schema().Lookup(name)
		if !ok {
			t.Fatalf("group column %q not in the file", name)
		}
		optional = append(optional, lc.MaxDefinitionLevel > 0)
		leaves = append(leaves, lc.ColumnIndex)
	}
	cols, err := ParseCopy(b, rows, optional, func(z []byte) ([]byte, error) { return dec.DecodeAll(z, nil) })
	if err != nil {
		t.Fatalf("rg %d row %d: %v", rg, first, err)
	}
	for i, leaf := range leaves {
		vals := readColumn(t, f.RowGroups()[rg].ColumnChunks()[leaf])[first : first+int64(rows)]
		var plain []byte
		for r, v := range vals {
			if cols[i].IsDefined(r) == v.IsNull() {
				t.Fatalf("rg %d row %d column %s: defined %t in the copy, value %v", rg, first+int64(r), group[i], cols[i].IsDefined(r), v)
			}
			if v.IsNull() {
				continue
			}
			if v.Kind() == parquet.ByteArray {
				plain = binary.LittleEndian.AppendUint32(plain, uint32(len(v.ByteArray())))
			}
			plain = v.AppendBytes(plain)
		}
		if !bytes.Equal(plain, cols[i].Values) {
			t.Fatalf("rg %d row %d column %s: the copy's values differ from the column's", rg, first, group[i])
		}
	}
}

// TestInterleaveErrors: an interleaved group naming the key, a column not
// in the file, a column twice or a repeated column, or combined with raw
// blocks or a blob column, is aerr.ErrInvalidArgument, and no file is
// left.
func TestInterleaveErrors(t *testing.T) {
	ctx := context.Background()
	evs := genEvents(4, 500)
	for name, fo := range map[string]FrameOptions{
		"the key":    {Interleave: []string{"name", "user"}},
		"unknown":    {Interleave: []string{"nope"}},
		"twice":      {Interleave: []string{"name", "score", "name"}},
		"repeated":   {Interleave: []string{"tags"}},
		"raw blocks": {Interleave: []string{"name"}, RawBlocks: true},
	} {
		st := fileStore(t)
		schema, rows := eventRows(t, evs)
		_, _, err := WriteFramed(ctx, st, "f.parquet", schema, rows, Options{Key: "user", PageBytes: 4096}, fo)
		if !errors.Is(err, aerr.ErrInvalidArgument) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := st.Stat(ctx, "f.parquet"); err == nil {
			t.Errorf("%s: a file was written", name)
		}
	}
	o := Options{Key: "user", Frames: &FrameOptions{Interleave: []string{"name"}}, Blob: &BlobOptions{Column: "b", Fields: []string{"score"}}}
	if _, err := o.withDefaults(); !errors.Is(err, aerr.ErrInvalidArgument) {
		t.Errorf("with a blob: %v", err)
	}
}
