package fileindex

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCreateOptimalBatches is §5.3.2 with the spec's examples.
func TestCreateOptimalBatches(t *testing.T) {
	tests := []struct {
		name    string
		limit   int64
		counts  []int64 // MaxDistinct per file, in analysis order
		storage bool
		want    string // batches of counts, e.g. "{250,200} {150,150,100}"
	}{
		{"spec example 1", 500_000, []int64{150_000, 150_000, 200_000, 100_000, 250_000}, true,
			"{250000,200000} {150000a,150000b,100000}"},
		{"spec example 2: oversize files alone at the end", 500_000, []int64{600_000, 100_000, 150_000, 700_000, 200_000}, true,
			"{200000,150000,100000} {600000} {700000}"},
		{"sum equal to the limit stays together", 4, []int64{2, 2}, true, "{2a,2b}"},
		{"one over the limit splits", 4, []int64{2, 3}, true, "{3} {2}"},
		{"exactly L is not oversize", 4, []int64{4, 1}, true, "{4} {1}"},
		{"stable for equal counts", 10, []int64{5, 5, 5}, true, "{5a,5b} {5c}"},
		{"single file", 500_000, []int64{100}, true, "{100}"},
		{"no storage columns: one batch", 4, []int64{0, 0, 0}, false, "{0a,0b,0c}"},
		{"nothing", 4, nil, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in []*fileAnalysis
			names := map[*fileAnalysis]string{}
			seen := map[int64]int{}
			for _, c := range tc.counts {
				a := &fileAnalysis{URI: fmt.Sprint(len(in)), MaxDistinct: c, Size: 1}
				in = append(in, a)
				names[a] = fmt.Sprint(c)
				seen[c]++
			}
			// Disambiguate equal counts by analysis order (a, b, c...).
			dup := map[int64]int{}
			for _, a := range in {
				if seen[a.MaxDistinct] > 1 {
					names[a] += string(rune('a' + dup[a.MaxDistinct]))
					dup[a.MaxDistinct]++
				}
			}
			var got []string
			for _, b := range createOptimalBatches(in, tc.limit, tc.storage) {
				var parts []string
				for _, a := range b {
					parts = append(parts, names[a])
				}
				got = append(got, "{"+strings.Join(parts, ",")+"}")
			}
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("got %q, want %q", s, tc.want)
			}
		})
	}
}

// TestNoStorageBatchesBounded: with only bloom/range indexes, batches are
// bounded by input bytes (§9 item 4 fixed), in input order.
func TestNoStorageBatchesBounded(t *testing.T) {
	var in []*fileAnalysis
	for i := 0; i < 5; i++ {
		in = append(in, &fileAnalysis{URI: fmt.Sprint(i), Size: noStorageBatchBytes / 2})
	}
	b := createOptimalBatches(in, 4, false)
	var sizes []int
	for _, x := range b {
		sizes = append(sizes, len(x))
	}
	if !slices.Equal(sizes, []int{2, 2, 1}) {
		t.Fatalf("batch sizes %v", sizes)
	}
}
