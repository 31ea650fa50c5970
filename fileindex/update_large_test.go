package fileindex

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/ariadne-go/ariadne/bloom"
)

// updSchemaIDs is (Id, Version, Category, Value) of §8.20.
const updSchemaIDs = `{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},{"name":"Version","type":"integer","nullable":true,"metadata":{}},{"name":"Category","type":"string","nullable":true,"metadata":{}},{"name":"Value","type":"double","nullable":true,"metadata":{}}]}`

// TestLargeIndexAndAutoBloom: with L = 3, a file with ≥ 3 distinct values
// of a column stores them in large_indexes/<c>/ with a null inline cell
// (§3.8, §12 item 1); the column is registered for auto-bloom and every file
// of the batch gets a filter of its full value set (§3.9). Re-indexing the
// file (a backfill) replaces its large rows instead of duplicating them.
func TestLargeIndexAndAutoBloom(t *testing.T) {
	ctx := context.Background()
	e := newUpdEnv(t)
	e.cfg.LargeIndexLimit = 3
	ix := e.open("large", updSchemaIDs, "csv", map[string]string{"header": "true"})
	dir := t.TempDir()
	small := updCSVIDs(t, dir, "small.csv", 2) // Id {1,2}: inline
	big := updCSVIDs(t, dir, "big.csv", 5)     // Id {1..5}: large
	updAddFiles(t, ix, small, big)
	must(t, ix.AddIndex(ctx, "Id"))
	fi := e.fi(ix)
	res := updMust(t, fi)
	if !slices.Equal(res.AutoBloomDetected, []string{"Id"}) {
		t.Errorf("detected %v", res.AutoBloomDetected)
	}
	// big (5 > L) is oversize: its own batch after small's.
	if res.Batches != 2 {
		t.Errorf("batches %d, want 2", res.Batches)
	}
	got := updMainTable(t, ix)
	if got[small]["Id"] != "[1,2]" || got[big]["Id"] != "null" {
		t.Fatalf("inline cells: small %s, big %s", got[small]["Id"], got[big]["Id"])
	}
	checkLarge := func() {
		t.Helper()
		_, rows := updTableRows(t, ix.Root(), ix.Paths().LargeIndex("Id"))
		var vals []string
		for _, r := range rows {
			if r[0] != big {
				t.Errorf("large row for %v", r[0])
			}
			vals = append(vals, fmt.Sprint(r[1]))
		}
		slices.Sort(vals)
		if !slices.Equal(vals, []string{"1", "2", "3", "4", "5"}) {
			t.Errorf("large rows %v", vals)
		}
	}
	checkLarge()
	must(t, ix.RefreshMetadata(ctx))
	if !slices.Equal(ix.Metadata().AutoBloomIndexes, []string{"Id"}) {
		t.Errorf("auto_bloom_indexes %v", ix.Metadata().AutoBloomIndexes)
	}
	// small's batch ran before the detection (its batch had no large
	// file): null cell; big's filter holds all five values.
	sch, rows := updTableRows(t, ix.Root(), ix.Paths().Main)
	ai := fieldIndex(sch, AutoBloomColumn("Id"))
	if ai < 0 {
		t.Fatalf("no auto-bloom column in %s", sch.Marshal())
	}
	for _, r := range rows {
		switch r[0] {
		case small:
			if r[ai] != nil {
				t.Errorf("small has an auto-bloom cell from before detection")
			}
		case big:
			f, err := bloom.Unmarshal(r[ai].([]byte))
			must(t, err)
			for v := 1; v <= 5; v++ {
				if !f.MightContainString(fmt.Sprint(v)) {
					t.Errorf("big's filter misses %d", v)
				}
			}
		}
	}
	// Backfill (a new range column) rebuilds both files: the large rows
	// are replaced, and small now gets its auto-bloom filter.
	must(t, ix.AddRangeIndex(ctx, "Value"))
	res = updMust(t, fi)
	if res.BackfilledFiles != 2 {
		t.Fatalf("backfill %+v", res)
	}
	checkLarge()
	sch, rows = updTableRows(t, ix.Root(), ix.Paths().Main)
	ai = fieldIndex(sch, AutoBloomColumn("Id"))
	for _, r := range rows {
		if r[0] == small {
			f, err := bloom.Unmarshal(r[ai].([]byte))
			must(t, err)
			if !f.MightContainString("1") || !f.MightContainString("2") {
				t.Errorf("small's auto-bloom filter misses its values")
			}
		}
	}
}

// TestBatchedUpdate is §8.20 scaled down (L instead of 500,000 rows).
func TestBatchedUpdate(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		limit       int64
		rows        []int // rows per file (Ids 1..n)
		wantBatches int
	}{
		// "should keep batches whose distinct total equals the limit".
		{"sum equal to the limit", 4, []int{2, 2}, 1},
		// "should create multiple batches": 150k,150k,200k,100k,250k at
		// L=500k, scaled by 1/10,000 → {25,20} {15,15,10}.
		{"multiple batches", 50, []int{15, 15, 20, 10, 25}, 2},
		// "files exceeding largeIndexLimit individually": 600k,100k,150k,
		// 700k,200k → {20,15,10} {60} {70}.
		{"oversize files alone", 50, []int{60, 10, 15, 70, 20}, 3},
		// "mixed file sizes": 5×1000, 10×300, 10×100 at L = 1000 →
		// five 1000s, {300×3}×3, {300, 100×7}, {100×3}.
		{"mixed file sizes", 1000, append(append(rep(1000, 5), rep(300, 10)...), rep(100, 10)...), 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newUpdEnv(t)
			e.cfg.LargeIndexLimit = tc.limit
			ix := e.open("batched", updSchemaIDs, "csv", map[string]string{"header": "true"})
			dir := t.TempDir()
			var uris []string
			for i, n := range tc.rows {
				uris = append(uris, updCSVIDs(t, dir, fmt.Sprintf("f%02d.csv", i), n))
			}
			updAddFiles(t, ix, uris...)
			must(t, ix.AddIndex(ctx, "Id"))
			must(t, ix.AddIndex(ctx, "Category"))
			res := updMust(t, e.fi(ix))
			if res.Batches != tc.wantBatches {
				t.Errorf("batches %d, want %d", res.Batches, tc.wantBatches)
			}
			must(t, ix.RefreshMetadata(ctx))
			if got := ix.Metadata().BatchesSinceCompact; got != tc.wantBatches {
				t.Errorf("batches_since_compact %d, want %d", got, tc.wantBatches)
			}
			// Every Id of every file is findable: inline or large.
			main := updMainTable(t, ix)
			large := map[string]int{}
			if updTableVersion(t, ix.Root(), ix.Paths().LargeIndex("Id")) >= 0 {
				_, rows := updTableRows(t, ix.Root(), ix.Paths().LargeIndex("Id"))
				for _, r := range rows {
					large[r[0].(string)]++
				}
			}
			for i, u := range uris {
				n := tc.rows[i]
				isLarge := int64(n) >= tc.limit
				cell := main[u]["Id"]
				switch {
				case isLarge && (cell != "null" || large[u] != n):
					t.Errorf("%s: large file: cell %s, %d large rows (want %d)", u, cell, large[u], n)
				case !isLarge && (large[u] != 0 || cell != idSet(n)):
					t.Errorf("%s: inline cell %.40s…, %d large rows", u, cell, large[u])
				}
			}
		})
	}
}

func rep(n, k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = n
	}
	return out
}

// idSet is updCanon of the set 1..n.
func idSet(n int) string {
	vals := make([]any, n)
	for i := range vals {
		vals[i] = i + 1
	}
	return updCanon(vals)
}
