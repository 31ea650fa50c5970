// Package rowindexbench owns the row index benchmark (issues 4 and 10): it
// generates a listening-history lake in one of several layouts
// (internal/lakegen) or takes a folder of existing Parquet files, builds a
// row index over it through package rowindex's public API, and measures
// warm lookups against DuckDB scanning the same files in the same run
// (bench/duckdb), per key class (absent keys; keys of 1–100, 101–1k,
// 1k–10k, 10k–100k and >100k rows; the top key, also with a row limit),
// over keys drawn from rows and over distinct keys. Every answer of every
// system is checked against an exact count of each key's rows.
//
// For generated lakes an overview adds a standard parquet-go reader (the
// baseline a well-behaved reader without an index achieves), cold lookups
// and injected per-request latency. It is `ariadne bench rowindex`; the
// report and how to reproduce it are in docs/rowindex-bench.md.
package rowindexbench
