// Package framebench measures the prepared write-time techniques of
// prepared.FrameFile (a ZSTD frame per key inside normal pages, aligned
// frames, small row groups) against the same rows written normally with
// ZSTD and as prepared files of key-aligned pages: file size, bytes and
// requests of a warm light-key lookup through the row index, lookup p50/p99,
// and DuckDB's scan time. It runs only when FRAMEBENCH_DIR names a scratch
// folder: FRAMEBENCH_DIR=/tmp/fb go test -run TestFrameBench -v -timeout 60m ./bench/framebench/
// (FRAMEBENCH_PREP=1 writes the files and indexes only, for a niced first
// run outside the benchmark lock; the second run measures).
package framebench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// variant is one layout of the same rows.
type variant struct {
	name string
	skip bool
	// blob: the served columns are one blob column (prepared.Options.Blob)
	// that replaces them, so engines scan the key and the blob.
	blob bool
	// blocks: co-grouped blobs (prepared.BlobCodecZstdDict), one stored
	// row per key per file: engines count stored rows, not plays.
	blocks bool
	// nested: co-grouped as nested lists (prepared.Options.CoGroup): one
	// stored row per key per file, every column but the key a LIST; the
	// engines scan the same aggregates through UNNEST / list_flatten.
	nested bool
	// write writes the variant from the normal (sorted, ZSTD) files into dst.
	write func(ctx context.Context, src, dst store.Store, files []lakegen.File) error
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func TestFrameBench(t *testing.T) {
	dir := os.Getenv("FRAMEBENCH_DIR")
	if dir == "" {
		t.Skip("FRAMEBENCH_DIR not set")
	}
	ctx := context.Background()
	cfg := lakegen.Config{Seed: 1, TargetBytes: int64(envInt("FRAMEBENCH_MB", 100)) << 20, Days: 5, FilesPerDay: 4,
		Users: envInt("FRAMEBENCH_USERS", 200_000), Sorted: true, Prefix: "lake/", RowGroupRows: 256 << 10, PageBytes: 64 << 10}
	open := func(sub string) store.Store {
		st, err := store.Open(ctx, "file://"+filepath.Join(dir, sub))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	os.MkdirAll(filepath.Join(dir, "normal"), 0o755)
	normal := open("normal")
	var files []lakegen.File
	var err error
	if from := os.Getenv("FRAMEBENCH_FROM"); from != "" {
		// Realistic data instead of lakegen's: the first FRAMEBENCH_FILES
		// files (in path order) of an existing lake, copied.
		files, err = copyLake(from, filepath.Join(dir, "normal", "lake"), envInt("FRAMEBENCH_FILES", 4))
	} else {
		files, err = lakegen.Ensure(ctx, filepath.Join(dir, "normal"), cfg, io.Discard)
	}
	if err != nil {
		t.Fatal(err)
	}
	served := &prepared.BlobOptions{Column: "served", Fields: []string{"ts", "track_uri", "duration_ms", "context"}}
	kept := &prepared.BlobOptions{Column: "served", Fields: served.Fields, Keep: true}
	dict := &prepared.BlobOptions{Column: "served", Fields: served.Fields, Codec: prepared.BlobCodecZstdDict}
	framedBlob := func(page int, rg int64, fo prepared.FrameOptions, blob *prepared.BlobOptions) func(ctx context.Context, src, dst store.Store, files []lakegen.File) error {
		return func(ctx context.Context, src, dst store.Store, files []lakegen.File) error {
			for _, f := range files {
				rows, schema, err := readRows(ctx, src, f)
				if err != nil {
					return err
				}
				if _, _, err := prepared.WriteFramed(ctx, dst, f.Key, schema, rows, prepared.Options{Key: "user_id", Sort: []string{"ts"},
					PageBytes: page, RowGroupRows: rg, Overwrite: true, Blob: blob}, fo); err != nil {
					return err
				}
			}
			return nil
		}
	}
	framed := func(page int, rg int64, fo prepared.FrameOptions) func(ctx context.Context, src, dst store.Store, files []lakegen.File) error {
		return func(ctx context.Context, src, dst store.Store, files []lakegen.File) error {
			for _, f := range files {
				rows, schema, err := readRows(ctx, src, f)
				if err != nil {
					return err
				}
				if _, _, err := prepared.WriteFramed(ctx, dst, f.Key, schema, rows, prepared.Options{Key: "user_id", Sort: []string{"ts"},
					PageBytes: page, RowGroupRows: rg, Overwrite: true}, fo); err != nil {
					return err
				}
			}
			return nil
		}
	}
	// written writes each file with Write and the options o (the key,
	// sort and row group settings added).
	written := func(o prepared.Options) func(ctx context.Context, src, dst store.Store, files []lakegen.File) error {
		o.Key, o.Sort, o.RowGroupRows, o.Overwrite = "user_id", []string{"ts"}, 256<<10, true
		return func(ctx context.Context, src, dst store.Store, files []lakegen.File) error {
			for _, f := range files {
				rows, schema, err := readRows(ctx, src, f)
				if err != nil {
					return err
				}
				if _, err := prepared.Write(ctx, dst, f.Key, schema, rows, o); err != nil {
					return err
				}
			}
			return nil
		}
	}
	keyPagesBlob := func(page int, blob *prepared.BlobOptions) func(ctx context.Context, src, dst store.Store, files []lakegen.File) error {
		return written(prepared.Options{PageBytes: page, Blob: blob})
	}
	nested := func(page int) func(ctx context.Context, src, dst store.Store, files []lakegen.File) error {
		return written(prepared.Options{PageBytes: page, CoGroup: true})
	}
	keyPages := func(page int) func(ctx context.Context, src, dst store.Store, files []lakegen.File) error {
		return keyPagesBlob(page, nil)
	}
	variants := []variant{
		{name: "normal (parquet-go, ZSTD, 64 KiB pages)"},
		{name: "prepared, key-aligned 16 KiB pages, ZSTD", write: keyPages(16 << 10)},
		{name: "framed: a frame per key, 64 KiB pages", write: framed(64<<10, 256<<10, prepared.FrameOptions{})},
		{name: "framed: a frame per key, aligned to 4 KiB", write: framed(64<<10, 256<<10, prepared.FrameOptions{Align: 4096})},
		{name: "framed: frames ≥ 1 KiB of keys", write: framed(64<<10, 256<<10, prepared.FrameOptions{MinFrameBytes: 1 << 10})},
		{name: "framed: frames ≥ 4 KiB of keys", write: framed(64<<10, 256<<10, prepared.FrameOptions{MinFrameBytes: 4 << 10})},
		{name: "framed: frames ≥ 1 KiB, row groups of 4 Ki rows", write: framed(64<<10, 4<<10, prepared.FrameOptions{MinFrameBytes: 1 << 10})},
		{name: "framed adaptive: per key, a ZSTD frame or a raw block, whichever is smaller", write: framed(64<<10, 256<<10, prepared.FrameOptions{RawBlocks: true})},
		{name: "framed adaptive: frames ≥ 256 B of keys, ZSTD or raw", write: framed(64<<10, 256<<10, prepared.FrameOptions{MinFrameBytes: 256, RawBlocks: true})},
		{name: "prepared, key-aligned 64 KiB pages, ZSTD (sorted, unframed)", write: keyPages(64 << 10)},
		// Blob columns (prepared.Options.Blob): ts, track_uri, duration_ms
		// and context (and the key) as one column "served".
		{name: "blob: key-aligned 16 KiB pages, ZSTD", write: keyPagesBlob(16<<10, served), blob: true},
		{name: "blob: framed adaptive per key (raw blocks)", write: framedBlob(64<<10, 256<<10, prepared.FrameOptions{RawBlocks: true}, served), blob: true},
		{name: "blob: framed, frames ≥ 1 KiB of keys", write: framedBlob(64<<10, 256<<10, prepared.FrameOptions{MinFrameBytes: 1 << 10}, served), blob: true},
		{name: "blob: framed, frames ≥ 4 KiB of keys", write: framedBlob(64<<10, 256<<10, prepared.FrameOptions{MinFrameBytes: 4 << 10}, served), blob: true},
		{name: "blob kept beside the columns: framed, frames ≥ 4 KiB", write: framedBlob(64<<10, 256<<10, prepared.FrameOptions{MinFrameBytes: 4 << 10}, kept)},
		{name: "blob: key-aligned 64 KiB pages, ZSTD", write: keyPagesBlob(64<<10, served), blob: true},
		{name: "blob: framed, frames ≥ 16 KiB of keys", write: framedBlob(64<<10, 256<<10, prepared.FrameOptions{MinFrameBytes: 16 << 10}, served), blob: true},
		// Co-grouped (17): a key's rows column by column, one ZSTD frame
		// with the file's dictionary, the blob column UNCOMPRESSED.
		{name: "blob co-grouped: a ZSTD frame per key with the file's dictionary (zstd-dict)", write: framedBlob(64<<10, 256<<10, prepared.DefaultFrameOptions(), dict), blob: true, blocks: true},
		// Co-grouped as nested Parquet (18, 19): one stored row per key
		// per file, every column but the key a LIST, key-aligned 64 KiB
		// and 16 KiB pages.
		{name: "nested co-grouped: a row per key, every column a LIST (--co-group), key-aligned 64 KiB pages", write: nested(64 << 10), blocks: true, nested: true},
		{name: "nested co-grouped, key-aligned 16 KiB pages", write: nested(16 << 10), blocks: true, nested: true},
		// Interleaved column groups (20, 21): the served columns' values of
		// each key copied into a skippable frame after the key's frame in
		// the key column; the columns themselves framed ≥ 4 KiB (20) or a
		// frame per key (21).
		{name: "interleaved: ts, track_uri, duration_ms, context copied next to each key's frame; columns framed ≥ 4 KiB", write: framed(64<<10, 256<<10, prepared.FrameOptions{MinFrameBytes: 4 << 10, Interleave: served.Fields})},
		{name: "interleaved, columns framed per key", write: framed(64<<10, 256<<10, prepared.FrameOptions{Interleave: served.Fields})},
	}
	// FRAMEBENCH_VARIANTS (indexes, comma-separated) limits the run; the
	// normal files (0) are always measured.
	if only := os.Getenv("FRAMEBENCH_VARIANTS"); only != "" {
		keep := map[int]bool{0: true}
		for _, f := range strings.Split(only, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				t.Fatalf("FRAMEBENCH_VARIANTS: %v", err)
			}
			keep[n] = true
		}
		for i := range variants {
			if !keep[i] {
				variants[i].skip = true
			}
		}
	}
	// Light keys: users with 1–3 plays, in one file.
	counts := map[int64]int{}
	fileOf := map[int64]string{}
	multi := map[int64]bool{}
	for _, f := range files {
		b, err := store.ReadAll(ctx, normal, f.Key)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range pf.RowGroups() {
			pages := g.ColumnChunks()[0].Pages()
			buf := make([]parquet.Value, 4096)
			for {
				p, err := pages.ReadPage()
				if err != nil {
					break
				}
				vr := p.Values()
				for {
					n, err := vr.ReadValues(buf)
					for _, v := range buf[:n] {
						k := v.Int64()
						counts[k]++
						if fo, ok := fileOf[k]; ok && fo != f.Key {
							multi[k] = true
						}
						fileOf[k] = f.Key
					}
					if err != nil {
						break
					}
				}
			}
			pages.Close()
		}
	}
	var light []int64
	for k, n := range counts {
		if n <= 3 && !multi[k] {
			light = append(light, k)
		}
	}
	slices.Sort(light)
	nkeys := envInt("FRAMEBENCH_KEYS", 300)
	step := max(len(light)/nkeys, 1)
	var keys []int64
	for i := 0; i < len(light) && len(keys) < nkeys; i += step {
		keys = append(keys, light[i])
	}
	db, err := duck.Open(ctx, duck.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var uris []string
	for _, f := range files {
		uris = append(uris, f.Key)
	}
	var rows int64
	for _, f := range files {
		rows += f.Rows
	}
	fmt.Printf("data: %d files, %d rows, %d users with plays, %d light keys (1–3 plays, one file), %d looked up\n",
		len(files), rows, len(counts), len(light), len(keys))
	fmt.Println("| layout | size | vs normal | write s | exact ranges: bytes read | ranges | returned | local gap (64 KiB): bytes read | requests | p50 | p99 | remote gap (1 MiB): bytes read | requests | DuckDB scan | pyarrow scan |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	var normalSize int64
	var normalScan string // DuckDB's aggregates over the normal files
	normalRows := map[int64][]string{}
	for i, v := range variants {
		if v.skip {
			continue
		}
		st := normal
		var wsec float64
		if v.write != nil {
			// Written once: a second run (the timed one, under the
			// benchmark lock) reuses the files and their write time.
			sub := fmt.Sprintf("v%d", i)
			done := filepath.Join(dir, sub+".done")
			if b, err := os.ReadFile(done); err == nil {
				wsec, _ = strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
				st = open(sub)
			} else {
				os.RemoveAll(filepath.Join(dir, sub))
				os.MkdirAll(filepath.Join(dir, sub), 0o755)
				st = open(sub)
				t0 := time.Now()
				if err := v.write(ctx, normal, st, files); err != nil {
					t.Fatalf("%s: %v", v.name, err)
				}
				wsec = time.Since(t0).Seconds()
				os.WriteFile(done, []byte(fmt.Sprint(wsec)), 0o644)
			}
		}
		var size int64
		for _, u := range uris {
			a, err := st.Stat(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			size += a.Size
		}
		if i == 0 {
			normalSize = size
		}
		idxDone := filepath.Join(dir, fmt.Sprintf("idx%d.done", i))
		if _, err := os.Stat(idxDone); err != nil {
			os.RemoveAll(filepath.Join(dir, fmt.Sprintf("idx%d", i)))
		}
		idx := open(fmt.Sprintf("idx%d", i))
		res := rowindex.StoreResolver{Store: st}
		if _, err := os.Stat(idxDone); err != nil {
			if _, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: "u", Key: "user_id"}, res, uris); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(idxDone, nil, 0o644)
		}
		if os.Getenv("FRAMEBENCH_PREP") != "" {
			continue // files and indexes only
		}
		// Warm lookups, first with ranges coalesced only where adjacent
		// (exactly what the plan needs), then with the planner's gap
		// (timed).
		var read, ret, ranges, read2, reqs, read3, reqs3 int64
		var lat []time.Duration
		for pass, gap := range []int64{-1, 0, rowindex.DefaultCoalesceGap} {
			ri, err := rowindex.Open(ctx, idx, "u", rowindex.Options{Resolver: res, CoalesceGap: gap})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ri.Warm(ctx); err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				t0 := time.Now()
				r, err := ri.Lookup(ctx, rowindex.Query{Key: k})
				d := time.Since(t0)
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Rows) != counts[k] {
					t.Fatalf("%s: key %d: %d rows, %d in the data", v.name, k, len(r.Rows), counts[k])
				}
				if pass == 0 {
					// Every layout returns the normal files' rows (the
					// blob ones decoded back to the source's columns).
					var got []string
					for _, row := range r.Rows {
						got = append(got, fmt.Sprint(row.Values))
					}
					slices.Sort(got)
					if i == 0 {
						normalRows[k] = got
					} else if want, ok := normalRows[k]; ok && !slices.Equal(got, want) {
						t.Fatalf("%s: key %d: rows %v, the normal files' %v", v.name, k, got, want)
					}
				}
				if pass == 0 {
					read += r.Plan.Data.BytesRead
					ret += r.Plan.BytesReturned
					ranges += int64(r.Plan.ByteRanges)
				} else if pass == 1 {
					lat = append(lat, d)
					read2 += r.Plan.Data.BytesRead
					reqs += r.Plan.Data.Requests
				} else {
					read3 += r.Plan.Data.BytesRead
					reqs3 += r.Plan.Data.Requests
				}
			}
		}

		sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
		p := func(q float64) time.Duration { return lat[min(int(q*float64(len(lat))), len(lat)-1)] }
		// DuckDB: every column scanned, best of 3.
		glob := filepath.Join(dir, map[bool]string{true: "normal", false: fmt.Sprintf("v%d", i)}[i == 0], "lake", "**", "*.parquet")
		q := `SELECT count(*), sum(duration_ms), sum(length(track_uri)), sum(length(context)), count(DISTINCT user_id), max(ts) FROM read_parquet(` + duck.String(glob) + `)`
		if v.nested {
			// The same aggregates over the unnested lists.
			q = `SELECT count(*), sum(duration_ms), sum(length(track_uri)), sum(length(context)), count(DISTINCT user_id), max(ts) FROM (SELECT user_id, unnest(ts) AS ts, unnest(track_uri) AS track_uri, unnest(duration_ms) AS duration_ms, unnest(context) AS context FROM read_parquet(` + duck.String(glob) + `))`
		}
		if v.blob {
			// Engines see the key and one binary column: the scan reads
			// both (what they can compute from a blob they cannot decode).
			q = `SELECT count(*), sum(octet_length(served)), count(DISTINCT user_id) FROM read_parquet(` + duck.String(glob) + `)`
		}
		best := time.Duration(1 << 62)
		var got string
		for range 3 {
			t0 := time.Now()
			_, res, err := db.QueryAll(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(t0))
			got = fmt.Sprint(res[0])
		}
		stored := rows
		if i == 0 {
			normalScan = got
		}
		if v.nested {
			// Unnested: the normal files' rows, the same aggregates.
			if got != normalScan {
				t.Fatalf("%s: DuckDB's aggregates %s over the unnested lists, %s over the normal files", v.name, got, normalScan)
			}
		} else if v.blocks {
			// One stored row per key and file.
			if _, err := fmt.Sscan(strings.TrimPrefix(got, "["), &stored); err != nil || stored >= rows {
				t.Fatalf("%s: DuckDB counts %s, %d rows written", v.name, got, rows)
			}
		} else if !strings.HasPrefix(got, "["+strconv.FormatInt(rows, 10)) {
			t.Fatalf("%s: DuckDB counts %s, %d rows written", v.name, got, rows)
		}
		pyMS := pyarrowScan(t, glob, stored, v)
		n := int64(len(keys))
		fmt.Printf("| %s | %.1f MB | %.3f | %.0f | %d B | %.2f | %d B | %d B | %.2f | %s | %s | %d B | %.2f | %d ms | %s |\n", v.name, float64(size)/1e6, float64(size)/float64(normalSize), wsec,
			read/n, float64(ranges)/float64(n), ret/n, read2/n, float64(reqs)/float64(n), p(0.5).Round(time.Microsecond), p(0.99).Round(time.Microsecond),
			read3/n, float64(reqs3)/float64(n), best.Milliseconds(), pyMS)
	}
}

// readRows reads one file's rows.
func readRows(ctx context.Context, st store.Store, f lakegen.File) (parquet.RowReader, *parquet.Schema, error) {
	b, err := store.ReadAll(ctx, st, f.Key)
	if err != nil {
		return nil, nil, err
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, nil, err
	}
	buf := parquet.NewBuffer(pf.Schema())
	for _, g := range pf.RowGroups() {
		if _, err := parquet.CopyRows(buf, g.Rows()); err != nil {
			return nil, nil, err
		}
	}
	return buf.Rows(), pf.Schema(), nil
}

// pyarrowScanScript reads every column of the files (pyarrow.dataset, its
// default threads), computes the DuckDB query's aggregates, and prints the
// best of 3 in milliseconds and the row count.
const pyarrowScanScript = `
import sys, time, glob
import pyarrow.dataset as ds, pyarrow.compute as pc
files = sorted(glob.glob(sys.argv[1], recursive=True))
best = None
for _ in range(3):
    t0 = time.perf_counter()
    t = ds.dataset(files, format="parquet").to_table()
    n = t.num_rows
    pc.sum(t["duration_ms"]); pc.sum(pc.binary_length(t["track_uri"])); pc.sum(pc.binary_length(t["context"]))
    pc.count_distinct(t["user_id"]); pc.max(t["ts"])
    d = time.perf_counter() - t0
    best = d if best is None else min(best, d)
print(int(best * 1000), n)
`

// pyarrowScan times pyarrow's scan of the files matching glob with the
// interop harness's Python (FRAMEBENCH_PYTHON, default
// ~/.cache/ariadne-interop/venv/bin/python); "–" when it is not installed.
func pyarrowScan(t *testing.T, glob string, rows int64, v variant) string {
	py := os.Getenv("FRAMEBENCH_PYTHON")
	if py == "" {
		home, _ := os.UserHomeDir()
		py = filepath.Join(home, ".cache", "ariadne-interop", "venv", "bin", "python")
	}
	if _, err := os.Stat(py); err != nil {
		return "–"
	}
	script := pyarrowScanScript
	if v.nested {
		// The lists flattened (row order kept), the key counted as stored.
		script = strings.Replace(script, `    n = t.num_rows
`, `    flat = {c: pc.list_flatten(t[c]) for c in ("ts", "track_uri", "duration_ms", "context")}
    n = len(flat["ts"])
`, 1)
		script = strings.Replace(script, `pc.sum(t["duration_ms"]); pc.sum(pc.binary_length(t["track_uri"])); pc.sum(pc.binary_length(t["context"]))`,
			`pc.sum(flat["duration_ms"]); pc.sum(pc.binary_length(flat["track_uri"])); pc.sum(pc.binary_length(flat["context"]))`, 1)
		script = strings.Replace(script, `pc.max(t["ts"])`, `pc.max(flat["ts"])`, 1)
	}
	if v.blob {
		script = strings.Replace(script, `pc.sum(t["duration_ms"]); pc.sum(pc.binary_length(t["track_uri"])); pc.sum(pc.binary_length(t["context"]))`,
			`pc.sum(pc.binary_length(t["served"]))`, 1)
		script = strings.Replace(script, `; pc.max(t["ts"])`, ``, 1)
	}
	out, err := exec.Command(py, "-c", script, glob).CombinedOutput()
	if err != nil {
		t.Fatalf("pyarrow scan: %v: %s", err, out)
	}
	var ms, n int64
	if _, err := fmt.Sscan(string(out), &ms, &n); err != nil || n != rows {
		t.Fatalf("pyarrow scan: %q (want %d rows)", out, rows)
	}
	return fmt.Sprintf("%d ms", ms)
}

// copyLake copies the first n Parquet files (in path order) of the lake at
// from into to, keeping their paths, once, and returns them with their row
// counts, keyed as lakegen's files are ("lake/<path>").
func copyLake(from, to string, n int) ([]lakegen.File, error) {
	var paths []string
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	paths = paths[:min(n, len(paths))]
	var files []lakegen.File
	for _, p := range paths {
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(dst); err != nil {
			os.MkdirAll(filepath.Dir(dst), 0o755)
			if err := os.WriteFile(dst, b, 0o644); err != nil {
				return nil, err
			}
		}
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return nil, err
		}
		files = append(files, lakegen.File{Key: "lake/" + filepath.ToSlash(rel), Rows: pf.NumRows(), Size: int64(len(b))})
	}
	return files, nil
}
