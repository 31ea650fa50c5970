package rowindexbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// smallLake is a lake of a few MB for tests and the quick benchmark.
func smallLake(mb int64) lakegen.Config {
	c := lakegen.DefaultConfig()
	c.TargetBytes = mb << 20
	c.Days, c.FilesPerDay, c.Users = 4, 2, 20_000
	c.Sorted = true
	c.RowGroupRows = 32 << 10
	return c
}

// TestRunSmoke runs the whole benchmark on a tiny lake: every system must
// return the scanned row count for every key (Run checks), every populated
// class is reported with both systems' percentiles, the warm row index
// meets its request targets, and the JSON report has snake_case keys with
// durations in milliseconds.
func TestRunSmoke(t *testing.T) {
	rep, err := Run(context.Background(), Config{
		Dir: t.TempDir(), Layout: LayoutSorted, Lake: smallLake(2), Overview: true, Lookups: 8, LatencyLookups: 4,
		Latencies: []time.Duration{time.Millisecond}, Classes: ClassConfig{KeysPerClass: 4, TopRepeats: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	rep.Format(&sb)
	t.Log("\n" + sb.String())
	seen := map[string]bool{}
	for _, c := range rep.Classes {
		seen[c.Sampling+"/"+c.Class+"/"+strconv.Itoa(c.Limit)] = true
		if c.Keys == 0 || c.RowIndex.P50MS <= 0 || c.DuckDB.P50MS <= 0 || c.RatioP50 <= 0 || c.RowIndex.P99MS < c.RowIndex.P50MS {
			t.Errorf("class %+v: empty or inconsistent", c)
		}
		if c.Class == "absent" && (c.RowsPerLookup != 0 || c.BytesPerLookup != 0) {
			t.Errorf("absent keys: %.1f rows, %.0f bytes per lookup", c.RowsPerLookup, c.BytesPerLookup)
		}
		if c.Class == ClassTop && c.Limit == 100 && c.RowsPerLookup != float64(min(100, rep.Lake.TopKeyRows)) {
			t.Errorf("top key with limit 100: %.1f rows per lookup", c.RowsPerLookup)
		}
	}
	for _, want := range []string{"fixed/absent/0", "rows/1-100/0", "distinct/1-100/0", "rows/all/0", "distinct/all/0", "fixed/top key/100", "fixed/top key/0"} {
		if !seen[want] {
			t.Errorf("class %s missing: %v", want, seen)
		}
	}
	if rep.Lake.TopKeyRows == 0 || rep.Lake.DistinctKeys == 0 || !rep.Lake.PageIndex || rep.Lake.Compression != "ZSTD" {
		t.Errorf("lake facts: %+v", rep.Lake)
	}
	for _, r := range rep.Overview {
		if r.System == "row index (warm)" && r.RowsPerLookup > 0 && *r.RequestsPerLookup > float64(rep.Lake.Files) {
			t.Errorf("%s on %s: %.1f requests per lookup for %d files", r.System, r.Storage, *r.RequestsPerLookup, rep.Lake.Files)
		}
	}
	if rep.Covered == nil || *rep.Covered.RequestsPerLookup != 0 {
		t.Errorf("covered lookups: %+v", rep.Covered)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	cls := generic["classes"].([]any)[0].(map[string]any)
	if _, ok := cls["row_index"].(map[string]any)["p50_ms"].(float64); !ok {
		t.Errorf("classes[0].row_index.p50_ms is not a number: %v", cls)
	}
	if _, ok := cls["ratio_p50"].(float64); !ok {
		t.Errorf("classes[0].ratio_p50 is not a number: %v", cls)
	}
}

// TestRunFramed runs the framed layout on a tiny lake: the lake is the
// source lake prepared with frames (every file carries the frame table and
// a marker saying so), lookups read frames, DuckDB is timed on the framed
// files and, for reference, on the source files for every class (Run checks
// both return the scanned row counts), and a second run reuses the
// prepared files.
func TestRunFramed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := Config{Dir: dir, Layout: LayoutFramed, Lake: smallLake(2), Classes: ClassConfig{KeysPerClass: 2, TopRepeats: 1}}
	rep, text := runFormatted(t, cfg)
	if !strings.Contains(text, "DuckDB on the source") || !strings.Contains(rep.Description, "--frames --frame-raw-blocks") {
		t.Errorf("report does not say what the framed layout is or lacks the reference table")
	}
	framesRead := false
	for _, c := range rep.Classes {
		if c.DuckDBReference == nil || c.DuckDBReference.P50MS <= 0 {
			t.Errorf("class %s/%s: no DuckDB reference on the source files", c.Sampling, c.Class)
		}
		framesRead = framesRead || c.RowsPerLookup > 0 && c.BytesPerLookup > 0
	}
	if !framesRead {
		t.Errorf("no class read data")
	}
	uris, files := lakeFiles(t, dir)
	for i, u := range uris {
		f := files[i]
		m, ok, err := prepared.MarkerOf(f)
		if err != nil || !ok || m.Frames == nil {
			t.Fatalf("%s: marker %+v, %v, %v: not framed", u, m, ok, err)
		}
		if _, ok := f.Lookup(prepared.FramesKey); !ok {
			t.Fatalf("%s: no frame table", u)
		}
	}
	st, err := os.Stat(filepath.Join(dir, "lake", uris[0]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	again, err := os.Stat(filepath.Join(dir, "lake", uris[0]))
	if err != nil || !again.ModTime().Equal(st.ModTime()) {
		t.Errorf("second run rewrote the framed files (%v)", err)
	}
	if rep.Lake.SourceBytes <= 0 {
		t.Errorf("source bytes %d", rep.Lake.SourceBytes)
	}

	// Another frame setting prepares the lake again from the kept source;
	// Only measures the named classes alone.
	srcFiles, err := parquetFiles(filepath.Join(dir, "source"))
	if err != nil || len(srcFiles) == 0 {
		t.Fatalf("source files: %v, %v", srcFiles, err)
	}
	srcSt, err := os.Stat(filepath.Join(dir, "source", srcFiles[0]))
	if err != nil {
		t.Fatal(err)
	}
	perKey := 0
	cfg.FrameMinBytes = &perKey
	cfg.Classes.Only = []string{ClassTop}
	rep0, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep0.Description, "--frame-min-bytes 0") || !strings.Contains(rep0.Description, "a ZSTD frame per key") {
		t.Errorf("description %q does not name the setting", rep0.Description)
	}
	if rep0.Lake.DataBytes == rep.Lake.DataBytes || rep0.Lake.SourceBytes != rep.Lake.SourceBytes {
		t.Errorf("frame per key: %d bytes from a %d-byte source; default: %d from %d", rep0.Lake.DataBytes, rep0.Lake.SourceBytes,
			rep.Lake.DataBytes, rep.Lake.SourceBytes)
	}
	if len(rep0.Classes) != 2 {
		t.Errorf("Only top key: %d classes, want the top key with and without the limit", len(rep0.Classes))
	}
	for _, c := range rep0.Classes {
		if c.Class != ClassTop {
			t.Errorf("Only top key measured %s", c.Class)
		}
	}
	_, files = lakeFiles(t, dir)
	for i, f := range files {
		u := uris[i]
		if m, ok, err := prepared.MarkerOf(f); err != nil || !ok || m.Frames == nil || m.Frames.MinFrameBytes != 0 {
			t.Fatalf("%s: marker %+v, %v, %v: not prepared again with a frame per key", u, m, ok, err)
		}
	}
	if again, err := os.Stat(filepath.Join(dir, "source", srcFiles[0])); err != nil || !again.ModTime().Equal(srcSt.ModTime()) {
		t.Errorf("a frame setting regenerated the source lake (%v)", err)
	}
	if err := (ClassConfig{Only: []string{"top"}}).Check(); err == nil {
		t.Errorf("Check took an unknown class")
	}
}

// TestSampling checks the two samplings on a known histogram: by rows a key
// is drawn in proportion to its rows, over distinct keys uniformly; class
// spans hold exactly the keys of their row range.
func TestSampling(t *testing.T) {
	h := &histogram{kind: keyInt, exact: map[any]int64{}}
	// One key of 900 rows, 100 keys of 1 row.
	h.keys, h.counts = []any{int64(0)}, []int64{900}
	for i := range 100 {
		h.keys, h.counts = append(h.keys, int64(i+1)), append(h.counts, 1)
	}
	for i, k := range h.keys {
		h.exact[k] = h.counts[i]
	}
	lo, hi := h.span(Classes[1]) // 1-100
	if lo != 1 || hi != 101 {
		t.Fatalf("span of 1-100 = [%d, %d), want [1, 101)", lo, hi)
	}
	if lo, hi := h.span(Classes[2]); lo != 0 || hi != 1 {
		t.Fatalf("span of 101-1k = [%d, %d), want [0, 1)", lo, hi)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	hot := 0
	for _, k := range h.sample(rng, 0, len(h.keys), 2000, SamplingRows) {
		if k == int64(0) {
			hot++
		}
	}
	if hot < 1700 || hot > 1900 { // expected 1800 (90 %)
		t.Errorf("by rows the 900-row key was drawn %d of 2000 times, want ≈1800", hot)
	}
	ks := h.sample(rng, 0, len(h.keys), 50, SamplingDistinct)
	seen := map[any]bool{}
	for _, k := range ks {
		if seen[k] {
			t.Fatalf("distinct sampling drew %v twice", k)
		}
		seen[k] = true
	}
	for _, k := range h.absent(rng, 20) {
		if _, ok := h.exact[k]; ok {
			t.Fatalf("absent key %v is present", k)
		}
	}
}

// TestRunDirStringKey runs --dir on existing files (written by arrow-go
// with its default properties, and with pyarrow's) on a string key,
// track_uri.
func TestRunDirStringKey(t *testing.T) {
	for layout, compression := range map[string]string{LayoutArrow: "UNCOMPRESSED", LayoutPyArrow: "SNAPPY"} {
		t.Run(layout, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			st, _ := store.Open(ctx, "file://"+dir)
			c, err := LakeConfig(layout, 1)
			if err != nil {
				t.Fatal(err)
			}
			c.Days, c.FilesPerDay, c.Tracks = 2, 2, 3000
			if _, err := lakegen.Generate(ctx, st, c); err != nil {
				t.Fatal(err)
			}
			// Files Spark would skip must be skipped.
			os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755)
			os.WriteFile(filepath.Join(dir, "_delta_log", "x.parquet"), []byte("not parquet"), 0o644)
			rep, err := RunDir(ctx, DirConfig{Path: dir, Key: "track_uri", Classes: ClassConfig{KeysPerClass: 3, TopRepeats: 2}})
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			rep.Format(&sb)
			t.Log("\n" + sb.String())
			if rep.Lake.Files != 4 || rep.Lake.PageIndex || rep.Lake.RowGroups != 4 || rep.Lake.Compression != compression {
				t.Errorf("lake facts of the %s files: %+v, want 4 files of one row group, %s, no page index", layout, rep.Lake, compression)
			}
			if len(rep.Classes) < 4 {
				t.Errorf("%d classes measured", len(rep.Classes))
			}
			if x := rep.Index; x.Groups == 0 || x.ResidentGroups != x.Groups || x.ResidentBytes <= 0 || x.CacheBytes < x.ResidentBytes || x.WarmMS <= 0 {
				t.Errorf("warm facts %+v: want every group of a small index resident", x)
			}
			if _, err := RunDir(ctx, DirConfig{Path: dir, Key: "ts"}); err == nil || !strings.Contains(err.Error(), "temporal") {
				t.Errorf("a timestamp key: %v, want a clear invalid-argument error", err)
			}
		})
	}
}

// BenchmarkLookup compares, on one lake, a warm row index lookup with the
// standard reader. ARIADNE_BENCH_MB sets the lake size (default 32 MB).
//
//	go test ./bench/rowindexbench -run '^$' -bench Lookup -benchtime 200x
func BenchmarkLookup(b *testing.B) {
	ctx := context.Background()
	mb := int64(32)
	if s := os.Getenv("ARIADNE_BENCH_MB"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		mb = n
	}
	dir := b.TempDir()
	lake := smallLake(mb)
	data, _ := store.Open(ctx, "file://"+dir)
	files, err := lakegen.Generate(ctx, data, lake)
	if err != nil {
		b.Fatal(err)
	}
	idx, _ := store.Open(ctx, "mem://")
	sr := &standardReader{st: data, keyCol: keyColumn}
	var uris []string
	for _, f := range files {
		uris = append(uris, f.Key)
		sr.files, sr.sizes = append(sr.files, f.Key), append(sr.sizes, f.Size)
	}
	if _, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: "u", Key: keyColumn, Kind: rowindex.KindSorted}, rowindex.StoreResolver{Store: data}, uris); err != nil {
		b.Fatal(err)
	}
	ri, err := rowindex.Open(ctx, idx, "u", rowindex.Options{Resolver: rowindex.StoreResolver{Store: data}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ri.Warm(ctx); err != nil {
		b.Fatal(err)
	}
	keys := overviewKeys(lake, 1000)
	b.Run("rowindex-warm", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := ri.Lookup(ctx, rowindex.Query{Key: keys[i%len(keys)]}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("standard-reader", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := sr.lookup(ctx, keys[i%len(keys)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// runFormatted runs cfg, logs the report's tables and returns them.
func runFormatted(t *testing.T, cfg Config) (*Report, string) {
	t.Helper()
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	rep.Format(&sb)
	t.Log("\n" + sb.String())
	return rep, sb.String()
}

// lakeFiles opens every Parquet file of dir/lake, at least one.
func lakeFiles(t *testing.T, dir string) ([]string, []*parquet.File) {
	t.Helper()
	uris, err := parquetFiles(filepath.Join(dir, "lake"))
	if err != nil || len(uris) == 0 {
		t.Fatalf("prepared files: %v, %v", uris, err)
	}
	var files []*parquet.File
	for _, u := range uris {
		b, err := os.ReadFile(filepath.Join(dir, "lake", u))
		if err != nil {
			t.Fatal(err)
		}
		f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return uris, files
}

// TestRunCoGrouped runs the co-grouped layout on a tiny lake: the lake is
// the source prepared into co-grouped blobs with a dictionary (every file's
// marker says so, and it stores fewer rows than the source: a row per key
// block), the keys are drawn and checked by the source's rows (Run fails if
// the row index returns another count, or DuckDB on the prepared files
// another number of stored rows), a light key reads one range per file, and
// DuckDB is timed on the source too.
func TestRunCoGrouped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := Config{Dir: dir, Layout: LayoutCoGrouped, Lake: smallLake(2),
		Classes: ClassConfig{KeysPerClass: 3, TopRepeats: 1, Only: []string{"absent", "1-100", "101-1k", ClassTop}}}
	rep, text := runFormatted(t, cfg)
	if !strings.Contains(rep.Description, "--blob-codec zstd-dict") || !strings.Contains(text, "DuckDB on the source") {
		t.Errorf("report does not say what the co-grouped layout is or lacks the reference table")
	}
	src, err := lakegen.Ensure(ctx, filepath.Join(dir, "source"), cfg.Lake, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var srcRows int64
	for _, f := range src {
		srcRows += f.Rows
	}
	if rep.Lake.Rows != srcRows || rep.Lake.StoredRows <= 0 || rep.Lake.StoredRows >= srcRows {
		t.Errorf("lake rows %d (source %d), stored rows %d: want the source's rows and fewer stored", rep.Lake.Rows, srcRows, rep.Lake.StoredRows)
	}
	light := false
	for _, c := range rep.Classes {
		if c.DuckDBReference == nil || c.DuckDBReference.P50MS <= 0 || c.DuckDB.P50MS <= 0 {
			t.Errorf("class %s/%s: DuckDB not timed on both the prepared and the source files", c.Sampling, c.Class)
		}
		if c.Class == "1-100" {
			light = c.RowsPerLookup > 0 && c.BytesPerLookup > 0
			if c.RequestsPerLookup > float64(rep.Lake.Files) {
				t.Errorf("light key: %.1f requests per lookup over %d files", c.RequestsPerLookup, rep.Lake.Files)
			}
		}
	}
	if !light {
		t.Errorf("no light key read data")
	}
	uris, files := lakeFiles(t, dir)
	for i, f := range files {
		u := uris[i]
		if bl, ok, err := prepared.BlobOf(f); err != nil || !ok || bl.Marker.Codec != prepared.BlobCodecZstdDict || len(bl.Marker.Dict) == 0 {
			t.Fatalf("%s: blob %v, %v: not co-grouped with a dictionary", u, ok, err)
		}
	}
	if _, err := Run(ctx, Config{Dir: t.TempDir(), Layout: LayoutCoGrouped, Lake: smallLake(1), Overview: true}); !errors.Is(err, aerr.ErrInvalidArgument) {
		t.Errorf("overview on co-grouped files: %v, want ErrInvalidArgument", err)
	}
}
