// Package fileindexbench owns the file index benchmark (issues 3 and 11).
// It generates (or reuses) a listening-history lake (internal/lakegen),
// indexes it through package fileindex's public API (a regular index on
// user_id, a 1 % bloom index on track_uri, a range index on ts), and
// measures, in one run on one lake: Update against a bare scan of the same
// columns with the same reader; cold and warm Locates; inner Joins of 1,
// 100 and 1,000 users against DuckDB joining the same keys with
// read_parquet over every file, whose rows must be identical. It is
// `ariadne bench fileindex`; figures and how to reproduce them are in
// docs/fileindex.md.
//
// Its Go benchmarks (go test -bench) add the cold locate from the locate
// snapshot against the main-table scan, the update's CPU cost against the
// bare scan's, and the update of one file with millions of distinct values.
// Nothing here is part of the product: fileindex holds only the index.
package fileindexbench
