package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// Step is one operation of an oracle scenario, in the JSON form
// ariadne_oracle_diff.py reads ({"op": "locate", "index": ..., ...}).
type Step map[string]any

// StepResult is the answer to one Step: Error when it failed, else the
// fields its op fills.
type StepResult struct {
	Error   *string           `json:"error"`
	Value   *string           `json:"value"`
	Files   []string          `json:"files"`
	Columns []string          `json:"columns"`
	Schema  string            `json:"schema"`
	Rows    []string          `json:"rows"`
	Blooms  map[string]string `json:"blooms"`
}

// Oracle is a running ariadne_oracle_diff.py: one Spark session with one
// Ariadne release JAR, serving scenarios one at a time (Run is serialised).
type Oracle struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	next   int
	cancel context.CancelFunc
	// Started is how long the Spark session took to start.
	Started time.Duration
}

// StartOracle starts the oracle server with jar and waits until its Spark
// session is up. The process lives until Close or until ctx ends.
func (e *Env) StartOracle(ctx context.Context, jar string) (*Oracle, error) {
	ctx, cancel := context.WithCancel(ctx)
	t0 := time.Now()
	cmd := exec.CommandContext(ctx, e.Python, filepath.Join(e.Scripts, "ariadne_oracle_diff.py"), "--jar", jar)
	cmd.Env = append(os.Environ(), "PYSPARK_PYTHON="+e.Python, "ARIADNE_INTEROP_CACHE="+e.Cache, "PYTHONDONTWRITEBYTECODE=1")
	cmd.WaitDelay = 10 * time.Second
	if os.Getenv("ARIADNE_ORACLE_STDERR") != "" {
		cmd.Stderr = os.Stderr
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, err
	}
	o := &Oracle{cmd: cmd, in: in, out: bufio.NewReaderSize(outp, 1<<20), cancel: cancel}
	line, err := o.out.ReadBytes('\n')
	if err != nil {
		o.Close()
		return nil, fmt.Errorf("interop: oracle did not start (%v); set ARIADNE_ORACLE_STDERR=1 to see its log", err)
	}
	var ready struct{ Ready bool }
	if json.Unmarshal(line, &ready) != nil || !ready.Ready {
		o.Close()
		return nil, fmt.Errorf("interop: oracle start: %.300q", line)
	}
	o.Started = time.Since(t0)
	return o, nil
}

// Run runs one scenario (steps against the store root folder storeDir) and
// returns one result per step and the seconds the JVM spent.
func (o *Oracle) Run(storeDir string, steps []Step) ([]StepResult, float64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.next++
	req, err := json.Marshal(map[string]any{"id": o.next, "store": storeDir, "steps": steps})
	if err != nil {
		return nil, 0, err
	}
	if _, err := o.in.Write(append(req, '\n')); err != nil {
		return nil, 0, fmt.Errorf("interop: oracle gone: %w", err)
	}
	line, err := o.out.ReadBytes('\n')
	if err != nil {
		return nil, 0, fmt.Errorf("interop: oracle gone: %w", err)
	}
	var ans struct {
		ID      int          `json:"id"`
		Seconds float64      `json:"seconds"`
		Results []StepResult `json:"results"`
	}
	if err := json.Unmarshal(line, &ans); err != nil {
		return nil, 0, fmt.Errorf("interop: oracle answer: %w (%.300q)", err, line)
	}
	if ans.ID != o.next || len(ans.Results) != len(steps) {
		return nil, 0, fmt.Errorf("interop: oracle answered request %d with %d results, want %d with %d", ans.ID, len(ans.Results), o.next, len(steps))
	}
	return ans.Results, ans.Seconds, nil
}

// Close ends the oracle (closing its input lets it exit; the context kills
// it if it does not).
func (o *Oracle) Close() error {
	o.in.Close()
	done := make(chan error, 1)
	go func() { done <- o.cmd.Wait() }()
	select {
	case err := <-done:
		o.cancel()
		return err
	case <-time.After(30 * time.Second):
		o.cancel()
		return <-done
	}
}
