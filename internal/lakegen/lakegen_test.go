package lakegen

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/store"
)

func small(sorted bool) Config {
	return Config{Seed: 5, TargetBytes: 1 << 20, Days: 2, FilesPerDay: 2, Users: 500, Sorted: sorted, RowGroupRows: 3000}
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
	// rowsOfDay[sorted][day] is the sorted list of every row of the day, so
	// that the two layouts can be checked to hold the same rows.
	rowsOfDay := map[bool]map[string][]string{}
	for _, sorted := range []bool{true, false} {
		rowsOfDay[sorted] = map[string][]string{}
		a, _ := store.Open(ctx, "mem://")
		b, _ := store.Open(ctx, "mem://")
		fa, err := Generate(ctx, a, small(sorted))
		if err != nil {
			t.Fatal(err)
		}
		fb, err := Generate(ctx, b, small(sorted))
		if err != nil {
			t.Fatal(err)
		}
		if len(fa) != 4 || !slices.Equal(fa, fb) {
			t.Fatalf("files %v vs %v", fa, fb)
		}
		if !strings.HasPrefix(fa[0].Key, "date=2024-06-01/part-00000") || !strings.HasPrefix(fa[3].Key, "date=2024-06-02/part-00001") {
			t.Fatalf("keys %v", fa)
		}
		for i, f := range fa {
			x, _ := store.ReadAll(ctx, a, f.Key)
			y, _ := store.ReadAll(ctx, b, f.Key)
			if !bytes.Equal(x, y) || int64(len(x)) != f.Size {
				t.Fatalf("%s: not reproducible or wrong size", f.Key)
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
			if sorted && !byUserTime || !sorted && !byTime {
				t.Fatalf("%s: sorted=%v but by (user, ts) %v, by time %v", f.Key, sorted, byUserTime, byTime)
			}
			part := i % 2
			for _, r := range rows {
				if r.TS.UTC().Format("2006-01-02") != day || r.DurationMS < 30_000 || !strings.HasPrefix(r.Context, "{") {
					t.Fatalf("%s: bad row %+v", f.Key, r)
				}
				// Bucketed: every play of a user on a day is in the file of
				// the user's bucket.
				if sorted && BucketOf(r.UserID, 2) != part {
					t.Fatalf("%s: user %d of bucket %d in file %d", f.Key, r.UserID, BucketOf(r.UserID, 2), part)
				}
				rowsOfDay[sorted][day] = append(rowsOfDay[sorted][day], fmt.Sprintf("%+v", r))
			}
		}
	}
	for day, rows := range rowsOfDay[true] {
		other := rowsOfDay[false][day]
		slices.Sort(rows)
		slices.Sort(other)
		if !slices.Equal(rows, other) {
			t.Fatalf("%s: the bucketed layout holds %d rows, the arrival layout %d, or other rows", day, len(rows), len(other))
		}
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
