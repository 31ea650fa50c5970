package lakegen

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/store"
)

// layouts are the three layouts of the same rows.
var layouts = []string{"arrival", "sorted", "prepared"}

func small(layout string) Config {
	return Config{Seed: 5, TargetBytes: 1 << 20, Days: 2, FilesPerDay: 2, Users: 500,
		Sorted: layout == "sorted", Prepared: layout == "prepared", RowGroupRows: 3000}
}

// goldenSHA256 pins the bytes of the small lakes of the two original
// layouts (SHA-256 of their files concatenated in key order), as generated
// by Version 3 before the prepared layout existed: lakes cached by Version
// stay valid only while these hold.
var goldenSHA256 = map[string]string{
	"arrival": "e1dd1026d11d14d7fbad6d8eb431c5855cfc7e6646ad78ec40fdf2881c48d5c8",
	"sorted":  "3481241f203e59cf968797b8a6270fb83f4fafc19f3841da7e874e6379eb3e50",
}

func read(t *testing.T, st store.Store, key string) []Listen {
	t.Helper()
	b, err := store.ReadAll(context.Background(), st, key)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.Read[Listen](bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestGenerateIsReproducibleAndShaped(t *testing.T) {
	ctx := context.Background()
	// rowsOfDay[layout][day] is the list of every row of the day (sorted
	// for the comparison), so that the layouts can be checked to hold the
	// same rows; rowsOfFile the rows of each file in file order.
	rowsOfDay := map[string]map[string][]string{}
	rowsOfFile := map[string]map[string][]string{}
	for _, layout := range layouts {
		rowsOfDay[layout] = map[string][]string{}
		rowsOfFile[layout] = map[string][]string{}
		bucketed := layout != "arrival"
		a, _ := store.Open(ctx, "mem://")
		b, _ := store.Open(ctx, "mem://")
		fa, err := Generate(ctx, a, small(layout))
		if err != nil {
			t.Fatal(err)
		}
		fb, err := Generate(ctx, b, small(layout))
		if err != nil {
			t.Fatal(err)
		}
		if len(fa) != 4 || !slices.Equal(fa, fb) {
			t.Fatalf("files %v vs %v", fa, fb)
		}
		if !strings.HasPrefix(fa[0].Key, "date=2024-06-01/part-00000") || !strings.HasPrefix(fa[3].Key, "date=2024-06-02/part-00001") {
			t.Fatalf("keys %v", fa)
		}
		sum := sha256.New()
		for i, f := range fa {
			x, _ := store.ReadAll(ctx, a, f.Key)
			y, _ := store.ReadAll(ctx, b, f.Key)
			if !bytes.Equal(x, y) || int64(len(x)) != f.Size {
				t.Fatalf("%s: not reproducible or wrong size", f.Key)
			}
			sum.Write(x)
			pf, err := parquet.OpenFile(bytes.NewReader(x), int64(len(x)))
			if err != nil {
				t.Fatal(err)
			}
			m, isPrepared, err := prepared.MarkerOf(pf)
			if err != nil || isPrepared != (layout == "prepared") {
				t.Fatalf("%s: prepared marker %v, %v in layout %s", f.Key, isPrepared, err, layout)
			}
			if isPrepared && (m.Key != "user_id" || m.Buckets != 2 || m.Bucket != i%2 || m.PageBytes != DefaultPreparedPageBytes) {
				t.Fatalf("%s: marker %+v", f.Key, m)
			}
			rows := read(t, a, f.Key)
			if int64(len(rows)) != f.Rows || len(rows) == 0 {
				t.Fatalf("%s: %d rows, reported %d", f.Key, len(rows), f.Rows)
			}
			day := strings.TrimPrefix(strings.Split(f.Key, "/")[0], "date=")
			byUserTime := slices.IsSortedFunc(rows, func(p, q Listen) int {
				return cmp.Or(cmp.Compare(p.UserID, q.UserID), p.TS.Compare(q.TS))
			})
			byTime := slices.IsSortedFunc(rows, func(p, q Listen) int { return p.TS.Compare(q.TS) })
			if bucketed && !byUserTime || !bucketed && !byTime {
				t.Fatalf("%s: layout %s but by (user, ts) %v, by time %v", f.Key, layout, byUserTime, byTime)
			}
			part := i % 2
			for _, r := range rows {
				if r.TS.UTC().Format("2006-01-02") != day || r.DurationMS < 30_000 || !strings.HasPrefix(r.Context, "{") {
					t.Fatalf("%s: bad row %+v", f.Key, r)
				}
				// Bucketed: every play of a user on a day is in the file of
				// the user's bucket.
				if bucketed && BucketOf(r.UserID, 2) != part {
					t.Fatalf("%s: user %d of bucket %d in file %d", f.Key, r.UserID, BucketOf(r.UserID, 2), part)
				}
				s := fmt.Sprintf("%+v", r)
				rowsOfDay[layout][day] = append(rowsOfDay[layout][day], s)
				rowsOfFile[layout][f.Key] = append(rowsOfFile[layout][f.Key], s)
			}
		}
		if want, ok := goldenSHA256[layout]; ok {
			if got := fmt.Sprintf("%x", sum.Sum(nil)); got != want {
				t.Errorf("layout %s: bytes changed (SHA-256 %s, pinned %s): bump Version", layout, got, want)
			}
		}
	}
	for day, rows := range rowsOfDay["sorted"] {
		other := rowsOfDay["arrival"][day]
		slices.Sort(rows)
		slices.Sort(other)
		if !slices.Equal(rows, other) {
			t.Fatalf("%s: the bucketed layout holds %d rows, the arrival layout %d, or other rows", day, len(rows), len(other))
		}
	}
	// The prepared layout is the sorted layout's files, row for row.
	if !maps.EqualFunc(rowsOfFile["sorted"], rowsOfFile["prepared"], slices.Equal) {
		t.Fatal("the prepared layout holds other rows, or in another order, than the sorted layout")
	}
}

// TestBucketOfMatchesSpark checks that bucket ids are in range and spread
// users evenly (the hash itself is checked against Spark in sparkhash).
func TestBucketOfMatchesSpark(t *testing.T) {
	const n, users = 4, 100_000
	var count [n]int
	for r := range uint64(users) {
		b := BucketOf(UserID(r), n)
		if b < 0 || b >= n {
			t.Fatalf("bucket %d out of [0, %d)", b, n)
		}
		count[b]++
	}
	for b, c := range count {
		// Binomial(100,000, 1/4): sd ≈ 137, so ±1,000 is > 7 sd.
		if c < users/n-1000 || c > users/n+1000 {
			t.Fatalf("bucket %d holds %d of %d users: %v", b, c, users, count)
		}
	}
	if BucketOf(-7, n) < 0 {
		t.Fatal("negative ids must map to a non-negative bucket (pmod)")
	}
}

func TestActivityIsSkewed(t *testing.T) {
	ctx := context.Background()
	st, _ := store.Open(ctx, "mem://")
	files, err := Generate(ctx, st, Config{Seed: 1, TargetBytes: 4 << 20, Days: 1, FilesPerDay: 1, Users: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	count := map[int64]int{}
	for _, r := range read(t, st, files[0].Key) {
		count[r.UserID]++
	}
	if top := count[UserID(0)]; top < 10*count[UserID(5000)] || top == 0 {
		t.Fatalf("user of rank 0 has %d plays, rank 5000 %d: not skewed", top, count[UserID(5000)])
	}
}

// TestHeavySkewTopShare checks the heavy-skew lake's top user against the
// share TopShare predicts, on generated rows (±15 % of the share).
func TestHeavySkewTopShare(t *testing.T) {
	if s := TopShare(HeavySkewConfig()); s < 0.18 || s > 0.20 {
		t.Fatalf("TopShare(HeavySkewConfig()) = %.4f, documented as 0.189", s)
	}
	ctx := context.Background()
	st, _ := store.Open(ctx, "mem://")
	c := HeavySkewConfig()
	c.TargetBytes, c.Days, c.FilesPerDay = 2<<20, 1, 2
	files, err := Generate(ctx, st, c)
	if err != nil {
		t.Fatal(err)
	}
	top, all := 0, 0
	for _, f := range files {
		for _, r := range read(t, st, f.Key) {
			all++
			if r.UserID == UserID(0) {
				top++
			}
		}
	}
	got, want := float64(top)/float64(all), TopShare(c)
	if math.Abs(got-want) > 0.15*want {
		t.Fatalf("top user holds %.3f of %d rows, TopShare says %.3f", got, all, want)
	}
}

// TestArrowWriterDefaults checks that the arrow writer's files hold the
// same rows as parquet-go's, in one row group, without a page index.
func TestArrowWriterDefaults(t *testing.T) {
	ctx := context.Background()
	a, _ := store.Open(ctx, "mem://")
	b, _ := store.Open(ctx, "mem://")
	c := small("arrival")
	fa, err := Generate(ctx, a, c)
	if err != nil {
		t.Fatal(err)
	}
	c.Writer = WriterArrow
	fb, err := Generate(ctx, b, c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range fa {
		x, y := read(t, a, fa[i].Key), read(t, b, fb[i].Key)
		if !slices.EqualFunc(x, y, func(p, q Listen) bool {
			return p.UserID == q.UserID && p.TS.Equal(q.TS) && p.TrackURI == q.TrackURI && p.DurationMS == q.DurationMS && p.Context == q.Context
		}) {
			t.Fatalf("%s: the arrow file holds other rows", fb[i].Key)
		}
		raw, _ := store.ReadAll(ctx, b, fb[i].Key)
		pf, err := parquet.OpenFile(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(pf.RowGroups()); n != 1 {
			t.Fatalf("%s: %d row groups, want 1", fb[i].Key, n)
		}
		if cc := pf.Metadata().RowGroups[0].Columns[0]; cc.ColumnIndexOffset != 0 || cc.OffsetIndexOffset != 0 {
			t.Fatalf("%s: a page index was written", fb[i].Key)
		}
	}
}
