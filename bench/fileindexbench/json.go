package fileindexbench

import (
	"encoding/json"
	"time"
)

// The reports' durations are written as numbers in a unit the key names:
// seconds for the update and the scans (update_seconds, cpu_seconds,
// stages.*_seconds), milliseconds for locate and join latencies (p50_ms),
// as the rest of the command line's JSON does.

func seconds(d time.Duration) float64 { return d.Seconds() }

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// MarshalJSON writes the update report with its durations in seconds.
func (u UpdateReport) MarshalJSON() ([]byte, error) {
	type plain UpdateReport // without this method
	st := u.Stages
	return json.Marshal(struct {
		plain
		UpdateSeconds    float64            `json:"update_seconds"`
		ScanSeconds      float64            `json:"scan_seconds"`
		TypedScanSeconds float64            `json:"typed_scan_seconds"`
		CPUSeconds       float64            `json:"cpu_seconds"`
		ScanCPUSeconds   float64            `json:"scan_cpu_seconds"`
		Stages           map[string]float64 `json:"stages"`
	}{plain(u), seconds(u.Time), seconds(u.ScanTime), seconds(u.TypedScanTime), seconds(u.CPU), seconds(u.ScanCPU),
		map[string]float64{
			"read_seconds": seconds(st.Read), "summarize_seconds": seconds(st.Summarize), "read_wall_seconds": seconds(st.ReadWall),
			"analyze_seconds": seconds(st.Analyze), "build_seconds": seconds(st.Build), "stage_seconds": seconds(st.Stage),
			"merge_seconds": seconds(st.Merge), "snapshot_seconds": seconds(st.Snapshot),
		}})
}

// MarshalJSON writes the locate report with its latencies in milliseconds.
func (l LocateReport) MarshalJSON() ([]byte, error) {
	type plain LocateReport
	return json.Marshal(struct {
		plain
		P50MS float64 `json:"p50_ms"`
		P99MS float64 `json:"p99_ms"`
	}{plain(l), millis(l.P50), millis(l.P99)})
}

// MarshalJSON writes the join report with its latencies in milliseconds.
func (j JoinReport) MarshalJSON() ([]byte, error) {
	type plain JoinReport
	return json.Marshal(struct {
		plain
		P50MS          float64 `json:"p50_ms"`
		P90MS          float64 `json:"p90_ms"`
		P99MS          float64 `json:"p99_ms"`
		CPUP50MS       float64 `json:"cpu_p50_ms"`
		CPUP90MS       float64 `json:"cpu_p90_ms"`
		CPUP99MS       float64 `json:"cpu_p99_ms"`
		DuckDBP50MS    float64 `json:"duckdb_p50_ms"`
		DuckDBP90MS    float64 `json:"duckdb_p90_ms"`
		DuckDBP99MS    float64 `json:"duckdb_p99_ms"`
		DuckDBCPUP50MS float64 `json:"duckdb_cpu_p50_ms"`
		DuckDBCPUP90MS float64 `json:"duckdb_cpu_p90_ms"`
		DuckDBCPUP99MS float64 `json:"duckdb_cpu_p99_ms"`
	}{plain(j),
		millis(j.Ours.Wall.P50), millis(j.Ours.Wall.P90), millis(j.Ours.Wall.P99),
		millis(j.Ours.CPU.P50), millis(j.Ours.CPU.P90), millis(j.Ours.CPU.P99),
		millis(j.Duck.Wall.P50), millis(j.Duck.Wall.P90), millis(j.Duck.Wall.P99),
		millis(j.Duck.CPU.P50), millis(j.Duck.CPU.P90), millis(j.Duck.CPU.P99)})
}
