package rowindexbench

import (
	"fmt"
	"strings"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/lakegen"
)

// The generated layouts, all of the same listening history except
// LayoutSkewed, whose Zipf law is steeper.
const (
	// LayoutSorted is Spark's bucketBy(4, user_id).sortBy(user_id, ts) per
	// day, written by parquet-go (64 KiB pages, page index, bloom filter).
	LayoutSorted = "sorted"
	// LayoutPrepared is the sorted layout written by the prepared writer
	// (key-aligned ≈16 KiB pages).
	LayoutPrepared = "prepared"
	// LayoutArrival is arrival (time) order, written by parquet-go.
	LayoutArrival = "arrival"
	// LayoutSkewed is issue 10's lake: arrival order, a top user with ≈19 %
	// of the rows, 12k-row row groups, ≈16 KiB pages with a page index
	// (lakegen.HeavySkewConfig).
	LayoutSkewed = "skewed"
	// LayoutArrow is the arrival-order rows written by arrow-go's pqarrow
	// writer with its default properties (lakegen.WriterArrow: one row group
	// per file, 1 MiB pages, dictionaries, no compression, no page index).
	LayoutArrow = "arrow"
	// LayoutPyArrow is LayoutArrow with pyarrow's default properties
	// (lakegen.WriterPyArrow): the same, SNAPPY-compressed. What most lakes
	// written from Python hold; the layout where a light key's lookup
	// decompresses a 1 MiB page and a dictionary per column and file.
	LayoutPyArrow = "pyarrow"
	// LayoutFramed is the sorted layout's lake (the same rows as
	// LayoutPrepared) rewritten by `ariadne prepare --frames
	// --frame-raw-blocks` (prepared.PrepareFiles with FrameOptions at the
	// CLI's defaults, buckets and page size as LayoutPrepared): key-aligned
	// pages whose values are ZSTD frames of whole keys (≥ 4 KiB each), and
	// raw blocks where ZSTD cannot shrink a frame. The source lake is kept
	// beside it (Dir/source), and DuckDB is timed on it too, for reference.
	LayoutFramed = "framed"
	// LayoutCoGrouped is the same source lake as LayoutFramed (kept in
	// Dir/source) rewritten by `ariadne prepare --frames --blob
	// served=ts,track_uri,duration_ms,context --blob-codec zstd-dict`:
	// co-grouped blobs with a per-file dictionary, the layout issue 12
	// found best (one stored row per key and file, all its rows in one
	// ZSTD frame). Stored rows are key blocks, not rows: the key counts
	// that draw and check the lookups come from the source, and DuckDB on
	// the prepared files is checked against the blocks it returns (it
	// cannot look inside the blob); DuckDB on the source is timed too.
	LayoutCoGrouped = "cogrouped"
)

// sourced reports whether a layout is prepared from a source lake kept in
// Dir/source (DuckDB is timed on both).
func sourced(layout string) bool { return layout == LayoutFramed || layout == LayoutCoGrouped }

// Layouts lists the generated layouts.
var Layouts = []string{LayoutSorted, LayoutPrepared, LayoutArrival, LayoutSkewed, LayoutArrow, LayoutPyArrow, LayoutFramed, LayoutCoGrouped}

// DefaultSizeMB is the generated lake's default size: small enough for a
// smoke run on a 2-core machine in a minute or two. The documented runs
// use 1024.
const DefaultSizeMB = 32

// LakeConfig returns the generated lake of a layout at about sizeMB
// megabytes (DefaultSizeMB if 0). Users and tracks scale with the size
// (at least 1,000 each), so rows per key keep their distribution.
func LakeConfig(layout string, sizeMB int) (lakegen.Config, error) {
	if sizeMB <= 0 {
		sizeMB = DefaultSizeMB
	}
	c := lakegen.DefaultConfig()
	if layout == LayoutSkewed {
		c = lakegen.HeavySkewConfig()
	}
	scale := float64(sizeMB) * (1 << 20) / float64(c.TargetBytes)
	c.TargetBytes = int64(sizeMB) << 20
	c.Users = max(1000, int(float64(c.Users)*scale))
	c.Tracks = max(1000, int(float64(c.Tracks)*scale))
	switch layout {
	case LayoutSorted, LayoutFramed, LayoutCoGrouped: // the prepared layouts: their source lake
		c.Sorted = true
	case LayoutPrepared:
		c.Prepared = true
	case LayoutArrival, LayoutSkewed:
	case LayoutArrow:
		c.Writer = lakegen.WriterArrow
	case LayoutPyArrow:
		c.Writer = lakegen.WriterPyArrow
	default:
		return c, aerr.Invalid("layout %q: want one of %v", layout, Layouts)
	}
	return c, nil
}

// describe says in words how a generated lake is laid out.
func describe(layout string, c lakegen.Config, minFrame int) string {
	switch layout {
	case LayoutSorted:
		return "bucketed and sorted by user (parquet-go, 64 KiB pages, page index)"
	case LayoutPrepared:
		return "prepared: bucketed, sorted, key-aligned 16 KiB pages"
	case LayoutArrival:
		return "arrival order (parquet-go, 64 KiB pages, page index)"
	case LayoutSkewed:
		return fmt.Sprintf("arrival order, heavy skew (Zipf s=%.1f v=%.0f over %d users), %d-row row groups, %d KiB pages, page index",
			c.ZipfS, c.ZipfV, c.Users, c.RowGroupRows, c.PageBytes>>10)
	case LayoutArrow:
		return "arrival order, written by arrow-go pqarrow with default properties"
	case LayoutPyArrow:
		return "arrival order, written by arrow-go pqarrow with pyarrow's default properties (SNAPPY)"
	case LayoutFramed:
		frames := "a ZSTD frame per key"
		if minFrame > 0 {
			frames = fmt.Sprintf("ZSTD frames of whole keys ≥ %d B", minFrame)
		}
		return fmt.Sprintf("prepared with frames: the sorted lake through `prepare --frames --frame-raw-blocks --frame-min-bytes %d` (%s, raw blocks), %d buckets, %d KiB pages",
			minFrame, frames, c.FilesPerDay, framedPageBytes(c)>>10)
	case LayoutCoGrouped:
		return fmt.Sprintf("prepared co-grouped: the sorted lake through `prepare --frames --blob %s=%s --blob-codec zstd-dict` (a stored row per key and file, its rows in one ZSTD frame with the file's dictionary), %d buckets, %d KiB pages",
			blobColumn, strings.Join(blobFields, ","), c.FilesPerDay, framedPageBytes(c)>>10)
	}
	return layout
}
