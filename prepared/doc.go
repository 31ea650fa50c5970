// Package prepared owns the writer of prepared Parquet: standard Parquet
// files, readable by every engine, laid out so that one key's rows are
// concentrated for point lookups (docs/prepared.md, and the "Prepared
// Parquet" levers of shared/spec/random-access-parquet.md):
//
//   - rows are sorted by (key, sort columns) within each file, nulls first;
//   - files are hash-bucketed by key with Spark's Murmur3 bucketing, one file
//     per bucket per partition (PrepareFiles);
//   - data pages are key-aligned: a page never holds part of a key's rows
//     unless that key alone exceeds the target page size, in which case the
//     key's rows are split at row boundaries over pages that hold only it
//     (PageBytes 0: exactly one page per key and column);
//   - every file carries the page index (column and offset index), a
//     split-block bloom filter on the key, sorting_columns in each row group,
//     one codec on every column (ZSTD by default, never the sources'), and a
//     key-value marker "ariadne.prepared" with the options as JSON (see
//     Marker), so tools recognise it.
//
// PrepareFiles chooses what the options leave unset — page size, buckets,
// row group size, codec, per-column encodings — from a first pass over the
// sources (layout.go, Choices), and records the choices in the marker.
// Sorting is external under a byte budget (Options.MemoryBytes): past half
// of it, sorted runs are spilled to a temporary folder and merged (sort.go),
// with the same output as an in-memory sort.
// Options.Frames frames each page's values as ZSTD frames of whole keys
// (frames.go); Options.Blob stores the served columns of each row as one
// binary column with a typed row encoding described in the file (blob.go),
// so that a row index lookup reads one range per file.
// Nothing is ever visible under a final file name unless the whole file was
// written: files are committed by the store's atomic Close.
package prepared
