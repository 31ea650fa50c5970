package fileindex

import "slices"

// fileAnalysis is the pre-flight summary of one data file (§5.3.1).
type fileAnalysis struct {
	URI  string
	Size int64 // bytes, from the file's own store (§5.15, §9 item 7 fixed)
	Rows int64
	// Counts holds the distinct non-null value count per counted column
	// (storage columns and bloom columns; temporal columns count a null
	// value as one entry, as their arrays hold it).
	Counts map[string]int64
	// MaxDistinct is the largest count over the storage columns.
	MaxDistinct int64
	// sum is the file's Go summary (summarize.go); nil when the engine
	// summarises the file.
	sum *fileSummary
}

// largeFor reports whether the (file, column) pair is large (§12 item 1):
// its distinct count is at least L, so its values go to the large-index
// table instead of an inline array.
func (a *fileAnalysis) largeFor(col string, largeL int64) bool {
	return a.Counts[col] >= largeL
}

// noStorageBatchBytes bounds a batch when no storage column is configured
// (bloom, range or no index at all), where the Spark library makes one
// unbounded batch (§9 item 4). Such a batch holds no value arrays, only
// per-file filters and min/max pairs, so its cost is the input DuckDB loads:
// 1 GiB of input is ~4 s of reading at the readers' ~250 MB/s and fits the
// engine's memory limit with spilling; smaller batches would only add
// staging commits.
const noStorageBatchBytes = 1 << 30

// createOptimalBatches packs analysed files into batches (§5.3.2): with no
// storage column, consecutive files up to noStorageBatchBytes of input each
// (§9 item 4 fixed: see docs/fileindex.md); otherwise
// files with MaxDistinct > L are set aside, the rest sorted by MaxDistinct
// descending (stable) and packed greedily so that a batch's sum of
// MaxDistinct stays ≤ L, and each oversize file follows as a batch of its
// own. The per-column sums bound the values a batch's inline arrays hold.
func createOptimalBatches(analyses []*fileAnalysis, largeL int64, hasStorage bool) [][]*fileAnalysis {
	if len(analyses) == 0 {
		return nil
	}
	if !hasStorage {
		var batches [][]*fileAnalysis
		var cur []*fileAnalysis
		var bytes int64
		for _, a := range analyses {
			if len(cur) > 0 && bytes+a.Size > noStorageBatchBytes {
				batches = append(batches, cur)
				cur, bytes = nil, 0
			}
			cur = append(cur, a)
			bytes += a.Size
		}
		return append(batches, cur)
	}
	var regular, oversize []*fileAnalysis
	for _, a := range analyses {
		if a.MaxDistinct > largeL {
			oversize = append(oversize, a)
		} else {
			regular = append(regular, a)
		}
	}
	slices.SortStableFunc(regular, func(a, b *fileAnalysis) int {
		switch {
		case a.MaxDistinct > b.MaxDistinct:
			return -1
		case a.MaxDistinct < b.MaxDistinct:
			return 1
		}
		return 0
	})
	var batches [][]*fileAnalysis
	var cur []*fileAnalysis
	var total int64
	for _, a := range regular {
		if total+a.MaxDistinct > largeL && len(cur) > 0 {
			batches = append(batches, cur)
			cur, total = nil, 0
		}
		cur = append(cur, a)
		total += a.MaxDistinct
	}
	if len(cur) > 0 {
		batches = append(batches, cur)
	}
	for _, a := range oversize {
		batches = append(batches, []*fileAnalysis{a})
	}
	return batches
}
