package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/store"
)

// TestPreparedFilesReadByEngines: prepared Parquet (package prepared), with
// one page per key, packed pages, frames, blob columns (a blob per row,
// and co-grouped blocks compressed with a dictionary) and co-grouping as
// nested lists, is ordinary Parquet to DuckDB, pyarrow and Spark: each
// returns exactly the rows our writer wrote (DuckDB and pyarrow in file
// order; of a blob file, the rows its blob values decode to; of a nested
// file, its lists unnested), and pyarrow sees the marker, the sorting
// columns and the page index.
func TestPreparedFilesReadByEngines(t *testing.T) {
	env := loadEnv(t)
	ctx := testContext(t, 5*time.Minute)
	dir := t.TempDir()
	st := openStore(t, ctx, dir)
	cfg := lakegen.Config{Seed: 9, TargetBytes: 1 << 20, Days: 1, FilesPerDay: 2, Users: 300, Tracks: 500, Prepared: true, RowGroupRows: 4000}
	files, err := lakegen.Generate(ctx, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(dir, f.Key))
	}
	// One more with one page per key, written by prepared.Write directly.
	rows, err := store.ReadAll(ctx, st, files[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	src, err := parquet.OpenFile(bytes.NewReader(rows), int64(len(rows)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prepared.Write(ctx, st, "one-page-per-key.parquet", src.Schema(), parquet.NewReader(src),
		prepared.Options{Key: "user_id", Sort: []string{"ts"}, RowGroupRows: 4000, PageBytes: prepared.PageBytesPerKey}); err != nil {
		t.Fatal(err)
	}
	paths = append(paths, filepath.Join(dir, "one-page-per-key.parquet"))
	keys := []string{files[0].Key, files[1].Key, "one-page-per-key.parquet"}
	// Framed variants (prepared.WriteFramed): a ZSTD frame per key inside
	// the pages, frames of ≥ 1 KiB of keys aligned to 4 KiB with
	// skippable frames, adaptive raw blocks (uncompressed ZSTD blocks
	// where a frame does not pay), and interleaved column groups (the
	// served columns' values of each key copied into a skippable frame
	// after the key's frame in the key column; grouped, and aligned).
	served := []string{"ts", "track_uri", "duration_ms", "context"}
	for name, fo := range map[string]prepared.FrameOptions{
		"framed-per-key.parquet":             {},
		"framed-grouped-aligned.parquet":     {MinFrameBytes: 1 << 10, Align: 4 << 10},
		"framed-raw-blocks.parquet":          {RawBlocks: true},
		"framed-interleaved.parquet":         {MinFrameBytes: 1 << 10, Interleave: served},
		"framed-interleaved-aligned.parquet": {Align: 4 << 10, Interleave: []string{"context", "ts"}},
	} {
		if _, _, err := prepared.WriteFramed(ctx, st, name, src.Schema(), parquet.NewReader(src),
			prepared.Options{Key: "user_id", Sort: []string{"ts"}, RowGroupRows: 4000, PageBytes: 16 << 10}, fo); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Join(dir, name))
		keys = append(keys, name)
	}
	// A blob column (prepared.Options.Blob) in place of the served
	// columns, framed: the readers see user_id and a binary column, and
	// the script decodes it with the documented row encoding.
	if _, _, err := prepared.WriteFramed(ctx, st, "blob-framed.parquet", src.Schema(), parquet.NewReader(src),
		prepared.Options{Key: "user_id", Sort: []string{"ts"}, RowGroupRows: 4000, PageBytes: 16 << 10,
			Blob: &prepared.BlobOptions{Column: "served", Fields: []string{"ts", "track_uri", "duration_ms", "context"}}},
		prepared.FrameOptions{MinFrameBytes: 1 << 10}); err != nil {
		t.Fatal(err)
	}
	paths = append(paths, filepath.Join(dir, "blob-framed.parquet"))
	keys = append(keys, "blob-framed.parquet")
	// Co-grouped blobs (BlobCodecZstdDict): one stored row per block of a
	// key's rows, each a ZSTD frame with the file's dictionary; the
	// readers see user_id and a binary column, the script decodes the
	// frames with libzstd and the blocks with the documented encoding.
	if _, _, err := prepared.WriteFramed(ctx, st, "blob-zstd-dict.parquet", src.Schema(), parquet.NewReader(src),
		prepared.Options{Key: "user_id", Sort: []string{"ts"}, RowGroupRows: 4000, PageBytes: 16 << 10,
			Blob: &prepared.BlobOptions{Column: "served", Fields: []string{"ts", "track_uri", "duration_ms", "context"}, Codec: prepared.BlobCodecZstdDict}},
		prepared.FrameOptions{MinFrameBytes: 1 << 10}); err != nil {
		t.Fatal(err)
	}
	paths = append(paths, filepath.Join(dir, "blob-zstd-dict.parquet"))
	keys = append(keys, "blob-zstd-dict.parquet")
	// Co-grouped as nested Parquet (Options.CoGroup): one row per key,
	// every column but the key a LIST; the readers unnest the lists
	// (DuckDB unnest, pyarrow list_flatten, Spark inline(arrays_zip)).
	if _, err := prepared.Write(ctx, st, "nested-co-grouped.parquet", src.Schema(), parquet.NewReader(src),
		prepared.Options{Key: "user_id", Sort: []string{"ts"}, RowGroupRows: 4000, PageBytes: 16 << 10, CoGroup: true}); err != nil {
		t.Fatal(err)
	}
	paths = append(paths, filepath.Join(dir, "nested-co-grouped.parquet"))
	keys = append(keys, "nested-co-grouped.parquet")
	// Files whose rows are not read as written: the rows come from the
	// source.
	blobFile := map[string]bool{"blob-framed.parquet": true, "blob-zstd-dict.parquet": true, "nested-co-grouped.parquet": true}

	out, err := env.RunScript(ctx, "prepared_check.py", paths...)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]struct {
		Pyarrow, Spark struct{ Rows []string }
		Metadata       struct {
			Marker         *string
			SortingColumns [][][]any `json:"sorting_columns"`
			PageIndex      []bool    `json:"page_index"`
			Frames         *string
			NumRowGroups   int `json:"num_row_groups"`
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i, p := range paths {
		b, err := store.ReadAll(ctx, st, keys[i])
		if err != nil {
			t.Fatal(err)
		}
		// The rows written: of the blob file, those of its source.
		blob := blobFile[keys[i]]
		duckRows := duckReads(t, ctx, p, b)
		if blob {
			b = rows
		}
		ls, err := parquet.Read[lakegen.Listen](bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		want := listenLines(ls)
		g := got[p]
		interleaved := strings.HasPrefix(keys[i], "framed-interleaved")
		if interleaved {
			// parquet-go (want) reads the source's rows, and pyarrow sees
			// the group in the frames marker.
			src, err := parquet.Read[lakegen.Listen](bytes.NewReader(rows), int64(len(rows)))
			if err != nil {
				t.Fatal(err)
			}
			if srcLines := listenLines(src); !slices.Equal(srcLines, want) {
				t.Errorf("%s: parquet-go reads %d rows, not the source's %d", keys[i], len(want), len(srcLines))
			}
			var fm prepared.FramesMarker
			if g.Metadata.Frames == nil || json.Unmarshal([]byte(*g.Metadata.Frames), &fm) != nil || fm.Interleave == nil || fm.Interleave.Host != "user_id" {
				t.Errorf("%s: frames marker as pyarrow sees it: %v", keys[i], g.Metadata.Frames)
			}
		}
		if !slices.Equal(g.Pyarrow.Rows, want) {
			t.Errorf("%s: pyarrow reads %d rows, not the %d written in order", keys[i], len(g.Pyarrow.Rows), len(want))
		}
		if !slices.Equal(duckRows, want) {
			t.Errorf("%s: DuckDB reads %d rows, not the %d written in order", keys[i], len(duckRows), len(want))
		}
		sparkRows := slices.Clone(g.Spark.Rows)
		slices.Sort(sparkRows)
		slices.Sort(want)
		if !slices.Equal(sparkRows, want) {
			t.Errorf("%s: Spark reads %d rows, not the %d written", keys[i], len(sparkRows), len(want))
		}
		m := g.Metadata
		pageIndex, sorting := []bool{true, true, true, true, true}, "[[0 false true] [1 false true]]"
		if blob { // user_id and the blob; ts is in the blob
			pageIndex, sorting = []bool{true, true}, "[[0 false true]]"
		}
		if keys[i] == "nested-co-grouped.parquet" {
			// The key and four lists; sorted by the key (ts orders
			// each list, not the stored rows).
			pageIndex, sorting = []bool{true, true, true, true, true}, "[[0 false true]]"
		}
		if keys[i] == "blob-zstd-dict.parquet" {
			// Co-grouped blocks drop the blob's column index (bounds of
			// compressed frames say nothing); its offset index stays.
			pageIndex[1] = false
		}
		if m.Marker == nil || m.NumRowGroups < 1 || len(m.SortingColumns) != m.NumRowGroups || !slices.Equal(m.PageIndex, pageIndex) {
			t.Errorf("%s: metadata as pyarrow sees it: %+v", keys[i], m)
		}
		for _, sc := range m.SortingColumns {
			if fmt.Sprint(sc) != sorting {
				t.Errorf("%s: sorting columns %v, want user_id then ts, ascending, nulls first", keys[i], sc)
			}
		}
		t.Logf("%s: %d rows, %d row groups, marker %s", keys[i], len(want), m.NumRowGroups, *m.Marker)
	}
}

// listenLines renders rows as the script's lines: "user_id|ts µs|
// track_uri|duration_ms|context".
func listenLines(ls []lakegen.Listen) []string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%d|%d|%s|%d|%s", l.UserID, l.TS.UnixMicro(), l.TrackURI, l.DurationMS, l.Context))
	}
	return out
}

// duckReads returns the rows DuckDB reads from the prepared file at path
// (its bytes b), in file order, as "user_id|ts µs|track_uri|duration_ms|
// context" lines. Of a blob file DuckDB reads the key and the binary
// column, whose values decode with the file's ariadne.blob entry
// (prepared.Blob) to the rows; every decoded row must carry its stored
// row's key.
func duckReads(t *testing.T, ctx context.Context, path string, b []byte) []string {
	t.Helper()
	db, err := duck.Open(ctx, duck.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	blob, ok, err := prepared.BlobOf(f)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		from := `read_parquet(` + duck.String(path) + `)`
		if _, nested, _ := prepared.CoGroupOf(f); nested {
			// Co-grouped lists, unnested side by side.
			from = `(SELECT user_id, unnest(ts) AS ts, unnest(track_uri) AS track_uri, unnest(duration_ms) AS duration_ms, unnest(context) AS context FROM ` + from + `)`
		}
		_, rs, err := db.QueryAll(ctx, `SELECT concat_ws('|', user_id, epoch_us(ts), track_uri, duration_ms, context) FROM `+from)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r[0].(string))
		}
		return out
	}
	_, rs, err := db.QueryAll(ctx, `SELECT user_id, `+duck.Ident(blob.Marker.Column)+` FROM read_parquet(`+duck.String(path)+`)`)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		key, v := r[0].(int64), r[1].([]byte)
		var dec []parquet.Row
		if blob.Blocks() {
			dec, err = blob.DecodeBlock(nil, v)
		} else {
			var one parquet.Row
			one, err = blob.Decode(nil, v)
			dec = []parquet.Row{one}
		}
		if err != nil {
			t.Fatalf("%s: a blob DuckDB read: %v", path, err)
		}
		for _, d := range dec {
			// The source's leaves: user_id, ts, track_uri, duration_ms, context.
			if d[0].Int64() != key {
				t.Fatalf("%s: row of key %d in the stored row of key %d", path, d[0].Int64(), key)
			}
			out = append(out, fmt.Sprintf("%d|%d|%s|%d|%s", d[0].Int64(), d[1].Int64(), d[2].ByteArray(), d[3].Int32(), d[4].ByteArray()))
		}
	}
	return out
}
