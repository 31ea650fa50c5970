package lakegen

import "math"

// HeavySkewConfig is the lake of issue 10, as listening data often looks:
// arrival order, 25 days × 4 files (100 files), 12,000-row row groups,
// ≈16 KiB pages with a page index, and a Zipf law so steep (s = 1.2, v = 1
// over 1M users) that the most active user holds ≈19 % of the rows
// (TopShare: 0.189) and a key drawn from a random row has ≈100k rows in a
// 1 GB lake.
func HeavySkewConfig() Config {
	c := DefaultConfig()
	c.Days, c.FilesPerDay = 25, 4
	c.ZipfS, c.ZipfV = 1.2, 1
	c.RowGroupRows = 12_000
	c.PageBytes = 16 << 10
	return c
}

// TopShare returns the expected share of all rows held by the most active
// user (rank 0) under c's Zipf law, exactly as math/rand/v2's Zipf draws
// ranks: P(k) ∝ (ZipfV + k)^-ZipfS for k in [0, Users).
func TopShare(c Config) float64 {
	c = c.withDefaults()
	var sum float64
	for k := range c.Users {
		sum += math.Pow(c.ZipfV+float64(k), -c.ZipfS)
	}
	return math.Pow(c.ZipfV, -c.ZipfS) / sum
}
