// Package ariadne is the library face of Ariadne: the one API through which
// programs (the command line, the HTTP server, a Go service embedding the
// lake) open a store, find its indexes, and ask them which data files can
// hold keys (Locate), for the rows of keys (Lookup), and for the join of a
// key set with the files that can hold it (Join), and build and maintain
// row indexes (AddRowIndex, UpdateRowIndexes, ...), in the manner of
// pebble's root package. It owns no format of its own: it composes the
// index registry (package index), the file index (fileindex), the row
// index (rowindex) and the store (store), and gives them one value model,
// typed keys, and handles that stay open.
//
// # Handles and concurrency
//
// A *Store and the *Index handles it returns are safe for concurrent use
// and meant to live as long as the process: they cache what makes repeated
// queries fast (index metadata, open row indexes with their caches of
// manifests, fragments, data file footers and decoded pages). Each query
// carries its own options. Close releases the store.
//
// # Versions
//
// An Index serves one version of each of its row indexes at a time. Refresh
// (or Store.Refresh, or the poll a server runs) picks up newer row index
// manifests and index metadata written by other processes: a row index
// whose manifest changed is opened anew and replaces the old handle
// atomically, so a query that started on the old version finishes on it and
// one query sees one version. Locate reads the newest file index version
// on every call.
//
// # Memory
//
// Each open row index holds at most Options' CacheBytes of metadata cache
// and PageCacheBytes of decoded pages (unless set, rowindex.AutoCacheBytes
// of the version opened and rowindex.DefaultPageCacheBytes). While a refresh replaces a
// row index, the old handle's caches live until its last query ends, so
// the bound is twice the budget for the row indexes being replaced.
//
// # Values
//
// Rows come back as maps from column name to a Go value of one model,
// whether the row was served from the row index's cover columns or read
// from a data file, or joined: nil, bool, int64 (every integer column),
// float32 (float), float64 (double), string, []byte (binary), time.Time in
// UTC (timestamps and dates), json.Number holding a decimal's exact text,
// map[string]any (structs, and maps with their keys as text) and []any
// (lists). Encoded with encoding/json they give the one JSON vocabulary of
// the command line's --json, the server and the agent tools: snake_case
// fields, numbers as numbers, timestamps in RFC 3339.
//
// # Keys
//
// A key given as text (a string for a non-string column) is parsed by the
// key column's type: integers and floats in decimal, booleans as
// true/false, timestamps in ISO-8601 (RFC 3339, or without a zone as UTC),
// dates as YYYY-MM-DD. A Go value of the wrong type (an int for a string
// column, a string that does not parse) is an error of kind
// aerr.ErrInvalidArgument, never a silent empty answer.
//
// # Cancellation
//
// Every call takes a context; it reaches the storage reads, so a canceled
// or expired context stops a query between requests.
package ariadne
