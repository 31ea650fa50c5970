package lakegen

import (
	"bytes"
	"cmp"
	"context"
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
	for _, sorted := range []bool{true, false} {
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
		for _, f := range fa {
			x, _ := store.ReadAll(ctx, a, f.Key)
			y, _ := store.ReadAll(ctx, b, f.Key)
			if !bytes.Equal(x, y) || int64(len(x)) != f.Size {
				t.Fatalf("%s: not reproducible or wrong size", f.Key)
			}
			rows := read(t, a, f.Key)
			if int64(len(rows)) != f.Rows {
				t.Fatalf("%s: %d rows, reported %d", f.Key, len(rows), f.Rows)
			}
			day := strings.TrimPrefix(strings.Split(f.Key, "/")[0], "date=")
			byUser := slices.IsSortedFunc(rows, func(p, q Listen) int { return cmp.Compare(p.UserID, q.UserID) })
			byTime := slices.IsSortedFunc(rows, func(p, q Listen) int { return p.TS.Compare(q.TS) })
			if sorted && !byUser || !sorted && !byTime {
				t.Fatalf("%s: sorted=%v but by user %v, by time %v", f.Key, sorted, byUser, byTime)
			}
			for _, r := range rows {
				if r.TS.UTC().Format("2006-01-02") != day || r.DurationMS < 30_000 || !strings.HasPrefix(r.Context, "{") {
					t.Fatalf("%s: bad row %+v", f.Key, r)
				}
			}
		}
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
