package rowindexbench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/ariadne-go/ariadne/rowindex"
)

// Report is what a benchmark run measured. In JSON every key is snake_case,
// counts and sizes are numbers, and durations are milliseconds (the key
// names the unit).
type Report struct {
	// Layout is the generated layout, or "dir" for existing files.
	Layout      string `json:"layout"`
	Description string `json:"description"`
	Lake        Lake   `json:"lake"`
	Index       Index  `json:"index"`
	// Overview is the generated lakes' system table (standard reader, row
	// index cold and warm, on local disk and behind injected latency);
	// Covered the covered-index lookups. Both are absent for --dir runs.
	Overview []SystemResult `json:"overview,omitempty"`
	Covered  *SystemResult  `json:"covered,omitempty"`
	// Classes are the per key class results: the warm row index and DuckDB
	// on the same keys, in the same run.
	Classes []ClassResult `json:"classes"`
}

// Lake describes the data.
type Lake struct {
	Dir          string  `json:"dir"`
	KeyColumn    string  `json:"key_column"`
	Files        int     `json:"files"`
	Rows         int64   `json:"rows"`
	DataBytes    int64   `json:"data_bytes"`
	RowGroups    int     `json:"row_groups"`
	PageIndex    bool    `json:"page_index"` // every key column chunk has an offset index
	Compression  string  `json:"compression"`
	DistinctKeys int     `json:"distinct_keys"`
	TopKeyRows   int64   `json:"top_key_rows"`
	TopKeyShare  float64 `json:"top_key_share"`
	// SourceBytes is the size of the files the lake was prepared from
	// (LayoutFramed: the unprepared source lake, ZSTD); 0 otherwise.
	SourceBytes int64 `json:"source_bytes,omitempty"`
	// StoredRows is the files' stored rows where those are not rows
	// (LayoutCoGrouped: one per key block; Rows counts the source's).
	StoredRows int64 `json:"stored_rows,omitempty"`
	// ZipfTopShare is the top key's share the generator's Zipf law predicts
	// (lakegen.TopShare); 0 for existing files.
	ZipfTopShare float64 `json:"zipf_top_share,omitempty"`
}

// Index describes the row index the lookups used, and the other kind's
// size.
type Index struct {
	Kind          rowindex.Kind `json:"kind"`
	Entries       int64         `json:"entries"`
	Bytes         int64         `json:"bytes"`
	BuildMS       float64       `json:"build_ms"`
	BuildRequests int64         `json:"build_requests"`
	BuildBytes    int64         `json:"build_bytes_read"`
	Sizes         []IndexSize   `json:"sizes"`
	CoveredBytes  int64         `json:"covered_bytes,omitempty"`
	// WarmMS is the time the class runs' handle took to warm (fragments,
	// footers, resident groups), ResidentGroups of Groups the fragment
	// groups it then kept decoded for point lookups, in ResidentBytes
	// (rowindex.AutoResidentBytes), ShapePages the data pages whose shapes
	// it learnt, in ShapeBytes (ClassConfig.ShapeBytes), CacheBytes what
	// its caches held.
	WarmMS         float64 `json:"warm_ms"`
	Groups         int     `json:"groups"`
	ResidentGroups int     `json:"resident_groups"`
	ResidentBytes  int64   `json:"resident_bytes"`
	ShapePages     int     `json:"shape_pages"`
	ShapeBytes     int64   `json:"shape_bytes"`
	CacheBytes     int64   `json:"cache_bytes"`
}

// IndexSize is the size of one row index kind over the lake.
type IndexSize struct {
	Kind    rowindex.Kind `json:"kind"`
	Entries int64         `json:"entries"`
	Bytes   int64         `json:"bytes"`
}

// Latency is a distribution of lookup times, in milliseconds.
type Latency struct {
	P50MS float64 `json:"p50_ms"`
	P90MS float64 `json:"p90_ms"`
	P99MS float64 `json:"p99_ms"`
	// Timeouts counts lookups cut at the per-lookup timeout; they enter
	// the percentiles at the timeout (so those are lower bounds).
	Timeouts int `json:"timeouts"`
}

// ClassResult is one key class under one sampling: the warm row index and
// DuckDB over the same keys.
type ClassResult struct {
	Sampling string `json:"sampling"`
	Class    string `json:"class"`
	// Limit is the lookups' row limit (0: every row).
	Limit int `json:"limit"`
	// Keys is the number of lookups per system (keys drawn with
	// replacement under SamplingRows, so a hot key can recur).
	Keys          int     `json:"keys"`
	DistinctKeys  int     `json:"distinct_keys"`
	RowsPerLookup float64 `json:"rows_per_lookup"`
	MaxRows       int64   `json:"max_rows"`
	RowIndex      Latency `json:"row_index"`
	DuckDB        Latency `json:"duckdb"`
	// DuckDBReference is DuckDB on the same rows in the reference files
	// (LayoutFramed: the unprepared source lake), same keys, same run;
	// nil for other layouts.
	DuckDBReference *Latency `json:"duckdb_reference,omitempty"`
	// RatioP50, RatioP90 and RatioP99 are row index / DuckDB at each
	// percentile: below 1 the row index is faster.
	RatioP50 float64 `json:"ratio_p50"`
	RatioP90 float64 `json:"ratio_p90"`
	RatioP99 float64 `json:"ratio_p99"`
	// RequestsPerLookup and BytesPerLookup are the row index's (DuckDB's are
	// not observable).
	RequestsPerLookup float64 `json:"requests_per_lookup"`
	BytesPerLookup    float64 `json:"bytes_per_lookup"`
}

// SystemResult is one system on one storage in the overview.
type SystemResult struct {
	System  string  `json:"system"`
	Storage string  `json:"storage"`
	Lookups int     `json:"lookups"`
	P50MS   float64 `json:"p50_ms"`
	P99MS   float64 `json:"p99_ms"`
	// RequestsPerLookup and BytesPerLookup are null where not observable
	// (DuckDB).
	RequestsPerLookup *float64 `json:"requests_per_lookup"`
	BytesPerLookup    *float64 `json:"bytes_per_lookup"`
	RowsPerLookup     float64  `json:"rows_per_lookup"`
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// percentile is the nearest-rank p-quantile of sorted s.
func percentile(s []time.Duration, p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func latencyOf(lats []time.Duration, timeouts int) Latency {
	s := slices.Clone(lats)
	slices.Sort(s)
	return Latency{P50MS: ms(percentile(s, .5)), P90MS: ms(percentile(s, .9)), P99MS: ms(percentile(s, .99)), Timeouts: timeouts}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Format writes the report as the tables of docs/rowindex-bench.md.
func (r *Report) Format(w io.Writer) {
	l := r.Lake
	fmt.Fprintf(w, "Lake (%s): %d files, %d rows, %.1f MB, %d row groups, compression %s, page index %v; key %s: %d distinct keys, top key %d rows (%.1f %% of rows",
		r.Description, l.Files, l.Rows, float64(l.DataBytes)/1e6, l.RowGroups, l.Compression, l.PageIndex, l.KeyColumn,
		l.DistinctKeys, l.TopKeyRows, 100*l.TopKeyShare)
	if l.ZipfTopShare > 0 {
		fmt.Fprintf(w, "; Zipf law: %.1f %%", 100*l.ZipfTopShare)
	}
	fmt.Fprintln(w, ").")
	if l.SourceBytes > 0 {
		fmt.Fprintf(w, "Prepared from %.1f MB of source files: %.3f× their size.\n", float64(l.SourceBytes)/1e6,
			float64(l.DataBytes)/float64(l.SourceBytes))
	}
	if l.StoredRows > 0 {
		fmt.Fprintf(w, "The files store %d rows (key blocks); DuckDB on them returns a key's stored rows, as it cannot decode the blob, so its times are those of finding the key's blocks.\n", l.StoredRows)
	}
	x := r.Index
	fmt.Fprintf(w, "Row index (%s): %d entries, %.2f MB = %.3f %% of data (%.2f bytes/entry), built in %.1f s (%d requests, %.1f MB read).\n",
		x.Kind, x.Entries, float64(x.Bytes)/1e6, 100*float64(x.Bytes)/float64(max(l.DataBytes, 1)),
		float64(x.Bytes)/float64(max(x.Entries, 1)), x.BuildMS/1e3, x.BuildRequests, float64(x.BuildBytes)/1e6)
	if x.Groups > 0 {
		fmt.Fprintf(w, "Warmed in %.2f s: caches hold %.1f MB, of which %d of %d fragment groups resident for point lookups (%.1f MB)",
			x.WarmMS/1e3, float64(x.CacheBytes)/1e6, x.ResidentGroups, x.Groups, float64(x.ResidentBytes)/1e6)
		if x.ShapePages > 0 {
			fmt.Fprintf(w, "; shapes of %d data pages learnt (%.1f MB)", x.ShapePages, float64(x.ShapeBytes)/1e6)
		} else {
			fmt.Fprint(w, "; no page shapes learnt by Warm (--shape-bytes)")
		}
		fmt.Fprintln(w, ".")
	}
	for _, sz := range x.Sizes {
		fmt.Fprintf(w, "Index size, %s kind: %d entries, %.2f MB = %.3f %% of data.\n", sz.Kind, sz.Entries,
			float64(sz.Bytes)/1e6, 100*float64(sz.Bytes)/float64(max(l.DataBytes, 1)))
	}
	if x.CoveredBytes > 0 {
		fmt.Fprintf(w, "Covered index (cover duration_ms, count, sum): %.2f MB = %.2f %% of data.\n",
			float64(x.CoveredBytes)/1e6, 100*float64(x.CoveredBytes)/float64(max(l.DataBytes, 1)))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Per key class, warm row index vs DuckDB read_parquet(...) WHERE key = ?, same keys, same run (ratio = row index / DuckDB):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| sampling | class | limit | lookups | rows/lookup | row index p50 / p90 / p99 | DuckDB p50 / p90 / p99 | ratio p50 / p90 / p99 | requests/lookup | bytes/lookup |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, c := range r.Classes {
		fmt.Fprintf(w, "| %s | %s | %s | %d | %.0f | %s | %s | %s | %.1f | %.0f |\n", c.Sampling, c.Class, fmtLimit(c.Limit), c.Keys,
			c.RowsPerLookup, fmtLatency(c.RowIndex), fmtLatency(c.DuckDB), fmtRatios(c.RowIndex, c.DuckDB), c.RequestsPerLookup, c.BytesPerLookup)
	}
	if len(r.Classes) > 0 && r.Classes[0].DuckDBReference != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "For reference, DuckDB on the same rows in the unprepared source files, same keys, same run (ratio = row index on the prepared files / DuckDB on the source):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| sampling | class | limit | DuckDB on the source p50 / p90 / p99 | ratio p50 / p90 / p99 |")
		fmt.Fprintln(w, "|---|---|---|---|---|")
		for _, c := range r.Classes {
			if c.DuckDBReference == nil {
				continue
			}
			x := *c.DuckDBReference
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", c.Sampling, c.Class, fmtLimit(c.Limit), fmtLatency(x), fmtRatios(c.RowIndex, x))
		}
	}
	if len(r.Overview) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| system | storage | lookups | p50 | p99 | requests/lookup | bytes/lookup | rows/lookup |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
		all := slices.Clone(r.Overview)
		if r.Covered != nil {
			all = append(all, *r.Covered)
		}
		for _, s := range all {
			req, by := "n/a", "n/a"
			if s.RequestsPerLookup != nil {
				req, by = fmt.Sprintf("%.1f", *s.RequestsPerLookup), fmt.Sprintf("%.0f", *s.BytesPerLookup)
			}
			fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %.1f |\n", s.System, s.Storage, s.Lookups,
				fmtMS(s.P50MS), fmtMS(s.P99MS), req, by, s.RowsPerLookup)
		}
	}
}

func fmtMS(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.2fs", v/1000)
	case v >= 10:
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.2fms", v)
}

func fmtLatency(l Latency) string {
	s := fmtMS(l.P50MS) + " / " + fmtMS(l.P90MS) + " / " + fmtMS(l.P99MS)
	if l.Timeouts > 0 {
		s += fmt.Sprintf(" (%d timed out: lower bounds)", l.Timeouts)
	}
	return s
}

func fmtRatio(v float64) string {
	if v == 0 {
		return "–"
	}
	if v < 1 {
		return fmt.Sprintf("%.2g (%s× faster)", v, factor(1/v))
	}
	return fmt.Sprintf("%.2g (%s× slower)", v, factor(v))
}

func factor(f float64) string {
	if f < 10 {
		return fmt.Sprintf("%.1f", f)
	}
	return fmt.Sprintf("%.0f", f)
}

// fmtRatios is a / b at p50, p90 and p99 (ClassResult's RatioP50… for
// the row index against DuckDB).
func fmtRatios(a, b Latency) string {
	return fmtRatio(ratio(a.P50MS, b.P50MS)) + " / " + fmtRatio(ratio(a.P90MS, b.P90MS)) + " / " + fmtRatio(ratio(a.P99MS, b.P99MS))
}

// fmtLimit is a class's row limit, "–" for none.
func fmtLimit(limit int) string {
	if limit > 0 {
		return fmt.Sprint(limit)
	}
	return "–"
}
