package fileindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// TestRandomizedAgainstOracle is a seeded differential test: random CSV files,
// random index definitions and random queries, with Locate and Join checked
// against a brute-force oracle computed from the generated rows:
//   - regular and range categories must return exactly the files the oracle
//     finds (range: files whose [min, max] holds a value);
//   - bloom must return a superset of the exact files (no false negatives);
//   - AND across columns intersects the categories;
//   - an inner join returns exactly the oracle's matching rows.
//
// A small largeIndexLimit sends some value sets to the large-index table, so
// auto-bloom and large-table reads are exercised too. Set
// ARIADNE_RANDOM_SEEDS=n to run more seeds.
func TestRandomizedAgainstOracle(t *testing.T) {
	seeds := 3
	if n, err := fmt.Sscan(os.Getenv("ARIADNE_RANDOM_SEEDS"), &seeds); n == 0 || err != nil {
		seeds = 3
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { randomCase(t, uint64(seed)) })
	}
}

type randRow struct {
	a, c int32
	b    string
}

func randomCase(t *testing.T, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	dataDir := t.TempDir()

	// 2–7 files of 0–40 rows; small domains so values repeat across files.
	nFiles := 2 + rng.IntN(6)
	files := make([]string, nFiles)
	rows := make([][]randRow, nFiles)
	for f := range nFiles {
		path := filepath.Join(dataDir, fmt.Sprintf("part-%d.csv", f))
		files[f] = "file://" + filepath.ToSlash(path)
		text := "a,b,c\n"
		for range rng.IntN(41) {
			r := randRow{a: int32(rng.IntN(30)), b: fmt.Sprintf("k%d", rng.IntN(25)), c: int32(rng.IntN(200) - 100)}
			rows[f] = append(rows[f], r)
			text += fmt.Sprintf("%d,%s,%d\n", r.a, r.b, r.c)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	root, err := store.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	cfg.LargeIndexLimit = int64(5 + rng.IntN(20))
	cat := index.NewCatalog(root, index.Options{Config: cfg})
	st := &schema.Struct{Fields: []schema.Field{
		{Name: "a", Type: schema.Integer, Nullable: true},
		{Name: "b", Type: schema.String, Nullable: true},
		{Name: "c", Type: schema.Integer, Nullable: true},
	}}
	ix, err := cat.Open(ctx, "rnd", index.OpenOptions{Schema: st, Format: "csv", ReadOptions: map[string]string{"header": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	// Random definitions: a is regular or range; b is regular or bloom; c is range.
	aRegular, bRegular := rng.IntN(2) == 0, rng.IntN(2) == 0
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if aRegular {
		must(ix.AddIndex(ctx, "a"))
	} else {
		must(ix.AddRangeIndex(ctx, "a"))
	}
	if bRegular {
		must(ix.AddIndex(ctx, "b"))
	} else {
		must(ix.AddBloomIndex(ctx, "b", 0.05))
	}
	must(ix.AddRangeIndex(ctx, "c"))
	if _, err := ix.AddFiles(ctx, files...); err != nil {
		t.Fatal(err)
	}
	fi := New(ix, Options{})
	if _, err := fi.Update(ctx, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Every query runs on three handles: the one that updated (its view of
	// the new version comes from the locate snapshot the update wrote), a
	// fresh one (as a new process) and one that scans the main table.
	scan := New(ix, Options{})
	scan.views.noSnapshot = true
	handles := []struct {
		name     string
		fi       *FileIndex
		snapshot bool
	}{{"updating", fi, true}, {"fresh", New(ix, Options{}), true}, {"scanning", scan, false}}

	// Oracle helpers.
	exact := func(match func(randRow) bool) []string {
		var out []string
		for f := range nFiles {
			if slices.ContainsFunc(rows[f], match) {
				out = append(out, files[f])
			}
		}
		return out
	}
	inRange := func(col func(randRow) int32, v int32) []string {
		var out []string
		for f := range nFiles {
			if len(rows[f]) == 0 {
				continue
			}
			lo, hi := col(rows[f][0]), col(rows[f][0])
			for _, r := range rows[f] {
				lo, hi = min(lo, col(r)), max(hi, col(r))
			}
			if lo <= v && v <= hi {
				out = append(out, files[f])
			}
		}
		return out
	}
	intersect := func(a, b []string) []string {
		var out []string
		for _, x := range a {
			if slices.Contains(b, x) {
				out = append(out, x)
			}
		}
		return out
	}
	colA := func(r randRow) int32 { return r.a }
	colC := func(r randRow) int32 { return r.c }

	for q := range 40 {
		va, vb, vc := int32(rng.IntN(32)), fmt.Sprintf("k%d", rng.IntN(27)), int32(rng.IntN(220)-110)
		var wantA, wantB, wantC []string
		if aRegular {
			wantA = exact(func(r randRow) bool { return r.a == va })
		} else {
			wantA = inRange(colA, va)
		}
		wantB = exact(func(r randRow) bool { return r.b == vb })
		wantC = inRange(colC, vc)
		cases := []struct {
			query    Query
			want     []string
			superset bool
		}{
			{Query{"a": {va}}, wantA, false},
			{Query{"b": {vb}}, wantB, !bRegular},
			{Query{"c": {vc}}, wantC, false},
			{Query{"a": {va}, "c": {vc}}, intersect(wantA, wantC), false},
			{Query{"a": {va}, "b": {vb}}, intersect(wantA, wantB), !bRegular},
		}
		for _, tc := range cases {
			var first []string
			for i, h := range handles {
				got, plan, err := h.fi.LocateWithPlan(ctx, tc.query)
				if err != nil {
					t.Fatalf("query %d %v: %v", q, tc.query, err)
				}
				if i == 0 {
					first = got
				} else if !slices.Equal(got, first) {
					t.Fatalf("seed %d query %v: %s handle %v, %s handle %v", seed, tc.query, h.name, got, handles[0].name, first)
				}
				if plan.Snapshot != h.snapshot {
					t.Fatalf("seed %d query %v on the %s handle: plan %+v", seed, tc.query, h.name, plan)
				}
				if tc.superset {
					for _, w := range tc.want {
						if !slices.Contains(got, w) {
							t.Fatalf("seed %d query %v (%s): bloom lost %s (got %v)", seed, tc.query, h.name, w, got)
						}
					}
					continue
				}
				if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
					t.Fatalf("seed %d query %v (%s): got %v, want %v", seed, tc.query, h.name, got, tc.want)
				}
			}
		}
	}

	// Inner join on a (whichever its index type) with random keys: exactly the
	// oracle's rows.
	var keyRows [][]any
	keySet := map[int32]bool{}
	for range 1 + rng.IntN(5) {
		k := int32(rng.IntN(32))
		if !keySet[k] {
			keySet[k] = true
			keyRows = append(keyRows, []any{k})
		}
	}
	keysSrc := RowsSource(&schema.Struct{Fields: []schema.Field{{Name: "a", Type: schema.Integer, Nullable: true}}}, keyRows)
	res, err := fi.Join(ctx, keysSrc, []string{"a"}, Inner, JoinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	n := 0
	for {
		b, err := res.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n += len(b)
	}
	want := 0
	for f := range nFiles {
		for _, r := range rows[f] {
			if keySet[r.a] {
				want++
			}
		}
	}
	if n != want {
		t.Fatalf("seed %d join on a with keys %v: %d rows, oracle %d", seed, keyRows, n, want)
	}
}
