// Package rowindex owns the row index: a persisted multimap from the values
// of one key column to the exact places (data file, row group, first row, run
// length) that hold them in a dataset's unmodified Parquet files, and the
// lookup path that turns those places into page byte ranges, fetches them all
// at once and decodes only those pages.
//
// A row index lives under an index folder in the store root, in
// row_indexes/<name>/: immutable Parquet fragments partitioned by hash bucket
// of the key (or sorted by key for range queries) and a versioned manifest
// committed with put-if-absent. Build creates or extends one from a list of
// data file URIs; Open returns a *RowIndex whose Lookup serves equality and
// range queries, hoisted (covered) columns and per-key aggregates, with a
// Plan that accounts for every request and byte.
//
// See docs/rowindex.md for the format, the caches and the cost model.
package rowindex
