// Package index owns the index registry: index names and the persisted layout
// under a store root (spec §4.1), create-or-reconnect of an index with its
// schema, format and read options (§2.1), the FileList of tracked files
// (§2.5), the catalog of all indexes (§2.4), and the storage preflight that
// validates version markers and migrates older layouts (§4.8).
//
// An *Index handle is safe for concurrent use: it holds an immutable snapshot
// of its metadata behind an atomic pointer, and every mutation is a
// compare-and-swap of metadata.json under the index's update lock, so handles
// in several goroutines or processes coordinate through the store alone.
package index
