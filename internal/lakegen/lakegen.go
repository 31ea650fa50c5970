// Package lakegen generates the reproducible listening-history data lake that
// the row index's tests and benchmark run on: a seeded stream of plays
// (user_id with Zipf-skewed activity, ts, track_uri, duration_ms, a JSON
// context blob) written as Parquet with parquet-go into daily partitions
// (date=YYYY-MM-DD/part-NNNNN.parquet) of any store, in one of three layouts
// of the same rows: arrival (time) order, bucketed and sorted by user
// (Spark's bucketBy/sortBy layout), or that bucketed layout written as
// prepared Parquet (package prepared: key-aligned pages). Any layout can
// instead be written by arrow-go's pqarrow writer with its default
// properties (Config.Writer), as other writers produce files.
package lakegen

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/store"
)

// Version changes whenever the same Config would generate other bytes, so
// that callers caching a generated lake know to regenerate it.
//
// Version 3: the sorted layout is bucketed by user (one file per bucket per
// day) instead of sorting each time-slice file.
const Version = 3

// Listen is one play.
type Listen struct {
	UserID     int64     `parquet:"user_id"`
	TS         time.Time `parquet:"ts,timestamp(microsecond)"`
	TrackURI   string    `parquet:"track_uri"`
	DurationMS int32     `parquet:"duration_ms"`
	Context    string    `parquet:"context"`
}

// bytesPerRow is the measured compressed size of one row (ZSTD, sorted:
// 706 MB for 17.9M rows): the JSON context (~150 bytes raw, ~30 compressed)
// dominates, then the track URI (plain, as writers fall back from a
// dictionary at this cardinality), ts, duration and user_id. TargetBytes /
// bytesPerRow gives the row count.
const bytesPerRow = 40

// Config describes a lake. Zero fields take the defaults of DefaultConfig.
type Config struct {
	Seed        uint64
	TargetBytes int64   // approximate total size (default 1 GB)
	Days        int     // daily partitions (default 30)
	FilesPerDay int     // files per partition (default 4)
	Users       int     // distinct users (default 1,000,000)
	ZipfS       float64 // Zipf exponent of user activity (default 1.1)
	// ZipfV flattens the head of the Zipf law: P(rank k) ∝ (ZipfV+k)^-ZipfS
	// (default 100). With 1M users and 27M plays (1 GB) that gives the most
	// active user ≈45,000 plays, rank 10,000 ≈280, the median user ≈4, and
	// ≈10% of users no play at all.
	ZipfV  float64
	Tracks int       // distinct tracks (default 200,000)
	Start  time.Time // first day (default 2024-06-01 UTC)
	// Sorted writes the bucketed, sorted layout of Spark's
	// bucketBy(FilesPerDay, user_id).sortBy(user_id, ts): within each day,
	// a play goes to file BucketOf(user_id, FilesPerDay), and each file is
	// sorted by (user_id, ts), so a user's plays of one day are one run in
	// one file. Otherwise (the default) file p of a day holds the p-th time
	// slice of the day in ts order, as a pipeline appends arrival batches,
	// and a user's plays are scattered over all files of the day.
	//
	// Both layouts hold exactly the same rows; only their placement differs.
	Sorted bool
	// Prepared writes the third layout: the rows, files and order of the
	// Sorted layout (whatever Sorted says), written by the prepared writer
	// (prepared.Write: key user_id, sort ts, key-aligned pages of
	// PreparedPageBytes, Buckets FilesPerDay recorded in the marker).
	// RowGroupRows applies; PageBytes does not.
	Prepared bool
	// PreparedPageBytes is the prepared layout's page target in
	// uncompressed value bytes (default DefaultPreparedPageBytes).
	PreparedPageBytes int
	// RowGroupRows caps row groups (default 256 Ki rows ≈ 15 MB).
	RowGroupRows int64
	// PageBytes is the target page size (default 64 KiB).
	PageBytes int
	// Prefix is prepended to every key ("lake/" gives lake/date=.../...).
	Prefix string
	// Writer names the Parquet writer: "" (parquet-go, with the page,
	// row-group, ZSTD and bloom-filter settings above), WriterArrow or
	// WriterPyArrow.
	// Prepared wins over Writer.
	Writer string
}

// WriterArrow writes files with arrow-go's pqarrow writer and its default
// properties (nil *parquet.WriterProperties, pqarrow.DefaultWriterProps):
// every file one row group (the default cap is 64 Mi rows), dictionary
// encoding with PLAIN fallback past a 1 MiB dictionary, data pages of
// 1 MiB, no compression, chunk statistics but no page index and no bloom
// filter. RowGroupRows and PageBytes do not apply. It is what a reader meets
// in files that other tools wrote with their defaults.
const WriterArrow = "arrow"

// WriterPyArrow writes files as WriterArrow does, with the properties
// pyarrow.parquet.write_table uses by default instead of arrow-go's: the
// same but SNAPPY compression (arrow-go's writer and pyarrow's are ports
// of one C++ writer). Files written by pyarrow itself (pyarrow 26 on the
// same rows) were read back the same way: one row group per file, SNAPPY,
// a dictionary page per column chunk (PLAIN past 1 MiB of dictionary),
// 1 MiB data pages, no page index.
const WriterPyArrow = "pyarrow"

// DefaultPreparedPageBytes is the prepared layout's page target: 16 KiB of
// uncompressed values. A row is ≈190 bytes uncompressed (measured column
// sizes of a file: user_id 8, ts 8, track_uri 37, duration_ms 4, context
// ≈130), so a 16 KiB page holds
// ≈120 rows of the context column and ≈2,000 of user_id or ts. The median
// user has ≈4 plays a month, ≈1 in a daily file, so a lookup decodes one
// page per column per file holding the key: ≤ 5 × 16 KiB = 80 KiB, against
// ≈5 × 56 KiB (the plain layout's pages average 56 KiB of the 64 KiB
// buffer) plus a second page wherever the key straddles a boundary.
// Smaller pages compress worse (ZSTD pays its entropy tables per page):
// measured on the 1 GB lake against the plain bucketed layout, prepared
// files are 0.975× its size at 64 KiB and 0.997× at 32 KiB (they drop the
// page-header statistics the plain files carry), 1.045× at 16 KiB, 1.16×
// at 8 KiB and 4.4× with one page per key (target 0). 16 KiB halves what
// a lookup decodes against 32 KiB for 5% more bytes; 8 KiB would halve it
// again for 11% more.
const DefaultPreparedPageBytes = 16 << 10

// DefaultConfig is the benchmark lake: about 1 GB in 30 days × 4 files.
func DefaultConfig() Config {
	return Config{
		Seed: 1, TargetBytes: 1 << 30, Days: 30, FilesPerDay: 4, Users: 1_000_000, ZipfS: 1.1, ZipfV: 100,
		Tracks: 200_000, Start: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC),
		RowGroupRows: 256 << 10, PageBytes: 64 << 10,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	c.Seed = cmp.Or(c.Seed, d.Seed)
	c.TargetBytes = cmp.Or(c.TargetBytes, d.TargetBytes)
	c.Days = cmp.Or(c.Days, d.Days)
	c.FilesPerDay = cmp.Or(c.FilesPerDay, d.FilesPerDay)
	c.Users = cmp.Or(c.Users, d.Users)
	c.ZipfS = cmp.Or(c.ZipfS, d.ZipfS)
	c.ZipfV = cmp.Or(c.ZipfV, d.ZipfV)
	c.Tracks = cmp.Or(c.Tracks, d.Tracks)
	if c.Start.IsZero() {
		c.Start = d.Start
	}
	c.RowGroupRows = cmp.Or(c.RowGroupRows, d.RowGroupRows)
	c.PageBytes = cmp.Or(c.PageBytes, d.PageBytes)
	c.PreparedPageBytes = cmp.Or(c.PreparedPageBytes, DefaultPreparedPageBytes)
	return c
}

// File is one generated file.
type File struct {
	Key  string
	Rows int64
	Size int64
}

// UserID returns the id of the user of activity rank r (0 = most active):
// ranks are spread over the id space so hot users are not the small ids.
func UserID(r uint64) int64 { return int64(r*2654435761%4_294_967_291) + 1 }

// Generate writes the lake into st and returns its files in key order.
// The same Config always produces the same bytes.
func Generate(ctx context.Context, st store.Store, cfg Config) ([]File, error) {
	cfg = cfg.withDefaults()
	nfiles := cfg.Days * cfg.FilesPerDay
	rowsPerFile := max(1, cfg.TargetBytes/bytesPerRow/int64(nfiles))
	var out []File
	for day := range cfg.Days {
		date := cfg.Start.AddDate(0, 0, day)
		// The day's arrival batches: batch p is the p-th slice of the day.
		// Batches are generated when written (each has its own seed), so
		// an arrival-order lake holds only the files being written (a 10 GB
		// lake's day would take several GB); the bucketed layouts need the
		// whole day. A day's files are written generateWorkers at a time.
		batches := make([][]Listen, cfg.FilesPerDay)
		gen := func(part int) []Listen {
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(day*cfg.FilesPerDay+part)))
			return genRows(rng, cfg, date, part, rowsPerFile)
		}
		if cfg.Sorted || cfg.Prepared {
			for part := range batches {
				batches[part] = gen(part)
			}
			batches = bucketAndSort(batches)
		}
		files := make([]File, len(batches))
		errs := make([]error, len(batches))
		sem := make(chan struct{}, generateWorkers)
		var wg sync.WaitGroup
		for part := range batches {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				rows := batches[part]
				batches[part] = nil
				if rows == nil {
					rows = gen(part)
				}
				key := fmt.Sprintf("%sdate=%s/part-%05d.parquet", cfg.Prefix, date.Format("2006-01-02"), part)
				var size int64
				var err error
				switch {
				case cfg.Prepared:
					size, err = writePrepared(ctx, st, key, rows, cfg, part)
				case cfg.Writer == WriterArrow || cfg.Writer == WriterPyArrow:
					size, err = writeArrow(ctx, st, key, rows, cfg.Writer)
				case cfg.Writer != "":
					err = fmt.Errorf("lakegen: unknown writer %q", cfg.Writer)
				default:
					size, err = writeFile(ctx, st, key, rows, cfg)
				}
				files[part], errs[part] = File{Key: key, Rows: int64(len(rows)), Size: size}, err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	return out, nil
}

// generateWorkers is how many files Generate writes at once.
const generateWorkers = 3

// bucketAndSort redistributes a day's arrival batches into len(batches)
// buckets by BucketOf(user_id) and sorts each bucket by (user_id, ts).
func bucketAndSort(batches [][]Listen) [][]Listen {
	n := len(batches)
	out := make([][]Listen, n)
	for _, b := range batches {
		for _, r := range b {
			k := BucketOf(r.UserID, n)
			out[k] = append(out[k], r)
		}
	}
	for _, rows := range out {
		slices.SortStableFunc(rows, func(a, b Listen) int {
			return cmp.Or(cmp.Compare(a.UserID, b.UserID), a.TS.Compare(b.TS))
		})
	}
	return out
}

var contexts = []string{"playlist", "album", "artist", "search", "radio", "daily-mix", "liked-songs"}
var devices = []string{"ios", "android", "web", "desktop", "speaker", "car"}

func genRows(rng *rand.Rand, cfg Config, date time.Time, part int, n int64) []Listen {
	zipf := rand.NewZipf(rng, cfg.ZipfS, cfg.ZipfV, uint64(cfg.Users-1))
	// Each file holds one slice of the day (the pipeline's hourly batches).
	span := 24 * time.Hour / time.Duration(cfg.FilesPerDay)
	base := date.Add(time.Duration(part) * span)
	rows := make([]Listen, n)
	for i := range rows {
		off := time.Duration(int64(i) * int64(span) / n)
		track := rng.IntN(cfg.Tracks)
		ctxKind := contexts[rng.IntN(len(contexts))]
		rows[i] = Listen{
			UserID:     UserID(zipf.Uint64()),
			TS:         base.Add(off).Truncate(time.Millisecond),
			TrackURI:   fmt.Sprintf("spotify:track:%022d", track),
			DurationMS: int32(30_000 + rng.IntN(300_000)),
			Context: fmt.Sprintf(`{"type":%q,"uri":"spotify:%s:%08x","device":%q,"shuffle":%t,"offline":%t,"session":"%016x"}`,
				ctxKind, ctxKind, rng.Uint32(), devices[rng.IntN(len(devices))], rng.IntN(2) == 0, rng.IntN(10) == 0, rng.Uint64()),
		}
	}
	return rows
}

func writeFile(ctx context.Context, st store.Store, key string, rows []Listen, cfg Config) (int64, error) {
	w, err := st.NewWriter(ctx, key, nil)
	if err != nil {
		return 0, err
	}
	cw := &store.CountingWriter{W: w}
	pw := parquet.NewGenericWriter[Listen](cw,
		parquet.Compression(&parquet.Zstd),
		parquet.PageBufferSize(cfg.PageBytes),
		parquet.MaxRowsPerRowGroup(cfg.RowGroupRows),
		parquet.CreatedBy("ariadne-lakegen", "1", ""),
		// A well-behaved lake: a split-block bloom filter on the key that
		// readers use to skip row groups (10 bits per value ≈ 1% FPR).
		parquet.BloomFilters(parquet.SplitBlockFilter(10, "user_id")),
	)
	for len(rows) > 0 {
		n := min(len(rows), 8192)
		if _, err := pw.Write(rows[:n]); err != nil {
			w.Abort()
			return 0, err
		}
		rows = rows[n:]
	}
	if err := pw.Close(); err != nil {
		w.Abort()
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return cw.N, nil
}

// writePrepared writes a bucket's rows with the prepared writer. They are
// already in (user_id, ts) order, which its stable sort keeps.
func writePrepared(ctx context.Context, st store.Store, key string, rows []Listen, cfg Config, bucket int) (int64, error) {
	buf := parquet.NewGenericBuffer[Listen]()
	if _, err := buf.Write(rows); err != nil {
		return 0, err
	}
	fs, err := prepared.Write(ctx, st, key, buf.Schema(), buf.Rows(), prepared.Options{
		Key: "user_id", Sort: []string{"ts"}, Buckets: cfg.FilesPerDay, Bucket: bucket, PageBytes: cfg.PreparedPageBytes,
		RowGroupRows: cfg.RowGroupRows, Overwrite: true,
	})
	return fs.Bytes, err
}
