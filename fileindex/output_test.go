package fileindex

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/store"
)

// writingEngine stands for an engine that writes outputs (Spark); only
// its type matters to resolveOutput.
type writingEngine struct{}

func (writingEngine) Name() string                                     { return "writer" }
func (writingEngine) Join(context.Context, *JoinJob) (JoinRows, error) { return nil, nil }

// TestResolveOutput: what an output path holds decides the format when
// none is given, and whether the join may write there at all, before any
// engine runs: an existing path fails unless a mode says otherwise,
// Parquet is never written over a Delta table, and a path this process
// cannot list is left to the engine's own checks.
func TestResolveOutput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	mk := func(rel string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("pq/part-0.parquet")
	mk("tbl/_delta_log/00000000000000000000.json")
	mk("tbl/part-0.parquet")
	mk("orphans/part-0.parquet") // a Delta write cut before its commit
	res := store.NewResolver(store.ResolverOptions{})
	defer res.Close()
	fi := &FileIndex{res: res}
	uri := func(rel string) string { return "file://" + filepath.Join(dir, rel) }
	for _, tc := range []struct {
		path, format, mode string
		want               output // Path filled in below
		err                string
	}{
		{path: "new", want: output{Format: OutputParquet, Mode: OutputErrorIfExists}},
		{path: "new", format: OutputDelta, want: output{Format: OutputDelta, Mode: OutputErrorIfExists}},
		{path: "new", mode: OutputAppend, want: output{Format: OutputParquet, Mode: OutputAppend}},
		{path: "pq", err: "already exists"},
		{path: "tbl", format: OutputDelta, err: "already exists"},
		{path: "tbl", mode: OutputErrorIfExists, err: "already exists"},
		{path: "pq", mode: OutputOverwrite, want: output{Format: OutputParquet, Mode: OutputOverwrite}},
		{path: "tbl", mode: OutputAppend, want: output{Format: OutputDelta, Mode: OutputAppend}},
		{path: "tbl/", mode: OutputOverwrite, want: output{Format: OutputDelta, Mode: OutputOverwrite}},
		{path: "tbl", format: OutputParquet, mode: OutputOverwrite, err: "is a Delta table; Parquet written over it would delete the table's log"},
		{path: "tbl", format: OutputParquet, mode: OutputAppend, err: "would add files the table does not list"},
		{path: "orphans", format: OutputDelta, mode: OutputOverwrite, want: output{Format: OutputDelta, Mode: OutputOverwrite}},
		{path: "new", format: "orc", err: `output format "orc"`},
		{path: "new", mode: "ignore", err: `output mode "ignore"`},
	} {
		p := uri(tc.path)
		got, err := fi.resolveOutput(ctx, JoinOptions{Engine: writingEngine{}, Output: p, OutputFormat: tc.format, OutputMode: tc.mode})
		name := tc.path + " " + tc.format + " " + tc.mode
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, aerr.ErrInvalidArgument) {
				t.Errorf("%s: %+v, %v; want an invalid argument saying %q", name, got, err, tc.err)
			}
			continue
		}
		tc.want.Path = p
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", name, got, err, tc.want)
		}
	}

	// Without an engine that writes, or without a path, the options are refused.
	if _, err := fi.resolveOutput(ctx, JoinOptions{Output: uri("new")}); err == nil || !strings.Contains(err.Error(), "needs the spark engine") {
		t.Errorf("duckdb with an output: %v", err)
	}
	if _, err := fi.resolveOutput(ctx, JoinOptions{OutputFormat: OutputDelta}); err == nil || !strings.Contains(err.Error(), "needs an output path") {
		t.Errorf("a format without an output: %v", err)
	}
	// A path this process cannot list: Spark's own checks apply, parquet
	// unless told.
	got, err := fi.resolveOutput(ctx, JoinOptions{Engine: writingEngine{}, Output: "hdfs://namenode/out"})
	if err != nil || got.Format != OutputParquet || got.Mode != OutputErrorIfExists {
		t.Errorf("unlistable path: %+v, %v", got, err)
	}
}
