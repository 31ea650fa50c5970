package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Engine names the reader of a CheckResult: delta-rs or Spark with delta-spark.
type Engine string

// The engines delta_check.py drives.
const (
	DeltaRS Engine = "deltars"
	Spark   Engine = "spark"
)

// CheckRequest asks delta_check.py to read one table, at Version or (nil) the
// latest version.
type CheckRequest struct {
	Table   string `json:"table"`
	Version *int64 `json:"version"`
}

// EngineResult is one engine's reading of a table (delta_check.py's output).
type EngineResult struct {
	Version      *int64   `json:"version"`
	Schema       *string  `json:"schema"`        // schemaString found in the log at Version
	EngineSchema *string  `json:"engine_schema"` // the schema the engine reports (Spark schema JSON)
	NumRows      *int     `json:"num_rows"`
	Rows         []string `json:"rows"` // canonical lines, sorted
	RowsSHA256   *string  `json:"rows_sha256"`
	Error        *string  `json:"error"` // set when the engine refused the table or failed reading it
}

// CheckResult is both engines' reading of one CheckRequest; an engine that
// was not asked for is nil.
type CheckResult struct {
	Table   string        `json:"table"`
	Version *int64        `json:"version"`
	DeltaRS *EngineResult `json:"deltars"`
	Spark   *EngineResult `json:"spark"`
}

// Engine returns the result of engine e (nil when it was not run).
func (r *CheckResult) Engine(e Engine) *EngineResult {
	if e == Spark {
		return r.Spark
	}
	return r.DeltaRS
}

// CheckTables reads every requested table with the given engines ("both",
// "deltars" or "spark") in one run of delta_check.py --batch, so one Spark
// session serves all of them. Results are in request order. tmp is a folder
// for the request file.
func (e *Env) CheckTables(ctx context.Context, tmp, engines string, reqs []CheckRequest) ([]CheckResult, error) {
	data, err := json.Marshal(reqs)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(tmp, "check-*.json")
	if err != nil {
		return nil, err
	}
	name := f.Name()
	defer os.Remove(name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	out, err := e.RunScript(ctx, "delta_check.py", "--batch", name, "--engine", engines)
	if err != nil {
		return nil, err
	}
	var res struct {
		Results []CheckResult `json:"results"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("interop: delta_check.py output: %w (%.300q)", err, out)
	}
	if len(res.Results) != len(reqs) {
		return nil, fmt.Errorf("interop: delta_check.py answered %d of %d requests", len(res.Results), len(reqs))
	}
	for i := range res.Results {
		if filepath.Clean(res.Results[i].Table) != filepath.Clean(reqs[i].Table) {
			return nil, fmt.Errorf("interop: delta_check.py answer %d is for %s, want %s", i, res.Results[i].Table, reqs[i].Table)
		}
	}
	return res.Results, nil
}
