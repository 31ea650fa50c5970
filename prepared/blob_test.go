package prepared_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// blobRow has a column of every physical type a blob field can have, with
// logical types (timestamp, date, string, decimal), optional columns mixing
// nulls, and a list column that is not a blob field (it stays a column).
type blobRow struct {
	User  int64     `parquet:"user"`
	TS    time.Time `parquet:"ts,timestamp(microsecond)"`
	Name  *string   `parquet:"name,optional"`
	Rare  *int32    `parquet:"rare,optional"`
	Score float64   `parquet:"score"`
	F32   float32   `parquet:"f32"`
	Data  []byte    `parquet:"data"`
	Fixed [3]byte   `parquet:"fixed"`
	Flag  bool      `parquet:"flag"`
	Day   int32     `parquet:"day,date"`
	Tags  []string  `parquet:"tags,list"`
}

// writeBlobSources writes two unprepared files (arrival order, parquet-go
// defaults) of 4,000 rows over 400 users, user 7 heavy, into dir.
func writeBlobSources(t *testing.T, st store.Store) []string {
	t.Helper()
	ctx := context.Background()
	var uris []string
	for fi := range 2 {
		rng := rand.New(rand.NewPCG(uint64(fi), 11))
		rows := make([]blobRow, 4000)
		for i := range rows {
			r := blobRow{User: int64(rng.IntN(400)), TS: time.UnixMicro(rng.Int64N(1e15)).UTC(), Score: rng.NormFloat64(),
				F32: float32(rng.IntN(1000)) / 3, Data: bytes.Repeat([]byte{byte(i)}, rng.IntN(30)), Flag: rng.IntN(2) == 0,
				Day: int32(rng.IntN(20000)), Fixed: [3]byte{byte(i), byte(fi), 7}}
			if rng.IntN(5) == 0 {
				r.User = 7
			}
			if rng.IntN(3) > 0 {
				s := fmt.Sprintf("name-%d", rng.IntN(100))
				r.Name = &s
			}
			if r.User%9 == 0 {
				v := int32(i) - 2000
				r.Rare = &v
			}
			for range rng.IntN(3) {
				r.Tags = append(r.Tags, fmt.Sprint(rng.IntN(50)))
			}
			rows[i] = r
		}
		var buf bytes.Buffer
		w := parquet.NewGenericWriter[blobRow](&buf)
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		uri := fmt.Sprintf("src/part-%d.parquet", fi)
		if err := store.WriteAll(ctx, st, uri, buf.Bytes(), nil); err != nil {
			t.Fatal(err)
		}
		uris = append(uris, uri)
	}
	return uris
}

// TestBlobColumn: prepared files whose served fields are one blob column,
// unframed, framed per key, and with the fields kept: other readers
// (parquet-go, DuckDB) read a standard file with a binary column; the
// markers describe it; and a row index lookup of every key returns exactly
// the rows of a full scan of the unprepared sources — the same typed leaf
// values in the source's schema — reading one range per file holding the
// key.
func TestBlobColumn(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	srcURIs := writeBlobSources(t, data)
	// Full scan of the sources: every key's rows (leaf values), and the
	// source's top-level columns.
	scan := map[int64][]string{}
	var srcCols []string
	for _, uri := range srcURIs {
		f := openStored(t, data, uri)
		if srcCols == nil {
			for _, c := range f.Root().Columns() {
				srcCols = append(srcCols, c.Name())
			}
		}
		for r := range readAllRows(t, f) {
			scan[r[0].Int64()] = append(scan[r[0].Int64()], fmt.Sprint(r))
		}
	}
	fields := []string{"ts", "name", "rare", "score", "f32", "data", "fixed", "flag", "day"}
	db, err := duck.Open(ctx, duck.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res := rowindex.StoreResolver{Store: data}
	for _, c := range []struct {
		name   string
		frames *prepared.FrameOptions
		keep   bool
		cols   []string // columns of the output files
	}{
		{"plain", nil, false, []string{"user", "tags", "served"}},
		{"framed", &prepared.FrameOptions{}, false, []string{"user", "tags", "served"}},
		{"kept", nil, true, append(slices.Clone(srcCols), "served")},
	} {
		t.Run(c.name, func(t *testing.T) {
			srcs, err := prepared.Sources(ctx, res, []string{"src"})
			if err != nil {
				t.Fatal(err)
			}
			out, err := store.Open(ctx, "file://"+filepath.Join(dir, c.name))
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			st, err := prepared.PrepareFiles(ctx, res, srcs, out, prepared.Options{Key: "user", Sort: []string{"ts"}, Buckets: 2,
				PageBytes: 2048, RowGroupRows: 3000, Frames: c.frames,
				Blob: &prepared.BlobOptions{Column: "served", Fields: fields, Keep: c.keep}})
			if err != nil {
				t.Fatal(err)
			}
			if st.Choices == nil || st.Choices.Blob == nil || st.Choices.Blob.Column != "served" || st.Choices.Blob.Keep != c.keep {
				t.Fatalf("choices %+v: no blob", st.Choices)
			}
			var uris []string
			var rows int64
			for _, fs := range st.Files {
				uri := c.name + "/" + fs.Key
				uris = append(uris, uri)
				f := openStored(t, data, uri)
				var got []string
				for _, col := range f.Root().Columns() {
					got = append(got, col.Name())
				}
				if !slices.Equal(got, c.cols) {
					t.Fatalf("%s: columns %v, want %v", uri, got, c.cols)
				}
				mk, ok, err := prepared.MarkerOf(f)
				if !ok || err != nil || mk.Blob == nil || !slices.Equal(mk.Blob.Fields, fields) || (c.frames != nil) != (mk.Frames != nil) {
					t.Fatalf("%s: marker %+v %v %v", uri, mk, ok, err)
				}
				b, ok, err := prepared.BlobOf(f)
				if !ok || err != nil || len(b.Marker.Fields) != len(fields)+1 || b.Marker.Fields[0].Name != "user" || b.Marker.Kept != c.keep {
					t.Fatalf("%s: blob %+v %v %v", uri, b, ok, err)
				}
				if b.Marker.Fields[1].Logical == "" || b.Marker.Fields[2].Type != "BYTE_ARRAY" || !b.Marker.Fields[2].Optional {
					t.Errorf("%s: fields described as %+v", uri, b.Marker.Fields)
				}
				// parquet-go: the blob of every row decodes to the row's
				// fields, and kept columns equal them.
				for r := range readAllRows(t, f) {
					vals, err := b.Decode(nil, r[len(r)-1].ByteArray())
					if err != nil {
						t.Fatal(err)
					}
					if vals[0].Int64() != r[0].Int64() {
						t.Fatalf("%s: blob key %v in the row of key %v", uri, vals[0], r[0])
					}
					if c.keep {
						for i, v := range vals[1:] {
							if kv := r[v.Column()]; !parquet.Equal(kv, v) {
								t.Fatalf("%s: field %s decodes to %v, kept column %v", uri, fields[i], v, kv)
							}
						}
					}
					rows++
				}
			}
			if rows != 8000 {
				t.Fatalf("%d rows in the prepared files, 8000 written", rows)
			}
			// DuckDB reads the files as Parquet with a binary column.
			var paths []string
			for _, u := range uris {
				paths = append(paths, duck.String(filepath.Join(dir, u)))
			}
			_, dr, err := db.QueryAll(ctx, `SELECT count(*), count(DISTINCT "user"), typeof(any_value(served)) FROM read_parquet([`+strings.Join(paths, ",")+`])`)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(dr[0]); got != fmt.Sprintf("[8000 %d BLOB]", len(scan)) {
				t.Fatalf("DuckDB reads %s", got)
			}
			// The row index: every key's rows equal the scan's.
			idx, err := store.Open(ctx, "file://"+t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer idx.Close()
			cs := store.NewCounting(data)
			if _, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: "u", Key: "user"}, rowindex.StoreResolver{Store: cs}, uris); err != nil {
				t.Fatal(err)
			}
			// Exact ranges and no page cache: every lookup reads its pages.
			ri, err := rowindex.Open(ctx, idx, "u", rowindex.Options{Resolver: rowindex.StoreResolver{Store: cs}, CoalesceGap: -1, PageCacheBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ri.Warm(ctx); err != nil {
				t.Fatal(err)
			}
			// The blob column itself is not a column of the rows returned.
			if _, err := ri.Lookup(ctx, rowindex.Query{Key: int64(7), Columns: []string{"served"}}); !errors.Is(err, rowindex.ErrBadQuery) || !strings.Contains(err.Error(), "blob column") {
				t.Errorf("lookup of the blob column: %v", err)
			}
			for k, want := range scan {
				// The served fields alone: one range per file.
				r, err := ri.Lookup(ctx, rowindex.Query{Key: k, Columns: []string{"ts", "score", "user", "name"}})
				if err != nil {
					t.Fatal(err)
				}
				sfiles := map[string]bool{}
				for _, row := range r.Rows {
					sfiles[row.File] = true
				}
				if p := r.Plan; len(r.Rows) != len(want) || k != 7 && (p.ByteRanges != len(sfiles) || p.Data.Requests != int64(len(sfiles))) {
					t.Fatalf("key %d served fields: %d rows, %d ranges, %d requests for %d files", k, len(r.Rows), p.ByteRanges, p.Data.Requests, len(sfiles))
				}
				if c.frames != nil && len(r.Rows) > 0 && r.Plan.Data.Frames == 0 {
					t.Fatalf("key %d: no frame decoded from framed files", k)
				}
				for _, row := range r.Rows {
					if len(row.Values) != 4 || row.Values[0].Column() != 0 || row.Values[1].Column() != 1 || row.Values[3].Column() != 4 {
						t.Fatalf("key %d: projected row %v", k, row.Values)
					}
				}
				r, err = ri.Lookup(ctx, rowindex.Query{Key: k})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				files := map[string]bool{}
				for _, row := range r.Rows {
					got = append(got, fmt.Sprint(row.Values))
					files[row.File] = true
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("key %d: lookup %d rows %v\nscan %d rows %v", k, len(got), got, len(want), want)
				}
				if !slices.Equal(r.Columns, srcCols) {
					t.Fatalf("key %d: columns %v, the source's %v", k, r.Columns, srcCols)
				}
				rec, err := r.Record(0)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := rec["ts"].(time.Time); !ok || len(rec) != len(srcCols) {
					t.Fatalf("key %d: record %v", k, rec)
				}
				// At most one range per file for the blob and one for tags
				// (its dictionary aside: a warm cache does not hold them).
				if p := r.Plan; k != 7 && p.ByteRanges > 3*len(files) {
					t.Fatalf("key %d: %d ranges for %d files", k, p.ByteRanges, len(files))
				}
			}
		})
	}
}

// TestBlobErrors: bad blob options are refused before anything is written.
func TestBlobErrors(t *testing.T) {
	ctx := context.Background()
	data, err := store.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	writeBlobSources(t, data)
	res := rowindex.StoreResolver{Store: data}
	srcs, err := prepared.Sources(ctx, res, []string{"src"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		blob prepared.BlobOptions
		kind error
	}{
		{prepared.BlobOptions{Column: "served", Fields: []string{"nope"}}, aerr.ErrColumnNotFound},
		{prepared.BlobOptions{Column: "served", Fields: []string{"tags"}}, aerr.ErrInvalidArgument},
		{prepared.BlobOptions{Column: "tags", Fields: []string{"ts"}}, aerr.ErrInvalidArgument},
		{prepared.BlobOptions{Column: "", Fields: []string{"ts"}}, aerr.ErrInvalidArgument},
		{prepared.BlobOptions{Column: "served", Fields: []string{"ts", "ts"}}, aerr.ErrInvalidArgument},
		// Co-grouped: every column but the key in the blob, none kept.
		{prepared.BlobOptions{Column: "served", Fields: []string{"ts"}, Codec: prepared.BlobCodecZstdDict}, aerr.ErrInvalidArgument},
		{prepared.BlobOptions{Column: "served", Fields: []string{"ts"}, Codec: prepared.BlobCodecZstdDict, Keep: true}, aerr.ErrInvalidArgument},
		{prepared.BlobOptions{Column: "served", Fields: []string{"ts"}, Codec: "lz4"}, aerr.ErrInvalidArgument},
	} {
		out, _ := store.Open(ctx, "mem://")
		b := c.blob
		// Refused before the scan reads any source's rows.
		var phases []string
		_, err := prepared.PrepareFiles(ctx, res, srcs, out, prepared.Options{Key: "user", Blob: &b,
			Progress: func(p prepared.Progress) { phases = append(phases, p.Phase) }})
		if !errors.Is(err, c.kind) || len(phases) > 0 {
			t.Errorf("%+v: %v, want %v (after %v)", c.blob, err, c.kind, phases)
		}
		for o, err := range out.List(ctx, store.ListOptions{}) {
			t.Errorf("%+v: wrote %v %v", c.blob, o.Key, err)
		}
	}
	// Files whose blob marker or values do not decode: the lookup fails
	// with ErrBadBlob and ErrDataFileChanged, no rows.
	type bad struct {
		User   int64  `parquet:"user"`
		Served []byte `parquet:"served"`
	}
	good, err := prepared.PrepareFiles(ctx, res, srcs, data, prepared.Options{Key: "user", Buckets: 1, Overwrite: true,
		Blob: &prepared.BlobOptions{Column: "served", Fields: []string{"ts"}}})
	if err != nil {
		t.Fatal(err)
	}
	marker, _ := openStored(t, data, good.Files[0].Key).Lookup(prepared.BlobKey)
	for name, c := range map[string]struct{ marker, value string }{
		"bad-marker.parquet": {"{bad", "x"},
		"bad-value.parquet":  {marker, "xx"}, // a valid marker, values too short
	} {
		var buf bytes.Buffer
		w := parquet.NewGenericWriter[bad](&buf, parquet.KeyValueMetadata(prepared.BlobKey, c.marker))
		if _, err := w.Write([]bad{{1, []byte(c.value)}, {2, []byte(c.value)}}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := store.WriteAll(ctx, data, name, buf.Bytes(), nil); err != nil {
			t.Fatal(err)
		}
		idx, err := store.Open(ctx, "file://"+t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: "u", Key: "user"}, res, []string{name}); err != nil {
			t.Fatal(err)
		}
		ri, err := rowindex.Open(ctx, idx, "u", rowindex.Options{Resolver: res})
		if err != nil {
			t.Fatal(err)
		}
		r, err := ri.Lookup(ctx, rowindex.Query{Key: int64(2), Columns: []string{"ts"}})
		if !errors.Is(err, prepared.ErrBadBlob) || !errors.Is(err, rowindex.ErrDataFileChanged) || r != nil {
			t.Errorf("%s: lookup %v, %v", name, r, err)
		}
		idx.Close()
	}
	// A co-grouped blob is written framed only (its blocks are compressed
	// when the file is framed).
	if _, err := prepared.Write(ctx, data, "w.parquet", parquet.SchemaOf(blockRow{}), parquet.NewRowBuffer[blockRow]().Rows(), prepared.Options{Key: "user",
		Blob: &prepared.BlobOptions{Column: "served", Fields: []string{"ts", "name", "rare", "score", "f32", "data", "fixed", "flag", "day"}, Codec: prepared.BlobCodecZstdDict}}); !errors.Is(err, aerr.ErrInvalidArgument) {
		t.Errorf("Write of a %s blob: %v", prepared.BlobCodecZstdDict, err)
	}
	// A co-grouped marker without a dictionary, or with one that is not a
	// ZSTD dictionary, is a typed error.
	var m prepared.BlobMarker
	if err := json.Unmarshal([]byte(marker), &m); err != nil {
		t.Fatal(err)
	}
	m.Encoding, m.Codec = prepared.BlobBlockEncoding, prepared.BlobCodecZstdDict
	for _, dict := range [][]byte{nil, []byte("not a dictionary at all")} {
		m.Dict = dict
		if b, err := prepared.NewBlob(m); !errors.Is(err, prepared.ErrBadBlob) || b != nil {
			t.Errorf("dictionary %q: %v", dict, err)
		}
	}
	// A blob value that does not decode is a typed error.
	b, err := prepared.NewBlob(prepared.BlobMarker{Version: 1, Encoding: prepared.BlobEncoding, Schema: []byte("nope")})
	if !errors.Is(err, prepared.ErrBadBlob) || b != nil {
		t.Errorf("bad schema: %v", err)
	}
}

func openStored(t *testing.T, st store.Store, key string) *parquet.File {
	t.Helper()
	b, err := store.ReadAll(context.Background(), st, key)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// readAllRows yields every row of f.
func readAllRows(t *testing.T, f *parquet.File) func(func(parquet.Row) bool) {
	return func(yield func(parquet.Row) bool) {
		for _, rg := range f.RowGroups() {
			rr := parquet.NewRowGroupReader(rg)
			buf := make([]parquet.Row, 256)
			for {
				n, err := rr.ReadRows(buf)
				for _, r := range buf[:n] {
					if !yield(r.Clone()) {
						return
					}
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// blockRow is blobRow without its list column: every column but the key
// can go into a co-grouped blob.
type blockRow struct {
	User  int64     `parquet:"user"`
	TS    time.Time `parquet:"ts,timestamp(microsecond)"`
	Name  *string   `parquet:"name,optional"`
	Rare  *int32    `parquet:"rare,optional"`
	Score float64   `parquet:"score"`
	F32   float32   `parquet:"f32"`
	Data  []byte    `parquet:"data"`
	Fixed [3]byte   `parquet:"fixed"`
	Flag  bool      `parquet:"flag"`
	Day   int32     `parquet:"day,date"`
}

// TestBlobDict: co-grouped blobs compressed with a dictionary
// (BlobCodecZstdDict). The files are standard Parquet (parquet-go and DuckDB
// read the key and a binary column, one row per block of a key's rows);
// every block decodes with the file's dictionary to the key's rows; and a
// row index lookup of every key — the heavy key's several blocks included —
// returns exactly the rows of a full scan of the unprepared sources, reading
// one range per file holding the key of exactly its blocks' bytes.
func TestBlobDict(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	scan, srcCols := writeBlockSources(t, data)
	fields := srcCols[1:]
	res := rowindex.StoreResolver{Store: data}
	st := prepareTo(t, data, "blk", filepath.Join(dir, "dict"), prepared.Options{Key: "user", Sort: []string{"ts"}, Buckets: 2,
		PageBytes: 8192, RowGroupRows: 100, Blob: &prepared.BlobOptions{Column: "served", Fields: fields, Codec: prepared.BlobCodecZstdDict}})
	if b := st.Choices.Blob; b == nil || b.Codec != prepared.BlobCodecZstdDict {
		t.Fatalf("choices: blob %+v", b)
	}
	var uris []string
	var rows int64
	stored := 0
	blockBytes := map[int64]int64{} // per key: its blocks' bytes without lengths, as a lookup reads them
	for _, fs := range st.Files {
		uri := "dict/" + fs.Key
		uris = append(uris, uri)
		f := openStored(t, data, uri)
		var got []string
		for _, col := range f.Root().Columns() {
			got = append(got, col.Name())
		}
		if !slices.Equal(got, []string{"user", "served"}) {
			t.Fatalf("%s: columns %v", uri, got)
		}
		mk, ok, err := prepared.MarkerOf(f)
		if !ok || err != nil || mk.Blob == nil || mk.Blob.Codec != prepared.BlobCodecZstdDict || mk.Frames == nil {
			t.Fatalf("%s: marker %+v %v %v", uri, mk, ok, err)
		}
		b, ok, err := prepared.BlobOf(f)
		if !ok || err != nil || !b.Blocks() || len(b.Marker.Dict) == 0 || b.Marker.Encoding != prepared.BlobBlockEncoding3 {
			t.Fatalf("%s: blob %+v %v %v", uri, b, ok, err)
		}
		if fm, ok, err := prepared.FramesMarkerOf(f); !ok || err != nil || fm.Version != prepared.FramesVersionValues {
			t.Fatalf("%s: frame table %+v %v %v, want version %d", uri, fm, ok, err, prepared.FramesVersionValues)
		}
		for _, rg := range f.Metadata().RowGroups {
			if c := rg.Columns[1].MetaData.Codec.String(); c != "UNCOMPRESSED" {
				t.Fatalf("%s: blob chunk %s", uri, c)
			}
			// The blob's values without 4-byte lengths: DELTA_LENGTH_BYTE_ARRAY.
			if e := rg.Columns[1].MetaData.Encoding; !slices.Contains(e, format.DeltaLengthByteArray) || slices.Contains(e, format.Plain) {
				t.Fatalf("%s: blob chunk encodings %v", uri, e)
			}
		}
		if _, err := b.Decode(nil, []byte{0}); !errors.Is(err, prepared.ErrBadBlob) {
			t.Errorf("a block decoded as a row: %v", err)
		}
		for r := range readAllRows(t, f) {
			stored++
			blockBytes[r[0].Int64()] += int64(len(r[1].ByteArray())) // the values alone: no lengths read
			dec, err := b.DecodeBlock(nil, r[1].ByteArray())
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range dec {
				if d[b.KeyAt()].Int64() != r[0].Int64() || len(d) != len(srcCols) {
					t.Fatalf("%s: block row %v in the stored row of key %v", uri, d, r[0])
				}
			}
			rows += int64(len(dec))
			// A damaged frame is a typed error.
			z := bytes.Clone(r[1].ByteArray())
			z[len(z)/2] ^= 0xff
			if _, err := b.DecodeBlock(nil, z[:len(z)-1]); !errors.Is(err, prepared.ErrBadBlob) {
				t.Fatalf("damaged block: %v", err)
			}
		}
	}
	if rows != 8000 || stored >= 1000 {
		t.Fatalf("%d rows in %d blocks in the prepared files, 8000 rows written", rows, stored)
	}
	db, err := duck.Open(ctx, duck.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var paths []string
	for _, u := range uris {
		paths = append(paths, duck.String(filepath.Join(dir, u)))
	}
	_, dr, err := db.QueryAll(ctx, `SELECT count(*), count(DISTINCT "user"), typeof(any_value(served)) FROM read_parquet([`+strings.Join(paths, ",")+`])`)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(dr[0]); got != fmt.Sprintf("[%d %d BLOB]", stored, len(scan)) {
		t.Fatalf("DuckDB reads %s", got)
	}
	idx, err := store.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	cs := store.NewCounting(data)
	if _, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: "u", Key: "user"}, rowindex.StoreResolver{Store: cs}, uris); err != nil {
		t.Fatal(err)
	}
	ri, err := rowindex.Open(ctx, idx, "u", rowindex.Options{Resolver: rowindex.StoreResolver{Store: cs}, CoalesceGap: -1, PageCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	// Cover columns are not built from co-grouped blocks.
	idx2, err := store.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer idx2.Close()
	_, _, err = rowindex.Create(ctx, idx2, rowindex.Definition{Name: "c", Key: "user", Cover: []string{"user"}}, res, uris)
	if err == nil || !strings.Contains(err.Error(), "co-grouped") {
		t.Fatalf("cover build over co-grouped blobs: %v", err)
	}
	for k, want := range scan {
		r, err := ri.Lookup(ctx, rowindex.Query{Key: k})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		files := map[string]bool{}
		for _, row := range r.Rows {
			got = append(got, fmt.Sprint(row.Values))
			files[row.File] = true
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("key %d: lookup %d rows %v\nscan %d rows %v", k, len(got), got, len(want), want)
		}
		if !slices.Equal(r.Columns, srcCols) {
			t.Fatalf("key %d: columns %v, the source's %v", k, r.Columns, srcCols)
		}
		// One range, one request per file, of exactly the key's blocks
		// (the heavy key's blocks span pages: a range per page here, where
		// ranges are never coalesced).
		if p := r.Plan; k != 7 && (p.ByteRanges != len(files) || p.Data.Requests != int64(len(files))) || p.Data.BytesRead != blockBytes[k] || p.Rows != len(want) {
			t.Fatalf("key %d: %d ranges, %d requests, %d bytes (blocks %d), %d rows for %d files", k, p.ByteRanges, p.Data.Requests, p.Data.BytesRead, blockBytes[k], p.Rows, len(files))
		}
		if rec, err := r.Record(0); err != nil || len(rec) != len(srcCols) {
			t.Fatalf("key %d: record %v %v", k, rec, err)
		}
		// A limit caps the rows returned, though a stored row holds a
		// block of them.
		if r, err := ri.Lookup(ctx, rowindex.Query{Key: k, Limit: 3}); err != nil || len(r.Rows) != min(3, len(want)) || (r.Cursor != "") != (len(want) > 3) {
			t.Fatalf("key %d: limit 3: %v rows, %v", k, r, err)
		}
		// Pages of 2 rows cut blocks; the cursor continues inside a cut
		// block, so the pages hold every row once.
		paged := pagedRows(t, ri, k, len(want))
		slices.Sort(paged)
		if !slices.Equal(paged, want) {
			t.Fatalf("key %d: paged %d rows %v\nscan %d rows %v", k, len(paged), paged, len(want), want)
		}
		// A projection: the columns asked, in the source's order.
		r, err = ri.Lookup(ctx, rowindex.Query{Key: k, Columns: []string{"score", "user", "name"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range r.Rows {
			if len(row.Values) != 3 || row.Values[0].Column() != 0 || row.Values[1].Column() != 2 || row.Values[2].Column() != 4 {
				t.Fatalf("key %d: projected row %v", k, row.Values)
			}
		}
		if len(r.Rows) != len(want) {
			t.Fatalf("key %d: projection %d rows, %d", k, len(r.Rows), len(want))
		}
		// The key alone: a row per source row, not per stored row (the
		// index's entries count stored rows: FileEntry.Blocks).
		if r, err = ri.Lookup(ctx, rowindex.Query{Key: k, Columns: []string{"user"}}); err != nil || len(r.Rows) != len(want) {
			t.Fatalf("key %d: the key alone: %v rows, %d; %v", k, r, len(want), err)
		}
	}
}

// TestBlobDictSmallFile: a co-grouped file whose blocks are too few for a
// dictionary to learn from (one key, one row: the dictionary's content
// holds them whole) is still written, and its block decodes to the row.
func TestBlobDictSmallFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	name := "only"
	src := []blockRow{{User: 7, TS: time.UnixMicro(1_717_200_000_000_000).UTC(), Name: &name, Score: 1.5, Data: []byte("x"), Fixed: [3]byte{1, 2, 3}, Flag: true, Day: 3}}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, src); err != nil {
		t.Fatal(err)
	}
	if err := store.WriteAll(ctx, data, "src/a.parquet", buf.Bytes(), nil); err != nil {
		t.Fatal(err)
	}
	st := prepareTo(t, data, "src", filepath.Join(dir, "out"), prepared.Options{Key: "user", Sort: []string{"ts"},
		Blob: &prepared.BlobOptions{Column: "served", Fields: []string{"ts", "name", "rare", "score", "f32", "data", "fixed", "flag", "day"}, Codec: prepared.BlobCodecZstdDict}})
	want := fmt.Sprint(readAllRowsOf(t, openStored(t, data, "src/a.parquet")))
	for _, fs := range st.Files {
		f := openStored(t, data, "out/"+fs.Key)
		b, _, err := prepared.BlobOf(f)
		if err != nil {
			t.Fatal(err)
		}
		var got []parquet.Row
		for r := range readAllRows(t, f) {
			if got, err = b.DecodeBlock(got, r[1].ByteArray()); err != nil {
				t.Fatal(err)
			}
		}
		if fmt.Sprint(got) != want {
			t.Fatalf("decoded %v, want %v", got, want)
		}
	}
}

func readAllRowsOf(t *testing.T, f *parquet.File) []parquet.Row {
	var rows []parquet.Row
	for r := range readAllRows(t, f) {
		rows = append(rows, r.Clone())
	}
	return rows
}

// prepareTo prepares the sources under folder from of data into the local
// folder dir with o.
func prepareTo(t *testing.T, data store.Store, from, dir string, o prepared.Options) prepared.Stats {
	t.Helper()
	ctx := context.Background()
	res := rowindex.StoreResolver{Store: data}
	srcs, err := prepared.Sources(ctx, res, []string{from})
	if err != nil {
		t.Fatal(err)
	}
	out, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	st, err := prepared.PrepareFiles(ctx, res, srcs, out, o)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
