// Command benchchart draws the row index benchmark chart of
// docs/rowindex.md (docs/rowindex-bench.svg) from the JSON report that the
// benchmark writes (rowindexbench.Report): p50 and p99 latency per system,
// per storage (local disk and injected latencies), on a log scale.
//
//	ARIADNE_BENCH_DIR=/tmp/ribench go test ./bench/rowindexbench -run TestBenchReport -v -timeout 2h
//	cp /tmp/ribench/report.json bench/rowindexbench/benchchart/testdata/report.json
//	go run ./bench/rowindexbench/benchchart -in bench/rowindexbench/benchchart/testdata/report.json -out docs/rowindex-bench.svg
//
// The report behind the committed chart is kept in testdata/report.json,
// and a test checks that the committed chart is its rendering.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/ariadne-go/ariadne/bench/rowindexbench"
)

func main() {
	in := flag.String("in", "", "benchmark report (JSON)")
	out := flag.String("out", "", "SVG file to write")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	if in == "" || out == "" {
		return fmt.Errorf("usage: benchchart -in report.json -out chart.svg")
	}
	rep, err := load(in)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := Render(&buf, rep); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

func load(path string) (*rowindexbench.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep rowindexbench.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("benchchart: %s: %w", path, err)
	}
	return &rep, nil
}
